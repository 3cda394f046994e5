package ledgerloc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// EnvLedger names the environment variable that overrides the default
// ledger path of review commands. An explicit --ledger or --workspace
// beats it: flags say what this command should do, the environment only
// what is usual.
const EnvLedger = "OPX_LEDGER"

// Flags returns fresh --ledger and --workspace flags. They are
// accepted on the app, on the ledger group and on every ledger command;
// the innermost one given wins. Each call builds new flag values, because
// urfave flags keep per-parse state.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:      "ledger",
			Usage:     "ledger file `PATH` (default: the ledger of --workspace, else $" + EnvLedger + ", else the current directory's)",
			TakesFile: true,
		},
		&cli.StringFlag{
			Name:      "workspace",
			Usage:     "workspace `DIR` whose ledger to use (default: current directory)",
			TakesFile: true,
		},
		&cli.StringFlag{
			Name:  "source",
			Usage: "the fleet collector's mirror of source ledger `ID` (in --store, else $" + EnvFleetStore + ")",
		},
		&cli.StringFlag{
			Name:      "store",
			Usage:     "the fleet collector's store `DIR`, for --source (default $" + EnvFleetStore + ")",
			TakesFile: true,
		},
	}
}

// WorkspaceFlags returns a fresh --workspace flag for the commands that
// work on a workspace's engine (init, start, stop, status, send, ...):
// the engine always keeps the workspace's own ledger in the state dir, so
// these commands take no --ledger (RefuseLedgerFlag refuses one given
// before the command).
func WorkspaceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:      "workspace",
			Usage:     "workspace `DIR` (default: current directory)",
			TakesFile: true,
		},
	}
}

// RefuseLedgerFlag is the Before of every command without a --ledger of
// its own: a --ledger given before such a command (opx --ledger X start)
// would otherwise be ignored without a word.
func RefuseLedgerFlag(c *cli.Context) error {
	if _, ok := usage.FlagGiven(c, "ledger"); ok {
		return usage.Errorf(c, "--ledger does not apply to %s: it works on the workspace's engine and its ledger (use --workspace DIR)", usage.HelpName(c))
	}
	return nil
}

// Path resolves the ledger file c works on: --ledger, else the
// ledger of --workspace, else $OPX_LEDGER, else the current directory's
// workspace ledger. --ledger and --workspace naming different ledgers is
// a usage error (one of them would be ignored), except for the commands
// in filesWorkspace.
func Path(c *cli.Context) (string, error) {
	return resolveLedger(c, c.Command == nil || !filesWorkspace[c.Command.Name])
}

// filesWorkspace lists the commands whose --workspace names where files
// are rather than which ledger to read: an investigator restores or
// compares (or reports on) an imported ledger's files in a directory of their choosing
// (opx rollback --ledger copy.db --workspace DIR), so for them --ledger
// wins over --workspace.
var filesWorkspace = map[string]bool{"rollback": true, "diff": true, "report": true}

func resolveLedger(c *cli.Context, workspaceNamesLedger bool) (string, error) {
	if id, ok := usage.FlagGiven(c, "source"); ok {
		return sourceLedger(c, id, workspaceNamesLedger)
	}
	lp, ledgerGiven := usage.FlagGiven(c, "ledger")
	if ledgerGiven && lp == "" {
		return "", usage.Errorf(c, "--ledger needs a path")
	}
	ws, wsGiven := usage.FlagGiven(c, "workspace")
	if wsGiven && ws == "" {
		return "", usage.Errorf(c, "--workspace needs a directory")
	}
	if ledgerGiven && !(wsGiven && workspaceNamesLedger) {
		return lp, nil
	}
	if !wsGiven {
		if p := os.Getenv(EnvLedger); p != "" {
			return p, nil
		}
		ws = "."
	}
	def, err := WorkspaceLedger(ws)
	if err != nil {
		return "", err
	}
	if ledgerGiven && !SamePath(lp, def) {
		return "", usage.Errorf(c, "--ledger %s and --workspace %s name different ledgers (the workspace's is %s); give one of them", lp, ws, def)
	}
	return def, nil
}

// WorkspaceLedger is the default ledger path of workspace ws.
func WorkspaceLedger(ws string) (string, error) {
	if _, err := os.Stat(ws); err != nil {
		return "", WorkspaceErr(ws, err)
	}
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		return "", err
	}
	return ledger.DefaultPath(id)
}

// SamePath reports whether a and b name the same file: the same cleaned
// absolute path, or, when both exist, the same inode.
func SamePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// RefuseEmpty fails for an existing empty file. bbolt would initialise
// an empty file as a new database (a read-only open fails with EBADF
// trying), and an empty file is not a ledger: say so without touching it.
func RefuseEmpty(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return ExplainOpen(path, fmt.Errorf("open %s: %w: empty file", path, ledger.ErrNotLedger))
	}
	return nil
}

// ExplainOpen rewords an open error for the command line. The sentinel
// stays in the chain, so callers and cli.ExitCode still see it.
func ExplainOpen(path string, err error) error {
	switch {
	case errors.Is(err, ledger.ErrNotExist):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf(
			"no ledger at %s; pass --ledger PATH or --workspace DIR, or set $%s", path, EnvLedger)}
	case errors.Is(err, ledger.ErrLocked):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf(
			"an engine holds %s (another process has it open for writing); stop the engine to review it offline", path)}
	case errors.Is(err, ledger.ErrInconsistent):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf(
			"%s is damaged: its stored head does not match its last entry (%v)", path, err)}
	case errors.Is(err, ledger.ErrUnreadable):
		// A damaged file: the error says what is wrong with it.
		return &usage.Explained{Err: err, Msg: fmt.Sprintf("%s: %s", path, strings.TrimPrefix(err.Error(), "open "+path+": "))}
	case errors.Is(err, ledger.ErrNotLedger), errors.Is(err, ledger.ErrFormat):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf(
			"%s is not a readable opx ledger (wrong file, or damaged beyond reading): %v", path, err)}
	default:
		return err
	}
}
