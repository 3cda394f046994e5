package cli

import (
	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/cli/internal/hookrun"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "answer a coding agent's hook (Claude Code, Codex CLI, Gemini CLI): each tool call judged and recorded",
		UsageText: "opx hook AGENT [--workspace DIR] [--flush]",
		Description: "The command the hook configuration of Claude Code (AGENT claude), Codex CLI (codex) or Gemini CLI\n" +
			"(gemini) runs before and after each tool call and at its session events (`opx agents install AGENT`\n" +
			"writes that configuration). It reads the event the CLI writes on stdin, hands it to the workspace's\n" +
			"engine (started in the background if none runs, as `opx start --daemon` would), and answers in the\n" +
			"CLI's format: a tool call allowed, denied with Shield's reason (the model reads it), or handed to the\n" +
			"CLI's own prompt. The workspace is --workspace, else the nearest directory at or above the CLI's\n" +
			"project directory (else the event's cwd) that holds .opx/ or has a ledger.\n\n" +
			"stdout is the CLI's: everything opx says goes to stderr.\n\n" +
			"opx-hook AGENT [--workspace DIR] [--flush], the small binary built from ./cli/opx-hook, is this\n" +
			"command without the rest of opx: it starts about 10 ms sooner on every hook (opx agents install uses\n" +
			"it when it sits beside opx), and starts an engine with the opx beside it, else on $PATH.\n\n" +
			"Fail closed: before a tool call, anything that keeps opx from deciding (an event it cannot read, no\n" +
			"workspace, no engine, no answer within hooks.decision_timeout, an internal error) denies the call with\n" +
			"the reason. With hooks.on_engine_down: allow (.opx/config.yaml), a call made while no engine can be\n" +
			"reached or started is allowed instead and written down in the state directory's " + unrecorded.File + "\n" +
			"for the next engine to record. Other events are never denied: a failure is reported on stderr.\n\n" +
			"At the session's end (or at any event, with --flush) the agent's transcript file is sent to the engine\n" +
			"(at most its first 64 MiB) and stored with the session.\n\n" +
			"EXIT CODES: (what the CLI reads)\n" +
			"   0  answered: the tool call allowed (or the answer on stdout), or an event that takes no decision\n" +
			"   2  the tool call denied, the reason on stderr (Claude Code, Codex CLI; Gemini CLI reads a denial\n" +
			"      on stdout with exit 0); also a usage error, which each CLI takes as a denial",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", TakesFile: true,
				Usage: "workspace `DIR` (default: the one holding the CLI's project directory, else the event's cwd)"},
			&cli.BoolFlag{Name: "flush", Usage: "also send the agent's transcript (the event's transcript_path) to the engine"},
		},
		Action: runHook,
	}
}

// runHook is a thin wrapper over hookrun, which the opx-hook binary runs
// too: both behave alike, and these tests cover both.
func runHook(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "AGENT (claude, codex or gemini)")
	if err != nil {
		return err
	}
	agent, err := hookproto.ParseAgent(args[0])
	if err != nil {
		return usage.Errorf(c, "%v", err)
	}
	ws, _ := usage.FlagGiven(c, "workspace")
	code := hookrun.Run(c.Context, hookrun.Options{Agent: agent, Workspace: ws, Flush: c.Bool("flush"),
		Stdin: c.App.Reader, Stdout: c.App.Writer, Stderr: c.App.ErrWriter, Program: engineProgram, Client: "opx hook"})
	if code != 0 {
		return &statusError{code: code}
	}
	return nil
}
