package chronicle_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// recordingFS logs the changes a rollback makes, in order.
type recordingFS struct {
	chronicle.Workspace
	log []string
}

func (r *recordingFS) WriteFile(rel string, data []byte, mode uint32) error {
	r.log = append(r.log, "write "+rel)
	return r.Workspace.WriteFile(rel, data, mode)
}

func (r *recordingFS) Chmod(rel string, mode uint32) error {
	r.log = append(r.log, fmt.Sprintf("chmod %s %#o", rel, mode))
	return r.Workspace.Chmod(rel, mode)
}

func (r *recordingFS) Mkdir(rel string, mode uint32) error {
	r.log = append(r.log, fmt.Sprintf("mkdir %s", rel))
	return r.Workspace.Mkdir(rel, mode)
}

type nopRecorder struct{ n uint64 }

func (r *nopRecorder) Record(context.Context, ledger.Durability, string, event.Payload, ...[]byte) (uint64, error) {
	r.n++
	return r.n, nil
}

type mapSource map[ledger.Hash][]byte

func (m mapSource) Range(uint64, uint64, func(ledger.Entry) error) error { return nil }
func (m mapSource) GetBlob(h ledger.Hash) ([]byte, error) {
	if b, ok := m[h]; ok {
		return b, nil
	}
	return nil, ledger.ErrNotFound
}

// TestRestore_ReadOnlyDirectoryLast: a read-only directory is restored
// writable, filled, and only then given its recorded mode (as a user who
// is not root, writing into it first would fail).
func TestRestore_ReadOnlyDirectoryLast(t *testing.T) {
	_, fsys := workspace(t, map[string]string{"keep": "k"})
	content := []byte("content\n")
	h := ledger.Sum(content)
	rec := &recordingFS{Workspace: fsys}
	plan := &chronicle.Plan{Snapshot: 1, Steps: []chronicle.Step{
		{Path: "ro", To: event.FileState{Path: "ro", State: event.StateDir, Mode: 0o555}, Now: event.FileState{Path: "ro", State: event.StateAbsent}},
		{Path: "ro/f.txt", To: event.FileState{Path: "ro/f.txt", State: event.StateFile, Mode: 0o444, Size: 8, Blob: h.String()},
			Now: event.FileState{Path: "ro/f.txt", State: event.StateAbsent}},
	}}
	if _, err := chronicle.NewIndex().Restore(context.Background(), plan, mapSource{h: content}, rec, &nopRecorder{}, false); err != nil {
		t.Fatal(err)
	}
	// The wrapper hides the batch writer, so each file is one write.
	got := strings.Join(rec.log, "; ")
	if want := "mkdir ro; chmod ro 0755; write ro/f.txt; chmod ro 0555"; got != want {
		t.Errorf("changes\n got %s\nwant %s", got, want)
	}
	b, err := fsys.ReadFile(filepath.Join("ro", "f.txt"))
	if err != nil || string(b) != "content\n" {
		t.Errorf("ro/f.txt %q %v", b, err)
	}
	fi, _ := fsys.Lstat("ro")
	if chronicle.ModeBits(fi.Mode()) != 0o555 {
		t.Errorf("ro mode %#o", fi.Mode().Perm())
	}
}

// failingBatch is a workspace whose batch write replaces every file and
// then fails (a directory fsync), as executor.Workspace.WriteFiles can.
type failingBatch struct{ chronicle.Workspace }

func (failingBatch) WriteFiles(f []chronicle.FileWrite) (int, error) {
	return len(f), errors.New("fsync: input/output error")
}

// TestRestore_BatchFailsAfterLastFile: the error is reported (and what
// was restored listed), never a panic that would take the engine down.
func TestRestore_BatchFailsAfterLastFile(t *testing.T) {
	_, fsys := workspace(t, map[string]string{"keep": "k"})
	content := []byte("x\n")
	h := ledger.Sum(content)
	plan := &chronicle.Plan{Snapshot: 5, Steps: []chronicle.Step{{Path: "a.txt",
		To:  event.FileState{Path: "a.txt", State: event.StateFile, Mode: 0o644, Size: 2, Blob: h.String()},
		Now: event.FileState{Path: "a.txt", State: event.StateAbsent}}}}
	out, err := chronicle.NewIndex().Restore(context.Background(), plan, mapSource{h: content}, failingBatch{fsys}, &nopRecorder{}, false)
	if err == nil || !strings.Contains(err.Error(), "input/output error") || out == nil || len(out.Restored) != 1 {
		t.Errorf("outcome %+v, err %v", out, err)
	}
}
