package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/cli/internal/ui"
)

// agentHooks inspects opx's hooks for every agent in workspace ws and in
// the user's settings, and returns those found. checkCodex asks codex about trust: `opx
// doctor` always, `opx status` only with --verbose, since it starts
// `codex app-server` (about a second).
func agentHooks(ctx context.Context, ws string, checkCodex bool) []install.Status {
	o := install.InspectOptions{CheckCodexTrust: checkCodex}
	if exe, err := install.Executable(); err == nil {
		o.Exe = exe
	}
	if checkCodex {
		o.Codex = codexServer()
	}
	out := []install.Status{}
	seen := map[string]bool{}
	for _, agent := range hookproto.Agents {
		for _, sc := range []install.Scope{install.Project(ws), install.User} {
			st := install.Inspect(ctx, agent, sc, o)
			if seen[st.Path] || (!st.Installed && len(st.Problems) == 0) {
				continue // the workspace is the home directory: one file
			}
			seen[st.Path] = true
			out = append(out, st)
		}
	}
	return out
}

// printAgentHooks writes one line per hooked agent and scope, with
// whether the hooks will run and, when not, the first reason.
func printAgentHooks(w io.Writer, prefix string, hooks []install.Status) {
	if len(hooks) == 0 {
		fmt.Fprintf(w, "%snone (opx agents install claude|codex|gemini)\n", prefix)
		return
	}
	pad := strings.Repeat(" ", len(prefix))
	for i, st := range hooks {
		p := pad
		if i == 0 {
			p = prefix
		}
		verdict := ui.Green(w, "will run")
		if !st.WillRun() {
			verdict = ui.Red(w, "will not run: "+st.Problems[0])
			if n := len(st.Problems) - 1; n > 0 {
				verdict += fmt.Sprintf(" (and %s; opx doctor lists them)", ui.Plural(uint64(n), "more problem", "more problems"))
			}
		}
		fmt.Fprintf(w, "%s%-6s  %-9s %s: %s", p, st.Agent, st.Scope, st.Path, verdict)
		if st.Trust != "" && st.WillRun() {
			fmt.Fprintf(w, "; codex trust %s", st.Trust)
		}
		fmt.Fprintln(w)
	}
}

// agentHookProblems are the hooks' problems, for doctor's list.
func agentHookProblems(hooks []install.Status, problem func(string, ...any)) {
	for _, st := range hooks {
		for _, p := range st.Problems {
			problem("%s hooks (%s %s): %s", st.Agent, st.Scope, st.Path, p)
		}
	}
}
