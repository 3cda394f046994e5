package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// fleetStatus is status --json's fleet object.
type fleetStatus struct {
	Running   bool   `json:"running"`
	EnginePID int    `json:"engine_pid"`
	AgentPID  int    `json:"agent_pid"`
	Ledger    string `json:"ledger_path"`
	Fleet     *struct {
		Connected    bool    `json:"connected"`
		AckedSeq     *uint64 `json:"acked_seq"`
		DurableSeq   uint64  `json:"durable_seq"`
		LagEntries   uint64  `json:"lag_entries"`
		CosignedSize uint64  `json:"cosigned_size"`
		Witness      string  `json:"witness"`
		LastError    string  `json:"last_error"`
	} `json:"fleet"`
}

func (w *world) fleetStatus() (fleetStatus, bool) {
	w.t.Helper()
	out, _, code := w.run("status", "--json")
	var st fleetStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		return st, false
	}
	return st, true
}

// shipped: the running engine's every durable entry is acknowledged.
func (w *world) shipped() bool {
	st, ok := w.fleetStatus()
	return ok && st.Fleet != nil && st.Fleet.Connected && st.Fleet.AckedSeq != nil &&
		*st.Fleet.AckedSeq == st.Fleet.DurableSeq && st.Fleet.LagEntries == 0
}

// streamEntries reassembles the ledger's entries from the stream, in
// stream order, failing on anything out of order; blobs by hash.
func streamEntries(t *testing.T, url, id string) (entries [][]byte, blobs map[ledger.Hash]bool, checkpoints []string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, fleet.LedgerStream(fleet.DefaultPrefix))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blobs = map[ledger.Hash]bool{}
	var cur []byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		raw, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("stream message %d: %v", seq, err)
		}
		m, err := fleet.Parse(fleet.DefaultPrefix, &nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data})
		if err != nil {
			t.Fatalf("stream message %d: %v", seq, err)
		}
		if m.LedgerID != id {
			t.Fatalf("a message of ledger %s", m.LedgerID)
		}
		switch m.Kind {
		case fleet.KindBlob:
			if m.Part == m.Parts-1 {
				blobs[m.Blob] = true
			}
		case fleet.KindEntry:
			if m.Part == 0 {
				cur = nil
			}
			cur = append(cur, m.Data...)
			if m.Part < m.Parts-1 {
				continue
			}
			if m.Seq != uint64(len(entries)) {
				t.Fatalf("entry %d on the stream where %d was due (each once, in order)", m.Seq, len(entries))
			}
			entries = append(entries, cur)
			e, err := ledger.ParseEntry(cur)
			if err != nil {
				t.Fatalf("entry %d: %v", m.Seq, err)
			}
			refs, _ := ledger.BlobRefs(e.Data)
			for _, r := range refs {
				if !blobs[r] {
					t.Errorf("entry %d names blob %s, not on the stream before it", m.Seq, r)
				}
			}
			if e.Type == event.TypeCheckpoint {
				if p, err := event.Decode(e); err == nil && p.(*event.Checkpoint).Note != "" {
					checkpoints = append(checkpoints, p.(*event.Checkpoint).Note)
				}
			}
		}
	}
	return entries, blobs, checkpoints
}

