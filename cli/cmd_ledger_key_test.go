package cli_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
)

func TestLedgerKey(t *testing.T) {
	s := signedLedger(t, 3, 2)
	r := run(t, "ledger", "key", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if r.stdout != s.Key.String()+"\n" {
		t.Errorf("stdout %q, want the verifier key %q", r.stdout, s.Key)
	}
	r = run(t, "ledger", "key", "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["vkey"] != s.Key.String() || m["origin"] != s.Key.Name() || m["seq"] != jsonNumber("1") || m["reason"] != "created" {
		t.Errorf("--json: %v", m)
	}
}

func TestLedgerKey_NoneRecorded(t *testing.T) {
	lt := newLedger(t, 3)
	r := run(t, "ledger", "key", "--ledger", lt.Path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "records no checkpoint key")
	if strings.TrimSpace(r.stdout) != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
}
