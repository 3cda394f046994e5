package cli

import (
	"os"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/sandbox"
	"github.com/urfave/cli/v2"
)

// internalSandboxExecCommand is the launcher of the shell and git
// executors: it confines itself with a command policy and execs the
// command, which inherits the sandbox. Its flags are parsed by
// sandbox.ParseCommandArgs (the same code that checks the engine's
// rendering of them), not by urfave, so a directory may contain commas and
// nothing after "--" is ever taken for a flag.
func internalSandboxExecCommand() *cli.Command {
	return &cli.Command{
		Name:      "internal-sandbox-exec",
		Usage:     "run a command in the command sandbox (started by the engine's executors; not for direct use)",
		UsageText: "opx internal-sandbox-exec --workspace DIR [--workspace-read-only] [--writable DIR]... [--read-only DIR]... [--allow-network] [--reap-group] -- ARGV...",
		Description: "Confines itself (no capability, even as root; Landlock: read-write beneath --workspace (read-only with\n" +
			"--workspace-read-only) and --writable,\n" +
			"read and execute beneath the system directories but their secrets and --read-only, TCP connect only with\n" +
			"--allow-network, never bind or listen; seccomp; no_new_privs), then executes ARGV, looked up in the PATH of the environment it was given, with that\n" +
			"environment unchanged. It never runs ARGV unconfined: if the kernel cannot enforce the policy it fails.\n\n" +
			exitCodesHelp("") + "\n   otherwise the command's own exit status",
		Hidden:          true,
		SkipFlagParsing: true,
		Action:          runInternalSandboxExec,
	}
}

func runInternalSandboxExec(c *cli.Context) error {
	if _, _, err := sandbox.ParseCommandArgs(c.Args().Slice()); err != nil {
		return usage.Errorf(c, "%v", err)
	}
	// Returns only on failure; the error starts with
	// sandbox.CommandErrorPrefix, which the executors look for.
	return sandbox.Launch(c.Args().Slice(), os.Environ())
}
