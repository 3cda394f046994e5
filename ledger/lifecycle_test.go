package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// mustCreate creates a ledger (no fsync: these tests are about logic) and
// verifies it strictly when the test ends.
func mustCreate(t *testing.T) (*ledger.Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil && !errors.Is(err, ledger.ErrClosed) {
			t.Errorf("close: %v", err)
		}
		ledgertest.MustVerify(t, path)
	})
	return l, path
}

func note(i int) ledger.Record {
	return ledger.Record{Session: "s", Type: "ledger.note", Data: map[string]any{"author": "t", "text": fmt.Sprint("n", i)}}
}

func TestLedger_Create(t *testing.T) {
	l, path := mustCreate(t)
	h, err := l.Head()
	if err != nil || h.Seq != 0 || h.LedgerID != l.ID() || len(l.ID()) != 32 {
		t.Fatalf("head %+v, %v", h, err)
	}
	g, err := l.Get(0)
	if err != nil {
		t.Fatal(err)
	}
	var data struct{ Format, LedgerID, Created string }
	json.Unmarshal(g.Data, &struct {
		Format   *string `json:"format"`
		LedgerID *string `json:"ledger_id"`
		Created  *string `json:"created"`
	}{&data.Format, &data.LedgerID, &data.Created})
	if g.Type != ledger.TypeGenesis || g.Prev != ledger.ZeroHash || data.Format != ledger.Format || data.LedgerID != l.ID() || data.Created == "" {
		t.Errorf("genesis %s", g.Raw)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := ledger.Create(path, ledger.Options{}); !errors.Is(err, ledger.ErrExists) {
		t.Errorf("Create over an existing ledger = %v, want ErrExists", err)
	}
}

func TestLedger_Open_Errors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ledger.Open(filepath.Join(dir, "none.db"), ledger.Options{}); !errors.Is(err, ledger.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte("this is not a bbolt file, just some text that is long enough to look like a header"), 0o600)
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	plain := filepath.Join(dir, "plain.db")
	db, err := bolt.Open(plain, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
	db.Close()
	for _, p := range []string{garbage, empty, plain, dir} {
		if _, err := ledger.Open(p, ledger.Options{}); !errors.Is(err, ledger.ErrNotLedger) {
			t.Errorf("Open(%s) = %v, want ErrNotLedger", filepath.Base(p), err)
		}
		if _, err := ledger.OpenReadOnly(p); !errors.Is(err, ledger.ErrNotLedger) {
			t.Errorf("OpenReadOnly(%s) = %v, want ErrNotLedger", filepath.Base(p), err)
		}
	}
	// A ledger of another format.
	l, path := mustCreate(t)
	l.Close()
	ledgertest.Edit(t, ledgertest.Copy(t, path, filepath.Join(dir, "v2.db")), func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte("opx-ledger/2"))
	})
	if _, err := ledger.Open(filepath.Join(dir, "v2.db"), ledger.Options{}); !errors.Is(err, ledger.ErrFormat) {
		t.Errorf("Open(format opx-ledger/2) = %v, want ErrFormat", err)
	}
}

func TestLedger_Locking(t *testing.T) {
	l, path := mustCreate(t)
	start := time.Now()
	if _, err := ledger.Open(path, ledger.Options{LockTimeout: 50 * time.Millisecond}); !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("second writer = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waited %v for the lock", d)
	}
	if _, err := ledger.OpenReadOnly(path); !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("reader while a writer holds the file = %v, want ErrLocked", err)
	}
	l.Close()
	r1, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	defer r2.Close()
	if _, err := r1.Append(context.Background(), ledger.Sync, note(1)); !errors.Is(err, ledger.ErrReadOnly) {
		t.Errorf("Append on a reader = %v, want ErrReadOnly", err)
	}
	if !r1.ReadOnly() {
		t.Error("ReadOnly() = false")
	}
}

