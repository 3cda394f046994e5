package install_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/install"
)

// fakeOpx writes an executable named opx in a new directory (the hooks'
// command; nothing runs it here) and returns its path.
func fakeOpx(t *testing.T, dirName string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), dirName)
	must(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, "opx")
	must(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	return p
}

// isolate points every CLI's user directory into a new home.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_RESTRICTED_MODE"} {
		t.Setenv(k, "")
	}
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	return home
}

// foreign is a settings file with other settings and another tool's hooks
// on the agent's pre-tool and session-start events (and an event opx does
// not use), in an order that is not sorted.
func foreign(agent hookproto.Agent) string {
	pre := map[hookproto.Agent]string{hookproto.Claude: "PreToolUse", hookproto.Codex: "PreToolUse", hookproto.Gemini: "BeforeTool"}[agent]
	return `{
  "zeta": {"keep": [1, 2.50, "x<y>&"], "nested": {"b": null, "a": true}},
  "hooks": {
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    "` + pre + `": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/guard --strict", "timeout": 5}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo start"}]}]
  },
  "alpha": "ünïcode"
}
`
}

func TestInstall_MergesWithForeignHooks(t *testing.T) {
	for _, agent := range []hookproto.Agent{hookproto.Claude, hookproto.Gemini} {
		t.Run(string(agent), func(t *testing.T) {
			isolate(t)
			ws := t.TempDir()
			exe := fakeOpx(t, "bin dir") // a space: the command must be quoted
			path, _ := install.SettingsPath(agent, install.Project(ws))
			must(t, os.MkdirAll(filepath.Dir(path), 0o755))
			must(t, os.WriteFile(path, []byte(foreign(agent)), 0o640))
			res, err := install.Install(context.Background(), install.Options{Agent: agent, Scope: install.Project(ws), Exe: exe})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Written || res.Path != path || len(res.Notes) != 0 {
				t.Errorf("result %+v", res)
			}
			wantCmd := "'" + exe + "' hook " + string(agent)
			if res.Command != wantCmd {
				t.Errorf("command %q, want %q", res.Command, wantCmd)
			}
			doc := readJSON(t, path)
			text := mustRead(t, path)
			if z, h, a := strings.Index(text, "\n  \"zeta\""), strings.Index(text, "\n  \"hooks\""), strings.Index(text, "\n  \"alpha\""); z < 0 || z > h || h > a {
				t.Errorf("the file's order of members was not kept:\n%s", text)
			}
			if doc["alpha"] != "ünïcode" || !strings.Contains(mustRead(t, path), `"x<y>&"`) || !strings.Contains(mustRead(t, path), "2.50") {
				t.Errorf("other settings changed:\n%s", mustRead(t, path))
			}
			hooks := doc["hooks"].(map[string]any)
			for _, e := range install.Events(agent) {
				groups := hooks[e].([]any)
				last := groups[len(groups)-1].(map[string]any)
				h := last["hooks"].([]any)[0].(map[string]any)
				if h["command"] != wantCmd || h["type"] != "command" {
					t.Errorf("%s: last group %v", e, last)
				}
				tool := e == "PreToolUse" || e == "PostToolUse" || e == "PostToolUseFailure" || e == "BeforeTool" || e == "AfterTool"
				if m, ok := last["matcher"]; tool != ok || (ok && m != "*") {
					t.Errorf("%s: matcher %v (present %v), want \"*\" only on tool events", e, m, ok)
				}
				wantTimeout := 600.0
				if agent == hookproto.Gemini {
					wantTimeout = 600000
					if h["name"] != "opx" {
						t.Errorf("%s: name %v", e, h["name"])
					}
				}
				if h["timeout"] != wantTimeout {
					t.Errorf("%s: timeout %v, want %v", e, h["timeout"], wantTimeout)
				}
			}
			pre := map[hookproto.Agent]string{hookproto.Claude: "PreToolUse", hookproto.Gemini: "BeforeTool"}[agent]
			if g := hooks[pre].([]any); len(g) != 2 || !strings.Contains(asJSON(g[0]), "/usr/bin/guard --strict") {
				t.Errorf("%s groups %s: the other tool's hook is not first and kept", pre, asJSON(g))
			}
			if g := hooks["SessionStart"].([]any); len(g) != 2 || !strings.Contains(asJSON(g[0]), "echo start") {
				t.Errorf("SessionStart groups %s", asJSON(g))
			}
			if g := hooks["Notification"].([]any); len(g) != 1 {
				t.Errorf("Notification groups %s", asJSON(g))
			}
			if agent == hookproto.Gemini {
				if hc, _ := doc["hooksConfig"].(map[string]any); hc["enabled"] != true {
					t.Errorf("hooksConfig %v", doc["hooksConfig"])
				}
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
			}
			st := install.Inspect(context.Background(), agent, install.Project(ws), install.InspectOptions{})
			if !st.WillRun() || !slices.Equal(st.Events, eventsIn(agent, st.Events)) || len(st.Programs) != 1 || st.Programs[0] != exe {
				t.Errorf("Inspect %+v", st)
			}
		})
	}
}

