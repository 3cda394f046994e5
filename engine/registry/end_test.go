package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/engine/registry"
)

func TestEnd_RoundTripOnce(t *testing.T) {
	dir := registry.Dir(t.TempDir())
	want := registry.End{PID: 42, Start: 7, ExitCode: -1, Signal: "SIGKILL", Sender: registry.SenderManager, SenderPID: 41,
		Reason: strings.Repeat("é", 400)} // cut to 500 bytes, mid-rune
	if err := registry.WriteEnd(dir, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := registry.ReadEnd(dir)
	if !ok || err != nil || got.PID != 42 || got.Signal != "SIGKILL" || len(got.Reason) > 500 || !strings.HasSuffix(got.Reason, "é") && !strings.HasSuffix(got.Reason, "?") {
		t.Fatalf("ReadEnd = %+v, %v, %v", got, ok, err)
	}
	// Bytes that are not UTF-8 come back replaced (encoding/json).
	os.WriteFile(filepath.Join(string(dir), "engine.end.json"), []byte("{\"pid\":1,\"reason\":\"\xff\"}"), 0o600)
	if got, ok, err := registry.ReadEnd(dir); !ok || err != nil || got.Reason != "\uFFFD" {
		t.Errorf("a reason not UTF-8: %q %v %v", got.Reason, ok, err)
	}
	registry.RemoveEnd(dir)
	if _, ok, err := registry.ReadEnd(dir); ok || err != nil {
		t.Errorf("after RemoveEnd: %v %v", ok, err)
	}
}

// TestReadEnd_Hostile: a note opx did not write is refused with an error
// and removed, never trusted; memory stays bounded.
func TestReadEnd_Hostile(t *testing.T) {
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"NotJSON", func(p string) error { return os.WriteFile(p, []byte("{pid: 1"), 0o600) }},
		{"Huge", func(p string) error {
			return os.WriteFile(p, []byte(`{"pid":1,"reason":"`+strings.Repeat("x", 1<<20)+`"}`), 0o600)
		}},
		{"UnknownSender", func(p string) error {
			return os.WriteFile(p, []byte(`{"pid":1,"signal":"SIGKILL","sender":"root"}`), 0o600)
		}},
		{"ZeroPid", func(p string) error { return os.WriteFile(p, []byte(`{"pid":0,"signal":"SIGKILL"}`), 0o600) }},
		{"LongSignal", func(p string) error {
			return os.WriteFile(p, []byte(`{"pid":1,"signal":"`+strings.Repeat("S", 100)+`"}`), 0o600)
		}},
		{"Symlink", func(p string) error { return os.Symlink("/etc/passwd", p) }},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"Directory", func(p string) error { return os.Mkdir(p, 0o700) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "engine.end.json")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			e, ok, err := registry.ReadEnd(registry.Dir(dir))
			if ok || err == nil {
				t.Fatalf("ReadEnd = %+v, %v, %v; want an error", e, ok, err)
			}
			if _, err := os.Lstat(path); tt.name != "Directory" && !os.IsNotExist(err) {
				t.Errorf("the bad note is left: %v", err)
			}
		})
	}
}
