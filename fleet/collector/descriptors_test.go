package collector_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
)

// fdSourcesEnv raises the sources of the descriptors test (10000 for
// the figure: about a minute).
const fdSourcesEnv = "OPX_COLLECTOR_FD_SOURCES"

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestCollector_ManySources_BoundedDescriptors: a collector takes 600
// sources (two descriptors each, as a mirror held open costs, would not
// fit), is restarted on their store, and serves every mirror for review,
// within a soft limit of 1024 descriptors (a Debian default), lowered
// for the test: the descriptors it holds are bounded by MaxOpenMirrors,
// not by the sources. OPX_COLLECTOR_FD_SOURCES=10000 for the issue's
// figure.
func TestCollector_ManySources_BoundedDescriptors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	n := 600
	if v, err := strconv.Atoi(os.Getenv(fdSourcesEnv)); err == nil && v > 0 {
		n = v
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = min(lim.Cur, 1024)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })

	srv := startServer(t)
	p := newPub(t, srv.ClientURL())
	store := t.TempDir()
	recorded := recordedSources(t, n, 2)
	for _, r := range recorded {
		for seq, raw := range r.raws {
			for _, m := range fleet.EntryMessages(prefix, r.id, uint64(seq), raw) {
				p.must(m)
			}
		}
	}
	before := openFDs(t)
	var mu sync.Mutex
	heads := map[string]uint64{}
	at := func(seq uint64) int {
		mu.Lock()
		defer mu.Unlock()
		k := 0
		for _, h := range heads {
			if h >= seq {
				k++
			}
		}
		return k
	}
	hook := func(c *collector.Config) {
		c.Materialized = func(id string, head uint64) {
			mu.Lock()
			heads[id] = head
			mu.Unlock()
		}
	}
	start := time.Now()
	r := startCollector(t, srv.ClientURL(), store, hook)
	// A new mirror costs ~10 ms here (bbolt file, tree, projections):
	// the wait grows with the sources.
	deadline := time.Now().Add(max(time.Minute, time.Duration(n)*50*time.Millisecond))
	for at(1) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sources' mirrors written", at(1), n)
		}
		time.Sleep(20 * time.Millisecond) // polling, bounded by the deadline
	}
	during := openFDs(t)
	t.Logf("%d sources taken in %v: %d descriptors open (%d before)", n, time.Since(start).Round(time.Millisecond), during, before)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Restarted on the store: every mirror opened at start, then served;
	// one more entry for some sources: they run.
	start = time.Now()
	r = startCollector(t, srv.ClientURL(), store, hook)
	for _, rs := range recorded[:10] {
		p.must(fleet.EntryMessages(prefix, rs.id, 2, nextNote(t, rs))[0])
	}
	waitFor(t, "the new entries", func() bool { return at(2) == 10 })
	after := openFDs(t)
	t.Logf("restarted with %d sources in %v: %d descriptors open", n, time.Since(start).Round(time.Millisecond), after)
	if bound := before + collector.DefaultMaxOpenMirrors + 64; during > bound || after > bound {
		t.Errorf("%d and %d descriptors open, more than %d before + %d mirrors + 64", during, after, before, collector.DefaultMaxOpenMirrors)
	}
	// Every mirror is registered for review (in the background).
	waitFor(t, "the mirrors registered for review", func() bool {
		for _, rs := range []recordedSource{recorded[0], recorded[n-1]} {
			if _, _, err := registry.Lookup(registry.Dir(filepath.Dir(collector.SourcePath(store, rs.id)))); err != nil {
				return false
			}
		}
		return true
	})
	if fds := openFDs(t); fds > before+collector.DefaultMaxOpenMirrors+64 {
		t.Errorf("%d descriptors open once every mirror is registered", fds)
	}
}

// nextNote is the entry after a recorded source's last.
func nextNote(t *testing.T, r recordedSource) []byte {
	t.Helper()
	seq := len(r.raws)
	e, err := ledger.MarshalCanonical(map[string]any{"data": map[string]any{"author": "fd", "text": "one more"},
		"prev": ledger.Sum(r.raws[seq-1]).String(), "seq": seq, "session": "", "ts": "2026-12-02T10:00:01.000000000Z", "type": ledger.TypeNote})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