// eventsIn returns the agent's events in the order got has them, for a
// set comparison.
func eventsIn(agent hookproto.Agent, got []string) []string {
	want := install.Events(agent)
	if len(want) != len(got) {
		return want
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			return want
		}
	}
	return got
}

func TestInstall_Idempotent(t *testing.T) {
	for _, agent := range []hookproto.Agent{hookproto.Claude, hookproto.Gemini} {
		for _, start := range []string{"", foreign(agent), "{}", "  \n"} {
			isolate(t)
			ws := t.TempDir()
			exe := fakeOpx(t, "bin")
			path, _ := install.SettingsPath(agent, install.Project(ws))
			if start != "" {
				must(t, os.MkdirAll(filepath.Dir(path), 0o755))
				must(t, os.WriteFile(path, []byte(start), 0o600))
			}
			o := install.Options{Agent: agent, Scope: install.Project(ws), Exe: exe}
			if _, err := install.Install(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			first := mustRead(t, path)
			res, err := install.Install(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if second := mustRead(t, path); second != first || res.Written || res.Removed != len(install.Events(agent)) {
				t.Errorf("%s from %q: second install wrote %v (removed %d):\n%s\nthen\n%s", agent, start, res.Written, res.Removed, first, second)
			}
		}
	}
}

// TestInstall_ReplacesOlderOpx: an opx hook of another opx path is
// replaced where it stood, and an opx handler inside another tool's group
// is taken out of that group, which stays.
func TestInstall_ReplacesOlderOpx(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	exe := fakeOpx(t, "new")
	path, _ := install.SettingsPath(hookproto.Claude, install.Project(ws))
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(`{"hooks":{
		"PreToolUse":[
			{"matcher":"*","hooks":[{"type":"command","command":"/old/place/opx hook claude"}]},
			{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]}],
		"Stop":[{"hooks":[{"type":"command","command":"guard stop"},{"type":"command","command":"opx --workspace /w hook claude"}]}],
		"Notification":[{"hooks":[{"type":"command","command":"/old/opx hook claude"}]}],
		"PostToolUse":[{"hooks":[{"type":"command","command":"/old/opx hook gemini"}]}]}}`), 0o600))
	res, err := install.Install(context.Background(), install.Options{Agent: hookproto.Claude, Scope: install.Project(ws), Exe: exe})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 3 {
		t.Errorf("removed %d, want 3", res.Removed)
	}
	hooks := readJSON(t, path)["hooks"].(map[string]any)
	pre := asJSON(hooks["PreToolUse"])
	if strings.Count(pre, "opx") != 1 || !strings.Contains(pre, exe) || strings.Index(pre, exe) > strings.Index(pre, "guard") {
		t.Errorf("PreToolUse %s: the old opx group not replaced in its place", pre)
	}
	stop := asJSON(hooks["Stop"])
	if strings.Contains(stop, "/w hook") || !strings.Contains(stop, "guard stop") || strings.Count(stop, "hook claude") != 1 {
		t.Errorf("Stop %s", stop)
	}
	if _, ok := hooks["Notification"]; ok {
		t.Errorf("Notification kept: %s", asJSON(hooks["Notification"]))
	}
	if post := asJSON(hooks["PostToolUse"]); !strings.Contains(post, "hook gemini") {
		t.Errorf("PostToolUse %s: another agent's opx hook was removed", post)
	}
}

