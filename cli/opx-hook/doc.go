// Command opx-hook is `opx hook AGENT` in a small binary: the command the
// hook configuration of Claude Code, Codex CLI or Gemini CLI runs before
// and after each tool call (`opx agents install` writes it when opx-hook
// sits beside opx). A hook runs twice per tool call, and this binary
// starts in a few milliseconds where the whole opx takes about 17: it
// links only the hook's client (cli/internal/hookrun), and runs the opx
// beside it (else on $PATH) to start an engine when none runs.
//
//	opx-hook AGENT [--workspace DIR] [--flush]
//
// Exit codes are those of opx hook: 0 answered (the answer on stdout), 2
// the tool call denied (the reason on stderr) or a usage error, which
// each CLI takes as a denial.
package main
