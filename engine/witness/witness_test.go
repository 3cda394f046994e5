package witness_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/witness"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// testLog is a ledger with its signing key, as the engine opens it.
type testLog struct {
	t   testing.TB
	dir string
	l   *ledger.Ledger
	k   *checkpoint.Keeper

	mu       sync.Mutex
	recorded []event.Payload
}

func openLog(t testing.TB, dir string) *testLog {
	t.Helper()
	k := checkpoint.NewKeeper(dir)
	path := filepath.Join(dir, "ledger.db")
	opts := ledger.Options{NoSync: true, SignCheckpoint: k.Sign}
	l, err := ledger.Open(path, opts)
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	lg := &testLog{t: t, dir: dir, l: l, k: k}
	t.Cleanup(lg.close)
	return lg
}

func (lg *testLog) close() {
	if lg.l != nil {
		lg.l.Close()
		ledgertest.MustVerify(lg.t, filepath.Join(lg.dir, "ledger.db"), ledger.VerifyOptions{Strict: true})
		lg.l = nil
	}
}

func (lg *testLog) verifier() tlog.Verifier {
	v, ok := lg.k.Verifier()
	if !ok {
		lg.t.Fatal("no key")
	}
	return v
}

// grow appends n notes and signs a checkpoint; it returns its note.
func (lg *testLog) grow(n int) string {
	lg.t.Helper()
	ctx := context.Background()
	for i := range n {
		r, err := event.Record("", &event.Note{Author: "test", Text: fmt.Sprintf("note %d", i)})
		if err == nil {
			_, err = lg.l.Append(ctx, ledger.Async, r)
		}
		if err != nil {
			lg.t.Fatal(err)
		}
	}
	app, err := lg.l.Checkpoint(ctx, ledger.Sync)
	if err != nil {
		lg.t.Fatal(err)
	}
	e, err := lg.l.Get(app.Seq)
	if err != nil {
		lg.t.Fatal(err)
	}
	var c ledger.CheckpointPayload
	if err := json.Unmarshal(e.Data, &c); err != nil || c.Note == "" {
		lg.t.Fatalf("checkpoint %d: %v %+v", app.Seq, err, c)
	}
	return c.Note
}

// record is the engine's Recorder: durable, in no session.
func (lg *testLog) record(ctx context.Context, p event.Payload) error {
	r, err := event.Record("", p)
	if err == nil {
		_, err = lg.l.Append(ctx, ledger.Sync, r)
	}
	if err == nil {
		lg.mu.Lock()
		lg.recorded = append(lg.recorded, p)
		lg.mu.Unlock()
	}
	return err
}

func (lg *testLog) payloads() []event.Payload {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return slices.Clone(lg.recorded)
}

