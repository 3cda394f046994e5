package codextrust_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/internal/agenttest"
)

// TestTrust_SelectedOnly: Trust marks only the selected hook trusted, the
// other keeps its trust, config.toml keeps what was there, and editing the
// trusted hook makes it "modified" (untrusted again), as the real Codex
// reports.
func TestTrust_SelectedOnly(t *testing.T) {
	argv, path := agenttest.Program(t, agenttest.Codex)
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	must(t, os.MkdirAll(codexHome, 0o700))
	must(t, os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("model = \"keep-me\"\n"), 0o600))
	hooks := func(pre string) {
		must(t, os.WriteFile(filepath.Join(codexHome, "hooks.json"), []byte(`{"hooks":{
			"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"`+pre+`"}]}],
			"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/bin/true other"}]}]}}`), 0o600))
	}
	hooks("/bin/true opx")
	s := codextrust.Server{Argv: argv, Dir: home, Env: []string{
		"PATH=" + strings.Join(append(path, "/usr/bin", "/bin"), ":"), "HOME=" + home, "CODEX_HOME=" + codexHome, "TMPDIR=" + home,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status := func() map[string]string {
		t.Helper()
		hs, err := s.List(ctx, home)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, h := range hs {
			m[h.EventName] = h.TrustStatus
			if !strings.HasPrefix(h.CurrentHash, "sha256:") || !strings.HasPrefix(h.Key, filepath.Join(codexHome, "hooks.json")+":") {
				t.Errorf("hook %+v", h)
			}
		}
		return m
	}
	if got := status(); got["preToolUse"] != "untrusted" || got["postToolUse"] != "untrusted" {
		t.Fatalf("before: %v", got)
	}
	ours := func(h codextrust.Hook) bool { return strings.HasPrefix(h.Command, "/bin/true opx") }
	trusted, err := s.Trust(ctx, ours, home)
	if err != nil || len(trusted) != 1 || trusted[0].EventName != "preToolUse" {
		t.Fatalf("Trust: %+v %v", trusted, err)
	}
	if got := status(); got["preToolUse"] != "trusted" || got["postToolUse"] != "untrusted" {
		t.Errorf("after Trust: %v", got)
	}
	cfg, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if !strings.Contains(string(cfg), `model = "keep-me"`) || !strings.Contains(string(cfg), "trusted_hash") {
		t.Errorf("config.toml:\n%s", cfg)
	}
	if hs, err := s.Trust(ctx, func(codextrust.Hook) bool { return false }, home); !errors.Is(err, codextrust.ErrNoHooks) {
		t.Errorf("Trust selecting nothing: %+v %v, want ErrNoHooks", hs, err)
	}
	hooks("/bin/true opx --changed")
	if got := status(); got["preToolUse"] != "modified" {
		t.Errorf("after editing the hook: %v", got)
	}
	if hs, err := s.Trust(ctx, ours, home); err != nil || len(hs) != 1 {
		t.Fatalf("Trust again: %+v %v", hs, err)
	}
	if got := status(); got["preToolUse"] != "trusted" {
		t.Errorf("after trusting again: %v", got)
	}
}

// TestServer_NotAnAppServer: a program that answers garbage, or exits, or
// never answers, is an ErrAppServer within the context, not a hang.
func TestServer_NotAnAppServer(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"garbage", "echo not-json; sleep 30"},
		{"exits", "exit 0"},
		{"error", `read l; echo '{"id":1,"error":{"code":-1,"message":"nope"}}'; sleep 30`},
		{"huge line", "head -c 5000000 /dev/zero | tr '\\0' a; echo; sleep 30"},
		{"silent", "sleep 30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			s := codextrust.Server{Argv: []string{"/bin/sh", "-c", tc.script, "sh"}}
			start := time.Now()
			_, err := s.List(ctx)
			if !errors.Is(err, codextrust.ErrAppServer) {
				t.Errorf("List: %v, want ErrAppServer", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
