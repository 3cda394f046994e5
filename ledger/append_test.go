package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// TestLedger_Append_Invalid: a call with one record that cannot become an
// entry appends none of its records and uses up no seq.
func TestLedger_Append_Invalid(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	for name, bad := range map[string]ledger.Record{
		"empty type":        {Type: "", Data: map[string]any{"a": 1}},
		"float":             {Type: "x.y", Data: map[string]any{"nested": []any{map[string]any{"f": 0.25}}}},
		"array":             {Type: "x.y", Data: []int{1}},
		"data string":       {Type: "x.y", Data: "text"},
		"data number":       {Type: "x.y", Data: 7},
		"raw array":         {Type: "x.y", Data: json.RawMessage(`[1]`)},
		"raw null":          {Type: "x.y", Data: json.RawMessage(`null`)},
		"raw bad json":      {Type: "x.y", Data: json.RawMessage(`{"a":`)},
		"raw duplicate key": {Type: "x.y", Data: json.RawMessage(`{"a":1,"a":2}`)},
		"raw exponent":      {Type: "x.y", Data: json.RawMessage(`{"n":1e3}`)},
		"raw negative zero": {Type: "x.y", Data: json.RawMessage(`{"n":-0}`)},
		"raw bad utf-8":     {Type: "x.y", Data: []byte("{\"s\":\"\xff\"}")},
		"raw two values":    {Type: "x.y", Data: json.RawMessage(`{}{}`)},
		"2^53":              {Type: "x.y", Data: map[string]int64{"n": 1 << 53}},
		"unencodable":       {Type: "x.y", Data: map[string]any{"f": func() {}}},
	} {
		a, err := l.Append(ctx, ledger.Sync, note(1), note(2), bad, note(3))
		if !errors.Is(err, ledger.ErrInvalidRecord) || a != nil {
			t.Errorf("%s: Append = %v, %v; want ErrInvalidRecord", name, a, err)
		}
		if _, err := l.Append(ctx, ledger.Async, bad); !errors.Is(err, ledger.ErrInvalidRecord) {
			t.Errorf("%s: Async Append = %v; want ErrInvalidRecord", name, err)
		}
	}
	if h, _ := l.Head(); h.Seq != 0 {
		t.Errorf("invalid appends left entries: head %d", h.Seq)
	}
	a, err := l.Append(ctx, ledger.Sync, note(1))
	if err != nil || a[0].Seq != 1 {
		t.Errorf("append after refusals = %v, %v; want seq 1", a, err)
	}
	e, _ := l.Get(1)
	if g, _ := l.Get(0); e.Prev != g.Hash() {
		t.Error("entry 1 does not chain onto genesis")
	}
}