// start starts a submitter to the witnesses at urls with keys.
func (lg *testLog) start(t testing.TB, ws ...witness.Witness) *witness.Submitter {
	t.Helper()
	s, err := witness.New(witness.Options{Witnesses: ws, Origin: tlog.Origin(lg.l.ID()), Ledger: lg.l, Record: lg.record,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	t.Cleanup(func() { s.Close(time.Second) })
	return s
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func cosignedSize(s *witness.Submitter) uint64 { return s.Status()[0].CosignedSize }

func alertsOf(lg *testLog) []*event.WitnessAlert {
	var out []*event.WitnessAlert
	for _, p := range lg.payloads() {
		if a, ok := p.(*event.WitnessAlert); ok {
			out = append(out, a)
		}
	}
	return out
}

func sizeOf(t testing.TB, n string) uint64 {
	t.Helper()
	var size uint64
	var origin string
	if _, err := fmt.Sscanf(n, "%s\n%d\n", &origin, &size); err != nil {
		t.Fatal(err)
	}
	return size
}

// TestSubmitter_Cosigns: each checkpoint is cosigned and recorded as
// ledger.cosigned whose note verifies under the witness's key; the second
// request proves from the first size.
func TestSubmitter_Cosigns(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})

	n1 := lg.grow(3)
	s.Submit(n1)
	waitFor(t, "the first cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n1) })
	n2 := lg.grow(5)
	s.Submit(n2)
	waitFor(t, "the second cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n2) })

	v, _ := tdnote.NewVerifierForCosignatureV1(tw.vkey)
	var sizes []uint64
	for _, p := range lg.payloads() {
		c, ok := p.(*event.Cosigned)
		if !ok {
			t.Fatalf("recorded %s", p.Type())
		}
		if _, err := note.Open([]byte(c.Note), note.VerifierList(v)); err != nil {
			t.Errorf("recorded cosignature does not verify: %v", err)
		}
		if _, err := tlog.Open([]byte(c.Note), lg.verifier()); err != nil {
			t.Errorf("recorded note lost the log's signature: %v", err)
		}
		sizes = append(sizes, c.TreeSize)
	}
	if !slices.Equal(sizes, []uint64{sizeOf(t, n1), sizeOf(t, n2)}) {
		t.Errorf("cosigned sizes %v", sizes)
	}
	if _, reqs, statuses := tw.state(); reqs != 2 || !slices.Equal(statuses, []int{200, 200}) {
		t.Errorf("requests %d %v, want two 200s (the second proving from the first)", reqs, statuses)
	}
}

// TestSubmitter_RetriesWhileDown: a witness that answers 503 is retried
// with backoff until it cosigns; the error shows in Status meanwhile and
// nothing is recorded but the cosignature.
func TestSubmitter_RetriesWhileDown(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	tw.setFail(3)
	srv := httptest.NewServer(tw)
	defer srv.Close()
	s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})
	n := lg.grow(2)
	s.Submit(n)
	waitFor(t, "the cosignature after the witness is back", func() bool { return cosignedSize(s) == sizeOf(t, n) })
	if _, reqs, _ := tw.state(); reqs != 4 {
		t.Errorf("%d requests, want 3 refused and 1 cosigned", reqs)
	}
	if st := s.Status()[0]; st.LastError != "" || st.Cosigned != 1 || st.Submitted != 4 {
		t.Errorf("status %+v", st)
	}
	if len(lg.payloads()) != 1 {
		t.Errorf("recorded %v", lg.payloads())
	}
}

// TestSubmitter_NetworkDown: nothing listening is a retried error shown
// by Status, never an alert.
func TestSubmitter_NetworkDown(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	url := srv.URL
	srv.Close()
	s := lg.start(t, witness.Witness{URL: url, Key: tw.vkey})
	s.Submit(lg.grow(1))
	waitFor(t, "two failed attempts", func() bool { return s.Status()[0].Submitted >= 2 })
	if st := s.Status()[0]; st.LastError == "" || st.Alert != "" || st.PendingSize == 0 {
		t.Errorf("status %+v", st)
	}
	if len(lg.payloads()) != 0 {
		t.Errorf("recorded %v", lg.payloads())
	}
}

// TestSubmitter_409 follows the witness's size: a submitter that does not
// know what the witness cosigned (its entries are not in the ledger it
// reads) sends old 0, gets 409 with the witness's size and proves from it.
func TestSubmitter_409(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})
	n1 := lg.grow(2)
	s.Submit(n1)
	waitFor(t, "the first cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n1) })
	s.Close(time.Second)

	blind, err := witness.New(witness.Options{Witnesses: []witness.Witness{{URL: srv.URL, Key: tw.vkey}}, Origin: tlog.Origin(lg.l.ID()),
		Ledger: hideCosigned{lg.l}, Record: lg.record, MinBackoff: 5 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	blind.Start(context.Background())
	defer blind.Close(time.Second)
	n2 := lg.grow(4)
	blind.Submit(n2)
	waitFor(t, "the cosignature after the 409", func() bool { return cosignedSize(blind) == sizeOf(t, n2) })
	// The blind submitter may first submit the latest checkpoint it reads
	// at start (n1 or n2): one 409, then 200s.
	if _, _, statuses := tw.state(); statuses[1] != 409 || slices.Contains(statuses[2:], 409) || slices.ContainsFunc(statuses[2:], func(c int) bool { return c != 200 }) {
		t.Errorf("statuses %v, want 200 409 200...", statuses)
	}
	if st := blind.Status()[0]; st.Conflicts != 1 || st.Alert != "" {
		t.Errorf("status %+v", st)
	}
}

// hideCosigned reads a ledger without its ledger.cosigned entries.
type hideCosigned struct{ *ledger.Ledger }

func (h hideCosigned) Backward(fn func(seq uint64, raw []byte) (bool, error)) error {
	return h.Ledger.Backward(func(seq uint64, raw []byte) (bool, error) {
		if e, err := ledger.ParseEntry(raw); err == nil && e.Type == event.TypeCosigned {
			return true, nil
		}
		return fn(seq, raw)
	})
}

// TestSubmitter_OlderCopy: an engine restarted from an older copy of its
// ledger gets 409 with the witness's larger size, and an alert, never a
// cosignature of the forked history: "ahead" while its tree is smaller
// than the witness's, "bad-proof" once it has grown past it.
func TestSubmitter_OlderCopy(t *testing.T) {
	dir, old := t.TempDir(), t.TempDir()
	lg := openLog(t, dir)
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	ws := witness.Witness{URL: srv.URL, Key: tw.vkey}
	s := lg.start(t, ws)
	n1 := lg.grow(2)
	s.Submit(n1)
	waitFor(t, "the first cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n1) })
	s.Close(time.Second)
	lg.close()
	ledgertest.Copy(t, filepath.Join(dir, "ledger.db"), filepath.Join(old, "ledger.db"))
	copyKey(t, dir, old)

	lg = openLog(t, dir)
	s = lg.start(t, ws)
	n2 := lg.grow(10)
	s.Submit(n2)
	waitFor(t, "the second cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n2) })
	s.Close(time.Second)
	lg.close()

	back := openLog(t, old)
	s = back.start(t, ws)
	if got := cosignedSize(s); got > sizeOf(t, n1) {
		t.Fatalf("cosigned size %d from the older copy", got)
	}
	n3 := back.grow(1)
	if sizeOf(t, n3) >= sizeOf(t, n2) {
		t.Fatalf("sizes %d %d", sizeOf(t, n3), sizeOf(t, n2))
	}
	s.Submit(n3)
	waitFor(t, "the ahead alert", func() bool { return len(alertsOf(back)) == 1 })
	if a := alertsOf(back)[0]; a.Kind != event.WitnessAhead || a.Status != 409 || a.WitnessSize != sizeOf(t, n2) {
		t.Errorf("alert %+v", a)
	}
	n4 := back.grow(20)
	s.Submit(n4)
	waitFor(t, "the bad-proof alert", func() bool { return len(alertsOf(back)) == 2 })
	if a := alertsOf(back)[1]; a.Kind != event.WitnessBadProof || a.Status != 422 || a.OldSize != sizeOf(t, n2) {
		t.Errorf("alert %+v", a)
	}
	if size, _, _ := tw.state(); size != sizeOf(t, n2) {
		t.Errorf("the witness moved to %d", size)
	}
	if st := s.Status()[0]; st.AlertKind != event.WitnessBadProof || st.CosignedSize != sizeOf(t, n1) {
		t.Errorf("status %+v", st)
	}
	for _, p := range back.payloads() {
		if p.Type() == event.TypeCosigned {
			t.Errorf("the forked history was cosigned: %+v", p)
		}
	}
	// A restart reads the standing alert back.
	s.Close(time.Second)
	s = back.start(t, ws)
	waitFor(t, "the alert read back", func() bool { return s.Status()[0].AlertKind != "" })
}

// TestSubmitter_SameSizeOtherRoot: a witness that cosigned another root
// at the size of the ledger's checkpoint answers 409 (no size) once the
// submitter proves from that size: a bad-proof alert with the 409, no
// cosignature, no loop of retries.
func TestSubmitter_SameSizeOtherRoot(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	n1 := lg.grow(3)
	tw.mu.Lock()
	tw.size, tw.root = sizeOf(t, n1), [32]byte{1}
	tw.mu.Unlock()
	s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})
	s.Submit(n1)
	waitFor(t, "the bad-proof alert", func() bool { return len(alertsOf(lg)) == 1 })
	if a := alertsOf(lg)[0]; a.Kind != event.WitnessBadProof || a.Status != 409 || a.OldSize != sizeOf(t, n1) {
		t.Errorf("alert %+v", a)
	}
	// A refused checkpoint is tried again after backoff, so more requests
	// may follow the first two by now: each one refused the same way.
	if _, _, statuses := tw.state(); len(statuses) < 2 || slices.ContainsFunc(statuses, func(c int) bool { return c != 409 }) {
		t.Errorf("statuses %v, want 409 (stale) then 409 (root), and only 409 after", statuses)
	}
	if st := s.Status()[0]; st.CosignedSize != 0 || st.AlertKind != event.WitnessBadProof {
		t.Errorf("status %+v", st)
	}
}

// TestSubmitter_Rewound: a witness stating a size below one it cosigned
// is an alert; the submitter does not prove from there.
func TestSubmitter_Rewound(t *testing.T) {
	lg := openLog(t, t.TempDir())
	tw := newTestWitness(t, lg.verifier())
	srv := httptest.NewServer(tw)
	defer srv.Close()
	s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})
	n1 := lg.grow(2)
	s.Submit(n1)
	waitFor(t, "the first cosignature", func() bool { return cosignedSize(s) == sizeOf(t, n1) })
	tw.mu.Lock()
	tw.size, tw.root = 0, [32]byte{} // it lost its state
	tw.mu.Unlock()
	s.Submit(lg.grow(2))
	waitFor(t, "the rewound alert", func() bool { return len(alertsOf(lg)) == 1 })
	if a := alertsOf(lg)[0]; a.Kind != event.WitnessRewound || a.WitnessSize != 0 || a.OldSize != sizeOf(t, n1) {
		t.Errorf("alert %+v", a)
	}
	if size, _, _ := tw.state(); size != 0 {
		t.Errorf("the witness was fed from %d", size)
	}
}

