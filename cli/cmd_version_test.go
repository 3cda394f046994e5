package cli_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, args...)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, "opx "+cli.Version+" (ledger format "+ledger.Format)
		})
	}
	j := run(t, "version", "--json")
	j.wantCode(t, cli.ExitOK)
	m := j.jsonObject(t)
	if m["version"] != cli.Version || m["ledger_format"] != ledger.Format {
		t.Errorf("version --json = %v", m)
	}
	run(t, "version", "extra").wantCode(t, cli.ExitUsage)
}
