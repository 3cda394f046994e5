package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// EnvLedger names the environment variable that overrides the default
// ledger path (but not an explicit --ledger).
const EnvLedger = "OPX_LEDGER"

// locationFlags returns fresh --ledger and --workspace flags. They are
// accepted on the app, on the ledger group and on every ledger command;
// the innermost one given wins. Each call builds new flag values, because
// urfave flags keep per-parse state.
func locationFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:      "ledger",
			Usage:     "ledger file `PATH` (default: $" + EnvLedger + ", else the workspace's ledger in the state dir)",
			TakesFile: true,
		},
		&cli.StringFlag{
			Name:      "workspace",
			Usage:     "workspace `DIR` whose ledger to use (default: current directory)",
			TakesFile: true,
		},
	}
}

// flagGiven returns the value of the innermost explicitly given flag
// name, walking from c's command out to the app.
func flagGiven(c *cli.Context, name string) (string, bool) {
	for _, ctx := range c.Lineage() {
		if ctx.Command == nil {
			continue // urfave's bare outermost context has no flags
		}
		for _, n := range ctx.LocalFlagNames() {
			if n == name {
				return ctx.String(name), true
			}
		}
	}
	return "", false
}

// ledgerPath resolves the ledger file c works on: --ledger, else
// $OPX_LEDGER, else ledger.DefaultPath of the workspace's id, where the
// workspace is --workspace or the current directory.
func ledgerPath(c *cli.Context) (string, error) {
	if p, ok := flagGiven(c, "ledger"); ok {
		if p == "" {
			return "", usagef(c, "--ledger needs a path")
		}
		return p, nil
	}
	if p := os.Getenv(EnvLedger); p != "" {
		return p, nil
	}
	ws, ok := flagGiven(c, "workspace")
	if !ok || ws == "" {
		ws = "."
	}
	if _, err := os.Stat(ws); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		return "", err
	}
	return ledger.DefaultPath(id)
}

// openReview opens c's ledger read-only for offline review and turns the
// usual failures into messages that say what to do.
func openReview(c *cli.Context) (*ledger.Ledger, error) {
	path, err := ledgerPath(c)
	if err != nil {
		return nil, err
	}
	if err := refuseEmpty(path); err != nil {
		return nil, err
	}
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		// When the engine's read-only LedgerService (gRPC) exists, an
		// ErrLocked here is where review commands will ask the running
		// engine instead of failing.
		return nil, explainOpen(path, err)
	}
	return l, nil
}

// refuseEmpty fails for an existing empty file. bbolt would initialise
// an empty file as a new database (a read-only open fails with EBADF
// trying), and an empty file is not a ledger: say so without touching it.
func refuseEmpty(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return explainOpen(path, fmt.Errorf("open %s: %w: empty file", path, ledger.ErrNotLedger))
	}
	return nil
}

// explainOpen rewords an open error for the command line. The sentinel
// stays in the chain, so callers and ExitCode still see it.
func explainOpen(path string, err error) error {
	switch {
	case errors.Is(err, ledger.ErrNotExist):
		return &explained{err: err, msg: fmt.Sprintf(
			"no ledger at %s; pass --ledger PATH or --workspace DIR, or set $%s", path, EnvLedger)}
	case errors.Is(err, ledger.ErrLocked):
		return &explained{err: err, msg: fmt.Sprintf(
			"an engine holds %s (another process has it open for writing); stop the engine to review it offline", path)}
	case errors.Is(err, ledger.ErrInconsistent):
		return &explained{err: err, msg: fmt.Sprintf(
			"%s is damaged: its stored head does not match its last entry (%v)", path, err)}
	case errors.Is(err, ledger.ErrUnreadable):
		// A damaged file: the error says what is wrong with it.
		return &explained{err: err, msg: fmt.Sprintf("%s: %s", path, strings.TrimPrefix(err.Error(), "open "+path+": "))}
	case errors.Is(err, ledger.ErrNotLedger), errors.Is(err, ledger.ErrFormat):
		return &explained{err: err, msg: fmt.Sprintf(
			"%s is not a readable opx ledger (wrong file, or damaged beyond reading): %v", path, err)}
	default:
		return err
	}
}

// explained is an error with a message written for the command line in
// place of the wrapped error's own text.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }
