package executor_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opx-dev/opx/engine/executor"
	"golang.org/x/sys/unix"
)

// TestWorkspace_Resolve: paths resolve as the kernel would follow them,
// beneath the workspace, one component at a time.
func TestWorkspace_Resolve(t *testing.T) {
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	for _, d := range []string{"secrets/sub", "pub"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(ws, "secrets", "key"), []byte("k"), 0o644))
	for l, target := range map[string]string{
		"s": "secrets", "k": "secrets/key", "c1": "c2", "c2": "./s", "x": "secrets/sub",
		"pub/up": "../secrets", "abs": "/etc", "out": "../..", "loop": "loop", "dangling": "nowhere/at/all",
	} {
		must(t, os.Symlink(target, filepath.Join(ws, l)))
	}
	w, err := executor.OpenWorkspace(ws)
	must(t, err)
	t.Cleanup(func() { w.Close() })
	for _, tc := range []struct {
		rel        string
		followLast bool
		want       string // "" for an error
	}{
		{"secrets/key", true, "secrets/key"},
		{".", true, "."},
		{"s/key", true, "secrets/key"},
		{"s", true, "secrets"},
		{"s", false, "s"},
		{"s/", false, "s"},
		{"s/key", false, "secrets/key"},
		{"k", true, "secrets/key"},
		{"k", false, "k"},
		{"c1/key", true, "secrets/key"},
		{"x/../key", true, "secrets/key"},
		{"pub/up/key", true, "secrets/key"},
		{"pub/../s/./key", true, "secrets/key"},
		{"abs/passwd", true, "/etc/passwd"},
		{"out/x", true, filepath.Join(filepath.Dir(top), "x")},
		{"../x", true, filepath.Join(top, "x")},
		{"new/file", true, "new/file"},
		{"s/new/../key", true, "secrets/key"},
		{"dangling", true, "nowhere/at/all"},
		{"loop", true, ""},
		{"", true, ""},
		{"/etc", true, ""},
	} {
		got, err := w.Resolve(tc.rel, tc.followLast)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("Resolve(%q, %v) = %q, want an error", tc.rel, tc.followLast, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("Resolve(%q, %v) = %q, %v; want %q", tc.rel, tc.followLast, got, err, tc.want)
		}
	}
	if _, err := w.Resolve("loop", true); !errors.Is(err, unix.ELOOP) {
		t.Errorf("a loop: %v, want ELOOP", err)
	}
	links, complete, err := w.LinksBeneath("pub", 100)
	if err != nil || !complete || !slices.Equal(links, []string{"pub/up"}) {
		t.Errorf("LinksBeneath(pub) = %v %v %v", links, complete, err)
	}
	links, complete, _ = w.LinksBeneath(".", 3)
	if complete || len(links) > 3 {
		t.Errorf("LinksBeneath(., 3) = %v complete %v, want stopped", links, complete)
	}
	if links, _, _ := w.LinksBeneath("s", 100); len(links) != 0 {
		t.Errorf("LinksBeneath(s) followed the link: %v", links)
	}
}
