package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// countByType counts entries per type and remembers each session's last
// seq: a small projection with puts that overwrite and keys that vanish
// (a session whose data says "end" is deleted).
type countByType struct {
	version string
	skip    string // a type it (wrongly) ignores, to simulate a bug
	failOn  string // a type whose Apply fails
}

func (p *countByType) Name() string    { return "counts" }
func (p *countByType) Version() string { return p.version }
func (p *countByType) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if e.Type == p.failOn {
		return errors.New("boom")
	}
	if e.Type == p.skip {
		return nil
	}
	k := []byte("type/" + e.Type)
	n, _ := strconv.Atoi(string(b.Get(k)))
	if err := b.Put(k, []byte(strconv.Itoa(n+1))); err != nil {
		return err
	}
	if e.Session != "" {
		sk := []byte("session/" + e.Session)
		if bytes.Contains(e.Data, []byte(`"end"`)) {
			return b.Delete(sk)
		}
		return b.Put(sk, []byte(strconv.FormatUint(e.Seq, 10)))
	}
	return nil
}

func appendSome(t *testing.T, l *ledger.Ledger, n int, tag string) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		typ := []string{"agent.tokens", "tool.proposed", "ledger.note"}[i%3]
		data := map[string]any{"i": i, "tag": tag}
		if i%7 == 6 {
			data["end"] = true
		}
		d := ledger.Async
		if i == n-1 {
			d = ledger.Sync
		}
		if _, err := l.Append(ctx, d, ledger.Record{Session: fmt.Sprintf("s%d", i%4), Type: typ, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
}

// dump lists a bucket's pairs in order.
func dump(t *testing.T, b ledger.Bucket) []string {
	t.Helper()
	var out []string
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		out = append(out, string(k)+"="+string(v))
	}
	return out
}

