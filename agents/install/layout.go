package install

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/agents/hookproto"
)

// A Scope is where hooks are installed: a workspace's project settings,
// or (Workspace "") the user's.
type Scope struct {
	// Workspace is the project directory, absolute with its symbolic
	// links resolved; "" names the user's settings.
	Workspace string
}

// User is the scope of the user's own settings (~/.claude, ~/.codex,
// ~/.gemini, or where the CLI's environment variable moves them).
var User = Scope{}

// Project returns the scope of workspace dir's project settings.
func Project(dir string) Scope { return Scope{Workspace: dir} }

// IsUser reports whether s is the user's scope.
func (s Scope) IsUser() bool { return s.Workspace == "" }

// String is "user" or "workspace DIR".
func (s Scope) String() string {
	if s.IsUser() {
		return "user"
	}
	return "workspace " + s.Workspace
}

// Name is "user" or "workspace", for --json.
func (s Scope) Name() string {
	if s.IsUser() {
		return "user"
	}
	return "workspace"
}

// An event is one hook event of a CLI that opx hooks.
type event struct {
	name string
	// tool: the event fires around tool calls, and its group carries the
	// matcher "*" so that it fires for every tool. The CLIs ignore (Codex
	// drops) a matcher on the other events, so none is written there.
	tool bool
	// noTimeout: the CLI clamps this event's timeout and warns about a
	// longer one (Codex's SessionEnd, 3 s), so none is written.
	noTimeout bool
}

// A layout is how one CLI's settings hold its hooks.
type layout struct {
	events []event
	// timeout is the hook timeout in the CLI's unit (seconds for Claude
	// Code and Codex, milliseconds for Gemini CLI): ten minutes, as long
	// as a human may take to answer an escalation.
	timeout int
	// named: each handler carries a name (Gemini CLI requires one, and
	// hooksConfig.disabled lists hooks by it).
	named bool
}

// HookName is the name opx's handlers carry where the CLI names hooks
// (Gemini CLI).
const HookName = "opx"

var layouts = map[hookproto.Agent]layout{
	hookproto.Claude: {
		events: []event{{name: "SessionStart"}, {name: "UserPromptSubmit"},
			{name: "PreToolUse", tool: true}, {name: "PostToolUse", tool: true}, {name: "PostToolUseFailure", tool: true},
			{name: "Stop"}, {name: "SessionEnd"}},
		timeout: 600,
	},
	hookproto.Codex: {
		events: []event{{name: "SessionStart"}, {name: "UserPromptSubmit"},
			{name: "PreToolUse", tool: true}, {name: "PostToolUse", tool: true},
			{name: "Stop"}, {name: "SessionEnd", noTimeout: true}},
		timeout: 600,
	},
	hookproto.Gemini: {
		events: []event{{name: "SessionStart"}, {name: "BeforeAgent"},
			{name: "BeforeTool", tool: true}, {name: "AfterTool", tool: true},
			{name: "AfterAgent"}, {name: "SessionEnd"}},
		timeout: 600_000,
		named:   true,
	},
}

func layoutOf(agent hookproto.Agent) (layout, error) {
	l, ok := layouts[agent]
	if !ok {
		return layout{}, fmt.Errorf("%w %q", hookproto.ErrUnknownAgent, agent)
	}
	return l, nil
}

// Events returns the hook events opx installs for agent, in order.
func Events(agent hookproto.Agent) []string {
	var out []string
	for _, e := range layouts[agent].events {
		out = append(out, e.name)
	}
	return out
}

// group is the hook group opx installs on event e: a matcher where the
// event has tools, and one command handler.
func (l layout) group(e event, command string) *object {
	h := obj("type", "command")
	if l.named {
		h.set("name", HookName)
	}
	h.set("command", command)
	if !e.noTimeout {
		h.set("timeout", l.timeout)
	}
	g := &object{}
	if e.tool {
		g.set("matcher", "*")
	}
	g.set("hooks", []any{h})
	return g
}

// SettingsPath is the file in which agent's hooks live for scope:
//
//	            workspace                 user
//	claude      DIR/.claude/settings.json $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
//	codex       DIR/.codex/hooks.json     $CODEX_HOME/hooks.json, else ~/.codex/hooks.json
//	gemini      DIR/.gemini/settings.json $GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini/settings.json
func SettingsPath(agent hookproto.Agent, s Scope) (string, error) {
	if _, err := layoutOf(agent); err != nil {
		return "", err
	}
	if !s.IsUser() {
		if !filepath.IsAbs(s.Workspace) {
			return "", fmt.Errorf("workspace %q is not an absolute path", s.Workspace)
		}
		switch agent {
		case hookproto.Claude:
			return filepath.Join(s.Workspace, ".claude", "settings.json"), nil
		case hookproto.Codex:
			return filepath.Join(s.Workspace, ".codex", "hooks.json"), nil
		default:
			return filepath.Join(s.Workspace, ".gemini", "settings.json"), nil
		}
	}
	dir, err := userDir(agent)
	if err != nil {
		return "", err
	}
	if agent == hookproto.Codex {
		return filepath.Join(dir, "hooks.json"), nil
	}
	return filepath.Join(dir, "settings.json"), nil
}

// userDir is the CLI's user configuration directory.
func userDir(agent hookproto.Agent) (string, error) {
	env, sub := map[hookproto.Agent]string{hookproto.Claude: "CLAUDE_CONFIG_DIR", hookproto.Codex: "CODEX_HOME"}[agent], ""
	switch agent {
	case hookproto.Claude:
		sub = ".claude"
	case hookproto.Codex:
		sub = ".codex"
	case hookproto.Gemini:
		// GEMINI_CLI_HOME replaces the home directory, not .gemini.
		if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
			return absEnv("GEMINI_CLI_HOME", filepath.Join(h, ".gemini"))
		}
		sub = ".gemini"
	}
	if env != "" {
		if d := os.Getenv(env); d != "" {
			return absEnv(env, d)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("the user's settings of %s: %w", agent, err)
	}
	return filepath.Join(home, sub), nil
}

func absEnv(name, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("$%s is %q: not an absolute path", name, dir)
	}
	return filepath.Clean(dir), nil
}
