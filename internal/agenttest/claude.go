package agenttest

import "path/filepath"

// ClaudeTools are the tools a Claude Code run may use without asking (as
// root, --dangerously-skip-permissions is refused, and in -p mode a tool
// not allowed is denied).
const ClaudeTools = "Bash,Edit,MultiEdit,Write,Read,Grep,Glob,LS,NotebookEdit,WebFetch,WebSearch"

// claudeSetup writes ~/.claude/settings.json (hooks) and returns the
// environment and arguments of a headless run:
// claude -p PROMPT --output-format json --allowedTools ClaudeTools.
func claudeSetup(home string, srv *Server, o Options, env []string) ([]string, []string, error) {
	settings := map[string]any{}
	if len(o.Hooks) > 0 {
		settings["hooks"] = hooksJSON(o.Hooks, false)
	}
	if err := writeJSON(filepath.Join(home, ".claude", "settings.json"), settings); err != nil {
		return nil, nil, err
	}
	env = append(env,
		"ANTHROPIC_BASE_URL="+srv.URL,
		"ANTHROPIC_API_KEY=opx-test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
	)
	return env, []string{"-p", o.Prompt, "--output-format", "json", "--allowedTools", ClaudeTools}, nil
}
