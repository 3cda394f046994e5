package install_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/internal/agenttest"
)

// codexHome makes an isolated home for the real codex (CODEX_HOME under
// it, a config.toml with a setting to keep) and the server to ask.
func codexHome(t *testing.T) (home, codexDir string, s *codextrust.Server) {
	t.Helper()
	argv, path := agenttest.Program(t, agenttest.Codex)
	home = isolate(t)
	codexDir = filepath.Join(home, ".codex")
	t.Setenv("CODEX_HOME", codexDir)
	must(t, os.MkdirAll(codexDir, 0o700))
	must(t, os.WriteFile(filepath.Join(codexDir, "config.toml"), []byte("model = \"keep-me\"\n"), 0o600))
	s = &codextrust.Server{Argv: argv, Dir: home, Env: []string{
		"PATH=" + strings.Join(append(path, "/usr/bin", "/bin"), ":"), "HOME=" + home, "CODEX_HOME=" + codexDir, "TMPDIR=" + home,
	}}
	return home, codexDir, s
}

// TestInstall_CodexTrust: installing for Codex writes ~/.codex/hooks.json
// beside another tool's hook, and the real Codex then lists every opx
// hook as trusted and the other one as untrusted still; a second install
// changes nothing; Inspect asks Codex and says trusted.
func TestInstall_CodexTrust(t *testing.T) {
	_, codexDir, s := codexHome(t)
	hooksFile := filepath.Join(codexDir, "hooks.json")
	must(t, os.WriteFile(hooksFile, []byte(`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/bin/true other"}]}]}}`), 0o600))
	exe := fakeOpx(t, "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := install.Options{Agent: hookproto.Codex, Scope: install.User, Exe: exe, Codex: s}
	res, err := install.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != hooksFile || !res.Written || len(res.Trusted) != len(install.Events(hookproto.Codex)) {
		t.Errorf("result %+v", res)
	}
	listed := func() map[string]string {
		t.Helper()
		hs, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, h := range hs {
			m[h.EventName+" "+h.Command] = h.TrustStatus
		}
		return m
	}
	got := listed()
	want := map[string]string{"preToolUse /bin/true other": "untrusted"}
	for _, e := range []string{"sessionStart", "userPromptSubmit", "preToolUse", "postToolUse", "stop", "sessionEnd"} {
		want[e+" "+exe+" hook codex"] = "trusted"
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("codex lists\n%v\nwant\n%v", got, want)
	}
	if cfg := mustRead(t, filepath.Join(codexDir, "config.toml")); !strings.Contains(cfg, `model = "keep-me"`) {
		t.Errorf("config.toml lost its setting:\n%s", cfg)
	}
	before := mustRead(t, hooksFile)
	if res, err := install.Install(ctx, o); err != nil || res.Written || mustRead(t, hooksFile) != before {
		t.Errorf("second install: %+v %v", res, err)
	}
	st := install.Inspect(ctx, hookproto.Codex, install.User, install.InspectOptions{CheckCodexTrust: true, Codex: s})
	if st.Trust != "trusted" || !st.WillRun() {
		t.Errorf("Inspect %+v", st)
	}
	if st := install.Inspect(ctx, hookproto.Codex, install.User, install.InspectOptions{}); !strings.HasPrefix(st.Trust, "not checked") || !st.WillRun() {
		t.Errorf("Inspect without asking codex %+v", st)
	}
	if st := install.Inspect(ctx, hookproto.Codex, install.User, install.InspectOptions{CheckCodexTrust: true}); st.Trust != "unknown: codex not on PATH" {
		t.Errorf("Inspect with no codex %+v", st)
	}
	// Editing opx's hook changes its hash: Codex no longer trusts it.
	must(t, os.WriteFile(hooksFile, []byte(strings.Replace(before, `"timeout": 600`, `"timeout": 601`, 1)), 0o600))
	if st := install.Inspect(ctx, hookproto.Codex, install.User, install.InspectOptions{CheckCodexTrust: true, Codex: s}); st.WillRun() || !strings.HasPrefix(st.Trust, "modified") {
		t.Errorf("Inspect after an edit %+v", st)
	}
	if _, err := install.Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if got := listed(); len(got) != 1 || got["preToolUse /bin/true other"] != "untrusted" {
		t.Errorf("after uninstall codex lists %v", got)
	}
}

// TestInstall_CodexProject: a workspace's .codex/hooks.json is read by
// Codex only in a project it trusts: Install says so and fails (ErrCodexTrust)
// until the project is trusted, then trusts the hooks.
func TestInstall_CodexProject(t *testing.T) {
	_, codexDir, s := codexHome(t)
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := install.Options{Agent: hookproto.Codex, Scope: install.Project(ws), Exe: fakeOpx(t, "bin"), Codex: s}
	_, err := install.Install(ctx, o)
	if !errors.Is(err, install.ErrCodexTrust) || !strings.Contains(err.Error(), "does not trust "+ws) {
		t.Fatalf("Install in a project Codex does not trust: %v, want ErrCodexTrust saying so", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".codex", "hooks.json")); err != nil {
		t.Errorf("hooks.json not written: %v", err)
	}
	st := install.Inspect(ctx, hookproto.Codex, install.Project(ws), install.InspectOptions{CheckCodexTrust: true, Codex: s})
	if st.Trust != "not loaded" || st.WillRun() {
		t.Errorf("Inspect in an untrusted project %+v", st)
	}
	f, err := os.OpenFile(filepath.Join(codexDir, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	fmt.Fprintf(f, "\n[projects.%q]\ntrust_level = \"trusted\"\n", ws)
	must(t, f.Close())
	res, err := install.Install(ctx, o)
	if err != nil || len(res.Trusted) != len(install.Events(hookproto.Codex)) {
		t.Fatalf("Install in a trusted project: %+v %v", res, err)
	}
	for _, h := range res.Trusted {
		if h.Source != "project" || h.TrustStatus != "trusted" {
			t.Errorf("hook %+v", h)
		}
	}
	if st := install.Inspect(ctx, hookproto.Codex, install.Project(ws), install.InspectOptions{CheckCodexTrust: true, Codex: s}); st.Trust != "trusted" || !st.WillRun() {
		t.Errorf("Inspect %+v", st)
	}
}

// TestInstall_CodexNotAnAppServer: when codex cannot be asked, Install
// fails with ErrCodexTrust (the hooks would not run) after writing.
func TestInstall_CodexNotAnAppServer(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	o := install.Options{Agent: hookproto.Codex, Scope: install.Project(ws), Exe: fakeOpx(t, "bin"),
		Codex: &codextrust.Server{Argv: []string{"/bin/false"}}}
	_, err := install.Install(context.Background(), o)
	if !errors.Is(err, install.ErrCodexTrust) || !errors.Is(err, codextrust.ErrAppServer) {
		t.Errorf("Install with /bin/false as codex: %v", err)
	}
	o.Codex = nil
	if _, err := install.Install(context.Background(), o); !errors.Is(err, install.ErrCodexTrust) {
		t.Errorf("Install with no codex: %v", err)
	}
}
