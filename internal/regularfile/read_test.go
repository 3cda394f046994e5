package regularfile_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/internal/regularfile"
)

func TestRead_Refusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 1025), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"directory", dir, regularfile.ErrNotRegular},
		{"fifo without writer", fifo, regularfile.ErrNotRegular},
		{"symlink to fifo", link, regularfile.ErrNotRegular},
		{"socket", sock, nil}, // open(2) of a socket fails with ENXIO: an error, not a hang
		{"zero device", "/dev/zero", regularfile.ErrNotRegular},
		{"null device", "/dev/null", regularfile.ErrNotRegular},
		{"too large", big, regularfile.ErrTooLarge},
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := regularfile.Read(tt.path, 1024)
			if err == nil {
				t.Fatalf("read %d bytes, want an error", len(b))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRead_Regular(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 1024} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("y"), n)
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := regularfile.Read(p, 1024)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
}
