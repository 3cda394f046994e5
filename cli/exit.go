package cli

import (
	"errors"
	"fmt"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

// The exit codes of every opx command (normative, see DESIGN.md).
const (
	ExitOK        = 0 // success
	ExitError     = 1 // operational error: missing file, I/O, locked ledger, ...
	ExitUsage     = 2 // usage error: bad flags or arguments
	ExitIntegrity = 4 // integrity failure found
)

// ExitCode maps an error returned by App.Run to the process exit code. It
// is the only place in opx where that mapping is made.
func ExitCode(err error) int {
	var ue *usage.Error
	var ec cli.ExitCoder
	var se *statusError
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return ExitOK
	case errors.As(err, &se):
		// A status the command chose, its output written (opx hook's
		// answer to a coding agent's CLI).
		return se.code
	case errors.As(err, new(*refusedError)):
		// The engine refused to start (internal-engine only): its
		// manager must not retry.
		return supervise.ExitRefused
	case errors.Is(err, engine.ErrRestart):
		return engine.ExitRestart
	case errors.Is(err, ledger.ErrIntegrity), errors.Is(err, ledger.ErrInconsistent), errors.Is(err, chronicle.ErrConflict):
		// ErrInconsistent: the stored head does not match the last entry,
		// which is itself an integrity finding. ErrConflict: a rollback
		// refused because the workspace no longer matches the recorded
		// hashes.
		return ExitIntegrity
	case errors.As(err, &ue):
		return ExitUsage
	case errors.Is(err, tlog.ErrMalformed), errors.Is(err, tlog.ErrUnsigned), errors.Is(err, tlog.ErrProof):
		// A checkpoint or proof that does not verify (a bad --key is a
		// usage error, above).
		return ExitIntegrity
	case errors.As(err, &ec):
		// urfave returns an ExitCoder only from its help command ("No help
		// topic for 'x'"): a usage error, whatever code it asks for.
		return ExitUsage
	default:
		return ExitError
	}
}

// exitCodesHelp is the exit code section every command's help ends with;
// integrity describes, for commands that can find one, what exit 4 means.
func exitCodesHelp(integrity string) string {
	s := "EXIT CODES:\n   0  success\n   1  operational error (no ledger, not a ledger, locked, I/O)\n   2  usage error"
	if integrity != "" {
		s += "\n   4  " + integrity
	}
	return s
}

// statusError is a command's own exit status, its output already
// written: opx hook answers a coding agent's CLI with exit 2 and the
// reason on stderr, and nothing else may be printed.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// errHelpShown is returned by a command that printed its help because
// --help came after its arguments; it exits 0 and prints nothing more.
var errHelpShown = errors.New("help shown")

// onUsageError wraps urfave's flag parsing errors so they map to
// ExitUsage; it is installed on the app and on every command.
func onUsageError(c *cli.Context, err error, _ bool) error {
	return &usage.Error{Cmd: usage.HelpName(c), Err: err}
}

// reportError is the app's ExitErrHandler: it prints a failed command's
// error on ErrWriter, once, and never exits the process (main does, with
// ExitCode), so the app can run inside tests.
func reportError(c *cli.Context, err error) {
	if err == nil || errors.Is(err, errHelpShown) || errors.As(err, new(*refusedError)) || errors.As(err, new(*statusError)) {
		return // a refusal went to the manager, which reports it once
	}
	fmt.Fprintf(c.App.ErrWriter, "opx: %v\n", err)
	var ue *usage.Error
	if errors.As(err, &ue) && ue.Cmd != "" {
		fmt.Fprintf(c.App.ErrWriter, "Run '%s --help' for usage.\n", ue.Cmd)
	}
}
