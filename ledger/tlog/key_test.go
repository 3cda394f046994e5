package tlog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestCreateKey_Load: the key is created 0600, loads back as the same
// key, and is never replaced.
func TestCreateKey_Load(t *testing.T) {
	dir := t.TempDir()
	s, err := tlog.CreateKey(dir, tlog.Origin(testID))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, tlog.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode())
	}
	l, err := tlog.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Verifier().String() != s.Verifier().String() {
		t.Fatalf("loaded key %s, created %s", l.Verifier(), s.Verifier())
	}
	text, err := l.Sign(1, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tlog.Open([]byte(text), s.Verifier()); err != nil {
		t.Fatalf("a note signed by the loaded key does not open with the created key's verifier: %v", err)
	}
	if _, err := tlog.CreateKey(dir, tlog.Origin(testID)); !errors.Is(err, tlog.ErrKeyExists) {
		t.Fatalf("second CreateKey: %v, want ErrKeyExists", err)
	}
	if l2, _ := tlog.LoadKey(dir); l2 == nil || l2.Verifier().String() != s.Verifier().String() {
		t.Fatal("the key changed after a refused CreateKey")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".checkpoint.key-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestLoadKey_Refusals: a key file others can reach, owned by another
// user, not a regular file, missing, oversized or damaged is refused with
// a clear error before it is used.
func TestLoadKey_Refusals(t *testing.T) {
	mk := func(t *testing.T, mode os.FileMode) string {
		dir := t.TempDir()
		if _, err := tlog.CreateKey(dir, tlog.Origin(testID)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, tlog.KeyFile), mode); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	write := func(t *testing.T, content string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tlog.KeyFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		want error
		says string
	}{
		{"group readable", func(t *testing.T) string { return mk(t, 0o640) }, tlog.ErrKeyInsecure, "mode 0640"},
		{"world readable", func(t *testing.T) string { return mk(t, 0o604) }, tlog.ErrKeyInsecure, "mode 0604"},
		{"group writable", func(t *testing.T) string { return mk(t, 0o620) }, tlog.ErrKeyInsecure, "chmod 600"},
		{"missing", func(t *testing.T) string { return t.TempDir() }, tlog.ErrNoKey, tlog.KeyFile},
		{"a directory", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, tlog.KeyFile), 0o700); err != nil {
				t.Fatal(err)
			}
			return dir
		}, regularfile.ErrNotRegular, "directory"},
		{"a FIFO", func(t *testing.T) string {
			dir := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(dir, tlog.KeyFile), 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, regularfile.ErrNotRegular, "FIFO"},
		{"oversized", func(t *testing.T) string { return write(t, strings.Repeat("k", tlog.MaxKeyFileBytes+1)) }, tlog.ErrMalformed, "more than"},
		{"garbage", func(t *testing.T) string { return write(t, "not a key\n") }, tlog.ErrMalformed, "signing key"},
		{"a verifier key instead", func(t *testing.T) string { return write(t, newSigner(t, "x").Verifier().String()) }, tlog.ErrMalformed, "signing key"},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name string
			dir  func(t *testing.T) string
			want error
			says string
		}{"owned by another user", func(t *testing.T) string {
			dir := mk(t, 0o600)
			if err := os.Chown(filepath.Join(dir, tlog.KeyFile), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return dir
		}, tlog.ErrKeyInsecure, "owned by uid 65534"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tlog.LoadKey(tt.dir(t))
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("LoadKey = %v, %v; want %v saying %q", s, err, tt.want, tt.says)
			}
		})
	}
}

// TestWriteNote: the note file is replaced whole, public, with no
// temporary file left, and ReadNote reads it back bounded.
func TestWriteNote(t *testing.T) {
	dir := t.TempDir()
	s := newSigner(t, tlog.Origin(testID))
	for size := uint64(1); size <= 3; size++ {
		text, err := s.Sign(size, [32]byte{byte(size)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.WriteNote(dir, text); err != nil {
			t.Fatal(err)
		}
		b, err := tlog.ReadNote(filepath.Join(dir, tlog.NoteFile))
		if err != nil || string(b) != text {
			t.Fatalf("ReadNote = %q, %v; want %q", b, err, text)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, tlog.NoteFile))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("note file: %v, %v", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".checkpoint-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, tlog.MaxNoteBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tlog.ReadNote(big); !errors.Is(err, regularfile.ErrTooLarge) {
		t.Fatalf("ReadNote of an oversized file: %v", err)
	}
	if _, err := tlog.ReadNote("/dev/zero"); !errors.Is(err, regularfile.ErrNotRegular) {
		t.Fatalf("ReadNote of /dev/zero: %v", err)
	}
}
