package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// sourceOf reads a ledger's stored entries and blob frames.
func sourceOf(t *testing.T, path string) (raws [][]byte, frames map[ledger.Hash][]byte) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	frames = map[ledger.Hash][]byte{}
	err = l.RangeRaw(0, ^uint64(0), func(seq uint64, raw []byte) error {
		raws = append(raws, bytes.Clone(raw))
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return err
		}
		refs, _ := ledger.BlobRefs(e.Data)
		for _, h := range refs {
			f, err := l.BlobFrame(h)
			if err != nil {
				return err
			}
			frames[h] = f
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return raws, frames
}

func TestMirror_SameLedger(t *testing.T) {
	dir := t.TempDir()
	src := ledgertest.New(t, filepath.Join(dir, "src.db"), 40)
	raws, frames := sourceOf(t, src.Path)
	ctx := context.Background()
	p := &countByType{}
	mpath := filepath.Join(dir, "m", "ledger.db")
	m, err := ledger.CreateMirror(mpath, raws[0], ledger.Options{NoSync: true, Projections: []ledger.Projection{p}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID() != src.Head.LedgerID || !m.IsMirror() {
		t.Fatalf("mirror id %s (mirror %v), source %s", m.ID(), m.IsMirror(), src.Head.LedgerID)
	}
	// Blobs first (the shipper sends them before the entry naming them),
	// entries in batches of various sizes, some Async.
	for h, f := range frames {
		if err := m.PutBlobFrame(ctx, ledger.Async, h, f); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(raws); {
		n := min(1+i%7, len(raws)-i)
		d := ledger.Async
		if i%2 == 0 {
			d = ledger.Sync
		}
		if _, err := m.AppendVerbatim(ctx, d, raws[i:i+n]...); err != nil {
			t.Fatalf("append %d..%d: %v", i, i+n-1, err)
		}
		i += n
	}
	if next, prev := m.MirrorNext(); next != src.Head.Seq+1 || prev != src.Head.Hash {
		t.Fatalf("next %d %s, want %d %s", next, prev, src.Head.Seq+1, src.Head.Hash)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, mpath)
	got, gotFrames := sourceOf(t, mpath)
	if len(got) != len(raws) {
		t.Fatalf("%d entries, want %d", len(got), len(raws))
	}
	for i := range raws {
		if !bytes.Equal(got[i], raws[i]) {
			t.Fatalf("entry %d differs", i)
		}
	}
	for h, f := range frames {
		if !bytes.Equal(gotFrames[h], f) {
			t.Fatalf("blob %s differs", h)
		}
	}
	sl, _ := ledger.OpenReadOnly(src.Path)
	defer sl.Close()
	ml, err := ledger.OpenMirror(mpath, ledger.Options{NoSync: true, Projections: []ledger.Projection{p}})
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Close()
	sth, err1 := sl.TreeHead()
	mth, err2 := ml.TreeHead()
	if err1 != nil || err2 != nil || sth != mth {
		t.Fatalf("tree heads %v %v (%v %v)", sth, mth, err1, err2)
	}
	if got := stored(t, ml, p); len(got) == 0 {
		t.Fatal("projection not folded")
	}
}

func TestMirror_Refusals(t *testing.T) {
	dir := t.TempDir()
	src := ledgertest.New(t, filepath.Join(dir, "src.db"), 8)
	raws, frames := sourceOf(t, src.Path)
	ctx := context.Background()
	mpath := filepath.Join(dir, "m.db")

	if _, err := ledger.CreateMirror(mpath, raws[1], ledger.Options{}); !isKind(err, ledger.KindGap) {
		t.Fatalf("mirror from entry 1: %v", err)
	}
	if _, err := ledger.CreateMirror(mpath, []byte(`{"junk":1}`), ledger.Options{}); !isKind(err, ledger.KindUnreadable) {
		t.Fatalf("mirror from junk: %v", err)
	}
	m, err := ledger.CreateMirror(mpath, raws[0], ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.CreateMirror(mpath, raws[0], ledger.Options{}); !errors.Is(err, ledger.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	forged := bytes.Replace(raws[2], []byte("entry number 2"), []byte("entry number X"), 1)
	cases := []struct {
		name string
		in   [][]byte
		kind ledger.Kind
	}{
		{"gap", [][]byte{raws[2]}, ledger.KindGap},
		{"replay of genesis", [][]byte{raws[0]}, ledger.KindSeqMismatch},
		{"junk", [][]byte{[]byte("{not json")}, ledger.KindUnreadable},
		{"empty", [][]byte{{}}, ledger.KindUnreadable},
		{"too large", [][]byte{make([]byte, ledger.MaxLineSize+1)}, ledger.KindUnreadable},
		// The whole call is refused: entry 1 is not queued either.
		{"third after forged second", [][]byte{raws[1], forged, raws[3]}, ledger.KindHashMismatch},
	}
	for _, c := range cases {
		if _, err := m.AppendVerbatim(ctx, ledger.Sync, c.in...); !isKind(err, c.kind) {
			t.Errorf("%s: %v, want %s", c.name, err, c.kind)
		}
		if next, _ := m.MirrorNext(); next != 1 {
			t.Fatalf("%s: next %d after a refusal", c.name, next)
		}
	}
	for h, f := range frames {
		bad := bytes.Clone(f)
		bad[len(bad)/2] ^= 1
		if err := m.PutBlobFrame(ctx, ledger.Sync, h, bad); !isKind(err, ledger.KindBlobCorrupt) {
			t.Errorf("damaged frame: %v", err)
		}
		var other ledger.Hash
		if err := m.PutBlobFrame(ctx, ledger.Sync, other, f); !isKind(err, ledger.KindBlobCorrupt) {
			t.Errorf("frame under another hash: %v", err)
		}
		if ok, _ := m.HasBlob(h); ok {
			t.Errorf("a refused frame was stored")
		}
	}
	// Nothing of this machine goes into a mirror.
	if _, err := m.Append(ctx, ledger.Sync, ledger.Record{Type: ledger.TypeNote}); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("append: %v", err)
	}
	if _, err := m.Checkpoint(ctx, ledger.Sync); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("checkpoint: %v", err)
	}
	if _, err := m.PutBlob(ctx, []byte("x")); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("put blob: %v", err)
	}
	for h, f := range frames {
		if err := m.PutBlobFrame(ctx, ledger.Async, h, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.AppendVerbatim(ctx, ledger.Sync, raws[1:]...); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := m.AppendVerbatim(ctx, ledger.Sync, raws[1]); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if err := m.PutBlobFrame(ctx, ledger.Sync, ledger.Hash{}, nil); err == nil {
		t.Errorf("blob after close: taken")
	}
	ledgertest.MustVerify(t, mpath)

	// Opened as an ordinary ledger it is still a mirror.
	l, err := ledger.Open(mpath, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: ledger.TypeNote}); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("append after Open: %v", err)
	}
	l.Close()
	// And an ordinary ledger is no mirror.
	if _, err := ledger.OpenMirror(src.Path, ledger.Options{}); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("OpenMirror of a ledger: %v", err)
	}
	sl, err := ledger.Open(src.Path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.AppendVerbatim(ctx, ledger.Sync, raws[1]); !errors.Is(err, ledger.ErrMirror) {
		t.Errorf("AppendVerbatim on a ledger: %v", err)
	}
	sl.Close()
}

func isKind(err error, k ledger.Kind) bool {
	var ie *ledger.IntegrityError
	return errors.As(err, &ie) && ie.Kind == k
}

// A crash while a mirror is created leaves at most its temporary file
// beside it, never a file at its path that is not a mirror (review 17
// #10); the next create takes the place of that leftover.
func TestMirror_CreateIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	src := ledgertest.New(t, filepath.Join(dir, "src.db"), 3)
	raws, _ := sourceOf(t, src.Path)
	mpath := filepath.Join(dir, "m", "ledger.db")
	if err := os.MkdirAll(filepath.Dir(mpath), 0o700); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(filepath.Dir(mpath), ".ledger.db.creating")
	if err := os.WriteFile(leftover, []byte("half a bbolt file"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := ledger.CreateMirror(mpath, raws[0], ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
	if next, _ := m.MirrorNext(); next != 1 || !m.IsMirror() {
		t.Errorf("mirror next %d, mirror %v", next, m.IsMirror())
	}
	// A refused genesis leaves nothing behind.
	bad := filepath.Join(dir, "n", "ledger.db")
	if _, err := ledger.CreateMirror(bad, raws[1], ledger.Options{}); err == nil {
		t.Fatal("mirror from entry 1")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused create left %s: %v", bad, err)
	}
}