func stored(t *testing.T, l *ledger.Ledger, p ledger.Projection) []string {
	t.Helper()
	var out []string
	if err := l.ViewProjection(p, func(b ledger.Bucket) error { out = dump(t, b); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestProjection_AppendMatchesFold: the bucket kept at append time is
// exactly the fold of the entries, and so is its root; rebuilding gives
// the same bucket and root.
func TestProjection_AppendMatchesFold(t *testing.T) {
	p := &countByType{version: "1"}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{Projections: []ledger.Projection{p}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendSome(t, l, 500, "a")
	live := stored(t, l, p)
	fold, err := ledger.FoldProjection(l, p, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	if !equal(live, dump(t, fold)) {
		t.Fatalf("stored projection differs from the fold:\n%v\n%v", live, dump(t, fold))
	}
	before, _ := l.Projections()
	rep, err := l.RebuildProjections()
	if err != nil {
		t.Fatal(err)
	}
	if !equal(stored(t, l, p), live) || rep.Projections[0].Root != before[0].Root || rep.Entries != 501 {
		t.Errorf("rebuild changed the projection: root %s -> %s", before[0].Root, rep.Projections[0].Root)
	}
	if before[0].Through != 500 {
		t.Errorf("through %d, want 500", before[0].Through)
	}
}

// TestProjection_RootIsContent: equal contents have equal roots however
// they were reached (here: a key written, deleted and written again).
func TestProjection_RootIsContent(t *testing.T) {
	a := &countByType{version: "1"}
	b := &countByType{version: "2"} // same fold, other version: folded afresh
	dir := t.TempDir()
	la, _ := ledger.Create(filepath.Join(dir, "a.db"), ledger.Options{Projections: []ledger.Projection{a}})
	appendSome(t, la, 100, "x")
	la.Close()
	lb, err := ledger.Open(filepath.Join(dir, "a.db"), ledger.Options{Projections: []ledger.Projection{b}})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	sa, _ := lb.Projections()
	// The rebuilt-on-open version has the same content, so the same root.
	la2, _ := ledger.Create(filepath.Join(dir, "b.db"), ledger.Options{Projections: []ledger.Projection{a}})
	appendSome(t, la2, 100, "x")
	sb, _ := la2.Projections()
	la2.Close()
	if sa[0].Root != sb[0].Root || sa[0].Version != "2" {
		t.Errorf("roots %s and %s (versions %s, %s)", sa[0].Root, sb[0].Root, sa[0].Version, sb[0].Version)
	}
}

// TestProjection_BuiltOnOpen: a ledger written without projections gets
// them on the first open that names them; a read-only open of a ledger
// without them folds in memory.
func TestProjection_BuiltOnOpen(t *testing.T) {
	p := &countByType{version: "1"}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, _ := ledger.Create(path, ledger.Options{})
	appendSome(t, l, 50, "y")
	l.Close()

	ro, _ := ledger.OpenReadOnly(path)
	if err := ro.ViewProjection(p, func(ledger.Bucket) error { return nil }); !errors.Is(err, ledger.ErrNoProjection) {
		t.Errorf("view of a missing projection: %v", err)
	}
	var mem []string
	if err := ro.ReadProjection(p, func(b ledger.Bucket) error { mem = dump(t, b); return nil }); err != nil || len(mem) == 0 {
		t.Fatalf("read in memory: %v %v", mem, err)
	}
	ro.Close()

	l, err := ledger.Open(path, ledger.Options{Projections: []ledger.Projection{p}})
	if err != nil {
		t.Fatal(err)
	}
	if got := stored(t, l, p); !equal(got, mem) {
		t.Errorf("built on open %v, in memory %v", got, mem)
	}
	// Appends while closed without the projection are caught up too.
	appendSome(t, l, 10, "z")
	fold, _ := ledger.FoldProjection(l, p, ^uint64(0))
	if got := stored(t, l, p); !equal(got, dump(t, fold)) {
		t.Errorf("after more appends: stored %v, fold %v", got, dump(t, fold))
	}
	l.Close()
}

// TestProjection_BrokenFoldNeverFailsAppend: a projection whose Apply
// fails is emptied and marked broken; appends go on; a rebuild with a
// fixed fold repairs it.
func TestProjection_BrokenFoldNeverFailsAppend(t *testing.T) {
	p := &countByType{version: "1", failOn: "ledger.note"}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, _ := ledger.Create(path, ledger.Options{Projections: []ledger.Projection{p}})
	appendSome(t, l, 20, "b")
	if h, _ := l.Head(); h.Seq != 20 {
		t.Fatalf("head %d", h.Seq)
	}
	if err := l.ViewProjection(p, func(ledger.Bucket) error { return nil }); !errors.Is(err, ledger.ErrProjectionBroken) {
		t.Errorf("view of a broken projection: %v", err)
	}
	st, _ := l.Projections()
	if st[0].Broken == "" {
		t.Errorf("state %+v", st[0])
	}
	p.failOn = ""
	if _, err := l.RebuildProjections(); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, l, p); len(got) == 0 {
		t.Error("rebuild did not repair the projection")
	}
	l.Close()
}

// TestProjection_CheckpointCatchesSkippedEvent: a checkpoint records the
// roots; a rebuild by the same fold reproduces them; a fold that skips an
// event (a bug) is caught at the checkpoint.
func TestProjection_CheckpointCatchesSkippedEvent(t *testing.T) {
	p := &countByType{version: "1"}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, _ := ledger.Create(path, ledger.Options{Projections: []ledger.Projection{p}})
	appendSome(t, l, 30, "c")
	cp, err := l.Checkpoint(context.Background(), ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	appendSome(t, l, 5, "d")
	rep, err := l.RebuildProjections()
	if err != nil || rep.Checked != 1 || len(rep.Mismatches) != 0 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
	l.Close()

	bug := &countByType{version: "1", skip: "tool.proposed"}
	l, err = ledger.Open(path, ledger.Options{Projections: []ledger.Projection{bug}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err = l.RebuildProjections()
	if err != nil || len(rep.Mismatches) != 1 || rep.Mismatches[0].Seq != cp.Seq || rep.Mismatches[0].Through != 30 {
		t.Errorf("rebuild with a fold that skips events: %+v %v", rep, err)
	}
}

// TestProjection_CheckpointIsExact: with appends racing from several
// goroutines, each checkpoint's roots are through the entry just before
// it, so a rebuild compares every one of them.
func TestProjection_CheckpointIsExact(t *testing.T) {
	p := &countByType{version: "1"}
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Projections: []ledger.Projection{p}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	// The appenders take a ticket per append, and the checkpoint loop
	// hands out perCheckpoint tickets as it takes each checkpoint: the
	// appends race every checkpoint, and their number is bounded (it was
	// "as many as fit while 40 checkpoints commit", which grew with the
	// machine's load to over a minute of appends and rebuild under -race).
	const checkpoints, perCheckpoint = 40, 200
	tickets := make(chan struct{}, checkpoints*perCheckpoint)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-tickets:
				case <-stop:
					return
				}
				if _, err := l.Append(ctx, ledger.Async, ledger.Record{Session: fmt.Sprint("s", g), Type: "ledger.note", Data: map[string]any{"i": i}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var cps []ledger.Appended
	for i := 0; i < checkpoints; i++ {
		for range perCheckpoint {
			tickets <- struct{}{}
		}
		d := ledger.Async
		if i%2 == 0 {
			d = ledger.Sync
		}
		cp, err := l.Checkpoint(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, cp)
	}
	close(stop)
	wg.Wait()
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		e, err := l.Get(cp.Seq)
		if err != nil {
			t.Fatal(err)
		}
		var c ledger.CheckpointPayload
		if err := json.Unmarshal(e.Data, &c); err != nil || len(c.Projections) != 1 || c.Projections[0].Through != cp.Seq-1 {
			t.Fatalf("checkpoint %d: %s", cp.Seq, e.Data)
		}
	}
	rep, err := l.RebuildProjections()
	if err != nil || rep.Checked != len(cps) || rep.Unchecked != 0 || len(rep.Mismatches) != 0 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
	// A checkpoint not taken at the entry before it (as an older opx
	// wrote them) cannot be compared, and says so.
	h, _ := l.Head()
	old := ledger.CheckpointPayload{Projections: []ledger.CheckpointRoot{{Name: "counts", Version: "1", Through: h.Seq - 2, Root: strings.Repeat("ab", 32)}}}
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: ledger.TypeCheckpoint, Data: old}); err != nil {
		t.Fatal(err)
	}
	rep, err = l.RebuildProjections()
	if err != nil || rep.Checked != len(cps) || rep.Unchecked != 1 || len(rep.Mismatches) != 0 {
		t.Fatalf("rebuild with an old checkpoint: %+v %v", rep, err)
	}
}

// TestProjection_RebuildAcrossBatches: a rebuild longer than one fold
// transaction (read ahead while the last one folds) gives the bucket the
// appends kept, and checks a checkpoint that falls on the first entry of
// a batch (its roots are the previous batch's end) and one just after.
func TestProjection_RebuildAcrossBatches(t *testing.T) {
	t.Parallel() // its own ledger and projection
	p := &countByType{version: "1"}
	// Folds of 1024 entries rather than 65536 take the same paths (read
	// ahead, a checkpoint on a batch's first entry and one after it) over
	// 2148 entries instead of 131172: seconds of CPU under -race before.
	const batch = 1024
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.WithFoldBatch(ledger.Options{Projections: []ledger.Projection{p}, NoSync: true}, batch))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	var recs []ledger.Record
	flush := func() {
		if _, err := l.Append(ctx, ledger.Async, recs...); err != nil {
			t.Fatal(err)
		}
		recs = recs[:0]
	}
	for seq := 1; seq < 2*batch+100; seq++ {
		if seq == batch || seq == batch+2 {
			flush()
			if cp, err := l.Checkpoint(ctx, ledger.Async); err != nil || (cp.Seq != batch && cp.Seq != batch+2) {
				t.Fatalf("checkpoint at %d: %v", cp.Seq, err)
			}
			continue
		}
		typ := []string{"agent.tokens", "tool.proposed", "ledger.note"}[seq%3]
		data := map[string]any{"i": seq}
		if seq%7 == 6 {
			data["end"] = true
		}
		recs = append(recs, ledger.Record{Session: fmt.Sprint("s", seq%97), Type: typ, Data: data})
		if len(recs) == 4096 {
			flush()
		}
	}
	flush()
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	live := stored(t, l, p)
	before, _ := l.Projections()
	rep, err := l.RebuildProjections()
	if err != nil || rep.Checked != 2 || rep.Unchecked != 0 || len(rep.Mismatches) != 0 || rep.Entries != 2*batch+100 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
	if !equal(stored(t, l, p), live) || rep.Projections[0].Root != before[0].Root {
		t.Errorf("rebuild changed the projection: root %s -> %s", before[0].Root, rep.Projections[0].Root)
	}
}

// TestMemBucket_Cursor walks, seeks and deletes in key order.
func TestMemBucket_Cursor(t *testing.T) {
	m := ledger.NewMemBucket()
	for _, k := range []string{"b", "a", "d", "c"} {
		m.Put([]byte(k), []byte("v"+k))
	}
	m.Delete([]byte("c"))
	c := m.Cursor()
	var got []string
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		got = append(got, string(k))
	}
	if fmt.Sprint(got) != "[a b d]" {
		t.Errorf("keys %v", got)
	}
	if k, v := m.Cursor().Seek([]byte("bb")); string(k) != "d" || string(v) != "vd" {
		t.Errorf("seek bb: %s %s", k, v)
	}
	if k, _ := m.Cursor().Last(); string(k) != "d" {
		t.Errorf("last %s", k)
	}
}

func TestField(t *testing.T) {
	data := []byte(`{"a":"x\"y","b":12,"c":{"d":[1,{"e":2}],"f":"\u00e9"},"g":true,"h":-3}`)
	for name, want := range map[string]string{"a": `"x\"y"`, "b": "12", "c": `{"d":[1,{"e":2}],"f":"\u00e9"}`, "g": "true", "h": "-3"} {
		if got, ok := ledger.Field(data, name); !ok || string(got) != want {
			t.Errorf("Field %s = %s %v, want %s", name, got, ok, want)
		}
	}
	if _, ok := ledger.Field(data, "d"); ok {
		t.Error("a nested member found at the top")
	}
	if s, ok := ledger.FieldString(data, "a"); !ok || s != `x"y` {
		t.Errorf("FieldString a = %q", s)
	}
	c, _ := ledger.Field(data, "c")
	if s, _ := ledger.FieldString(c, "f"); s != "é" {
		t.Errorf("nested f = %q", s)
	}
	if n, ok := ledger.FieldInt(data, "h"); !ok || n != -3 {
		t.Errorf("FieldInt h = %d", n)
	}
	if b, ok := ledger.FieldBool(data, "g"); !ok || !b {
		t.Errorf("FieldBool g")
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a":}`, `{"b":1,}`} {
		if _, ok := ledger.Field([]byte(bad), "a"); ok {
			t.Errorf("Field on %q found a", bad)
		}
	}
}

func TestFields(t *testing.T) {
	data := []byte(`{"a":"x","b":{"c":1},"d":[2],"e":5}`)
	f := ledger.Fields(data, "e", "a", "zz", "b")
	if string(f[0]) != "5" || string(f[1]) != `"x"` || f[2] != nil || string(f[3]) != `{"c":1}` {
		t.Errorf("Fields = %q", f)
	}
	if ledger.RawString(f[1]) != "x" || ledger.RawInt(f[0]) != 5 || ledger.RawString(f[0]) != "" {
		t.Error("RawString/RawInt")
	}
	if f := ledger.Fields([]byte("nope"), "a"); f[0] != nil {
		t.Error("Fields on a non-object")
	}
}

func TestElements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		stop int // stop after this many (0: never)
		want string
		ok   bool
	}{
		{`[]`, 0, "", true},
		{` [ {"path":"a"} , "s", [1,[2]], 3 ] `, 0, `{"path":"a"}|"s"|[1,[2]]|3`, true},
		{`[1,2,3]`, 2, `1|2`, true},
		{`[1,2,]`, 0, `1|2`, false},
		{`[1,2`, 0, `1|2`, false},
		{`{"a":1}`, 0, "", false},
		{`null`, 0, "", false},
	} {
		var got []string
		ok := ledger.Elements([]byte(tc.in), func(e []byte) bool {
			got = append(got, string(e))
			return tc.stop == 0 || len(got) < tc.stop
		})
		if strings.Join(got, "|") != tc.want || ok != tc.ok {
			t.Errorf("Elements(%s) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// checkpointLedger has a 4 MiB entry queued and not committed, so the
// commit that writes it must grow the memory map, which bbolt does only
// once no read transaction is open.
func checkpointLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{NoSync: true, FlushInterval: time.Hour, MaxBatch: 1 << 20,
		Projections: []ledger.Projection{&countByType{version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if _, err := l.Append(context.Background(), ledger.Async, ledger.Record{Type: "ledger.note", Data: map[string]any{"big": strings.Repeat("x", 4<<20)}}); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCheckpoint_AppendsGoOnBehindALongRead: while a read transaction is
// open (a slow client streaming the ledger), a checkpoint of queued
// entries neither waits for it nor stops Async appends.
func TestCheckpoint_AppendsGoOnBehindALongRead(t *testing.T) {
	l := checkpointLedger(t)
	inTx, release := make(chan struct{}), make(chan struct{})
	go l.RangeRaw(0, 0, func(uint64, []byte) error { close(inTx); <-release; return nil })
	<-inTx
	defer close(release)
	done := make(chan error, 1)
	go func() {
		if _, err := l.Checkpoint(context.Background(), ledger.Async); err != nil {
			done <- err
			return
		}
		_, err := l.Append(context.Background(), ledger.Async, ledger.Record{Type: "ledger.note", Data: map[string]any{"x": 1}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a checkpoint and an Async append waited for a read transaction")
	}
}

// TestCheckpoint_NoDeadlockWithAppendInsideARead: a reader that appends
// inside its read transaction while a checkpoint is taken (and the commit
// after it must remap) finishes.
func TestCheckpoint_NoDeadlockWithAppendInsideARead(t *testing.T) {
	l := checkpointLedger(t)
	ctx := context.Background()
	started := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() {
		readerDone <- l.RangeRaw(0, 0, func(uint64, []byte) error {
			<-started
			time.Sleep(100 * time.Millisecond) // the checkpoint's Sync commit is waiting to remap
			_, err := l.Append(ctx, ledger.Async, ledger.Record{Type: "ledger.note", Data: map[string]any{"x": 1}})
			return err
		})
	}()
	cpDone := make(chan error, 1)
	go func() {
		close(started)
		_, err := l.Checkpoint(ctx, ledger.Sync)
		cpDone <- err
	}()
	for _, ch := range []chan error{readerDone, cpDone} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("deadlock: an append inside a read transaction and a checkpoint")
		}
	}
	rep, err := l.RebuildProjections()
	if err != nil || rep.Checked != 1 || rep.Unchecked != 0 || len(rep.Mismatches) != 0 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
}

// TestCheckpoint_AfterBlobsOnly: a checkpoint while the queue holds only
// blobs (the chronicle stores snapshot content ahead of its entry).
func TestCheckpoint_AfterBlobsOnly(t *testing.T) {
	p := &countByType{version: "1"}
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Projections: []ledger.Projection{p}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	appendSome(t, l, 10, "a")
	if _, err := l.PutBlobs(ctx, ledger.Async, []byte("content")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(ctx, ledger.Sync); err != nil {
		t.Fatal(err)
	}
	rep, err := l.RebuildProjections()
	if err != nil || rep.Checked != 1 || len(rep.Mismatches) != 0 {
		t.Fatalf("rebuild: %+v %v", rep, err)
	}
}

// cursorUser asks for a cursor: a fold may not, whatever the batch.
type cursorUser struct{}

func (cursorUser) Name() string    { return "cursor" }
func (cursorUser) Version() string { return "1" }
func (cursorUser) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if k, _ := b.Cursor().First(); k == nil {
		return b.Put([]byte("first"), []byte(fmt.Sprint(e.Seq)))
	}
	return nil
}

func TestProjection_CursorFailsTheFold(t *testing.T) {
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Projections: []ledger.Projection{cursorUser{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendSome(t, l, 3, "a") // small commits, folded one projection at a time
	st, _ := l.Projections()
	if len(st) != 1 || !strings.Contains(st[0].Broken, "cursor") {
		t.Errorf("state %+v", st)
	}
}
