package cli

import (
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"
)

// NewApp builds the opx command tree. Each call returns a fresh App (urfave
// keeps parse state in commands and flags), writing to os.Stdout and
// os.Stderr unless the caller sets Writer and ErrWriter. Run never exits
// the process: it returns the error, already reported on ErrWriter, and
// ExitCode turns it into the exit code.
func NewApp() *cli.App {
	app := &cli.App{
		Name:           "opx",
		HelpName:       "opx",
		Usage:          "run an AI agent so that what it did can be trusted afterwards",
		UsageText:      "opx [--ledger PATH | --workspace DIR] COMMAND [options] [arguments]",
		Version:        Version,
		Flags:          ledgerloc.Flags(),
		Action:         unknownCommand,
		OnUsageError:   onUsageError,
		ExitErrHandler: reportError,
		Commands: []*cli.Command{
			demoCommand(),
			initCommand(),
			startCommand(),
			stopCommand(),
			restartCommand(),
			statusCommand(),
			sendCommand(),
			mcpProxyCommand(),
			agentsCommand(),
			hookCommand(),
			chatCommand(),
			approveCommand(),
			denyCommand(),
			ledgerCommand(),
			sessionsCommand(),
			historyCommand(),
			snapshotsCommand(),
			snapshotCommand(),
			metricsCommand(),
			diffCommand(),
			rollbackCommand(),
			replayCommand(),
			reportCommand(),
			serveCommand(),
			internalEngineCommand(),
			internalAgentCommand(),
			sandboxCommand(),
			doctorCommand(),
			shieldCommand(),
			collectorCommand(),
			fleetCommand(),
			versionCommand(),
			internalSandboxProbeCommand(),
			internalSandboxExecCommand(),
			internalDemoMCPServerCommand(),
		},
	}
	for _, cmd := range app.Commands {
		setUsageHandler(cmd)
		requireOwnLedgerFlag(cmd)
	}
	return app
}

// ledgerCommand is the "opx ledger" group.
func ledgerCommand() *cli.Command {
	return &cli.Command{
		Name:      "ledger",
		Usage:     "review, verify, export and import the hash-chained ledger",
		UsageText: "opx ledger COMMAND [options] [arguments]",
		Flags:     ledgerloc.Flags(),
		Action:    unknownCommand,
		Description: "The ledger is the append-only, BLAKE3 hash-chained record of everything the engine did.\n" +
			"These commands read the file directly (offline review); while an engine holds it they go through the\n" +
			"engine and check what it sends themselves: same output, same exit codes.\n\n" +
			exitCodesHelp("integrity failure found"),
		Subcommands: []*cli.Command{
			ledgerVerifyCommand(),
			ledgerExportCommand(),
			ledgerImportCommand(),
			ledgerHeadCommand(),
			ledgerShowCommand(),
			ledgerTailCommand(),
			ledgerFollowCommand(),
			ledgerNoteCommand(),
			ledgerRebuildCommand(),
			ledgerKeyCommand(),
			ledgerCheckpointCommand(),
			ledgerProveCommand(),
			ledgerVerifyProofCommand(),
		},
	}
}

// setUsageHandler installs onUsageError on cmd and its subcommands, so
// urfave's flag errors map to ExitUsage at every level.
func setUsageHandler(cmd *cli.Command) {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	for _, sub := range cmd.Subcommands {
		setUsageHandler(sub)
	}
}

// unknownCommand is the action of the app and of command groups: with no
// argument it shows help and fails as a usage error (a missing command),
// and an argument that names no command is a usage error too. urfave's
// default would print help for a missing topic and exit 3.
func unknownCommand(c *cli.Context) error {
	if c.Args().Present() {
		return usage.Errorf(c, "unknown command %q", c.Args().First())
	}
	if err := cli.ShowSubcommandHelp(c); err != nil {
		return err
	}
	return usage.Errorf(c, "missing command")
}
