package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func testNote(i int) Record {
	return Record{Type: TypeNote, Data: map[string]any{"author": "t", "text": fmt.Sprint("note ", i)}}
}

// waitFor polls cond under the writer's lock until it holds, failing the
// test after five seconds.
func waitFor(t *testing.T, w *writer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// reopenAndCheck reopens the ledger at path and checks that it verifies
// strictly and holds exactly the entries 0..wantHead.
func reopenAndCheck(t *testing.T, path string, wantHead uint64, wantHash Hash) {
	t.Helper()
	l, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l.Close()
	h, err := l.Head()
	if err != nil || h.Seq != wantHead || h.Hash != wantHash {
		t.Errorf("head after reopen %d %s (%v), want %d %s", h.Seq, h.Hash, err, wantHead, wantHash)
	}
	if last, _ := l.Tail(1); len(last) != 1 || last[0].Seq != wantHead {
		t.Errorf("last stored entry %v, want seq %d", last, wantHead)
	}
	rep, err := l.Verify(VerifyOptions{Strict: true})
	if err != nil || !rep.OK || rep.Entries != wantHead+1 {
		t.Errorf("verify after reopen: %v %v, %d entries", err, rep.Err(), rep.Entries)
	}
}

// TestWriter_StickyFailure makes a commit fail (the bbolt file is closed
// underneath the writer) and checks that the ledger refuses every later
// append, and that reopening shows exactly what was acknowledged.
func TestWriter_StickyFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acked, err := l.Append(ctx, Sync, testNote(1), testNote(2))
	if err != nil {
		t.Fatal(err)
	}
	// The disk goes away: the next commit fails.
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, Sync, testNote(3)); err == nil {
		t.Fatal("Sync append on a failed store returned no error")
	}
	for _, d := range []Durability{Sync, Async} {
		if _, err := l.Append(ctx, d, testNote(4)); !errors.Is(err, ErrBroken) {
			t.Errorf("%v append after a failed commit = %v, want ErrBroken", d, err)
		}
	}
	if err := l.Sync(ctx); !errors.Is(err, ErrBroken) {
		t.Errorf("Sync after a failed commit = %v, want ErrBroken", err)
	}
	if err := l.Close(); !errors.Is(err, ErrBroken) {
		t.Errorf("Close = %v, want it to report ErrBroken", err)
	}
	reopenAndCheck(t, path, acked[1].Seq, acked[1].Hash)
	// A reopened ledger appends again, continuing the chain.
	l2, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if a, err := l2.Append(ctx, Sync, testNote(5)); err != nil || a[0].Seq != acked[1].Seq+1 {
		t.Errorf("append after reopen: %v %v", a, err)
	}
}

// TestWriter_FailedCommitFailsQueuedBatch: when a commit fails, the batch
// queued behind it (which chains onto the failed one) fails too: its Sync
// appender and a Sync call get ErrBroken, and so does everything after.
func TestWriter_FailedCommitFailsQueuedBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acked, err := l.Append(ctx, Sync, testNote(1))
	if err != nil {
		t.Fatal(err)
	}
	w := l.w
	w.cmu.Lock() // no batch commits until the test says so
	if _, err := l.Append(ctx, Async, testNote(2)); err != nil {
		t.Fatal(err)
	}
	// Take batch 1 the way the committer does, so batch 2 queues behind it.
	w.mu.Lock()
	b1 := w.cur
	w.cur, w.flying = nil, b1
	w.mu.Unlock()
	if _, err := l.Append(ctx, Async, testNote(3)); err != nil {
		t.Fatal(err)
	}
	appendErr := make(chan error, 1)
	go func() {
		_, err := l.Append(ctx, Sync, testNote(4))
		appendErr <- err
	}()
	waitFor(t, w, "the Sync append to join batch 2", func() bool { return w.cur != nil && len(w.cur.entries) == 2 && w.cur.hasSync })
	syncErr := make(chan error, 1)
	go func() { syncErr <- l.Sync(ctx) }()

	// The disk goes away, then batch 1 commits.
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	w.commit(b1)
	w.cmu.Unlock()

	if b1.err == nil {
		t.Fatal("the commit on a closed store succeeded")
	}
	for name, ch := range map[string]chan error{"Sync append queued behind the failed batch": appendErr, "Sync": syncErr} {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrBroken) {
				t.Errorf("%s = %v, want ErrBroken", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never returned", name)
		}
	}
	for _, d := range []Durability{Sync, Async} {
		if _, err := l.Append(ctx, d, testNote(5)); !errors.Is(err, ErrBroken) {
			t.Errorf("%v append after the failure = %v, want ErrBroken", d, err)
		}
	}
	if _, err := l.PutBlob(ctx, []byte("x")); !errors.Is(err, ErrBroken) {
		t.Errorf("PutBlob after the failure = %v, want ErrBroken", err)
	}
	if err := l.Close(); !errors.Is(err, ErrBroken) {
		t.Errorf("Close = %v, want ErrBroken", err)
	}
	reopenAndCheck(t, path, acked[0].Seq, acked[0].Hash)
}

