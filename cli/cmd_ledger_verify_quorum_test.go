package cli_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// TestLedgerVerifyWitness_QuorumOneWalk: three witnesses that cosigned
// three different sizes are checked from one walk of the ledger; each
// witness's result is the one verify gives for that witness alone (one
// walk each), for a ledger that extends them all.
func TestLedgerVerifyWitness_QuorumOneWalk(t *testing.T) {
	s := signedLedger(t, 30, 8, 17, 26)
	sizes := slices.Sorted(maps.Keys(s.Notes))
	ws := []testWitness{newTestWitness(t, "w1.example"), newTestWitness(t, "w2.example"), newTestWitness(t, "w3.example")}
	for i, w := range ws {
		recordCosigned(t, s.Path, "w", w.cosign(t, s, s.Notes[sizes[i]]))
	}
	args := []string{"ledger", "verify", "--offline", "--json", "--ledger", s.Path}
	var alone []any
	for _, w := range ws {
		r := run(t, append(args, "--witness", w.vkey)...)
		r.wantCode(t, cli.ExitOK)
		alone = append(alone, r.jsonObject(t)["witness"])
	}
	all := append([]string{}, args...)
	for _, w := range ws {
		all = append(all, "--witness", w.vkey)
	}
	r := run(t, all...)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	together := m["witnesses"].([]any)
	if !reflect.DeepEqual(together, alone) {
		t.Fatalf("three witnesses at once:\n%v\nalone:\n%v", together, alone)
	}
	for i, w := range together {
		if got := w.(map[string]any)["tree_size"]; got != jsonNumber(utoa(sizes[i])) {
			t.Fatalf("witness %d: tree size %v, want %d", i, got, sizes[i])
		}
	}
	if q := m["quorum"].(map[string]any); q["ok"] != true {
		t.Fatalf("quorum %v", q)
	}
}