// TestInstall_OpxHook: the small hook binary is written as `opx-hook
// AGENT`; installing it replaces opx's `opx hook AGENT` in its place and
// the other way round; Inspect and Uninstall, from either, know both as
// opx's, and not another agent's.
func TestInstall_OpxHook(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	opx := fakeOpx(t, "bin")
	hook := filepath.Join(filepath.Dir(opx), install.HookProgram)
	must(t, os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	path, _ := install.SettingsPath(hookproto.Claude, install.Project(ws))
	n := len(install.Events(hookproto.Claude))
	for i, exe := range []string{opx, hook, opx, hook} {
		o := install.Options{Agent: hookproto.Claude, Scope: install.Project(ws), Exe: exe}
		res, err := install.Install(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		want := exe + " hook claude"
		if exe == hook {
			want = exe + " claude"
		}
		if res.Command != want || (i > 0 && res.Removed != n) {
			t.Errorf("%s: command %q, removed %d; want %q, %d", exe, res.Command, res.Removed, want, n)
		}
		text := mustRead(t, path)
		if strings.Count(text, `"command": `) != n || strings.Count(text, want+`"`) != n {
			t.Errorf("%s: the settings do not run %q on every event once:\n%s", exe, want, text)
		}
		st := install.Inspect(context.Background(), hookproto.Claude, o.Scope, install.InspectOptions{})
		if !st.Installed || !slices.Equal(st.Programs, []string{exe}) {
			t.Errorf("%s: Inspect %+v", exe, st)
		}
		if st := install.Inspect(context.Background(), hookproto.Gemini, o.Scope, install.InspectOptions{}); st.Installed {
			t.Errorf("%s: gemini's hooks found in claude's: %+v", exe, st)
		}
	}
	// An opx-hook with no opx to start an engine with is a problem.
	must(t, os.Remove(opx))
	t.Setenv("PATH", t.TempDir())
	st := install.Inspect(context.Background(), hookproto.Claude, install.Project(ws), install.InspectOptions{})
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "finds no opx beside it nor on $PATH") {
		t.Errorf("opx-hook without opx: problems %q", st.Problems)
	}
	// Uninstall by the other program still knows opx-hook's as opx's.
	res, err := install.Uninstall(install.Options{Agent: hookproto.Claude, Scope: install.Project(ws), Exe: opx})
	if err != nil || res.Removed != n {
		t.Errorf("uninstall: %+v %v", res, err)
	}
}

// TestUninstall_Restores: install then uninstall leaves the document that
// was there (re-encoded), for a file with other hooks, one without any,
// and none at all.
func TestUninstall_Restores(t *testing.T) {
	for _, agent := range []hookproto.Agent{hookproto.Claude, hookproto.Gemini} { // Codex: TestInstall_CodexTrust
		for _, start := range []string{foreign(agent), `{"model": "x", "hooksConfig": {"enabled": true, "notifications": false}}`, `{"a": 1}`, ""} {
			isolate(t)
			ws := t.TempDir()
			exe := fakeOpx(t, "bin")
			path, _ := install.SettingsPath(agent, install.Project(ws))
			if start != "" {
				must(t, os.MkdirAll(filepath.Dir(path), 0o755))
				must(t, os.WriteFile(path, []byte(start), 0o600))
			}
			o := install.Options{Agent: agent, Scope: install.Project(ws), Exe: exe}
			if _, err := install.Install(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			res, err := install.Uninstall(o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Removed != len(install.Events(o.Agent)) || !res.Written {
				t.Errorf("%s: uninstall %+v", agent, res)
			}
			got := mustRead(t, path)
			if start == "" {
				start = "{}"
			}
			if canon(t, got) != canon(t, start) {
				t.Errorf("%s: after install and uninstall\n%s\nwant\n%s", agent, got, start)
			}
			if st := install.Inspect(context.Background(), o.Agent, o.Scope, install.InspectOptions{}); st.Installed {
				t.Errorf("Inspect after uninstall: %+v", st)
			}
			again, err := install.Uninstall(o)
			if err != nil || again.Written || again.Removed != 0 || mustRead(t, path) != got {
				t.Errorf("second uninstall %+v %v", again, err)
			}
		}
	}
}

func TestUninstall_NoFile(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	res, err := install.Uninstall(install.Options{Agent: hookproto.Gemini, Scope: install.Project(ws)})
	if err != nil || res.Written || res.Removed != 0 {
		t.Errorf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".gemini")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall created %v", err)
	}
}

// TestInstall_Refused: a settings file opx cannot merge into is refused
// with ErrSettings and left byte for byte as it was.
func TestInstall_Refused(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"not JSON", "hooks = yes\n"},
		{"comments", "{\n  // my settings\n  \"model\": \"x\"\n}\n"},
		{"block comment", "{/* x */}"},
		{"trailing comma", `{"a": 1,}`},
		{"duplicate key", `{"hooks": {}, "hooks": {}}`},
		{"nested duplicate", `{"a": {"b": 1, "b": 2}}`},
		{"array", `[]`},
		{"two documents", `{} {}`},
		{"hooks not an object", `{"hooks": "none"}`},
		{"event not a list", `{"hooks": {"PreToolUse": {"matcher": "*"}}}`},
		{"invalid UTF-8", "{\"a\": \"\xff\"}"},
		{"too deep", strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)},
		{"truncated", `{"hooks": {`},
		{"too large", `{"a": "` + strings.Repeat("x", install.MaxSettingsBytes) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			ws := t.TempDir()
			path, _ := install.SettingsPath(hookproto.Claude, install.Project(ws))
			must(t, os.MkdirAll(filepath.Dir(path), 0o755))
			must(t, os.WriteFile(path, []byte(tc.content), 0o600))
			before, _ := os.Stat(path)
			o := install.Options{Agent: hookproto.Claude, Scope: install.Project(ws), Exe: fakeOpx(t, "bin")}
			_, err := install.Install(context.Background(), o)
			if !errors.Is(err, install.ErrSettings) {
				t.Errorf("Install: %v, want ErrSettings", err)
			}
			if tc.name == "comments" && !strings.Contains(err.Error(), "comments") {
				t.Errorf("error %q does not mention comments", err)
			}
			if _, err := install.Uninstall(o); !errors.Is(err, install.ErrSettings) && tc.name != "event not a list" {
				t.Errorf("Uninstall: %v, want ErrSettings", err)
			}
			after, _ := os.Stat(path)
			if b, _ := os.ReadFile(path); string(b) != tc.content || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the file was changed")
			}
			if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
				t.Errorf("left %v beside the file", ents)
			}
		})
	}
}

