package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/shield"
)

// TestTrustedServerCodeProtected: the code in the workspace of a server
// configured with trust_workspace_code is opx's to protect (review #3):
// Shield refuses the agent's writes to it at tier -1, as to opx's own
// configuration, and a command's change to it is restored (protected).
// An untrusted server's is not listed: it is refused at its start.
func TestTrustedServerCodeProtected(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tools/srv.sh", "other.sh"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Config{MCP: config.MCP{Servers: map[string]config.MCPServer{
		"trusted":   {Command: "${workspace}/tools/srv.sh", TrustWorkspaceCode: true},
		"untrusted": {Command: "/bin/sh", Args: []string{"other.sh"}},
	}}}
	prot := protectedPaths(ws, cfg)
	if !slices.Contains(prot, "tools/srv.sh") || slices.Contains(prot, "other.sh") {
		t.Errorf("protected %q", prot)
	}
	sh, err := newShield(ws, cfg, filepath.Join(t.TempDir(), "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	s := shield.New(sh.config)
	code := filepath.Join(ws, "tools/srv.sh")
	vs := s.Evaluate(context.Background(), shield.Action{Tool: "write_file", Mutating: true, Paths: []string{code}, Writes: []string{code}})
	if len(vs) == 0 || vs[len(vs)-1].Decision == "allow" || vs[len(vs)-1].Tier != -1 {
		t.Errorf("a write to the trusted server's code: %+v", vs)
	}
	other := filepath.Join(ws, "notes.txt")
	vs = s.Evaluate(context.Background(), shield.Action{Tool: "write_file", Mutating: true, Paths: []string{other}, Writes: []string{other}})
	if len(vs) == 0 || vs[len(vs)-1].Tier == -1 {
		t.Errorf("a write elsewhere in the workspace refused at tier -1: %+v", vs)
	}
}