func TestLedger_Append_Invalid(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	for name, rec := range map[string]ledger.Record{
		"empty type": {Type: "", Data: map[string]any{}},
		"float":      {Type: "x.y", Data: map[string]any{"f": 1.5}},
		"array":      {Type: "x.y", Data: []int{1}},
		"raw array":  {Type: "x.y", Data: json.RawMessage(`[1]`)},
		"bad json":   {Type: "x.y", Data: json.RawMessage(`{"a":`)},
		"dup key":    {Type: "x.y", Data: json.RawMessage(`{"a":1,"a":2}`)},
		"big int":    {Type: "x.y", Data: map[string]any{"n": uint64(1) << 60}},
	} {
		if _, err := l.Append(ctx, ledger.Sync, note(1), rec); !errors.Is(err, ledger.ErrInvalidRecord) {
			t.Errorf("%s: Append = %v, want ErrInvalidRecord", name, err)
		}
	}
	if h, _ := l.Head(); h.Seq != 0 {
		t.Errorf("invalid appends left entries: head %d", h.Seq)
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
	if _, err := l.Get(4); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get(4) = %v, want ErrNotFound", err)
	}
	var seqs []uint64
	l.Range(1, 2, func(e ledger.Entry) error { seqs = append(seqs, e.Seq); return nil })
	raw := 0
	l.RangeRaw(0, 99, func(uint64, []byte) error { raw++; return nil })
	tail, _ := l.Tail(2)
	if fmt.Sprint(seqs) != "[1 2]" || raw != 4 || len(tail) != 2 || tail[1].Seq != 3 {
		t.Errorf("Range %v, RangeRaw %d, Tail %v", seqs, raw, tail)
	}
	stop := errors.New("stop")
	if err := l.Range(0, 3, func(ledger.Entry) error { return stop }); err != stop {
		t.Errorf("Range passes the callback's error: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, ledger.Sync, note(4)); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
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

// TestLedger_ConcurrentAppenders appends from many goroutines with mixed
// durability: seqs are unique and contiguous, each goroutine's entries are
// in its own order, and the ledger verifies.
func TestLedger_ConcurrentAppenders(t *testing.T) {
	l, _ := mustCreate(t)
	const workers, each = 32, 100
	var wg sync.WaitGroup
	got := make([][]uint64, workers)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				d := ledger.Async
				if (w+i)%3 == 0 {
					d = ledger.Sync
				}
				rec := ledger.Record{Session: fmt.Sprint("w", w), Type: "ledger.note", Data: map[string]any{"author": "t", "text": fmt.Sprint(i)}}
				if i%10 == 0 {
					content := []byte(fmt.Sprintf("blob %d/%d", w, i))
					rec.Data.(map[string]any)["blob"] = ledger.Sum(content).String()
					rec.Blobs = [][]byte{content}
				}
				a, err := l.Append(context.Background(), d, rec)
				if err != nil {
					errs <- err
					return
				}
				got[w] = append(got[w], a[0].Seq)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for w, seqs := range got {
		for i, s := range seqs {
			if seen[s] {
				t.Fatalf("seq %d handed out twice", s)
			}
			seen[s] = true
			if i > 0 && s <= seqs[i-1] {
				t.Errorf("worker %d: seq %d after %d", w, s, seqs[i-1])
			}
		}
	}
	h, _ := l.Head()
	if h.Seq != workers*each || len(seen) != workers*each {
		t.Errorf("head %d, %d distinct seqs, want %d", h.Seq, len(seen), workers*each)
	}
	rep, err := l.Verify(ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK {
		t.Errorf("verify: %v %v", err, rep.Err())
	}
}

func TestLedger_Blobs(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	content := []byte("file content\x00with binary\xff")
	h, err := l.PutBlob(ctx, content)
	if err != nil || h != ledger.Sum(content) {
		t.Fatalf("PutBlob = %s, %v", h, err)
	}
	if h2, _ := l.PutBlob(ctx, content); h2 != h {
		t.Error("same content, different hash")
	}
	got, err := l.GetBlob(h)
	if err != nil || string(got) != string(content) {
		t.Errorf("GetBlob = %q, %v", got, err)
	}
	info, err := l.StatBlob(h)
	if err != nil || info.Hash != h || info.CompressedSize <= 0 {
		t.Errorf("StatBlob = %+v, %v", info, err)
	}
	if _, err := l.GetBlob(ledger.Sum([]byte("absent"))); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("GetBlob(absent) = %v, want ErrNotFound", err)
	}
	// Record.Blobs are stored in the entry's transaction.
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	bh := ledger.Sum(big)
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: "ledger.note", Data: map[string]any{"author": "t", "text": "x", "attachment": "big", "blob": bh.String()}, Blobs: [][]byte{big}}); err != nil {
		t.Fatal(err)
	}
	if got, err := l.GetBlob(bh); err != nil || len(got) != len(big) {
		t.Errorf("1 MiB blob: %d bytes, %v", len(got), err)
	}
}
