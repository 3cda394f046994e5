package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
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
	r.wantCode(t, cli.ExitUsage) // no reference from off the machine
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--offline", "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-witnessed")

	cosigned := w.cosign(t, s, s.Notes[17])
	file := saveNote(t, cosigned)
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--cosigned", file, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "witness", "extends the checkpoint of 17 entries cosigned by witness.example")

	recordCosigned(t, s.Path, "witness.example", cosigned)
	s = growLedger(t, s, 5)
	r = run(t, "ledger", "verify", "--strict", "--witness", w.vkey, "--offline", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ledger.cosigned seq", "warning", "cannot be detected")
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--offline", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	wj, _ := m["witness"].(map[string]any)
	if m["ok"] != true || wj["ok"] != true || wj["tree_size"] != jsonNumber("17") || wj["offline"] != true || !strings.Contains(fmt.Sprint(wj["warning"]), "cannot be detected") {
		t.Errorf("--json: %v", m)
	}
	r = run(t, "ledger", "verify", "--json", "--witness", other.vkey, "--offline", "--ledger", s.Path)
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
	r = run(t, "ledger", "verify", "--witness", w.vkey, "--offline", "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension")
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--offline", "--ledger", forged)
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
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--offline", "--ledger", dropped)
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
		{"no reference", []string{"--witness", w.vkey}, cli.ExitUsage, "from off this machine"},
		{"two references", []string{"--witness", w.vkey, "--offline", "--nats", "nats://127.0.0.1:1"}, cli.ExitUsage, "give one of --offline"},
		{"--offline alone", []string{"--offline"}, cli.ExitUsage, "--offline goes with --witness"},
		{"--nats alone", []string{"--nats", "nats://127.0.0.1:1"}, cli.ExitUsage, "--nats goes with --witness"},
		{"a stream down", []string{"--witness", w.vkey, "--nats", "nats://127.0.0.1:1"}, cli.ExitError, "the cosignature stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "verify", "--ledger", s.Path}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.says)
		})
	}
}

// cosigStream serves the cosignature stream with text as the latest
// cosigned checkpoint of the ledger at path, as a collector publishes it;
// it returns the server's URL.
func cosigStream(t *testing.T, path, text string) string {
	t.Helper()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fleet.EnsureStreams(ctx, js, fleet.DefaultPrefix, 1); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(text, "\n", 3)
	var size uint64
	fmt.Sscan(lines[1], &size)
	if _, err := js.PublishMsg(ctx, fleet.CosigMessage(fleet.DefaultPrefix, id, size, []byte(text))); err != nil {
		t.Fatal(err)
	}
	return srv.ClientURL()
}

// RV17 #2, the whole class: the reference comes from off the machine
// (the cosignature stream by default). A rewrite that keeps an older
// ledger.cosigned entry, a plain truncation, and a rewrite that drops
// every ledger.cosigned entry all fail not-extension against the
// stream's latest cosignature; --offline passes the first two, and says
// why it cannot see them.
func TestLedgerVerifyWitness_FromStream(t *testing.T) {
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
	cosigned := w.cosign(t, s, s.Notes[latest])
	recordCosigned(t, s.Path, "witness.example", cosigned)
	s = growLedger(t, s, 3)
	url := cosigStream(t, s.Path, cosigned)

	r := run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--nats", url, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	wj, _ := r.jsonObject(t)["witness"].(map[string]any)
	if wj["ok"] != true || wj["tree_size"] != jsonNumber(fmt.Sprint(latest)) || wj["offline"] != nil || !strings.Contains(fmt.Sprint(wj["from"]), "cosignature stream") {
		t.Fatalf("--nats: %v", wj)
	}
	const victim = 20
	keepOlder := forge(t, s, func(es []map[string]any) []map[string]any {
		es[victim]["data"].(map[string]any)["text"] = "nothing happened here"
		var out []map[string]any
		for _, e := range es {
			if e["type"] == event.TypeCosigned {
				if size, _ := e["data"].(map[string]any)["tree_size"].(json.Number).Int64(); uint64(size) == latest {
					continue
				}
			}
			out = append(out, e)
		}
		return out
	})
	dropAll := forge(t, s, func(es []map[string]any) []map[string]any {
		es[victim]["data"].(map[string]any)["text"] = "nothing happened here"
		var out []map[string]any
		for _, e := range es {
			if e["type"] != event.TypeCosigned {
				out = append(out, e)
			}
		}
		return out
	})
	truncated := forge(t, s, func(es []map[string]any) []map[string]any { return es[:victim] })
	for name, path := range map[string]string{"rewrite keeping an older cosignature": keepOlder, "rewrite dropping them all": dropAll, "truncation": truncated} {
		r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--nats", url, "--ledger", path)
		r.wantCode(t, cli.ExitIntegrity)
		wantOnlyKind(t, r, "not-extension")
		if name != "rewrite dropping them all" {
			r = run(t, "ledger", "verify", "--witness", w.vkey, "--offline", "--ledger", path)
			r.wantCode(t, cli.ExitOK) // what --offline cannot see, and says so
			r.wantOut(t, "warning", "cannot be detected")
		}
	}
	// A stream that holds no cosignature of this ledger: not-witnessed.
	other := signedLedger(t, 5, 5)
	r = run(t, "ledger", "verify", "--json", "--witness", w.vkey, "--nats", url, "--ledger", other.Path)
	r.wantCode(t, cli.ExitIntegrity)
	wantOnlyKind(t, r, "not-witnessed")
}
