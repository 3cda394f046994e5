package judge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
)

// TestShieldMCP_HostilePathSpellings: spellings of a path a model may
// put in a filesystem server's call, judged by Shield and then read by
// the real @modelcontextprotocol/server-filesystem (sandboxed, as opx
// runs it, with a private home). The policy denies secret/** and allows
// the rest: whatever Shield allows must not hand over the secret
// (review #1: "zz://../secret/key.txt" was a URL to Shield and a
// relative path to the server; "~" is the user's home to Shield and the
// server's private home to the server).
func TestShieldMCP_HostilePathSpellings(t *testing.T) {
	fsProg := mcptest.Program(t, mcptest.Filesystem)
	mcptest.NeedSandbox(t)
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	userHome := filepath.Join(root, "users", "dev", "home") // Shield's "~", deeper than the server's (root/homes/fs)
	for _, d := range []string{filepath.Join(ws, "secret"), filepath.Join(ws, "pub"), filepath.Join(ws, "s\u00e9cret"), userHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "TOPSECRET-7c1e"
	if err := os.WriteFile(filepath.Join(ws, "secret", "key.txt"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory named in NFC; the server finds it by any Unicode
	// equivalent spelling.
	if err := os.WriteFile(filepath.Join(ws, "s\u00e9cret", "key.txt"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "pub", "a.txt"), []byte("public"), 0o644); err != nil {
		t.Fatal(err)
	}

	pol, err := shield.ParsePolicy([]byte(`version: 1
default: allow
deny:
  - name: fs-secrets
    tools: ["mcp__fs__*"]
    paths: ["secret/**", "s\u00e9cret/**"]
`))
	if err != nil {
		t.Fatal(err)
	}
	ev := judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: userHome, Policy: pol, RateLimit: 1 << 30})}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec := func(context.Context, ledger.Durability, string, event.Payload, ...[]byte) error { return nil }
	c, err := mcp.Start(ctx, mcp.Sandbox{Self: mcptest.Self(t), HomeRoot: filepath.Join(root, "homes")},
		mcp.Spec{Name: "fs", Argv: []string{fsProg, ws}, Workspace: ws, Timeout: 30 * time.Second}, 1, "", rec)
	if err != nil {
		t.Fatalf("start the filesystem server: %v", err)
	}
	t.Cleanup(func() { c.Close() })

	read := func(p string) string {
		args, _ := json.Marshal(map[string]any{"path": p})
		r, err := c.CallTool(ctx, "c", "read_text_file", args)
		if err != nil {
			t.Fatalf("read %q: %v", p, err)
		}
		return r.Text
	}
	if got := read("pub/a.txt"); got != "public" {
		t.Fatalf("the server does not read the workspace: %q: the test proves nothing", got)
	}

	for _, c := range []struct {
		spelling string
		reaches  bool // the server reads the secret through it (the premise)
	}{
		{"secret/key.txt", true},
		{ws + "/secret/key.txt", true},
		{"./secret/key.txt", true},
		{"secret//key.txt", true},
		{"pub/../secret/key.txt", true},
		{"zz://../secret/key.txt", true},
		{"ZZ://../secret/key.txt", true},
		{"ab:/../secret/key.txt", true},
		{"http://../secret/key.txt", true},
		{"file://../secret/key.txt", false},
		{"file:../secret/key.txt", false},
		{"~/../../ws/secret/key.txt", true},
		{"~/../../ws/secret/../secret/key.txt", true},
		{" secret/key.txt", false},
		{"secret/key.txt ", false},
		{"s\u00e9cret/key.txt", true},
		{"se\u0301cret/key.txt", true},          // NFD: the server reads the NFC directory
		{"$HOME/../../ws/secret/key.txt", true}, // "$HOME" is a directory of the workspace to the server
	} {
		t.Run(c.spelling, func(t *testing.T) {
			args, _ := json.Marshal(map[string]any{"path": c.spelling})
			p := proposal(t, "mcp__fs__read_text_file", string(args))
			got := decided(ev.Evaluate(context.Background(), p))
			text := read(c.spelling)
			if c.reaches && !strings.Contains(text, secret) {
				t.Fatalf("the server did not read the secret through %q (%q): the case proves nothing", c.spelling, text)
			}
			if strings.HasPrefix(got, "allow") && strings.Contains(text, secret) {
				t.Errorf("Shield allows %q (%s) and the server hands over the secret", c.spelling, got)
			}
		})
	}
}
