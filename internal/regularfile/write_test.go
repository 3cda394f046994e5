package regularfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/internal/regularfile"
)

func TestWriteAtomic_Refusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		notRegular bool
	}{
		{"a device", "/dev/null", true},
		{"a directory", dir, true},
		{"a FIFO", fifo, true},
		{"a dangling symbolic link", dangling, false},
		{"a missing directory", filepath.Join(dir, "no", "file"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.Lstat(tc.path)
			err := regularfile.WriteAtomic(tc.path, []byte("x"), 0)
			if err == nil {
				t.Fatalf("WriteAtomic(%s) = nil, want a refusal", tc.path)
			}
			if got := errors.Is(err, regularfile.ErrNotRegular); got != tc.notRegular {
				t.Errorf("errors.Is(%v, ErrNotRegular) = %v, want %v", err, got, tc.notRegular)
			}
			if before != nil {
				after, aerr := os.Lstat(tc.path)
				if aerr != nil || after.Mode() != before.Mode() {
					t.Errorf("%s changed: %v -> %v (%v)", tc.path, before.Mode(), after, aerr)
				}
			}
			// A missing directory shows only when the file is created.
			if err := regularfile.CheckReplaceable(tc.path); err == nil && tc.name != "a missing directory" {
				t.Errorf("CheckReplaceable(%s) = nil, want the same refusal", tc.path)
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestWriteAtomic_Modes(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		perm os.FileMode
		want os.FileMode
	}{
		{"keeps the replaced file's mode", 0, 0o644},
		{"sets the mode asked for", 0o600, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := regularfile.WriteAtomic(link, []byte(tc.name), tc.perm); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(target)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != tc.want {
				t.Fatalf("%s: %v, %v; want a regular file of mode %v", target, fi.Mode(), err, tc.want)
			}
			if b, _ := os.ReadFile(target); string(b) != tc.name {
				t.Errorf("%s holds %q", target, b)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the symbolic link was replaced: %v, %v", fi.Mode(), err)
			}
		})
	}
	fresh := filepath.Join(dir, "fresh")
	if err := regularfile.WriteAtomic(fresh, []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a new file: %v, %v; want mode 0600", fi.Mode(), err)
	}
}