func TestLedger_AppendReadReopen(t *testing.T) {
	l, path := mustCreate(t)
	ctx := context.Background()
	app, err := l.Append(ctx, ledger.Sync, note(1), note(2))
	if err != nil || len(app) != 2 || app[0].Seq != 1 || app[1].Seq != 2 {
		t.Fatalf("Append = %v, %v", app, err)
	}
	if _, err := l.Append(ctx, ledger.Async, note(3)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	e3, err := l.Get(3)
	if err != nil || h.Seq != 3 || h.Hash != e3.Hash() {
		t.Fatalf("head %+v, entry 3 %v", h, err)
	}
	e2, _ := l.Get(2)
	if e3.Prev != e2.Hash() || e2.Prev != app[0].Hash || app[1].Hash != e2.Hash() {
		t.Error("chain links do not match the appended hashes")
	}
	stop := errors.New("stop")
	if err := l.Range(0, 3, func(ledger.Entry) error { return stop }); err != stop {
		t.Errorf("Range passes the callback's error: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := ledger.Open(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	a, err := l2.Append(ctx, ledger.Sync, note(4))
	if err != nil || a[0].Seq != 4 {
		t.Fatalf("append after reopen: %v %v", a, err)
	}
	e4, _ := l2.Get(4)
	if e4.Prev != h.Hash {
		t.Error("reopened ledger does not continue the chain")
	}
}

// TestLedger_Read_Bounds: Tail, Range and RangeRaw at and beyond the ends
// of the ledger; Range entries own their bytes.
func TestLedger_Read_Bounds(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	var want []ledger.Appended
	for i := 1; i <= 9; i++ {
		a, err := l.Append(ctx, ledger.Async, note(i))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, a...)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	seqs := func(es []ledger.Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, fmt.Sprint(e.Seq))
		}
		return strings.Join(s, ",")
	}
	for n, w := range map[int]string{0: "", 1: "9", 3: "7,8,9", 10: "0,1,2,3,4,5,6,7,8,9", 50: "0,1,2,3,4,5,6,7,8,9"} {
		got, err := l.Tail(n)
		if err != nil || seqs(got) != w {
			t.Errorf("Tail(%d) = %s, %v; want %s", n, seqs(got), err, w)
		}
	}
	for stopAt, w := range map[uint64]string{7: "9,8,7", 0: "9,8,7,6,5,4,3,2,1,0", 100: "9,8,7,6,5,4,3,2,1,0"} {
		var got []string
		err := l.Backward(func(seq uint64, b []byte) (bool, error) {
			if e, _ := l.Get(seq); string(e.Raw) != string(b) {
				t.Errorf("Backward %d bytes differ from Get", seq)
			}
			got = append(got, fmt.Sprint(seq))
			return seq != stopAt, nil
		})
		if err != nil || strings.Join(got, ",") != w {
			t.Errorf("Backward to %d = %v, %v; want %s", stopAt, got, err, w)
		}
	}
	rng := func(from, to uint64) string {
		var got []ledger.Entry
		if err := l.Range(from, to, func(e ledger.Entry) error { got = append(got, e); return nil }); err != nil {
			t.Errorf("Range(%d, %d): %v", from, to, err)
		}
		var raw []string
		l.RangeRaw(from, to, func(seq uint64, b []byte) error {
			raw = append(raw, fmt.Sprint(seq))
			if e, _ := l.Get(seq); string(e.Raw) != string(b) {
				t.Errorf("RangeRaw %d bytes differ from Get", seq)
			}
			return nil
		})
		if s := seqs(got); s != strings.Join(raw, ",") {
			t.Errorf("Range %s, RangeRaw %v", s, raw)
		}
		return seqs(got)
	}
	for _, tt := range []struct {
		from, to uint64
		want     string
	}{{0, 0, "0"}, {3, 5, "3,4,5"}, {8, 100, "8,9"}, {5, 4, ""}, {10, 20, ""}, {0, ^uint64(0), "0,1,2,3,4,5,6,7,8,9"}} {
		if got := rng(tt.from, tt.to); got != tt.want {
			t.Errorf("Range(%d, %d) = %s, want %s", tt.from, tt.to, got, tt.want)
		}
	}
	// Entries from Range own their bytes.
	var kept []ledger.Entry
	l.Range(1, 9, func(e ledger.Entry) error { kept = append(kept, e); return nil })
	for i, e := range kept {
		if e.Hash() != want[i].Hash || e.Seq != want[i].Seq {
			t.Errorf("kept entry %d: %d %s, want %d %s", i, e.Seq, e.Hash(), want[i].Seq, want[i].Hash)
		}
	}
	if _, err := l.Get(10); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get(10) = %v, want ErrNotFound", err)
	}
}

