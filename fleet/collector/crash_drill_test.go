package collector_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// The crash drill runs the collector as a child process (this test
// binary again, drillEnv set) and SIGKILLs it while it takes a thousand
// sources' entries.
const (
	drillEnv = "OPX_COLLECTOR_DRILL" // "URL STORE": run a collector there
	// drillSourcesEnv raises the drill's sources (the default runs in
	// seconds under -race on a busy 2-core machine); drillSyncEnv=1 runs
	// it with fsync (a SIGKILL loses no page cache: the drill does not
	// need it, and it costs a new mirror ~18 ms here).
	drillSourcesEnv = "OPX_COLLECTOR_DRILL_SOURCES"
	drillSyncEnv    = "OPX_COLLECTOR_DRILL_SYNC"
	drillAckWait    = 2 * time.Second
	drillPatience   = 2 * time.Minute
)

func TestMain(m *testing.M) {
	if v := os.Getenv(drillEnv); v != "" {
		if err := drillChild(v); err != nil {
			fmt.Fprintln(os.Stderr, "drill child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// drillChild runs a collector until it is killed, printing "stored N" each time what it verified is durable in
// its journal (N entries so far), one write per line.
func drillChild(v string) error {
	url, store, _ := strings.Cut(v, " ")
	var mu sync.Mutex
	n := 0
	time.AfterFunc(drillPatience, func() { os.Exit(4) }) // a parent that went away
	return collector.Run(context.Background(), collector.Config{URL: url, Prefix: prefix, Store: store, AckWait: drillAckWait,
		NoSync: os.Getenv(drillSyncEnv) != "1",
		Stored: func(string, uint64) {
			mu.Lock()
			defer mu.Unlock()
			n++
			if _, err := fmt.Fprintf(os.Stdout, "stored %d\n", n); err != nil {
				os.Exit(5)
			}
		}})
}

// TestCollector_CrashDrill_SIGKILLMidBatch: a thousand sources' entries
// wait in JetStream (recorded entries published straight to it, and a
// few engines' ledgers with keys, blobs and signed checkpoints); a
// collector in a child process takes them and is SIGKILLed once a third
// of the sources had a batch made durable in its journal (the mirrors
// lag behind it); a collector restarted on the store takes the rest.
// Then every mirror holds byte for byte its source's entries (no gap, no
// duplicate) and its blobs, the last checkpoint of each signed source is
// cosigned, and no source has an alert.
func TestCollector_CrashDrill_SIGKILLMidBatch(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv(drillSourcesEnv)); err == nil && v > 0 {
		n = v
	}
	if testing.Short() {
		n = 100
	}
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	start := time.Now()
	recorded := recordedSources(t, n-drillSigned, 4)
	signed := drillSources(t, drillSigned)
	var wg sync.WaitGroup
	for i := range 2 { // two publishers: the stream interleaves the sources
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; j < len(recorded); j += 2 {
				r := recorded[j]
				for seq, raw := range r.raws {
					for _, m := range fleet.EntryMessages(prefix, r.id, uint64(seq), raw) {
						if err := p.msg(m); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
		}()
	}
	for _, s := range signed {
		p.hello(s.Ledger, "drill")
		p.ship(s.Ledger, 0, s.head(t).Seq)
	}
	wg.Wait()
	t.Logf("%d sources published in %v", n, time.Since(start).Round(time.Millisecond))

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), drillEnv+"="+srv.ClientURL()+" "+store)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stored := 0
	sc := bufio.NewScanner(out)
	for stored < n/3 && sc.Scan() {
		stored, _ = strconv.Atoi(strings.TrimPrefix(sc.Text(), "stored "))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if stored < n/3 {
		t.Fatalf("the child stopped after %d stored: %s", stored, stderr.String())
	}
	segs, _ := filepath.Glob(filepath.Join(store, collector.JournalDir, "*.wal"))
	var journaled int64
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil {
			journaled += st.Size()
		}
	}
	mirrors, _ := filepath.Glob(filepath.Join(store, "sources", "*", "ledger.db"))
	t.Logf("killed after %d batches stored (%v): %d mirrors written, the journal holds %d bytes in %d segments",
		stored, time.Since(start).Round(time.Millisecond), len(mirrors), journaled, len(segs))

	// The restart: until every source's mirror is whole.
	c, err := collector.New(collector.Config{URL: srv.ClientURL(), Prefix: prefix, Store: store, AckWait: drillAckWait, Logf: t.Logf,
		NoSync: os.Getenv(drillSyncEnv) != "1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted: the journal re-applied in %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	want := map[string]uint64{}
	for _, r := range recorded {
		want[r.id] = uint64(len(r.raws) - 1)
	}
	for _, s := range signed {
		want[s.ID()] = s.head(t).Seq
	}
	var st *collector.Status
	waitFor(t, "every mirror whole", func() bool {
		st = readStatus(store)
		if st == nil {
			return false
		}
		whole := 0
		for _, ss := range st.Sources {
			if h, ok := want[ss.ID]; ok && ss.HasMirror && ss.HeadSeq == h {
				whole++
			}
		}
		return whole == len(want)
	})
	t.Logf("every mirror whole at %v", time.Since(start).Round(time.Millisecond))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if st = readStatus(store); st == nil {
		t.Fatal("no status")
	}
	isSigned := signedIDs(signed)
	for _, ss := range st.Sources {
		if isSigned[ss.ID] && ss.Cosigned != want[ss.ID] {
			t.Errorf("source %s: cosigned %d, its head (a checkpoint) is %d", ss.ID, ss.Cosigned, want[ss.ID])
		}
	}
	if len(st.Alerts) > 0 {
		t.Errorf("%d alerts, the first: %+v", len(st.Alerts), st.Alerts[0])
	}
	for _, r := range recorded {
		m, err := ledger.OpenReadOnly(collector.SourcePath(store, r.id))
		if err != nil {
			t.Fatal(err)
		}
		got := raws(t, m, 0, ^uint64(0))
		m.Close()
		if len(got) != len(r.raws) {
			t.Fatalf("source %s: the mirror holds %d entries, the source %d", r.id, len(got), len(r.raws))
		}
		for i := range got {
			if !bytes.Equal(got[i], r.raws[i]) {
				t.Fatalf("source %s: entry %d differs", r.id, i)
			}
		}
	}
	for _, s := range signed {
		sameEntries(t, store, s.Ledger)
		sameBlobs(t, store, s.Ledger)
	}
	checkStoreOf(t, store, isSigned)
	t.Logf("restarted and compared in %v", time.Since(start).Round(time.Millisecond))
}

// drillSigned is how many of the drill's sources are engines' ledgers
// (keys, blobs, signed checkpoints); the others are recorded entries.
const drillSigned = 10

type recordedSource struct {
	id   string
	raws [][]byte
}

// recordedSources makes n sources of k entries each (a genesis and
// notes), recorded as a ledger would hold them.
func recordedSources(t *testing.T, n, k int) []recordedSource {
	t.Helper()
	ts := "2026-12-02T10:00:00.000000000Z"
	out := make([]recordedSource, n)
	for i := range out {
		id := fmt.Sprintf("%032x", 0xd0000000+i)
		g, err := ledger.MarshalCanonical(map[string]any{"data": map[string]any{"created": ts, "format": "opx-ledger/1", "ledger_id": id},
			"prev": ledger.ZeroHash.String(), "seq": 0, "session": "", "ts": ts, "type": ledger.TypeGenesis})
		if err != nil {
			t.Fatal(err)
		}
		raws := [][]byte{g}
		for seq := 1; seq < k; seq++ {
			e, err := ledger.MarshalCanonical(map[string]any{"data": map[string]any{"author": "drill", "text": fmt.Sprintf("note %d of %s", seq, id)},
				"prev": ledger.Sum(raws[seq-1]).String(), "seq": seq, "session": "", "ts": ts, "type": ledger.TypeNote})
			if err != nil {
				t.Fatal(err)
			}
			raws = append(raws, e)
		}
		out[i] = recordedSource{id: id, raws: raws}
	}
	return out
}

// readStatus reads the store's status file (nil: none readable yet).
func readStatus(store string) *collector.Status {
	s, err := collector.OpenStore(store)
	if err != nil {
		return nil
	}
	st, err := s.Status()
	if err != nil {
		return nil
	}
	return st
}

func signedIDs(ss []*src) map[string]bool {
	out := map[string]bool{}
	for _, s := range ss {
		out[s.ID()] = true
	}
	return out
}

// checkStoreOf verifies the collector's ledger and the mirrors of ids.
func checkStoreOf(t *testing.T, store string, ids map[string]bool) {
	t.Helper()
	ledgertest.MustVerify(t, filepath.Join(store, collector.OwnLedger), event.StrictOptions())
	for id := range ids {
		ledgertest.MustVerify(t, collector.SourcePath(store, id), event.StrictOptions())
	}
}

// drillSources makes n engines' ledgers with a key, two notes (one with
// a blob) and a signed checkpoint each.
func drillSources(t *testing.T, n int) []*src {
	t.Helper()
	dir := t.TempDir()
	out := make([]*src, n)
	for i := range out {
		out[i] = newSource(t, filepath.Join(dir, strconv.Itoa(i)))
		out[i].notes(t, 2, true)
	}
	return out
}

// sameBlobs checks that the mirror holds every blob the source holds.
func sameBlobs(t *testing.T, store string, s *ledger.Ledger) {
	t.Helper()
	m, err := ledger.OpenReadOnly(collector.SourcePath(store, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, _ := s.Head()
	s.RangeRaw(0, h.Seq, func(seq uint64, raw []byte) error {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		refs, _ := ledger.BlobRefs(e.Data)
		for _, b := range refs {
			want, _ := s.BlobFrame(b)
			got, err := m.BlobFrame(b)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("source %s: blob %s of entry %d: %v", s.ID(), b, seq, err)
			}
		}
		return nil
	})
}