// TestInstall_Symlinks: in a workspace, a settings file or directory that
// is a symbolic link is refused and nothing is written through it; in the
// user's directory the link is followed and the file it names rewritten.
func TestInstall_Symlinks(t *testing.T) {
	home := isolate(t)
	ws := t.TempDir()
	exe := fakeOpx(t, "bin")
	victim := filepath.Join(t.TempDir(), "victim.json")
	must(t, os.WriteFile(victim, []byte(`{"mine": true}`), 0o600))
	must(t, os.MkdirAll(filepath.Join(ws, ".claude"), 0o755))
	must(t, os.Symlink(victim, filepath.Join(ws, ".claude", "settings.json")))
	must(t, os.Symlink(filepath.Dir(victim), filepath.Join(ws, ".gemini")))
	for _, agent := range []hookproto.Agent{hookproto.Claude, hookproto.Gemini} {
		_, err := install.Install(context.Background(), install.Options{Agent: agent, Scope: install.Project(ws), Exe: exe})
		if !errors.Is(err, install.ErrSymlink) {
			t.Errorf("%s: %v, want ErrSymlink", agent, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != `{"mine": true}` {
		t.Errorf("written through the link: %s", b)
	}
	must(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
	must(t, os.Symlink(victim, filepath.Join(home, ".claude", "settings.json")))
	res, err := install.Install(context.Background(), install.Options{Agent: hookproto.Claude, Scope: install.User, Exe: exe})
	if err != nil || !res.Written {
		t.Fatalf("user scope through a link: %+v %v", res, err)
	}
	if fi, err := os.Lstat(filepath.Join(home, ".claude", "settings.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if doc := readJSON(t, victim); doc["mine"] != true || doc["hooks"] == nil {
		t.Errorf("the linked file: %v", doc)
	}
}

// TestPaths_UserEnvironment: the user's files move with the CLIs'
// environment variables.
func TestPaths_UserEnvironment(t *testing.T) {
	home := isolate(t)
	for _, tc := range []struct {
		agent    hookproto.Agent
		env, val string
		want     string
	}{
		{hookproto.Claude, "", "", filepath.Join(home, ".claude", "settings.json")},
		{hookproto.Claude, "CLAUDE_CONFIG_DIR", "/c", "/c/settings.json"},
		{hookproto.Codex, "", "", filepath.Join(home, ".codex", "hooks.json")},
		{hookproto.Codex, "CODEX_HOME", "/x/codex", "/x/codex/hooks.json"},
		{hookproto.Gemini, "", "", filepath.Join(home, ".gemini", "settings.json")},
		{hookproto.Gemini, "GEMINI_CLI_HOME", "/g", "/g/.gemini/settings.json"},
	} {
		if tc.env != "" {
			t.Setenv(tc.env, tc.val)
		}
		if got, err := install.SettingsPath(tc.agent, install.User); err != nil || got != tc.want {
			t.Errorf("%s %s=%s: %q %v, want %q", tc.agent, tc.env, tc.val, got, err, tc.want)
		}
		if tc.env != "" {
			t.Setenv(tc.env, "")
		}
	}
	t.Setenv("CODEX_HOME", "relative")
	if _, err := install.SettingsPath(hookproto.Codex, install.User); err == nil {
		t.Errorf("a relative CODEX_HOME was accepted")
	}
}

func TestExecutable_GoBuildCacheRefused(t *testing.T) {
	// This test's own binary is a go test binary in a go-build directory.
	if _, err := install.Executable(); !errors.Is(err, install.ErrBuildCache) {
		t.Errorf("Executable in a go test binary: %v, want ErrBuildCache", err)
	}
	t.Setenv("GOCACHE", "/home/u/.cache/go")
	for p, want := range map[string]bool{
		"/tmp/go-build2817/b001/exe/opx":        true,
		"/home/u/.cache/go-build/ab/abcd-d/opx": true,
		"/home/u/.cache/go/x/opx":               true,
		"/home/u/bin/opx":                       false,
		"/usr/local/bin/opx":                    false,
	} {
		if got := install.InBuildCache(p); got != want {
			t.Errorf("InBuildCache(%s) = %v", p, got)
		}
	}
	if err := install.CheckCommand("relative/opx"); !errors.Is(err, install.ErrCommand) {
		t.Errorf("relative command: %v", err)
	}
	plain := filepath.Join(t.TempDir(), "opx")
	must(t, os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644))
	if err := install.CheckCommand(plain); !errors.Is(err, install.ErrCommand) {
		t.Errorf("a file that is not executable: %v", err)
	}
	if _, err := install.Install(context.Background(), install.Options{Agent: hookproto.Claude, Scope: install.Project(t.TempDir()), Exe: "/no/such/opx"}); !errors.Is(err, install.ErrCommand) {
		t.Errorf("Install with a missing command: %v", err)
	}
}

func TestHookCommand_Quoting(t *testing.T) {
	for exe, want := range map[string]string{
		"/usr/local/bin/opx":      "/usr/local/bin/opx hook codex",
		"/home/a b/opx":           "'/home/a b/opx' hook codex",
		"/home/it's/opx":          `"/home/it's/opx" hook codex`,
		"/home/$HOME`x`/opx":      `'/home/$HOME` + "`x`" + `/opx' hook codex`,
		"/home/new\nline/opx":     "",
		"/usr/local/bin/opx-hook": "/usr/local/bin/opx-hook codex",
		"/home/a b/opx-hook":      "'/home/a b/opx-hook' codex",
	} {
		got, err := install.HookCommand(exe, hookproto.Codex)
		if want == "" {
			if err == nil {
				t.Errorf("%q: %q, want an error", exe, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", exe, got, err, want)
		}
	}
}

// TestInspect_Problems: what stops installed hooks is reported.
func TestInspect_Problems(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name  string
		agent hookproto.Agent
		edit  func(doc map[string]any)
		want  string
	}{
		{"matcher", hookproto.Claude, func(d map[string]any) { group(d, "PreToolUse")["matcher"] = "Bash" }, `matcher "Bash" does not cover every tool`},
		{"missing event", hookproto.Claude, func(d map[string]any) { delete(d["hooks"].(map[string]any), "PostToolUse") }, "no opx hook on PostToolUse"},
		{"gone", hookproto.Claude, func(d map[string]any) { handler(d, "Stop")["command"] = "/gone/opx hook claude" }, "/gone/opx, which cannot run"},
		{"go run", hookproto.Claude, nil, "go run binary"},
		{"disableAllHooks", hookproto.Claude, func(d map[string]any) { d["disableAllHooks"] = true }, "disableAllHooks"},
		{"gemini off", hookproto.Gemini, func(d map[string]any) { d["hooksConfig"] = map[string]any{"enabled": false} }, "hooksConfig.enabled to false"},
		{"gemini disabled", hookproto.Gemini, func(d map[string]any) {
			d["hooksConfig"] = map[string]any{"enabled": true, "disabled": []any{"opx"}}
		}, `lists "opx" in hooksConfig.disabled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			exe := fakeOpx(t, "bin")
			if tc.name == "go run" {
				exe = fakeOpx(t, "go-build123")
			}
			if _, err := install.Install(context.Background(), install.Options{Agent: tc.agent, Scope: install.Project(ws), Exe: exe}); err != nil {
				t.Fatal(err)
			}
			path, _ := install.SettingsPath(tc.agent, install.Project(ws))
			if tc.edit != nil {
				doc := readJSON(t, path)
				tc.edit(doc)
				b, _ := json.Marshal(doc)
				must(t, os.WriteFile(path, b, 0o600))
			}
			st := install.Inspect(context.Background(), tc.agent, install.Project(ws), install.InspectOptions{})
			if !st.Installed || st.WillRun() || !strings.Contains(strings.Join(st.Problems, "\n"), tc.want) {
				t.Errorf("Inspect %+v, want a problem with %q", st, tc.want)
			}
		})
	}
}

// TestInspect_GeminiFolderTrust: hooks in a workspace Gemini CLI does not
// trust are reported as not running; trustedFolders.json's longest rule
// decides.
func TestInspect_GeminiFolderTrust(t *testing.T) {
	home := isolate(t)
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "")
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	must(t, os.Mkdir(ws, 0o755))
	res, err := install.Install(context.Background(), install.Options{Agent: hookproto.Gemini, Scope: install.Project(ws), Exe: fakeOpx(t, "bin")})
	if err != nil || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "does not trust") {
		t.Fatalf("Install in an untrusted folder: %+v %v, want a note", res, err)
	}
	trust := func(rules string) install.Status {
		must(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
		must(t, os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(rules), 0o600))
		return install.Inspect(context.Background(), hookproto.Gemini, install.Project(ws), install.InspectOptions{})
	}
	if st := trust(`{"` + parent + `": "TRUST_FOLDER"}`); !st.WillRun() {
		t.Errorf("parent trusted: %+v", st)
	}
	if st := trust(`{"` + parent + `": "TRUST_FOLDER", "` + ws + `": "DO_NOT_TRUST"}`); st.WillRun() {
		t.Errorf("folder not trusted under a trusted parent: %+v", st)
	}
	if st := trust(`{"` + filepath.Join(ws, "x") + `": "TRUST_PARENT"}`); !st.WillRun() {
		t.Errorf("TRUST_PARENT of a child: %+v", st)
	}
	if st := trust(`{"/elsewhere": "TRUST_FOLDER"}`); st.WillRun() {
		t.Errorf("another folder trusted: %+v", st)
	}
}

// TestInspect_Unreadable: a settings file opx cannot read (Gemini CLI
// allows comments) is none of opx's business unless it seems to hold
// opx's hooks; then it cannot be checked, which is a problem.
func TestInspect_Unreadable(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	path, _ := install.SettingsPath(hookproto.Gemini, install.Project(ws))
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte("{\n  // mine\n  \"model\": {}\n}\n"), 0o600))
	if st := install.Inspect(context.Background(), hookproto.Gemini, install.Project(ws), install.InspectOptions{}); st.Installed || len(st.Problems) != 0 {
		t.Errorf("a file with comments and no opx hook: %+v", st)
	}
	must(t, os.WriteFile(path, []byte("{\n  // mine\n  \"hooks\": {\"BeforeTool\": [{\"hooks\": [{\"command\": \"opx hook gemini\"}]}]}\n}\n"), 0o600))
	st := install.Inspect(context.Background(), hookproto.Gemini, install.Project(ws), install.InspectOptions{})
	if !st.Installed || st.WillRun() || !strings.Contains(strings.Join(st.Problems, " "), "cannot check") {
		t.Errorf("a file with comments and opx hooks: %+v", st)
	}
}

func TestInspect_NotInstalled(t *testing.T) {
	isolate(t)
	for _, agent := range hookproto.Agents {
		st := install.Inspect(context.Background(), agent, install.Project(t.TempDir()), install.InspectOptions{CheckCodexTrust: true})
		if st.Installed || st.WillRun() || len(st.Problems) != 0 || st.Path == "" {
			t.Errorf("%s: %+v", agent, st)
		}
	}
}

func group(doc map[string]any, event string) map[string]any {
	return doc["hooks"].(map[string]any)[event].([]any)[0].(map[string]any)
}

func handler(doc map[string]any, event string) map[string]any {
	return group(doc, event)["hooks"].([]any)[0].(map[string]any)
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, path)), &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// canon re-encodes a JSON document with its member order kept (the
// encoder of encoding/json would sort keys) and no white space.
func canon(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return b.String()
}

func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
