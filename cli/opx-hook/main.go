package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/cli/internal/hookrun"
)

const usageText = `usage: opx-hook AGENT [--workspace DIR] [--flush]

Answers one hook event of a coding agent's CLI (AGENT: claude, codex or
gemini) read on stdin, as opx hook AGENT does; see opx hook --help.

`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command on args, returning its exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("opx-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	ws := fs.String("workspace", "", "workspace `DIR` (default: the one holding the CLI's project directory, else the event's cwd)")
	flush := fs.Bool("flush", false, "also send the agent's transcript (the event's transcript_path) to the engine")
	// Flags may come before or after AGENT, as with opx hook.
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "opx-hook: want one argument, AGENT (claude, codex or gemini), got %d\n\n", len(pos))
		fs.Usage()
		return 2
	}
	agent, err := hookproto.ParseAgent(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "opx-hook: %v\n", err)
		return 2
	}
	return hookrun.Run(context.Background(), hookrun.Options{Agent: agent, Workspace: *ws, Flush: *flush,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Program: hookrun.Opx, Client: "opx-hook"})
}
