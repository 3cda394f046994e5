package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestLedger_Create pins the genesis entry byte for byte (a fixed clock in
// another zone, written as UTC, and a fixed ledger id), the head, and the
// modes of the file and of the directories Create makes.
func TestLedger_Create(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	path := filepath.Join(t.TempDir(), "a", "b", "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true, LedgerID: "0123456789abcdef0123456789abcdef", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer ledgertest.MustVerify(t, path)
	defer l.Close()
	g, err := l.Get(0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"created":"2026-01-02T02:04:05.000000006Z","format":"opx-ledger/1","ledger_id":"0123456789abcdef0123456789abcdef"},` +
		`"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"2026-01-02T02:04:05.000000006Z","type":"ledger.genesis"}`
	if string(g.Raw) != want {
		t.Errorf("genesis\n got %s\nwant %s", g.Raw, want)
	}
	h, err := l.Head()
	if err != nil || h != (ledger.Head{LedgerID: "0123456789abcdef0123456789abcdef", Seq: 0, Hash: ledger.Sum([]byte(want))}) {
		t.Errorf("head %+v, %v", h, err)
	}
	if l.ID() != h.LedgerID || l.Path() != path || l.ReadOnly() {
		t.Errorf("ID %q Path %q ReadOnly %v", l.ID(), l.Path(), l.ReadOnly())
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	for _, p := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", p, fi.Mode().Perm(), err)
		}
	}
	// A random ledger id is 32 lowercase hex.
	r, err := ledger.Create(filepath.Join(t.TempDir(), "r.db"), ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if id := r.ID(); len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Errorf("random ledger id %q", id)
	}
	r.Close()
}

// TestLedger_Create_Refuses: a ledger id that is not 32 lowercase hex, and
// anything already at the path (a ledger, open or not, a dangling symlink,
// an empty file, a directory), is refused and left as it was.
func TestLedger_Create_Refuses(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"short", strings.Repeat("A", 32), strings.Repeat("g", 32), strings.Repeat("0", 34)} {
		p := filepath.Join(dir, id+".db")
		if _, err := ledger.Create(p, ledger.Options{LedgerID: id}); err == nil {
			t.Errorf("Create with ledger id %q succeeded", id)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("refused Create left %s", p)
		}
	}
	_, open := mustCreate(t)
	link := filepath.Join(dir, "link.db")
	os.Symlink(filepath.Join(dir, "nowhere"), link)
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	for _, p := range []string{open, link, empty, dir} {
		if _, err := ledger.Create(p, ledger.Options{}); !errors.Is(err, ledger.ErrExists) {
			t.Errorf("Create(%s) = %v, want ErrExists", p, err)
		}
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Error("Create wrote to an existing empty file")
	}
}

// TestLedger_Open_Errors opens files that are not ledgers (or not of this
// format), for writing and read-only: each is refused with the right
// sentinel, without a panic, and left unchanged.
func TestLedger_Open_Errors(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 5)
	good, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raw := func(b []byte) func(string) {
		return func(p string) {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// boltWith makes a bbolt file holding only the named buckets (meta
	// with the right format, when there is one).
	boltWith := func(buckets ...string) func(string) {
		return func(p string) {
			db, err := bolt.Open(p, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Update(func(tx *bolt.Tx) error {
				for _, b := range buckets {
					if _, err := tx.CreateBucket([]byte(b)); err != nil {
						return err
					}
				}
				if m := tx.Bucket([]byte("meta")); m != nil {
					return m.Put([]byte("format"), []byte(ledger.Format))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	ledgerWith := func(edit func(tx *bolt.Tx) error) func(string) {
		return func(p string) {
			ledgertest.Copy(t, src.Path, p)
			ledgertest.Edit(t, p, edit)
		}
	}
	tests := []struct {
		name string
		make func(path string) // nil: nothing at the path
		want error
	}{
		{"missing", nil, ledger.ErrNotExist},
		{"directory", func(p string) { os.Mkdir(p, 0o700) }, ledger.ErrNotLedger},
		{"empty", raw(nil), ledger.ErrNotLedger},
		{"text", raw([]byte(strings.Repeat("not a ledger\n", 1000))), ledger.ErrNotLedger},
		{"zeros 16k", raw(make([]byte, 16384)), ledger.ErrNotLedger},
		{"first byte", raw(good[:1]), ledger.ErrNotLedger},
		{"first page only", raw(good[:4096]), ledger.ErrNotLedger}, // bbolt: "file size too small"
		{"meta pages zeroed", raw(append(make([]byte, 8192), good[8192:]...)), ledger.ErrNotLedger},
		{"magics overwritten", raw(func() []byte {
			b := bytes.Clone(good)
			copy(b[16:], "XXXX") // both meta pages: bbolt falls back to the second
			copy(b[4096+16:], "XXXX")
			return b
		}()), ledger.ErrNotLedger},
		{"bbolt, other buckets", boltWith("other"), ledger.ErrNotLedger},
		{"bbolt, only entries", boltWith("entries"), ledger.ErrNotLedger},
		{"bbolt, no blobs", boltWith("entries", "meta"), ledger.ErrNotLedger},
		{"bbolt, no entries", boltWith("meta", "blobs"), ledger.ErrNotLedger},
		{"format opx-ledger/2", ledgerWith(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte("opx-ledger/2"))
		}), ledger.ErrFormat},
		{"no format", ledgerWith(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("format")) }), ledger.ErrFormat},
	}
	for i, tt := range tests {
		p := filepath.Join(dir, fmt.Sprintf("%d.db", i))
		if tt.make != nil {
			tt.make(p)
		}
		before, _ := os.ReadFile(p)
		for _, ro := range []bool{false, true} {
			var l *ledger.Ledger
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s (read-only %v): open panicked: %v", tt.name, ro, r)
					}
				}()
				if ro {
					l, err = ledger.OpenReadOnly(p)
				} else {
					l, err = ledger.Open(p, ledger.Options{NoSync: true})
				}
			}()
			if err == nil {
				l.Close()
				t.Errorf("%s (read-only %v): opened", tt.name, ro)
			} else if !errors.Is(err, tt.want) {
				t.Errorf("%s (read-only %v): %v, want %v", tt.name, ro, err, tt.want)
			}
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
			t.Errorf("%s: a refused open changed the file", tt.name)
		}
	}
}

