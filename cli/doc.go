// Package cli is opx's command tree, built with urfave/cli/v2. NewApp
// returns the *cli.App that the opx binary (cli/opx) runs; tests run the
// same App in-process with their own Writer and ErrWriter.
//
// # Layout
//
// One file per command (cmd_ledger_verify.go, cmd_ledger_export.go, ...).
// Each builds its *cli.Command and has a run function that writes only to
// c.App.Writer (results) and c.App.ErrWriter (errors, progress), never to
// os.Stdout, so tests capture everything a command prints.
//
// # Exit codes (normative)
//
// ExitCode in exit.go is the only place that turns an error into an exit
// code: 0 success, 1 operational error, 2 usage error, 4 integrity failure
// found (any error matching ledger.ErrIntegrity or ledger.ErrInconsistent).
// urfave's own usage errors (unknown flag, bad flag value, unknown
// command) are wrapped so that they map to 2 as well.
//
// # Output
//
// Human output by default; --json prints exactly one JSON object on
// stdout, and nothing else goes to stdout. Colour only when stdout is a
// terminal and NO_COLOR is unset; a progress bar on stderr only when
// stderr is a terminal and the work has taken longer than a second.
//
// # Which ledger
//
// Review commands find their ledger with --ledger PATH (on the command or
// before it), else the ledger of --workspace DIR, else $OPX_LEDGER, else
// the current directory's workspace ledger: flags beat the environment,
// and --ledger and --workspace naming different ledgers is a usage error
// (except for rollback, diff and report, whose --workspace says where the
// files are). Review commands open the file read-only; while an engine
// holds it they say so and stop, or ask the engine. Commands that work on
// a workspace's engine (init, start, stop, status, send, ...) take only
// --workspace: the engine keeps the workspace's own ledger.
package cli
