package cli_test

// Review of issue 17 (REVIEW17.md): evidence tests.

import (
	"encoding/json"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/event"
)

// RV17 finding 2: verify --witness KEY takes "the latest ledger.cosigned
// entry whose cosignature verifies under KEY" from the very ledger it
// checks. Whoever rewrites the ledger on the machine also drops the
// ledger.cosigned entries after the point they rewrite and keeps an older
// one: verify --witness then proves the ledger extends that older
// checkpoint and passes, though the witness cosigned (and the engine
// recorded) a later checkpoint that covered the rewritten entry.
// docs/fleet.md says such a rewrite fails ("removing the ledger.cosigned
// entries too leaves the ledger not-witnessed").
func TestRV17_VerifyWitness_RewriteKeepingAnOlderCosignature(t *testing.T) {
	w := newTestWitness(t, "witness.example")
	s := signedLedger(t, 10, 10)
	first := uint64(0)
	for size := range s.Notes {
		first = size
	}
	recordCosigned(t, s.Path, "witness.example", w.cosign(t, s, s.Notes[first]))
	s = growLedger(t, s, 20, 20)
	latest := uint64(0)
	for size := range s.Notes {
		latest = max(latest, size)
	}
	recordCosigned(t, s.Path, "witness.example", w.cosign(t, s, s.Notes[latest]))
	s = growLedger(t, s, 3)
	r := run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	const victim = 20 // a note after the first cosigned checkpoint, before the latest
	if !(first < victim && victim < latest) {
		t.Fatalf("checkpoints at %d and %d", first, latest)
	}

	forged := forge(t, s, func(es []map[string]any) []map[string]any {
		es[victim]["data"].(map[string]any)["text"] = "nothing happened here"
		var out []map[string]any
		for _, e := range es {
			if e["type"] == event.TypeCosigned {
				if size, _ := e["data"].(map[string]any)["tree_size"].(json.Number).Int64(); uint64(size) == latest {
					continue // the latest cosignature goes with the rewrite
				}
			}
			out = append(out, e)
		}
		return out
	})
	run(t, "ledger", "verify", "--strict", "--ledger", forged).wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--ledger", forged)
	if r.code == cli.ExitOK {
		t.Errorf("entry %d rewritten after the witness cosigned tree size %d (and the engine recorded it): verify --witness passes on the older cosignature (size %d) left in place:\n%s",
			victim, latest, first, r.stdout)
	}

	// Truncation alone (the entries from the victim on deleted, nothing
	// rewritten): entries the witness cosigned are gone, and verify
	// --witness passes on the older cosignature.
	truncated := forge(t, s, func(es []map[string]any) []map[string]any { return es[:victim] })
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--ledger", truncated)
	if r.code == cli.ExitOK {
		t.Errorf("the ledger truncated to %d entries after the witness cosigned tree size %d: verify --witness passes:\n%s", victim, latest, r.stdout)
	}
}
