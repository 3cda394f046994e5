package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOutsideWorkspace: a server whose code the agent could change is
// refused (review #3): its program, a script argument (relative ones are
// read in the workspace, its working directory) or an install root that
// holds or is in the workspace; the workspace itself as an argument is
// what a server serves.
func TestOutsideWorkspace(t *testing.T) {
	ws := t.TempDir()
	other := t.TempDir()
	for _, f := range []string{filepath.Join(ws, "srv.js"), filepath.Join(ws, "bin-srv"), filepath.Join(other, "srv.js")} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		argv   []string
		dirs   []string
		refuse bool
	}{
		{"program in the workspace", []string{filepath.Join(ws, "bin-srv")}, nil, true},
		{"relative script", []string{"/usr/bin/node", "srv.js"}, nil, true},
		{"absolute script", []string{"/usr/bin/node", filepath.Join(ws, "srv.js")}, nil, true},
		{"dotted script", []string{"/usr/bin/node", "./sub/../srv.js"}, nil, true},
		{"install root in the workspace", []string{"/usr/bin/node"}, []string{filepath.Join(ws, "node_modules")}, true},
		{"install root holding the workspace", []string{"/usr/bin/node"}, []string{filepath.Dir(ws)}, true},
		{"the workspace as the served directory", []string{"/usr/bin/node", filepath.Join(other, "srv.js"), ws}, []string{other}, false},
		{"a name that is no workspace file", []string{"/usr/bin/node", filepath.Join(other, "srv.js"), "stdio"}, []string{other}, false},
	} {
		err := outsideWorkspace(ws, c.argv, c.dirs)
		if got := errors.Is(err, ErrWorkspaceCode); got != c.refuse {
			t.Errorf("%s: refused %v (%v), want %v", c.name, got, err, c.refuse)
		}
	}
}
