package chronicle_test

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// workspace makes a workspace with files (path -> content) and returns
// its directory and Chronicle's view of it (the engine's, resolved
// beneath the root).
func workspace(t testing.TB, files map[string]string) (string, chronicle.Workspace) {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := executor.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return dir, undo.WorkspaceFS(w)
}

// memStore is a Store that keeps what it is given.
type memStore struct {
	mu   sync.Mutex
	have map[ledger.Hash][]byte
	puts int
}

func (s *memStore) Missing(h ledger.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.have[h]
	return !ok
}

func (s *memStore) Put(h ledger.Hash, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ledger.Sum(b) != h {
		panic("put with the wrong hash")
	}
	s.have[h] = append([]byte(nil), b...)
	s.puts++
	return nil
}

// TestScanner_Scan_Incremental: a cold scan reads every file and stores
// each distinct content once; a warm scan of an unchanged tree reads
// nothing; a change of the same size is seen (ctime moves).
func TestScanner_Scan_Incremental(t *testing.T) {
	defer chronicle.SetRacyWindow(0)()
	dir, fsys := workspace(t, map[string]string{"a.txt": "same", "b.txt": "same", "src/main.go": "package main\n", "src/deep/x": "x"})
	sc := chronicle.NewScanner(fsys)
	st := &memStore{have: map[ledger.Hash][]byte{}}
	res, err := sc.Scan(st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != 4 || st.puts != 3 {
		t.Errorf("cold scan read %d files and stored %d blobs, want 4 and 3", res.Read, st.puts)
	}
	var paths []string
	for _, f := range res.Tree.Items {
		paths = append(paths, f.Path+"="+f.State)
		if f.State == event.StateFile {
			h, _ := ledger.ParseHash(f.Blob)
			if st.have[h] == nil {
				t.Errorf("%s: blob not stored", f.Path)
			}
		}
	}
	if got, want := paths, []string{"a.txt=file", "b.txt=file", "src=dir", "src/deep=dir", "src/deep/x=file", "src/main.go=file"}; len(got) != len(want) || got[2] != want[2] || got[5] != want[5] {
		t.Errorf("tree %v, want %v", got, want)
	}

	res2, err := sc.Scan(st)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Read != 0 {
		t.Errorf("warm scan of an unchanged tree read %d files", res2.Read)
	}
	if res2.Tree.Hash() != res.Tree.Hash() {
		t.Errorf("unchanged tree, different manifest")
	}

	// Same size, same mtime: only the ctime (and content) differ.
	p := filepath.Join(dir, "a.txt")
	fi, _ := os.Stat(p)
	if err := os.WriteFile(p, []byte("SAME"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	res3, err := sc.Scan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if res3.Read != 1 || res3.Tree.Get("a.txt").Blob != ledger.Sum([]byte("SAME")).String() {
		t.Errorf("same-size rewrite: read %d, a.txt %+v", res3.Read, res3.Tree.Get("a.txt"))
	}
}

// TestScanner_Scan_Racy: a file hashed within the racy window of its
// last change is hashed again on the next scan, so a second change in the
// same timestamp tick is not missed.
func TestScanner_Scan_Racy(t *testing.T) {
	defer chronicle.SetRacyWindow(time.Hour)()
	_, fsys := workspace(t, map[string]string{"a.txt": "one"})
	sc := chronicle.NewScanner(fsys)
	for i := 0; i < 2; i++ {
		res, err := sc.Scan(nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Read != 1 {
			t.Errorf("scan %d read %d files; a racy entry must be read every time", i, res.Read)
		}
	}
}

// TestScanner_Scan_Unrecorded: names that are not UTF-8 and special files
// are left out and named, never silently dropped; symlinks are recorded
// as links, not followed.
func TestScanner_Scan_Unrecorded(t *testing.T) {
	dir, fsys := workspace(t, map[string]string{"ok.txt": "ok"})
	if err := os.WriteFile(filepath.Join(dir, "bad\xffname"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res, err := chronicle.NewScanner(fsys).Scan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unrecorded) != 2 {
		t.Errorf("unrecorded %q, want the bad name and the fifo", res.Unrecorded)
	}
	if l := res.Tree.Get("link"); l.State != event.StateSymlink || l.Target != "/etc/passwd" {
		t.Errorf("link recorded as %+v", l)
	}
	if len(res.Tree.Items) != 2 {
		t.Errorf("tree %+v", res.Tree.Items)
	}
}

// TestScanner_Scan_OverLimit: a file over the limit is recorded by hash,
// with the reason, and its content is not stored.
func TestScanner_Scan_OverLimit(t *testing.T) {
	_, fsys := workspace(t, map[string]string{"big.bin": "0123456789", "small": "1"})
	sc := chronicle.NewScanner(fsys)
	sc.Limit = 5
	st := &memStore{have: map[ledger.Hash][]byte{}}
	res, err := sc.Scan(st)
	if err != nil {
		t.Fatal(err)
	}
	big := res.Tree.Get("big.bin")
	if big.Blob != "" || big.Hash != ledger.Sum([]byte("0123456789")).String() || big.Omitted == "" || st.puts != 1 {
		t.Errorf("big.bin %+v, %d puts", big, st.puts)
	}
}
