package cli_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	ucli "github.com/urfave/cli/v2"
)

func TestApp_UsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no command", nil, "missing command"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"no ledger command", []string{"ledger"}, "missing command"},
		{"unknown ledger command", []string{"ledger", "frobnicate"}, `unknown command "frobnicate"`},
		{"unknown global flag", []string{"--frobnicate", "ledger", "head"}, "flag provided but not defined: -frobnicate"},
		{"unknown command flag", []string{"ledger", "head", "--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"bad flag value", []string{"ledger", "tail", "-n", "many"}, "invalid value"},
		{"bad flag value after arg", []string{"ledger", "show", "1", "--json=maybe"}, "invalid value"},
		{"help for unknown topic", []string{"help", "frobnicate"}, "No help topic"},
		{"missing SEQ", []string{"ledger", "show"}, "missing SEQ"},
		{"non-numeric SEQ", []string{"ledger", "show", "twelve"}, `SEQ "twelve" is not a non-negative integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.err)
		})
	}
}

func TestApp_Help(t *testing.T) {
	commands := []string{"verify", "export", "import", "head", "show", "tail", "note"}
	for _, cmd := range commands {
		for _, args := range [][]string{
			{"ledger", cmd, "--help"},
			{"ledger", "help", cmd},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := run(t, args...)
				r.wantCode(t, cli.ExitOK)
				r.wantOut(t, "opx ledger "+cmd, "EXIT CODES:", "0  success", "1  operational error", "2  usage error")
			})
		}
	}
	// --help after an argument still shows help instead of running.
	r := run(t, "ledger", "show", "3", "--help")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "opx ledger show", "EXIT CODES:")
}

func TestExitCode(t *testing.T) {
	integrity := &ledger.IntegrityError{Seq: 3, Kind: ledger.KindGap, Detail: "entry 3 missing"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, cli.ExitOK},
		{"plain", errors.New("disk on fire"), cli.ExitError},
		{"not exist", fmt.Errorf("open x: %w", ledger.ErrNotExist), cli.ExitError},
		{"not a ledger", fmt.Errorf("open x: %w", ledger.ErrNotLedger), cli.ExitError},
		{"locked", fmt.Errorf("open x: %w", ledger.ErrLocked), cli.ExitError},
		{"integrity", fmt.Errorf("verify: %w", ledger.ErrIntegrity), cli.ExitIntegrity},
		{"integrity finding", fmt.Errorf("export refused: %w", integrity), cli.ExitIntegrity},
		{"inconsistent head", fmt.Errorf("open x: %w", ledger.ErrInconsistent), cli.ExitIntegrity},
		{"urfave exit coder", ucli.Exit("No help topic for 'x'", 3), cli.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cli.ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