// TestSubmitter_Refusals: 404 and 403 are recorded alerts, once per kind
// however many checkpoints follow.
func TestSubmitter_Refusals(t *testing.T) {
	lg := openLog(t, t.TempDir())
	other := openLog(t, t.TempDir())
	for _, c := range []struct {
		name string
		key  tlog.Verifier
		kind string
	}{
		{"unknown origin", other.verifier(), event.WitnessUnknownOrigin},
		{"another key", forgedKey(t, lg.verifier().Name()), event.WitnessBadSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTestWitness(t, c.key)
			srv := httptest.NewServer(tw)
			defer srv.Close()
			before := len(alertsOf(lg))
			s := lg.start(t, witness.Witness{URL: srv.URL, Key: tw.vkey})
			s.Submit(lg.grow(1))
			waitFor(t, "the alert", func() bool { return len(alertsOf(lg)) == before+1 })
			s.Submit(lg.grow(1))
			waitFor(t, "the second request", func() bool { _, n, _ := tw.state(); return n >= 2 })
			waitFor(t, "the second checkpoint handled", func() bool { return s.Status()[0].PendingSize == 0 })
			if got := alertsOf(lg); len(got) != before+1 || got[before].Kind != c.kind {
				t.Errorf("alerts %+v", got[before:])
			}
			if st := s.Status()[0]; st.AlertKind != c.kind {
				t.Errorf("status %+v", st)
			}
		})
	}
}

func forgedKey(t *testing.T, name string) tlog.Verifier {
	_, vkey, err := tlog.GenerateKey(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tlog.ParseVerifierKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func copyKey(t *testing.T, from, to string) {
	b, err := os.ReadFile(filepath.Join(from, tlog.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, tlog.KeyFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestNew_Config refuses what cannot be a witness.
func TestNew_Config(t *testing.T) {
	_, vkey, _ := note.GenerateKey(rand.Reader, "w.example")
	for _, ws := range [][]witness.Witness{
		{{URL: "ftp://x", Key: vkey}},
		{{URL: "http://127.0.0.1:1", Key: "nope"}},
		{{URL: "http://127.0.0.1:1", Key: vkey}, {URL: "http://127.0.0.1:2", Key: vkey}},
	} {
		if _, err := witness.New(witness.Options{Witnesses: ws}); !errors.Is(err, witness.ErrConfig) {
			t.Errorf("%+v: %v", ws, err)
		}
	}
}
