package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports_Light: opx-hook exists to start fast, so it links none of
// the heavy rooms whose package initialisation makes opx slow to start:
// Shield (its tables and expressions), the MCP SDK (its JSON Schema
// package), the CLI framework, package cli, the engine's core.
func TestImports_Light(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	heavy := []string{
		"github.com/opx-dev/opx/shield",
		"github.com/modelcontextprotocol",
		"github.com/urfave/cli",
		"github.com/opx-dev/opx/cli/internal/ledgerloc", // fleet, NATS
		"github.com/opx-dev/opx/fleet",
		"github.com/opx-dev/opx/chronicle",
		"github.com/nats-io",
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/opx-dev/opx/cli" || p == "github.com/opx-dev/opx/engine" {
			t.Errorf("opx-hook depends on %s", p)
		}
		for _, h := range heavy {
			if p == h || strings.HasPrefix(p, h+"/") {
				t.Errorf("opx-hook depends on %s", p)
			}
		}
	}
}

// TestRun_Usage: a usage error exits 2, which each CLI takes as a
// denial, and writes nothing on stdout (the CLI's).
func TestRun_Usage(t *testing.T) {
	for _, args := range [][]string{{}, {"cursor"}, {"claude", "codex"}, {"--nope", "claude"}, {"claude", "--workspace"}} {
		var out, errOut strings.Builder
		if code := run(args, strings.NewReader("{}"), &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("%v: stdout %q", args, out.String())
		}
	}
}
