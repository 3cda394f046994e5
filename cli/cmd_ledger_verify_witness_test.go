package cli_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// testWitness is a cosigner as a fleet collector is: cosignature/v1.
type testWitness struct {
	signer note.Signer
	vkey   string
}

func newTestWitness(t *testing.T, name string) testWitness {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tdnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := tdnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return testWitness{s, cv}
}

// cosign returns the ledger's checkpoint note with w's cosignature.
func (w testWitness) cosign(t *testing.T, s signed, text string) string {
	t.Helper()
	v, err := note.NewVerifier(s.Key.String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	out, err := note.Sign(n, w.signer)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// recordCosigned appends ledger.cosigned as the engine does.
func recordCosigned(t *testing.T, path, witness, text string) {
	t.Helper()
	l, err := ledger.Open(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lines := strings.SplitN(text, "\n", 4)
	var size uint64
	fmt.Sscan(lines[1], &size)
	c := &event.Cosigned{Witness: witness, KeyHash: "00000000", TreeSize: size, TreeRoot: lines[2], Note: text}
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", c)); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerVerifyWitness: the ledger extends the checkpoint the witness
// cosigned (recorded, or given as a file): exit 0; another witness's key,
// or no cosignature: not-witnessed; a rewrite on the machine after the
// witness saw it, re-signed with the machine's own key: not-extension.
func TestLedgerVerifyWitness(t *testing.T) {
	s := signedLedger(t, 30, 15, 30)
	w := newTestWitness(t, "witness.example")
	other := newTestWitness(t, "witness.example")
	r := run(t, "ledger", "verify", "--witness", w.vkey, "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-witnessed")

	cosigned := w.cosign(t, s, s.Notes[17])
	file := saveNote(t, cosigned)
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--cosigned", file, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "witness", "extends the checkpoint of 17 entries cosigned by witness.example")

	recordCosigned(t, s.Path, "witness.example", cosigned)
	s = growLedger(t, s, 5)
	r = run(t, "ledger", "verify", "--strict", "--witness", w.vkey, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ledger.cosigned seq")
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	wj, _ := m["witness"].(map[string]any)
	if m["ok"] != true || wj["ok"] != true || wj["tree_size"] != jsonNumber("17") {
		t.Errorf("--json: %v", m)
	}
	r = run(t, "ledger", "verify", "--json", "--witness", other.vkey, "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-witnessed")
	r = run(t, "ledger", "verify", "--json", "--witness", other.vkey, "--cosigned", file, "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-witnessed")

	// Entry 10 rewritten after the witness saw the ledger: every later
	// entry, checkpoint and the tree recomputed and re-signed with the
	// machine's key. The chain verifies; the witness's checkpoint does not.
	forged := forge(t, s, func(es []map[string]any) []map[string]any {
		es[10]["data"].(map[string]any)["text"] = "nothing happened here"
		return es
	})
	run(t, "ledger", "verify", "--strict", "--ledger", forged).wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension")
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--ledger", forged)
	wantOnlyKind(t, r, "not-extension")
	// The rewrite that also drops the cosignature: not witnessed.
	dropped := forge(t, s, func(es []map[string]any) []map[string]any {
		es[10]["data"].(map[string]any)["text"] = "nothing happened here"
		var out []map[string]any
		for _, e := range es {
			if e["type"] != event.TypeCosigned {
				out = append(out, e)
			}
		}
		return out
	})
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--ledger", dropped)
	wantOnlyKind(t, r, "not-witnessed")
	// With the note kept elsewhere (--cosigned), the rewrite shows.
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--cosigned", file, "--ledger", dropped)
	wantOnlyKind(t, r, "not-extension")
}

func TestLedgerVerifyWitness_Refusals(t *testing.T) {
	s := signedLedger(t, 5, 5)
	w := newTestWitness(t, "witness.example")
	for _, tt := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"--cosigned alone", []string{"--cosigned", saveNote(t, s.Notes[7])}, cli.ExitUsage, "--cosigned goes with --witness"},
		{"a bad key", []string{"--witness", "a+b+c"}, cli.ExitUsage, "--witness"},
		{"with --since", []string{"--witness", w.vkey, "--since", saveNote(t, s.Notes[7])}, cli.ExitUsage, "not both"},
		{"a device", []string{"--witness", w.vkey, "--cosigned", "/dev/zero"}, cli.ExitError, "not a regular file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify", "--ledger", s.Path}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.says)
		})
	}
}
