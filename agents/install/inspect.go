package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/internal/regularfile"
)

// A Status is what Inspect found of opx's hooks for one agent in one
// scope, and why they would not run.
type Status struct {
	Agent hookproto.Agent `json:"agent"`
	Scope string          `json:"scope"` // "workspace" or "user"
	Path  string          `json:"path"`
	// Installed: the file holds at least one opx hook for the agent.
	Installed bool `json:"installed"`
	// Programs are the opx executables the hooks run.
	Programs []string `json:"programs,omitempty"`
	// Events are the events that run opx's hook.
	Events []string `json:"events,omitempty"`
	// Trust is Codex's trust of the hooks: "trusted", "untrusted (EVENT)",
	// "modified (EVENT)", "not loaded", "unknown: ..." or "not checked".
	Trust string `json:"trust,omitempty"`
	// Problems say why the hooks will not run, or not for everything, or
	// that a file that seems to hold them cannot be checked.
	Problems []string `json:"problems"`
}

// WillRun reports whether the hooks are installed and nothing found
// stops them.
func (s Status) WillRun() bool { return s.Installed && len(s.Problems) == 0 }

// InspectOptions says how far Inspect looks.
type InspectOptions struct {
	// Exe recognises opx's hooks that run an opx not named opx.
	Exe string
	// CheckCodexTrust asks `codex app-server` (through Codex, nil: codex
	// was not found) whether Codex trusts the hooks; it starts a process
	// and takes about a second, so `opx status` does it only with
	// --verbose, `opx doctor` always.
	CheckCodexTrust bool
	Codex           *codextrust.Server
}

// Inspect reports opx's hooks for agent in scope: where, which events,
// which opx they run, and anything that stops them: a missing event, a
// matcher that does not cover every tool, a program that no longer exists
// or is a go run binary, hooks turned off in the same file (Claude Code's
// disableAllHooks, Gemini CLI's hooksConfig), a workspace Gemini CLI does
// not trust, Codex's trust. It reads only the settings file (and, for
// Gemini, its folder trust; for Codex, asks codex when told to), never
// writes.
func Inspect(ctx context.Context, agent hookproto.Agent, sc Scope, o InspectOptions) Status {
	st := Status{Agent: agent, Scope: sc.Name(), Problems: []string{}}
	problem := func(format string, args ...any) { st.Problems = append(st.Problems, fmt.Sprintf(format, args...)) }
	l, err := layoutOf(agent)
	if err != nil {
		problem("%v", err)
		return st
	}
	if st.Path, err = SettingsPath(agent, sc); err != nil {
		problem("%v", err)
		return st
	}
	if _, err := os.Lstat(st.Path); errors.Is(err, fs.ErrNotExist) {
		return st
	}
	f, err := readSettings(st.Path, sc)
	if err != nil {
		// A file opx cannot read (Gemini CLI allows comments) is opx's
		// concern only if it seems to hold opx's hooks.
		if b, rerr := regularfile.Read(st.Path, MaxSettingsBytes); rerr == nil && !bytes.Contains(b, []byte("hook "+string(agent))) {
			return st
		}
		st.Installed = true
		problem("cannot check the hooks: %v", err)
		return st
	}
	hooks, err := f.hooks(false)
	if err != nil {
		problem("%v", err)
		return st
	}
	if hooks == nil {
		return st
	}
	tool := map[string]bool{}
	for _, e := range l.events {
		tool[e.name] = e.tool
	}
	for _, m := range hooks.members {
		arr, _ := m.val.([]any)
		for _, g := range arr {
			for _, h := range groupHandlers(g) {
				exe, ok := parseHook(handlerCommand(h), agent, o.Exe)
				if !ok {
					continue
				}
				st.Installed = true
				if !slices.Contains(st.Events, m.key) {
					st.Events = append(st.Events, m.key)
				}
				if !slices.Contains(st.Programs, exe) {
					st.Programs = append(st.Programs, exe)
				}
				if matcher, all := matcherCoversAll(g.(*object)); tool[m.key] && !all {
					problem("the %s hook's matcher %q does not cover every tool (want \"*\")", m.key, matcher)
				}
			}
		}
	}
	if !st.Installed {
		return st
	}
	for _, e := range l.events {
		if !slices.Contains(st.Events, e.name) {
			problem("no opx hook on %s (run opx agents install %s again)", e.name, agent)
		}
	}
	for _, p := range st.Programs {
		if err := CheckCommand(p); err != nil {
			problem("the hooks run %s, which cannot run: %v", p, err)
		} else if InBuildCache(p) {
			problem("the hooks run %s, a go run binary the go command will delete (install opx and run opx agents install %s again)", p, agent)
		} else if IsHookProgram(p) && !opxFor(p) {
			problem("the hooks run %s, which finds no opx beside it nor on $PATH to start an engine with: "+
				"while no engine runs, every tool call is denied", p)
		}
	}
	switch agent {
	case hookproto.Claude:
		if v, _ := f.doc.get("disableAllHooks"); v == true {
			problem("%s sets disableAllHooks: Claude Code runs no hook", st.Path)
		}
	case hookproto.Gemini:
		geminiProblems(f, sc, problem)
	case hookproto.Codex:
		switch {
		case !o.CheckCodexTrust:
			st.Trust = "not checked (opx doctor, or opx status --verbose, asks codex)"
		case o.Codex == nil:
			st.Trust = "unknown: codex not on PATH"
		default:
			t, err := codexTrustStatus(ctx, *o.Codex, st.Path, sc, o.Exe)
			if err != nil {
				st.Trust = "unknown: " + err.Error()
				break
			}
			st.Trust = t
			switch {
			case t == "not loaded":
				problem("%s", codexNotLoaded(st.Path, sc))
			case t != "trusted":
				problem("Codex does not trust the hooks in %s (%s): it will not run them; run opx agents install codex again", st.Path, t)
			}
		}
	}
	return st
}

// geminiProblems finds what turns Gemini CLI's hooks off in the same
// settings file, and a workspace it does not trust.
func geminiProblems(f *settingsFile, sc Scope, problem func(string, ...any)) {
	if v, _ := f.doc.get("hooksConfig"); v != nil {
		if hc, ok := v.(*object); ok {
			if e, ok := hc.get("enabled"); ok && e != true {
				problem("%s sets hooksConfig.enabled to %v: Gemini CLI runs no hook", f.path, e)
			}
			if d, _ := hc.get("disabled"); d != nil {
				list, _ := d.([]any)
				if slices.Contains(list, any(HookName)) {
					problem("%s lists %q in hooksConfig.disabled: Gemini CLI skips opx's hooks", f.path, HookName)
				}
			}
		}
	}
	if sc.IsUser() {
		return
	}
	if trusted, why := geminiFolderTrusted(sc.Workspace); !trusted {
		problem("Gemini CLI runs no hook in a folder it does not trust, and %s: %s", sc.Workspace, why)
	}
}

// opxFor reports whether the opx-hook at hook finds an opx to start an
// engine with, as it looks for one: beside it, else on $PATH (this
// process's, which the agent's CLI may not share).
func opxFor(hook string) bool {
	if CheckCommand(filepath.Join(filepath.Dir(hook), "opx")) == nil {
		return true
	}
	_, err := exec.LookPath("opx")
	return err == nil
}
