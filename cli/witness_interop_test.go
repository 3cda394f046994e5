package cli_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/witness"
	"github.com/opx-dev/opx/internal/omniwitnesstest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// submitted is what engine/witness recorded in one run against a witness.
type submitted struct {
	status   witness.Status
	recorded []event.Payload
}

// submitLatest opens the signed ledger s as the engine does, submits its
// latest checkpoint to the witness with engine/witness (the engine's own
// code: it reads back what the witness cosigned before), and waits until
// the witness cosigned it or an alert was recorded.
func submitLatest(t *testing.T, s signed, url, vkey string) submitted {
	t.Helper()
	l, err := ledger.Open(s.Path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var out submitted
	rec := func(ctx context.Context, p event.Payload) error {
		r, err := event.Record("", p)
		if err == nil {
			_, err = l.Append(ctx, ledger.Sync, r)
		}
		mu.Lock()
		out.recorded = append(out.recorded, p)
		mu.Unlock()
		return err
	}
	sub, err := witness.New(witness.Options{Witnesses: []witness.Witness{{URL: url, Key: vkey}}, Origin: s.Key.Name(),
		Ledger: l, Record: rec, MinBackoff: 10 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var latest uint64
	for n := range s.Notes {
		latest = max(latest, n)
	}
	sub.Start(context.Background())
	defer sub.Close(time.Second)
	sub.Submit(s.Notes[latest])
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := sub.Status()[0]
		mu.Lock()
		n := len(out.recorded)
		mu.Unlock()
		if st.CosignedSize >= latest || n > 0 && st.AlertKind != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the witness neither cosigned %d nor refused it within 30s: %+v", latest, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	out.status = sub.Status()[0]
	return out
}

func latestSize(s signed) uint64 {
	var n uint64
	for k := range s.Notes {
		n = max(n, k)
	}
	return n
}

// TestWitnessInterop_Omniwitness: an opx ledger witnessed by
// transparency-dev's omniwitness on loopback (issue 28, section 3): its
// checkpoints get cosigned (the second from a consistency proof the
// omniwitness checked), verify --witness <omniwitness key> passes on the
// note `opx ledger checkpoint --cosigned` prints; a consistent rewrite of
// the ledger fails not-extension, and so does a truncation; an older copy
// of the ledger grown again gets a 409 and an alert ("ahead"), then a 422
// ("bad-proof") once past the witness's size, never a cosignature.
func TestWitnessInterop_Omniwitness(t *testing.T) {
	s := signedLedger(t, 6, 6)
	ow := omniwitnesstest.Start(t, s.Key.Name(), s.Key.String())

	first := submitLatest(t, s, ow.URL, ow.VKey)
	if first.status.CosignedSize != latestSize(s) || first.status.AlertKind != "" {
		t.Fatalf("first checkpoint: %+v\n%s", first.status, ow.Log())
	}
	older := fork(t, s)

	s = growLedger(t, s, 12, 12)
	second := submitLatest(t, s, ow.URL, ow.VKey)
	if second.status.CosignedSize != latestSize(s) || second.status.Conflicts != 0 {
		t.Fatalf("second checkpoint: %+v\n%s", second.status, ow.Log())
	}
	// A restarted omniwitness keeps what it cosigned (sqlite).
	ow.Restart()

	r := run(t, "ledger", "checkpoint", "--cosigned", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	file := saveNote(t, r.stdout)
	r = run(t, "ledger", "verify", "--strict", "--witness", ow.VKey, "--cosigned", file, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, fmt.Sprintf("extends the checkpoint of %d entries cosigned by omniwitness.opx.test", latestSize(s)))
	// The ledger's own ledger.cosigned entries: --offline passes too.
	run(t, "ledger", "verify", "--witness", ow.VKey, "--offline", "--ledger", s.Path).wantCode(t, cli.ExitOK)

	rewritten := forge(t, s, func(es []map[string]any) []map[string]any {
		es[4]["data"].(map[string]any)["text"] = "nothing happened here"
		return es
	})
	run(t, "ledger", "verify", "--strict", "--ledger", rewritten).wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "verify", "--json", "--witness", ow.VKey, "--cosigned", file, "--ledger", rewritten)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-extension")

	truncated := forge(t, s, func(es []map[string]any) []map[string]any { return es[:len(es)-6] })
	r = run(t, "ledger", "verify", "--json", "--witness", ow.VKey, "--cosigned", file, "--ledger", truncated)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-extension")

	// The engine restarted from the older copy: it knows only the first
	// cosignature; the omniwitness holds the second.
	older = growLedger(t, older, 1, 1)
	if latestSize(older) >= latestSize(s) {
		t.Fatalf("sizes %d %d", latestSize(older), latestSize(s))
	}
	got := submitLatest(t, older, ow.URL, ow.VKey)
	if got.status.AlertKind != event.WitnessAhead || got.status.Conflicts < 1 { // retried after backoff: one or more
		t.Errorf("older copy: %+v", got.status)
	}
	older = growLedger(t, older, 30, 30)
	got = submitLatest(t, older, ow.URL, ow.VKey)
	if got.status.AlertKind != event.WitnessBadProof {
		t.Errorf("older copy grown past the witness: %+v\n%s", got.status, ow.Log())
	}
	var kinds []string
	for _, p := range got.recorded {
		a, ok := p.(*event.WitnessAlert)
		if !ok {
			t.Errorf("recorded %s for the forked history", p.Type())
			continue
		}
		kinds = append(kinds, fmt.Sprintf("%s %d", a.Kind, a.Status))
	}
	if !slices.Equal(kinds, []string{"bad-proof 422"}) {
		t.Errorf("alerts recorded %v", kinds)
	}
	// The fork fails verify against what the omniwitness cosigned.
	r = run(t, "ledger", "verify", "--json", "--witness", ow.VKey, "--cosigned", file, "--ledger", older.Path)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-extension")
}
