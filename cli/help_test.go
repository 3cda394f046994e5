package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	ucli "github.com/urfave/cli/v2"
)

// TestHelp_EveryCommand renders the help of every command and checks each
// flag line: no default that says nothing (false, 0, ""), never two
// defaults, and the exit codes section.
func TestHelp_EveryCommand(t *testing.T) {
	zero := regexp.MustCompile(`\(default: (false|0|"")\)`)
	var walk func(path []string, cmds []*ucli.Command)
	walk = func(path []string, cmds []*ucli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue // internal commands the manager and engine run
			}
			p := append(append([]string{}, path...), c.Name)
			t.Run(strings.Join(p, " "), func(t *testing.T) {
				r := run(t, append(p, "--help")...)
				r.wantCode(t, cli.ExitOK)
				for _, line := range strings.Split(r.stdout, "\n") {
					if zero.MatchString(line) {
						t.Errorf("help line states a zero default: %q", line)
					}
					if strings.Count(line, "(default") > 1 {
						t.Errorf("help line states its default twice: %q", line)
					}
				}
				if len(c.Subcommands) == 0 && !strings.Contains(r.stdout, "EXIT CODES:") {
					t.Errorf("help of opx %s lists no exit codes", strings.Join(p, " "))
				}
			})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, cli.NewApp().Commands)
}

// TestHelp_RequiredOutput: a flag a command cannot run without says so in
// its help and in the usage line.
func TestHelp_RequiredOutput(t *testing.T) {
	for _, p := range [][]string{{"report"}, {"ledger", "export"}} {
		r := run(t, append(p, "--help")...)
		r.wantOut(t, "-o FILE [", "; required)")
	}
}