// TestWriter_StickyUnderLoad: many Sync appenders are running when the
// store fails. Each appender either was told its entry is durable or got
// an error; after reopening, the ledger holds exactly the acknowledged
// entries, contiguous from genesis, and verifies.
func TestWriter_StickyUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const workers = 16
	var (
		mu       sync.Mutex
		acked    = map[uint64]Hash{}
		failures int
		wg       sync.WaitGroup
	)
	enough := make(chan struct{})
	var once sync.Once
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				a, err := l.Append(ctx, Sync, testNote(g*100000+i))
				mu.Lock()
				if err != nil {
					failures++
					mu.Unlock()
					if !errors.Is(err, ErrBroken) {
						t.Errorf("append failed with %v, want ErrBroken", err)
					}
					return
				}
				acked[a[0].Seq] = a[0].Hash
				if len(acked) >= 300 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}(g)
	}
	<-enough
	if err := l.db.Close(); err != nil { // the disk goes away mid-load
		t.Fatal(err)
	}
	wg.Wait()
	if failures != workers {
		t.Errorf("%d appenders saw the failure, want all %d", failures, workers)
	}
	if _, err := l.Append(ctx, Async, testNote(0)); !errors.Is(err, ErrBroken) {
		t.Errorf("append after the failure = %v, want ErrBroken", err)
	}
	if err := l.Close(); !errors.Is(err, ErrBroken) {
		t.Errorf("Close = %v, want ErrBroken", err)
	}
	seqs := make([]uint64, 0, len(acked))
	for s := range acked {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("acknowledged seqs are not contiguous from 1: %d at %d", s, i)
		}
	}
	last := seqs[len(seqs)-1]
	reopenAndCheck(t, path, last, acked[last])
	// Every acknowledged entry is on disk with the hash Append returned.
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.RangeRaw(1, last, func(seq uint64, raw []byte) error {
		if Sum(raw) != acked[seq] {
			t.Errorf("entry %d on disk differs from the acknowledged one", seq)
		}
		return nil
	})
}

// TestWriter_SyncWaitsForBatchInFlight: Sync with nothing queued waits for
// the batch the committer is writing, not only for queued ones.
func TestWriter_SyncWaitsForBatchInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		reopenAndCheck(t, path, 1, l.w.prev)
	}()
	// Hold bbolt's writer lock so the committer's transaction waits.
	held, release := make(chan struct{}), make(chan struct{})
	go l.db.Update(func(*bolt.Tx) error { close(held); <-release; return nil })
	<-held
	ctx := context.Background()
	a, err := l.Append(ctx, Async, testNote(1))
	if err != nil {
		t.Fatal(err)
	}
	w := l.w
	waitFor(t, w, "the committer to take the batch", func() bool { return w.cur == nil && w.flying != nil })
	done := make(chan error, 1)
	go func() { done <- l.Sync(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Sync returned (%v) while its entry was still being committed", err)
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sync never returned")
	}
	if h, _ := l.Head(); h.Seq != 1 || h.Hash != a[0].Hash {
		t.Errorf("head after Sync %+v, want %+v", h, a[0])
	}
}

// TestWriter_ContextEndsWaitNotAppend: a Sync append whose context ends
// while it waits reports the abandoned wait, but its entry stays queued
// and is committed with its announced seq and hash.
func TestWriter_ContextEndsWaitNotAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Create(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w := l.w
	w.cmu.Lock() // nothing commits until released
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	a, err := l.Append(ctx, Sync, testNote(1))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBroken) || len(a) != 1 || a[0].Seq != 1 {
		t.Fatalf("Append = %v, %v; want seq 1 and context.DeadlineExceeded", a, err)
	}
	w.cmu.Unlock()
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, err := l.Get(1)
	if err != nil || e.Hash() != a[0].Hash {
		t.Errorf("entry 1 = %v, %v; want hash %s", e.Hash(), err, a[0].Hash)
	}
	if b, err := l.Append(context.Background(), Sync, testNote(2)); err != nil || b[0].Seq != 2 {
		t.Errorf("next append = %v, %v", b, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := OpenReadOnly(path)
	h, _ := r.Head()
	r.Close()
	reopenAndCheck(t, path, 2, h.Hash)
}
