package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The fleet's failure drills with real processes: engines (`opx start`)
// shipping, a collector (`opx collector`) collecting, NATS JetStream
// servers in this test process (a 3-node cluster on loopback, or one
// embedded server), killed and restarted while the engines work.

// collectorProc is a running `opx collector`.
type collectorProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// startCollector runs `opx collector --store store args...` and waits
// until it runs (it says its witness key once its store is open).
func startCollector(t *testing.T, bin, store string, args ...string) *collectorProc {
	t.Helper()
	p := &collectorProc{cmd: exec.Command(bin, append([]string{"collector", "--store", store}, args...)...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "OPX_FLEET_STORE=")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		// What the collector said, for whoever reads a failure (a wait
		// that timed out says only what it waited for).
		if t.Failed() {
			t.Logf("opx collector's output:\n%s", p.out.String())
		}
	})
	waitFor(t, "the collector to start", func() bool {
		select {
		case <-p.done:
			t.Fatalf("opx collector exited (%v):\n%s", p.err, p.out.String())
		default:
		}
		return strings.Contains(p.out.String(), "witness key")
	})
	return p
}

// kill SIGKILLs the collector and waits for it.
func (p *collectorProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop stops the collector as an operator does (SIGTERM): it exits 0.
func (p *collectorProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("opx collector still runs a minute after SIGTERM:\n%s", p.out.String())
	}
	if p.err != nil {
		t.Fatalf("opx collector exited with %v:\n%s", p.err, p.out.String())
	}
}

// fleetSource is one source of `opx fleet sources --json`.
type fleetSource struct {
	ID        string `json:"id"`
	HasMirror bool   `json:"has_mirror"`
	HeadSeq   uint64 `json:"head_seq"`
	HeadHash  string `json:"head_hash"`
	Cosigned  uint64 `json:"cosigned_size"`
	Alerts    int    `json:"alerts"`
	Path      string `json:"path"`
}

