package cli

import (
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/urfave/cli/v2"
)

// flagHelp is opx's cli.FlagStringer: urfave's own line for a flag, less
// the "(default: ...)" it appends when that says nothing — the zero value
// of a bool, a number or a string — or when the flag's usage already
// states its default in words ("(default: a loud warning)").
func flagHelp(f cli.Flag) string {
	line := urfaveFlagHelp(f)
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return line
	}
	dt := df.GetDefaultText()
	if !strings.Contains(df.GetUsage(), "(default") && !zeroDefault(dt) {
		return line
	}
	return strings.Replace(line, " (default: "+dt+")", "", 1)
}

// zeroDefault reports whether a flag's default text is a zero value,
// which the help leaves unsaid.
func zeroDefault(s string) bool {
	switch s {
	case "", "false", "0", `""`:
		return true
	}
	return false
}

// urfaveFlagHelp is urfave's default FlagStringer, kept before flagHelp
// replaces it.
var urfaveFlagHelp = cli.FlagStringer

func init() {
	// FlagStringer and VersionPrinter are urfave's global hooks for help
	// lines and --version; opx is their only user in this binary.
	cli.FlagStringer = flagHelp
	cli.VersionPrinter = func(c *cli.Context) { _ = printVersion(c, false) }
}

// requireOwnLedgerFlag installs ledgerloc.RefuseLedgerFlag as the Before of cmd and
// of every subcommand that has no --ledger flag of its own, keeping any
// Before already set.
func requireOwnLedgerFlag(cmd *cli.Command) {
	if !hasFlag(cmd, "ledger") {
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := ledgerloc.RefuseLedgerFlag(c); err != nil {
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	for _, sub := range cmd.Subcommands {
		requireOwnLedgerFlag(sub)
	}
}

// hasFlag reports whether cmd declares a flag called name.
func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