// TestLedger_Append_Async: Async entries have final seqs and hashes at
// once, become visible by Sync or a later Sync append, and are flushed by
// Close; nothing is appended after Close.
func TestLedger_Append_Async(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := l.Append(ctx, ledger.Async, note(1), note(2))
	if err != nil || a[1].Seq != 2 {
		t.Fatalf("Async append = %v, %v", a, err)
	}
	// With an hour's flush interval nothing commits on its own.
	time.Sleep(10 * time.Millisecond)
	if h, _ := l.Head(); h.Seq != 0 {
		t.Errorf("an Async entry committed before any Sync: head %d", h.Seq)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if h, _ := l.Head(); h.Seq != 2 || h.Hash != a[1].Hash {
		t.Errorf("head after Sync %+v, want %+v", h, a[1])
	}
	// A Sync append commits the Async entries queued before it.
	b, _ := l.Append(ctx, ledger.Async, note(3))
	c, err := l.Append(ctx, ledger.Sync, note(4))
	if err != nil || c[0].Seq != 4 {
		t.Fatal(c, err)
	}
	if e, err := l.Get(3); err != nil || e.Hash() != b[0].Hash {
		t.Errorf("entry 3 after a later Sync append: %v", err)
	}
	// Close flushes what is still queued.
	d, _ := l.Append(ctx, ledger.Async, note(5))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dur := range []ledger.Durability{ledger.Sync, ledger.Async} {
		if _, err := l.Append(ctx, dur, note(6)); !errors.Is(err, ledger.ErrClosed) {
			t.Errorf("%v Append after Close = %v, want ErrClosed", dur, err)
		}
	}
	if _, err := l.PutBlob(ctx, []byte("x")); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("PutBlob after Close = %v, want ErrClosed", err)
	}
	r, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, _ := r.Head(); h.Seq != 5 || h.Hash != d[0].Hash {
		t.Errorf("head after Close %+v, want %+v", h, d[0])
	}
	ledgertest.MustVerify(t, path)
}