func fleetSources(t *testing.T, bin, store string) map[string]fleetSource {
	t.Helper()
	out, errOut, code := runOpx(t, bin, "fleet", "sources", "--store", store, "--json")
	if code != 0 {
		return nil // the collector may not have written its status yet
	}
	var v struct {
		Sources []fleetSource `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("fleet sources --json: %v\n%s%s", err, out, errOut)
	}
	m := map[string]fleetSource{}
	for _, s := range v.Sources {
		m[s.ID] = s
	}
	return m
}

// head is the engine's durable ledger head (status --json).
func (w *world) head() (uint64, bool) {
	st, ok := w.fleetStatus()
	if !ok || st.Fleet == nil {
		return 0, false
	}
	return st.Fleet.DurableSeq, true
}

// waitMirrored waits until the collector's mirror of w's ledger holds
// everything the engine has made durable and shipped.
func waitMirrored(t *testing.T, bin, store string, w *world, id string) {
	t.Helper()
	waitFor(t, "the ledger shipped", w.shipped)
	want, ok := w.head()
	if !ok {
		t.Fatal("no fleet status")
	}
	waitFor(t, fmt.Sprintf("the collector to hold %s up to %d", id, want), func() bool {
		s, ok := fleetSources(t, bin, store)[id]
		return ok && s.HasMirror && s.HeadSeq >= want
	})
}

// fleetWorld is a workspace whose engine ships to url.
func fleetWorld(t *testing.T, url string, replicas int) *world {
	t.Helper()
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("fleet:\n  enabled: true\n  url: %s\n  replicas: %d\n", url, replicas)
	if err := os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// notes appends n notes through the running engine.
func (w *world) notes(n int, what string) {
	w.t.Helper()
	for i := range n {
		if _, errOut, code := w.run("ledger", "note", fmt.Sprintf("%s %d", what, i)); code != 0 {
			w.t.Fatalf("ledger note: %d %s", code, errOut)
		}
	}
}

// sameLedger checks that the mirror holds the source's entries, byte for
// byte, at least up to acked (every entry JetStream acknowledged to the
// engine: what a stopping engine could not ship in its bounded drain goes
// at its next start), and verifies.
func sameLedger(t *testing.T, bin, source, mirror string, acked uint64) {
	t.Helper()
	read := func(path string) [][]byte {
		l, err := ledger.OpenReadOnly(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer l.Close()
		h, _ := l.Head()
		var out [][]byte
		l.RangeRaw(0, h.Seq, func(_ uint64, raw []byte) error { out = append(out, append([]byte(nil), raw...)); return nil })
		return out
	}
	src, mir := read(source), read(mirror)
	if uint64(len(mir)) < acked+1 || len(mir) > len(src) {
		t.Errorf("the mirror holds %d entries, the source %d, %d of them acknowledged", len(mir), len(src), acked+1)
	}
	for i := range min(len(src), len(mir)) {
		if !bytes.Equal(src[i], mir[i]) {
			t.Fatalf("mirror entry %d differs from the source's", i)
		}
	}
	if out, errOut, code := runOpx(t, bin, "ledger", "verify", "--ledger", mirror); code != 0 {
		t.Errorf("verify the mirror: %d\n%s%s", code, out, errOut)
	}
}

// noAlerts fails the test for any alert in the collector's ledger.
func noAlerts(t *testing.T, bin, store string) {
	t.Helper()
	out, errOut, code := runOpx(t, bin, "fleet", "alerts", "--store", store)
	if code != 0 || !strings.Contains(out, "no alerts") {
		t.Errorf("fleet alerts: %d\n%s%s", code, out, errOut)
	}
}

// localMsgs is how many messages member s holds of the ledger stream in
// its own store.
func localMsgs(s *natsrv.Server) (uint64, bool) {
	if !s.NATS().Running() {
		return 0, false
	}
	info, err := s.NATS().Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		return 0, false
	}
	for _, a := range info.AccountDetails {
		for _, st := range a.Streams {
			if st.Name == fleet.LedgerStream(fleet.DefaultPrefix) {
				return st.State.Msgs, true
			}
		}
	}
	return 0, false
}

// streamLeader is the member leading the ledger stream.
func streamLeader(t *testing.T, c *natsrv.Cluster) int {
	t.Helper()
	leader := -1
	waitFor(t, "a ledger stream leader", func() bool {
		for i, s := range c.Servers {
			if s.NATS().Running() && s.NATS().JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, fleet.LedgerStream(fleet.DefaultPrefix)) {
				leader = i
				return true
			}
		}
		return false
	})
	return leader
}

// TestE2E_FleetCluster: two engines ship to a 3-node JetStream cluster
// (streams replicated 3 times) that a collector reads. The ledger
// stream's leader is killed while the engines ship: nothing is lost.
// Restarted, it catches up with the others. The collector's mirrors are
// the engines' ledgers, byte for byte, with no alert.
func TestE2E_FleetCluster(t *testing.T) {
	t.Parallel()
	c, err := natsrv.StartCluster(t.TempDir(), "e2e", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	bin := buildOpx(t)
	store := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "collector.yaml")
	os.WriteFile(cfg, []byte("replicas: 3\n"), 0o600)
	col := startCollector(t, bin, store, "--nats", c.ClientURLs(), "--config", cfg)

	ws := []*world{fleetWorld(t, c.ClientURLs(), 3), fleetWorld(t, c.ClientURLs(), 3)}
	var ms []*manager
	var ids []string
	for _, w := range ws {
		ms = append(ms, w.start())
		ids = append(ids, ledgerIDOf(t, w))
		w.notes(5, "before")
	}
	for i, w := range ws {
		waitMirrored(t, bin, store, w, ids[i])
	}

	// Kill the stream leader while both engines append.
	victim := streamLeader(t, c)
	errs := make(chan error, len(ws))
	for _, w := range ws {
		go func() {
			for i := range 10 {
				if _, errOut, code := w.run("ledger", "note", fmt.Sprintf("during %d", i)); code != 0 {
					errs <- fmt.Errorf("ledger note: %d %s", code, errOut)
					return
				}
			}
			errs <- nil
		}()
	}
	c.Servers[victim].Shutdown()
	for range ws {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range ws {
		waitMirrored(t, bin, store, w, ids[i])
	}

	// Restarted, it catches up in its own store.
	s, err := c.Servers[victim].Restart()
	if err != nil {
		t.Fatal(err)
	}
	c.Servers[victim] = s
	for _, w := range ws {
		w.notes(3, "after")
	}
	for i, w := range ws {
		waitMirrored(t, bin, store, w, ids[i])
	}
	var paths []string
	for i, w := range ws {
		st, _ := w.fleetStatus()
		paths = append(paths, st.Ledger)
		w.stop(ms[i])
	}
	other := c.Servers[(victim+1)%3]
	waitFor(t, "the restarted member to catch up", func() bool {
		n, ok := localMsgs(s)
		want, ok2 := localMsgs(other)
		return ok && ok2 && n == want && n > 0
	})
	acked := make([]uint64, len(ids))
	for i, id := range ids {
		acked[i] = waitHeld(t, bin, store, paths[i], id)
	}
	col.stop(t)
	for i, id := range ids {
		sameLedger(t, bin, paths[i], filepath.Join(store, "sources", id, "ledger.db"), acked[i])
	}
	noAlerts(t, bin, store)
}

// cosignedBySize reads the collector's fleet.cosigned entries: each
// source's cosigned notes by tree size, failing on two different notes
// for one size (a checkpoint signed again).
func cosignedBySize(t *testing.T, store string) map[string]map[uint64]string {
	t.Helper()
	l, err := ledger.OpenReadOnly(filepath.Join(store, "collector.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	out := map[string]map[uint64]string{}
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type != event.TypeFleetCosigned {
			return nil
		}
		var c event.FleetCosigned
		if err := json.Unmarshal(e.Data, &c); err != nil {
			t.Fatalf("fleet.cosigned %d: %v", e.Seq, err)
		}
		if out[c.Source] == nil {
			out[c.Source] = map[uint64]string{}
		}
		if prev, ok := out[c.Source][c.TreeSize]; ok && prev != c.Note {
			t.Errorf("source %s size %d cosigned twice with different notes", c.Source, c.TreeSize)
		}
		out[c.Source][c.TreeSize] = c.Note
		return nil
	})
	return out
}

// engineCosigned reads the ledger.cosigned entries of an engine's ledger
// by tree size.
func engineCosigned(t *testing.T, path string) map[uint64]string {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	out := map[uint64]string{}
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			var c event.Cosigned
			json.Unmarshal(e.Data, &c)
			out[c.TreeSize] = c.Note
		}
		return nil
	})
	return out
}

// TestE2E_FleetCollectorKilled: the collector is SIGKILLed while an
// engine ships and started again: the mirror has no gap and no entry
// twice, no alert is raised, and every checkpoint has one cosignature
// (the engine records the same notes the collector recorded).
func TestE2E_FleetCollectorKilled(t *testing.T) {
	t.Parallel()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	bin := buildOpx(t)
	store := t.TempDir()
	col := startCollector(t, bin, store, "--nats", srv.ClientURL())
	w := fleetWorld(t, srv.ClientURL(), 1)
	m := w.start()
	id := ledgerIDOf(t, w)
	w.notes(5, "before")
	waitMirrored(t, bin, store, w, id)

	// Kill it mid-stream: while the engine appends.
	done := make(chan struct{})
	go func() { defer close(done); w.notes(20, "during") }()
	waitFor(t, "the collector to take some of them", func() bool {
		s := fleetSources(t, bin, store)[id]
		h, _ := w.head()
		return s.HeadSeq > 0 && h > s.HeadSeq
	})
	col.kill()
	<-done
	w.notes(3, "while down")
	col = startCollector(t, bin, store, "--nats", srv.ClientURL())
	// A checkpoint after the restart, for a cosignature of the new
	// collector life: restarting the engine signs one at stop and start.
	if out, errOut, code := w.run("ledger", "checkpoint"); code != 0 {
		t.Logf("ledger checkpoint: %d %s%s", code, out, errOut)
	}
	waitMirrored(t, bin, store, w, id)
	st, _ := w.fleetStatus()
	waitFor(t, "a cosignature recorded by the engine", func() bool {
		s, ok := w.fleetStatus()
		return ok && s.Fleet != nil && s.Fleet.CosignedSize > 0
	})
	w.stop(m)
	acked := waitHeld(t, bin, store, st.Ledger, id)
	col.stop(t)
	sameLedger(t, bin, st.Ledger, filepath.Join(store, "sources", id, "ledger.db"), acked)
	noAlerts(t, bin, store)
	recorded := cosignedBySize(t, store)[id]
	got := engineCosigned(t, st.Ledger)
	if len(recorded) == 0 || len(got) == 0 {
		t.Fatalf("cosigned: the collector recorded %d, the engine %d", len(recorded), len(got))
	}
	for size, n := range got {
		if recorded[size] != n {
			t.Errorf("the engine's cosignature at size %d is not the one the collector recorded", size)
		}
	}
}

// TestE2E_FleetNATSDown: NATS stops during a session; the engine keeps
// working (its tool path never waits for NATS); once NATS is back the
// backlog arrives at the collector, which holds the whole ledger.
func TestE2E_FleetNATSDown(t *testing.T) {
	t.Parallel()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown() })
	bin := buildOpx(t)
	store := t.TempDir()
	col := startCollector(t, bin, store, "--nats", srv.ClientURL())
	w := fleetWorld(t, srv.ClientURL(), 1)
	m := w.start()
	id := ledgerIDOf(t, w)
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitMirrored(t, bin, store, w, id)

	srv.Shutdown()
	waitFor(t, "the engine to see NATS gone", func() bool {
		s, ok := w.fleetStatus()
		return ok && s.Fleet != nil && !s.Fleet.Connected
	})
	for _, msg := range []string{"list the files", "read README.md"} {
		if _, errOut, code := w.run("send", msg); code != 0 {
			t.Fatalf("send with NATS down: %s", errOut)
		}
	}
	w.notes(5, "NATS down")
	if s, _ := w.fleetStatus(); s.Fleet == nil || s.Fleet.LagEntries == 0 {
		t.Errorf("no backlog while NATS is down: %+v", s.Fleet)
	}

	srv, err = srv.Restart()
	if err != nil {
		t.Fatal(err)
	}
	waitMirrored(t, bin, store, w, id)
	st, _ := w.fleetStatus()
	w.stop(m)
	acked := waitHeld(t, bin, store, st.Ledger, id)
	col.stop(t)
	sameLedger(t, bin, st.Ledger, filepath.Join(store, "sources", id, "ledger.db"), acked)
	noAlerts(t, bin, store)
	reviewBySource(t, bin, store, id, w)
}

// reviewBySource: the review commands read the collector's mirror by
// source id as they read the engine's own ledger, with the same answers.
func reviewBySource(t *testing.T, bin, store, id string, w *world) {
	t.Helper()
	out, errOut, code := w.run("sessions", "--json")
	var own struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &own) != nil || len(own.Sessions) == 0 {
		t.Fatalf("sessions: %d %s%s", code, out, errOut)
	}
	session := own.Sessions[0].ID
	out, errOut, code = runOpx(t, bin, "fleet", "sessions", "--store", store)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, session) {
		t.Errorf("fleet sessions: %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{{"replay", session}, {"metrics", "--json"}, {"history", session, "--json"}, {"ledger", "verify", "--strict"}} {
		mine, _, code1 := w.run(args...)
		theirs, errOut, code2 := runOpx(t, bin, append(args, "--source", id, "--store", store)...)
		if code1 != 0 || code2 != 0 {
			t.Errorf("%v: %d on the engine's ledger, %d on the mirror\n%s", args, code1, code2, errOut)
			continue
		}
		// The first lines say how much was verified: through a running
		// collector everything is (it is outside input), offline what the
		// latest checkpoint leaves. What is shown must be the same.
		if args[0] == "replay" {
			mine, theirs = fromLine(mine, "session "), fromLine(theirs, "session ")
		}
		if args[0] != "ledger" && mine != theirs {
			t.Errorf("%v differs on the mirror:\n%s\nvs the engine's ledger:\n%s", args, theirs, mine)
		}
	}
}

// TestE2E_FleetEmbedded: the single-machine set-up, all real binaries:
// `opx collector --embedded-nats` runs JetStream in its own process, an
// engine ships to it, the collector cosigns its checkpoints with the key
// `opx collector key` prints, the engine records the cosignature, and
// `opx ledger verify --witness KEY` passes on the engine's ledger.
func TestE2E_FleetEmbedded(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	store := t.TempDir()
	key, errOut, code := runOpx(t, bin, "collector", "key", "--store", store)
	if code != 0 {
		t.Fatalf("collector key: %d %s", code, errOut)
	}
	key = strings.TrimSpace(key)
	if again, _, _ := runOpx(t, bin, "collector", "key", "--store", store); strings.TrimSpace(again) != key {
		t.Fatalf("collector key changed: %q then %q", key, again)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	col := startCollector(t, bin, store, "--embedded-nats", t.TempDir(), "--listen", addr)
	if !strings.Contains(col.out.String(), "nats://"+addr) || !strings.Contains(col.out.String(), key) {
		t.Errorf("the collector does not say where it listens and its key:\n%s", col.out.String())
	}
	if !strings.Contains(col.out.String(), "collector: open files: ") {
		t.Errorf("the collector does not say its open-files limit:\n%s", col.out.String())
	}
	w := fleetWorld(t, "nats://"+addr, 1)
	m := w.start()
	id := ledgerIDOf(t, w)
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	waitMirrored(t, bin, store, w, id)
	waitFor(t, "the collector's cosignature recorded by the engine", func() bool {
		s, ok := w.fleetStatus()
		return ok && s.Fleet != nil && s.Fleet.CosignedSize > 0
	})
	st, _ := w.fleetStatus()
	w.stop(m)
	if out, errOut, code := w.run("ledger", "verify", "--witness", key); code != 0 {
		t.Fatalf("verify --witness: %d\n%s%s", code, out, errOut)
	}
	// Issue 24 #1: only the collector may publish a cosignature on its
	// embedded server; an engine (no credentials) may not.
	wantRefusedPublish(t, "nats://"+addr, fleet.CosigMessage(fleet.DefaultPrefix, id, 3, []byte("an old cosignature\n")))
	waitHeld(t, bin, store, st.Ledger, id)
	// While the collector runs (and holds the mirror), through it.
	reviewBySource(t, bin, store, id, w)
	col.stop(t)
	out, _, code := runOpx(t, bin, "fleet", "sources", "--store", store)
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("fleet sources after the collector stopped: %d\n%s", code, out)
	}
	noAlerts(t, bin, store)
}

// fromLine is out from its first line starting with prefix.
func fromLine(out, prefix string) string {
	if i := strings.Index(out, "\n"+prefix); i >= 0 {
		return out[i+1:]
	}
	return out
}

// waitHeld waits until the collector holds the stopped engine's ledger at
// path up to the last entry JetStream acknowledged to it (its cursor), and
// returns that seq.
func waitHeld(t *testing.T, bin, store, path, id string) uint64 {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	acked, ok, err := l.Cursor("fleet." + fleet.LedgerStream(fleet.DefaultPrefix))
	l.Close()
	if err != nil || !ok {
		t.Fatalf("the engine's fleet cursor: %v %v", ok, err)
	}
	waitFor(t, fmt.Sprintf("the collector to hold %s up to %d", id, acked), func() bool {
		return fleetSources(t, bin, store)[id].HeadSeq >= acked
	})
	return acked
}