// TestE2E_FleetShip: the real engine, configured with fleet, ships its
// ledger to an embedded JetStream server; SIGKILLed mid-ship, the next
// engine resumes from the cursor (the stream holds each entry once, in
// order, verbatim); a witness's cosignature of a checkpoint taken from
// the stream is recorded as ledger.cosigned; verify --witness passes, and
// fails once the ledger is rewritten on the machine.
func TestE2E_FleetShip(t *testing.T) {
	t.Parallel()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "fleet:\n  enabled: true\n  url: " + srv.ClientURL() + "\n"
	if err := os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m := w.start()
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitFor(t, "the ledger shipped", w.shipped)
	first, _ := w.fleetStatus()
	if out, _, _ := w.run("status"); !strings.Contains(out, "fleet     connected") {
		t.Errorf("status does not show shipping:\n%s", out)
	}

	// SIGKILL the engine right after it appended more; the manager starts
	// another, which ships from the cursor.
	if _, errOut, code := w.run("send", "list the files"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	w.kill(first.EnginePID)
	waitFor(t, "a new engine", func() bool {
		st, ok := w.fleetStatus()
		return ok && st.EnginePID != 0 && st.EnginePID != first.EnginePID && st.AgentPID != 0
	})
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send after the crash: %s", errOut)
	}
	waitFor(t, "the ledger shipped after the crash", w.shipped)

	// A witness cosigns the latest signed checkpoint on the stream.
	id := ledgerIDOf(t, w)
	_, _, notes := streamEntries(t, srv.ClientURL(), id)
	if len(notes) == 0 {
		t.Fatal("no signed checkpoint on the stream")
	}
	text := notes[len(notes)-1]
	size := noteSize(t, text)
	vkey, _, code := w.run("ledger", "key")
	if code != 0 {
		t.Fatal("ledger key")
	}
	wit, wkey := e2eWitness(t)
	cosigned := cosignNote(t, text, strings.TrimSpace(vkey), wit)
	publishCosig(t, srv.ClientURL(), id, size, cosigned)
	waitFor(t, "the cosignature recorded", func() bool {
		st, ok := w.fleetStatus()
		return ok && st.Fleet != nil && st.Fleet.CosignedSize == size
	})
	waitFor(t, "the ledger shipped", w.shipped)
	w.stop(m)

	// The stream holds the ledger: every entry once, in order, verbatim.
	entries, _, _ := streamEntries(t, srv.ClientURL(), id)
	l, err := ledger.OpenReadOnly(first.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	for i, raw := range entries {
		e, err := l.Get(uint64(i))
		if err != nil || !bytes.Equal(e.Raw, raw) {
			t.Fatalf("stream entry %d is not the ledger's", i)
		}
	}
	l.Close()
	// The engine.stopped of the last engine is shipped at stop (drained).
	if uint64(len(entries)) != h.Seq+1 {
		t.Errorf("the stream holds %d entries, the ledger %d", len(entries), h.Seq+1)
	}
	types := w.types(first.Ledger)
	if count(types, event.TypeCosigned) != 1 || count(types, "engine.crashed") != 1 {
		t.Errorf("ledger.cosigned %d, engine.crashed %d", count(types, event.TypeCosigned), count(types, "engine.crashed"))
	}

	out, errOut, code := w.run("ledger", "verify", "--witness", wkey)
	if code != 0 || !strings.Contains(out, "witness") {
		t.Fatalf("verify --witness: %d\n%s%s", code, out, errOut)
	}
	// Changed on the machine after the witness saw it (a rewrite that
	// also re-chains and re-signs is TestLedgerVerifyWitness's).
	ledgertest.FlipEntryByte(t, first.Ledger, 3)
	out, errOut, code = w.run("ledger", "verify", "--witness", wkey)
	if code != 4 || !strings.Contains(errOut, "--witness: recompute the tree") {
		t.Fatalf("verify --witness after a rewrite: %d\n%s%s", code, out, errOut)
	}
}

func ledgerIDOf(t *testing.T, w *world) string {
	t.Helper()
	out, errOut, code := w.run("ledger", "head", "--json")
	var h struct {
		LedgerID string `json:"ledger_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &h) != nil || h.LedgerID == "" {
		t.Fatalf("ledger head: %d %s %s", code, out, errOut)
	}
	return h.LedgerID
}

func noteSize(t *testing.T, text string) uint64 {
	t.Helper()
	lines := strings.SplitN(text, "\n", 3)
	var n uint64
	for _, c := range lines[1] {
		n = n*10 + uint64(c-'0')
	}
	return n
}

func e2eWitness(t *testing.T) (note.Signer, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "witness.e2e")
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
	return s, cv
}

func cosignNote(t *testing.T, text, ledgerVKey string, s note.Signer) string {
	t.Helper()
	v, err := note.NewVerifier(ledgerVKey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	out, err := note.Sign(n, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func publishCosig(t *testing.T, url, id string, size uint64, text string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.PublishMsg(context.Background(), fleet.CosigMessage(fleet.DefaultPrefix, id, size, []byte(text))); err != nil {
		t.Fatal(err)
	}
}

// TestE2E_FleetShip_WitnessedByCollector: the real engine ships, the real
// collector (in this process) verifies, mirrors and cosigns its
// checkpoints; the engine records the cosignature, and verify --witness
// with the collector's key passes, then fails once the history is
// changed on the machine.
func TestE2E_FleetShip_WitnessedByCollector(t *testing.T) {
	t.Parallel()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	store := t.TempDir()
	col, err := collector.New(collector.Config{URL: srv.ClientURL(), Store: store, NoSync: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- col.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("collector: %v", err)
		}
		col.Close()
	}()
	wkey := col.WitnessKey()

	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "fleet:\n  enabled: true\n  url: " + srv.ClientURL() + "\n  witness: " + wkey + "\n"
	if err := os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	m := w.start()
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	// The start checkpoint is shipped, verified and cosigned.
	waitFor(t, "a cosignature from the collector", func() bool {
		st, ok := w.fleetStatus()
		return ok && st.Fleet != nil && st.Fleet.CosignedSize > 0
	})
	st, _ := w.fleetStatus()
	// Through the running engine (its LedgerService), then offline.
	if out, errOut, code := w.run("ledger", "verify", "--witness", wkey); code != 0 || !strings.Contains(out, "witness") {
		t.Fatalf("verify --witness through the engine: %d\n%s%s", code, out, errOut)
	}
	w.stop(m)
	out, errOut, code := w.run("ledger", "verify", "--strict", "--witness", wkey)
	if code != 0 || !strings.Contains(out, "witness") {
		t.Fatalf("verify --witness: %d\n%s%s", code, out, errOut)
	}
	ledgertest.FlipEntryByte(t, st.Ledger, 2)
	if _, _, code := w.run("ledger", "verify", "--witness", wkey); code != 4 {
		t.Fatalf("verify --witness after a change: exit %d, want 4", code)
	}
}