// TestLedger_ConcurrentAppenders: many goroutines append with mixed
// durability, some records with blobs and some calls with several
// records, while a reader reads. Every seq is handed out once, a call's
// records get consecutive seqs, each goroutine sees its own entries in
// increasing order, every returned hash is the stored entry's hash, the
// committed head always names its entry, and the ledger verifies.
func TestLedger_ConcurrentAppenders(t *testing.T) {
	l, _ := mustCreate(t)
	const workers, each = 32, 100
	ctx := context.Background()
	got := make([][]ledger.Appended, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() { // a reader while appends run
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			h, err := l.Head()
			if err != nil {
				errs <- err
				return
			}
			if e, err := l.Get(h.Seq); err != nil || e.Hash() != h.Hash {
				errs <- fmt.Errorf("head %d does not match its entry: %v", h.Seq, err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				d := ledger.Async
				if (w+i)%3 == 0 {
					d = ledger.Sync
				}
				rec := ledger.Record{Session: fmt.Sprint("w", w), Type: "ledger.note", Data: map[string]any{"author": "t", "text": fmt.Sprint(w, "/", i)}}
				if i%10 == 0 {
					content := []byte(fmt.Sprintf("blob %d/%d", w, i))
					rec.Data.(map[string]any)["blob"] = ledger.Sum(content).String()
					rec.Blobs = [][]byte{content}
				}
				recs := []ledger.Record{rec}
				if i%25 == 24 { // now and then several records in one call
					recs = append(recs, rec, rec)
				}
				a, err := l.Append(ctx, d, recs...)
				if err != nil {
					errs <- err
					return
				}
				for j := 1; j < len(a); j++ {
					if a[j].Seq != a[j-1].Seq+1 {
						errs <- fmt.Errorf("one call's records got seqs %d, %d", a[j-1].Seq, a[j].Seq)
						return
					}
				}
				got[w] = append(got[w], a...)
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	all := map[uint64]ledger.Hash{}
	for w, as := range got {
		for i, a := range as {
			if _, dup := all[a.Seq]; dup {
				t.Fatalf("seq %d handed out twice", a.Seq)
			}
			all[a.Seq] = a.Hash
			if i > 0 && a.Seq <= as[i-1].Seq {
				t.Fatalf("worker %d: seq %d after %d", w, a.Seq, as[i-1].Seq)
			}
		}
	}
	total := uint64(len(all))
	h, _ := l.Head()
	if h.Seq != total {
		t.Fatalf("head %d, %d entries appended", h.Seq, total)
	}
	n := uint64(0)
	err := l.RangeRaw(1, h.Seq, func(seq uint64, raw []byte) error {
		n++
		if want, ok := all[seq]; !ok || ledger.Sum(raw) != want {
			return fmt.Errorf("entry %d: stored hash differs from the one Append returned", seq)
		}
		return nil
	})
	if err != nil || n != total {
		t.Fatalf("%d entries read, want %d: %v", n, total, err)
	}
	rep, err := l.Verify(ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK || rep.Entries != total+1 {
		t.Errorf("verify: %v %v entries %d", err, rep.Err(), rep.Entries)
	}
}

// TestLedger_Blobs: blobs are stored once per content, as one zstd frame
// keyed by the content's hash, whether put alone or with the entry that
// names them (in its transaction), and read back hash-checked.
func TestLedger_Blobs(t *testing.T) {
	l, path := mustCreate(t)
	ctx := context.Background()
	empty, err := l.PutBlob(ctx, nil)
	if err != nil || empty != ledger.Sum(nil) {
		t.Fatalf("PutBlob(empty) = %s, %v", empty, err)
	}
	if b, err := l.GetBlob(empty); err != nil || len(b) != 0 {
		t.Errorf("GetBlob(empty) = %q, %v", b, err)
	}
	content := []byte(strings.Repeat("compressible content ", 1000))
	h, _ := l.PutBlob(ctx, content)
	for i := 0; i < 3; i++ {
		if h2, err := l.PutBlob(ctx, content); err != nil || h2 != h {
			t.Fatalf("PutBlob again = %s, %v", h2, err)
		}
	}
	if got, err := l.GetBlob(h); err != nil || string(got) != string(content) {
		t.Errorf("GetBlob = %d bytes, %v", len(got), err)
	}
	info, err := l.StatBlob(h)
	if err != nil || info.Hash != h || info.Size != int64(len(content)) || info.CompressedSize <= 0 || info.CompressedSize >= len(content) {
		t.Errorf("StatBlob = %+v, %v", info, err)
	}
	absent := ledger.Sum([]byte("absent"))
	if _, err := l.StatBlob(absent); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("StatBlob(absent) = %v, want ErrNotFound", err)
	}
	if _, err := l.GetBlob(absent); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("GetBlob(absent) = %v, want ErrNotFound", err)
	}
	// Record.Blobs: a 1 MiB binary blob, and two records in one call
	// naming the same content.
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	bh := ledger.Sum(big)
	other := []byte("other content\x00\xff")
	ho := ledger.Sum(other)
	rec := func(h ledger.Hash, c []byte) ledger.Record {
		return ledger.Record{Type: "chronicle.snapshot", Data: map[string]any{"pre_blob": h.String()}, Blobs: [][]byte{c}}
	}
	if _, err := l.Append(ctx, ledger.Async, rec(bh, big), rec(ho, other), rec(ho, other)); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := l.GetBlob(bh); err != nil || len(got) != len(big) {
		t.Errorf("1 MiB blob: %d bytes, %v", len(got), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// On disk: exactly the distinct blobs, each a zstd frame of its
	// content keyed by its hash.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	stored := map[ledger.Hash]int{}
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("blobs")).ForEach(func(k, v []byte) error {
			c, err := dec.DecodeAll(v, nil)
			if err != nil || ledger.Sum(c) != ledger.Hash(k) {
				t.Errorf("blob %x: not a zstd frame of content hashing to its key (%v)", k, err)
			}
			stored[ledger.Hash(k)] = len(c)
			return nil
		})
	})
	db.Close()
	want := map[ledger.Hash]int{empty: 0, h: len(content), bh: len(big), ho: len(other)}
	if !reflect.DeepEqual(stored, want) {
		t.Errorf("blobs bucket %v, want %v", stored, want)
	}
}

// TestAppend_RefusesOverMaxEntrySize: the store never holds an entry its
// export reader would refuse as over-long; the ledger is unchanged and
// goes on.
func TestAppend_RefusesOverMaxEntrySize(t *testing.T) {
	lg := ledgertest.New(t, filepath.Join(t.TempDir(), "ledger.db"), 1)
	l, err := ledger.Open(lg.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := map[string]string{"text": strings.Repeat("a", ledger.MaxLineSize)}
	if _, err := l.Append(context.Background(), ledger.Sync, ledger.Record{Type: "ledger.note", Data: big}); !errors.Is(err, ledger.ErrInvalidRecord) {
		t.Fatalf("append of an over-long entry: %v, want ErrInvalidRecord", err)
	}
	fits := map[string]string{"text": strings.Repeat("a", ledger.MaxLineSize-1024)}
	if _, err := l.Append(context.Background(), ledger.Sync, ledger.Record{Type: "ledger.note", Data: fits}); err != nil {
		t.Fatalf("append of an entry just under the limit: %v", err)
	}
}
