package install

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
)

// Options says what to install or uninstall, and where.
type Options struct {
	Agent hookproto.Agent
	Scope Scope
	// Exe is the opx the hooks run: an absolute path to an executable
	// (Executable, the opx-hook beside it, or the user's --command).
	// Uninstall uses it only to recognise opx's hooks that run an opx not
	// named opx.
	Exe string
	// Codex starts `codex app-server` to record Codex's hooks as trusted
	// (Install of codex needs it; nil is an error there).
	Codex *codextrust.Server
}

// A Result says what Install or Uninstall did.
type Result struct {
	Agent hookproto.Agent `json:"agent"`
	Scope string          `json:"scope"`
	// Path is the settings file; Written whether it changed.
	Path    string `json:"path"`
	Written bool   `json:"written"`
	// Command is the command line the hooks run (Install), and
	// CommandWhy why it runs that program (the caller's words).
	Command    string `json:"command,omitempty"`
	CommandWhy string `json:"command_why,omitempty"`
	// Events are the events hooked (Install) or unhooked (Uninstall).
	Events []string `json:"events"`
	// Removed counts opx's handlers taken out (Uninstall, and Install
	// replacing older ones).
	Removed int `json:"removed"`
	// EnabledHooks: Gemini CLI's hooksConfig.enabled was turned on.
	EnabledHooks bool `json:"enabled_hooks,omitempty"`
	// Trusted are Codex's hooks recorded as trusted (all opx's in Path),
	// in TrustFile (Codex's user config.toml).
	Trusted   []codextrust.Hook `json:"trusted,omitempty"`
	TrustFile string            `json:"trust_file,omitempty"`
	// Notes say why the hooks might still not run (Inspect's problems).
	Notes []string `json:"notes,omitempty"`
}

// Install writes opx's hooks for o.Agent into the settings of o.Scope:
// one group per event that runs `EXE hook AGENT`, merged with what is
// there (other hooks and other settings are kept, in their order; an
// older opx hook for the agent is replaced in its place), and for Codex
// records them as trusted through `codex app-server`. Running it twice
// leaves the file byte for byte as the first run wrote it.
func Install(ctx context.Context, o Options) (Result, error) {
	l, err := layoutOf(o.Agent)
	if err != nil {
		return Result{}, err
	}
	if err := CheckCommand(o.Exe); err != nil {
		return Result{}, err
	}
	if o.Agent == hookproto.Codex && o.Codex == nil {
		return Result{}, fmt.Errorf("%w: no codex to ask", ErrCodexTrust)
	}
	command, err := HookCommand(o.Exe, o.Agent)
	if err != nil {
		return Result{}, err
	}
	path, err := SettingsPath(o.Agent, o.Scope)
	if err != nil {
		return Result{}, err
	}
	f, err := readSettings(path, o.Scope)
	if err != nil {
		return Result{}, err
	}
	res := Result{Agent: o.Agent, Scope: o.Scope.Name(), Path: path, Command: command, Events: Events(o.Agent)}
	if l.named {
		if res.EnabledHooks, err = enableGeminiHooks(f); err != nil {
			return Result{}, err
		}
	}
	hooks, err := f.hooks(true)
	if err != nil {
		return Result{}, err
	}
	if res.Removed, err = l.merge(f, hooks, o.Agent, command, o.Exe); err != nil {
		return Result{}, err
	}
	if res.Written, err = f.write(); err != nil {
		return Result{}, err
	}
	if o.Agent == hookproto.Codex {
		if d, err := userDir(hookproto.Codex); err == nil {
			res.TrustFile = filepath.Join(d, "config.toml")
		}
		if res.Trusted, err = trustCodex(ctx, *o.Codex, path, o.Scope, o.Exe); err != nil {
			return res, err
		}
	}
	res.Notes = Inspect(ctx, o.Agent, o.Scope, InspectOptions{Exe: o.Exe}).Problems
	return res, nil
}

