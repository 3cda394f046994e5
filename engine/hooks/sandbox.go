package hooks

import (
	"encoding/json"
	"strings"

	"github.com/opx-dev/opx/agents/toolmap"
	"mvdan.cc/sh/v3/syntax"
)

// sandboxed returns the agent's shell tool input with its command run
// inside opx's command sandbox (hooks.sandbox_commands): the launcher
// opx's own shell tool uses (`opx internal-sandbox-exec` with the
// workspace's command policy), HOME and TMPDIR in its private directory
// as for opx's own commands, then the command through /bin/sh. ok is
// false when the call is not a shell command or the engine runs no
// sandboxed shell; the input is then left as it is.
func (h *sessions) sandboxed(m toolmap.Mapping, input json.RawMessage) (updated json.RawMessage, ok bool) {
	shell := h.e.Options().Shell
	if m.Kind != toolmap.KindShell || shell == nil || len(shell.Launcher) == 0 {
		return nil, false
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil, false
	}
	command, _ := in["command"].(string)
	if command == "" {
		return nil, false
	}
	argv := append(append([]string(nil), shell.Launcher...), "--", "env")
	if shell.TempDir != "" {
		argv = append(argv, "HOME="+shell.TempDir, "TMPDIR="+shell.TempDir)
	}
	argv = append(argv, "/bin/sh", "-c", command)
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangPOSIX)
		if err != nil {
			return nil, false // a NUL byte: no shell word holds it
		}
		words[i] = q
	}
	in["command"] = strings.Join(words, " ")
	b, err := json.Marshal(in)
	if err != nil {
		return nil, false
	}
	return b, true
}
