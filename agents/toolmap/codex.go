package toolmap

import (
	"fmt"
	"strings"
)

// codex maps Codex CLI's tools (0.171.0: its hooks show the model's
// exec_command as Bash with {"command"}, and apply_patch with the patch
// in {"command"}; older names are taken too). It reports whether it knows
// tool.
func (m *mapper) codex(tool string) bool {
	switch tool {
	case "Bash", "exec_command", "shell", "local_shell", "shell_command":
		c, ok := m.command()
		if !ok {
			m.unknown(fmt.Sprintf("%s has no command", tool))
			break
		}
		m.shell(c, m.str("workdir", "cwd"))
	case "apply_patch":
		p := m.str("command", "input", "patch")
		if p == "" {
			m.unknown("apply_patch has no patch")
			break
		}
		m.patch(p)
	case "view_image":
		if p, ok := m.need("path"); ok {
			m.readFile(p)
		}
	case "web_search":
		m.webSearch(m.str("query"))
	case "update_plan", "request_user_input", "tool_search":
		m.internal()
	default:
		return false
	}
	return true
}

// command is the command line of a shell call: a string, or an argv
// (["bash", "-lc", SCRIPT] is SCRIPT; any other argv is quoted and
// joined).
func (m *mapper) command() (string, bool) {
	for _, k := range []string{"command", "cmd"} {
		switch v := m.in[k].(type) {
		case string:
			if v != "" {
				return v, true
			}
		case []any:
			argv := make([]string, 0, len(v))
			for _, a := range v {
				s, ok := a.(string)
				if !ok {
					return "", false
				}
				argv = append(argv, s)
			}
			if len(argv) == 3 && isShell(argv[0]) && (argv[1] == "-lc" || argv[1] == "-c") {
				return argv[2], true
			}
			if len(argv) > 0 {
				for i, a := range argv {
					argv[i] = shellQuote(a)
				}
				return strings.Join(argv, " "), true
			}
		}
	}
	return "", false
}

func isShell(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "bash", "sh", "zsh", "dash":
		return true
	}
	return false
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
