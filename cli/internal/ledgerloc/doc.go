// Package ledgerloc is where a command's ledger and workspace are, and why
// they cannot be used: the --ledger, --workspace, --source and --store
// flags (Flags, WorkspaceFlags), the ledger they resolve to (Path: the
// innermost --ledger, else the ledger of --workspace, else $OPX_LEDGER,
// else the current directory's; --source: the fleet collector's mirror
// in the store), the workspace directory and its state directory
// (WorkspaceDir, StateDir), and the messages that say what to do when a
// ledger or workspace cannot be opened (ExplainOpen, WorkspaceErr).
//
// It may import ledger (for the workspace id and default path and its
// sentinels), fleet (for a source ledger id), engine/registry (for the
// state directory's type), cli/internal/usage, urfave/cli and the
// standard library. It never opens a ledger: the commands in package cli
// do, and import it, never the other way.
//
// # Invariants
//
//   - Two flags that name different ledgers are a usage error, never a
//     silent choice: --ledger with --workspace (except for the commands
//     whose --workspace names where files go: rollback, diff, report),
//     and --source with --ledger or --workspace.
//   - A --ledger given before a command that works on a workspace's
//     engine is refused (RefuseLedgerFlag), never ignored.
//   - A reworded error keeps its cause in the chain (usage.Explained), so
//     cli.ExitCode maps it as before.
package ledgerloc