// TestLedger_Locking: one writer or any number of readers hold the file;
// everyone else gets ErrLocked after the lock timeout.
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
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r1, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	if _, err := ledger.Open(path, ledger.Options{LockTimeout: 20 * time.Millisecond}); !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("writer while readers hold the file = %v, want ErrLocked", err)
	}
	r1.Close()
	r2.Close()
	w, err := ledger.Open(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatalf("writer after the readers closed: %v", err)
	}
	w.Close()
}

// TestLedger_ReadOnly: a reader refuses every write and serves reads.
func TestLedger_ReadOnly(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 6)
	l, err := ledger.OpenReadOnly(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if !l.ReadOnly() || l.ID() != src.Head.LedgerID {
		t.Errorf("ReadOnly %v ID %q", l.ReadOnly(), l.ID())
	}
	for _, d := range []ledger.Durability{ledger.Sync, ledger.Async} {
		if _, err := l.Append(ctx, d, note(1)); !errors.Is(err, ledger.ErrReadOnly) {
			t.Errorf("%v Append = %v, want ErrReadOnly", d, err)
		}
	}
	if _, err := l.PutBlob(ctx, []byte("x")); !errors.Is(err, ledger.ErrReadOnly) {
		t.Errorf("PutBlob = %v, want ErrReadOnly", err)
	}
	if err := l.Sync(ctx); err != nil {
		t.Errorf("Sync on a reader = %v", err)
	}
	if h, err := l.Head(); err != nil || h != src.Head {
		t.Errorf("Head = %+v, %v; want %+v", h, err, src.Head)
	}
	e, err := l.Get(4)
	if err != nil || e.Seq != 4 || !strings.Contains(string(e.Data), `"text":"entry number 4"`) {
		t.Errorf("Get(4) = %s, %v", e.Raw, err)
	}
}

func TestWorkspaceID_DefaultPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "ws")
	os.Mkdir(real, 0o700)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	a, err := ledger.WorkspaceID(real)
	if err != nil || len(a) != 32 {
		t.Fatalf("WorkspaceID = %q, %v", a, err)
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if want := ledger.Sum([]byte(resolved)).String()[:32]; a != want {
		t.Errorf("WorkspaceID = %s, want the first 16 bytes of BLAKE3(%q) = %s", a, resolved, want)
	}
	if b, _ := ledger.WorkspaceID(link); b != a {
		t.Errorf("through a symlink: %s, want %s", b, a)
	}
	if c, _ := ledger.WorkspaceID(real + "/."); c != a {
		t.Errorf("unclean path: %s, want %s", c, a)
	}
	t.Setenv("XDG_STATE_HOME", "/state")
	if p, err := ledger.DefaultPath(a); err != nil || p != "/state/opx/"+a+"/ledger.db" {
		t.Errorf("DefaultPath = %s, %v", p, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, err := ledger.DefaultPath("w"); err != nil || p != "/home/u/.local/state/opx/w/ledger.db" {
		t.Errorf("DefaultPath without XDG_STATE_HOME = %s, %v", p, err)
	}
}
