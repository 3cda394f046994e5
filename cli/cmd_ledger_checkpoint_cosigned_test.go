package cli_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// TestLedgerCheckpoint_Cosigned: --cosigned merges every cosignature of
// the largest cosigned checkpoint into one note that verifies under each
// witness's key; verify --witness given several times takes it, with
// --quorum counting the witnesses that cosigned.
func TestLedgerCheckpoint_Cosigned(t *testing.T) {
	s := signedLedger(t, 20, 10, 15, 20)
	run(t, "ledger", "checkpoint", "--cosigned", "--ledger", s.Path).wantErr(t, "no cosigned checkpoint")

	sizes := slices.Sorted(maps.Keys(s.Notes)) // 12, 18, 24
	older, mid := sizes[0], sizes[1]
	w1, w2, w3 := newTestWitness(t, "w1.example"), newTestWitness(t, "w2.example"), newTestWitness(t, "w3.example")
	recordCosigned(t, s.Path, "w3.example", w3.cosign(t, s, s.Notes[older]))
	recordCosigned(t, s.Path, "w1.example", w1.cosign(t, s, s.Notes[mid]))
	recordCosigned(t, s.Path, "w2.example", w2.cosign(t, s, s.Notes[mid]))
	r := run(t, "ledger", "checkpoint", "--cosigned", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	body, sigs, _ := strings.Cut(r.stdout, "\n\n")
	if !strings.HasPrefix(r.stdout, strings.SplitN(s.Notes[mid], "\n\n", 2)[0]) || strings.Count(sigs, "\n") != 3 ||
		!strings.Contains(sigs, "— w1.example ") || !strings.Contains(sigs, "— w2.example ") || !strings.Contains(sigs, "— "+s.Key.Name()+" ") {
		t.Fatalf("merged note:\n%s\n\n%s", body, sigs)
	}
	file := saveNote(t, r.stdout)
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--witness", w1.vkey, "--witness", w2.vkey}, cli.ExitOK, "2 of 2 witnesses"},
		{[]string{"--witness", w1.vkey, "--witness", w3.vkey}, cli.ExitIntegrity, "not-witnessed"},
		{[]string{"--witness", w1.vkey, "--witness", w3.vkey, "--quorum", "1"}, cli.ExitOK, "1 of 2 witnesses"},
		{[]string{"--witness", w1.vkey, "--witness", w1.vkey}, cli.ExitUsage, ""},
		{[]string{"--witness", w1.vkey, "--quorum", "2"}, cli.ExitUsage, ""},
	} {
		r := run(t, append([]string{"ledger", "verify", "--cosigned", file, "--ledger", s.Path}, tt.args...)...)
		r.wantCode(t, tt.code)
		if tt.says != "" {
			r.wantOut(t, tt.says)
		}
	}
	r = run(t, "ledger", "checkpoint", "--cosigned", "--json", "--ledger", s.Path)
	m := r.jsonObject(t)
	if m["tree_size"] != jsonNumber(utoa(mid)) || len(m["witnesses"].([]any)) != 2 {
		t.Errorf("--json: %v", m)
	}
}
