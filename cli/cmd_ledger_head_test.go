package cli_test

import (
	"reflect"
	"testing"

	"github.com/opx-dev/opx/cli"
)

func TestLedgerHead(t *testing.T) {
	lg := newLedger(t, 7)
	r := run(t, "ledger", "head", "--ledger", lg.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ledger_id  "+lg.Head.LedgerID, "head_seq   7\n", "head_hash  "+lg.Head.Hash.String(), "path       "+lg.Path)

	r = run(t, "ledger", "head", "--json", "--ledger", lg.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if got, want := keys(m), []string{"head_hash", "head_seq", "ledger_id", "path"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if m["ledger_id"] != lg.Head.LedgerID || m["head_seq"].(jsonNumber).String() != "7" || m["head_hash"] != lg.Head.Hash.String() {
		t.Errorf("head %v, want %+v", m, lg.Head)
	}
}

func TestLedgerHead_Usage(t *testing.T) {
	r := run(t, "ledger", "head", "extra")
	r.wantCode(t, cli.ExitUsage)
	r.wantErr(t, `unexpected argument "extra"`)
}