// Uninstall removes opx's hooks for o.Agent (any command that runs
// `opx ... hook AGENT`, whatever opx's path) from the settings of
// o.Scope, and the groups and events left empty by their removal;
// everything else stays as it was. For Gemini CLI, a hooksConfig of only
// {"enabled": true} (its default) is removed too. Codex's trust
// records in config.toml are left (they name hooks that no longer
// exist, and trust nothing else).
func Uninstall(o Options) (Result, error) {
	l, err := layoutOf(o.Agent)
	if err != nil {
		return Result{}, err
	}
	path, err := SettingsPath(o.Agent, o.Scope)
	if err != nil {
		return Result{}, err
	}
	f, err := readSettings(path, o.Scope)
	if err != nil {
		return Result{}, err
	}
	res := Result{Agent: o.Agent, Scope: o.Scope.Name(), Path: path, Events: []string{}}
	hooks, err := f.hooks(false)
	if err != nil || hooks == nil {
		return res, err
	}
	for i := 0; i < len(hooks.members); i++ {
		m := &hooks.members[i]
		arr, ok := m.val.([]any)
		if !ok {
			continue // not an event list: not opx's
		}
		out, _, n := strip(arr, o.Agent, o.Exe)
		if n == 0 {
			continue
		}
		res.Removed += n
		res.Events = append(res.Events, m.key)
		if len(out) == 0 {
			hooks.del(m.key)
			i--
		} else {
			m.val = out
		}
	}
	if res.Removed == 0 {
		return res, nil
	}
	if len(hooks.members) == 0 {
		f.doc.del("hooks")
	}
	if l.named {
		// {"enabled": true} is Gemini CLI's default: taking it out changes
		// nothing for the hooks left, and restores the file Install found.
		if hc, ok := f.doc.get("hooksConfig"); ok {
			if o, ok := hc.(*object); ok && len(o.members) == 1 && o.members[0].key == "enabled" && o.members[0].val == true {
				f.doc.del("hooksConfig")
			}
		}
	}
	res.Written, err = f.write()
	return res, err
}

// merge puts opx's group on each of the layout's events of hooks, where an
// older group of opx's stood or else last, and takes opx's handlers for
// agent out of every other group and event. It returns how many handlers
// it took out (the old ones it replaced included).
func (l layout) merge(f *settingsFile, hooks *object, agent hookproto.Agent, command, self string) (int, error) {
	removed := 0
	mine := map[string]event{}
	for _, e := range l.events {
		mine[e.name] = e
		if v, ok := hooks.get(e.name); !ok || v == nil {
			hooks.set(e.name, []any{})
		}
	}
	for i := 0; i < len(hooks.members); i++ {
		m := &hooks.members[i]
		arr, ok := m.val.([]any)
		e, isMine := mine[m.key]
		if !ok {
			if isMine {
				return 0, fmt.Errorf("%w: %s: hooks.%s is not a list; it was left as it is", ErrSettings, f.path, m.key)
			}
			continue
		}
		out, at, n := strip(arr, agent, self)
		removed += n
		switch {
		case isMine && at >= 0:
			out = append(out[:at], append([]any{l.group(e, command)}, out[at:]...)...)
		case isMine:
			out = append(out, l.group(e, command))
		case n > 0 && len(out) == 0:
			hooks.del(m.key)
			i--
			continue
		}
		m.val = out
	}
	return removed, nil
}

// strip takes agent's opx handlers out of the hook groups of arr. A group
// left with no handler by it is dropped; out keeps every other group (a
// group that had other handlers keeps them, and its other members). at is
// the index in out where the first dropped group stood (-1: none), n the
// handlers taken out.
func strip(arr []any, agent hookproto.Agent, self string) (out []any, at, n int) {
	at = -1
	for _, g := range arr {
		hs := groupHandlers(g)
		var keep []any
		for _, h := range hs {
			if ours(h, agent, self) {
				n++
			} else {
				keep = append(keep, h)
			}
		}
		switch {
		case len(keep) == len(hs):
			out = append(out, g)
		case len(keep) == 0:
			if at < 0 {
				at = len(out)
			}
		default:
			g.(*object).set("hooks", keep)
			out = append(out, g)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out, at, n
}

// enableGeminiHooks turns Gemini CLI's hooks on (hooksConfig.enabled:
// true, the pinned version's default, written so that a changed default
// does not silently turn opx off) and reports whether it was off.
func enableGeminiHooks(f *settingsFile) (bool, error) {
	v, ok := f.doc.get("hooksConfig")
	if !ok || v == nil {
		f.doc.set("hooksConfig", obj("enabled", true))
		return false, nil
	}
	hc, ok := v.(*object)
	if !ok {
		return false, fmt.Errorf("%w: %s: \"hooksConfig\" is not an object; it was left as it is", ErrSettings, f.path)
	}
	was, ok := hc.get("enabled")
	hc.set("enabled", true)
	return ok && was != true, nil
}
