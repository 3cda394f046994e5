package usage

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Error is a bad flag, argument or command. It remembers the command
// so the report can point to that command's help.
type Error struct {
	Cmd string // full command name, e.g. "opx ledger show"
	Err error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a usage error of c's command.
func Errorf(c *cli.Context, format string, args ...any) error {
	return &Error{Cmd: HelpName(c), Err: fmt.Errorf(format, args...)}
}

// HelpName returns the full name of c's command, e.g. "opx ledger show".
func HelpName(c *cli.Context) string {
	if c == nil || c.Command == nil {
		return ""
	}
	if c.Command.HelpName != "" {
		return c.Command.HelpName
	}
	return c.App.Name
}

// FlagGiven returns the value of the innermost explicitly given flag
// name, walking from c's command out to the app.
func FlagGiven(c *cli.Context, name string) (string, bool) {
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

// Explained is an error with a message written for the command line in
// place of the wrapped error's own text.
type Explained struct {
	Msg string
	Err error
}

func (e *Explained) Error() string { return e.Msg }
func (e *Explained) Unwrap() error { return e.Err }
