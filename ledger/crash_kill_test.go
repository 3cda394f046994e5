package ledger_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// The crash test runs its appender in a child process (this test binary
// re-executed in child mode "crash-appender") and kills it with SIGKILL,
// so nothing in the ledger package gets to clean up: what is on disk is
// exactly what a crashed engine leaves behind.
const (
	crashMode    = "crash-appender"
	crashPathEnv = "OPX_LEDGER_CRASH_PATH"
	crashSeedEnv = "OPX_LEDGER_CRASH_SEED"

	crashRounds  = 20
	crashWriters = 16
	// crashSeed fixes the kill schedule and each child's workload; the
	// interleaving of goroutines and fsyncs is the part left to chance.
	crashSeed = 0x6f70786c6564676
	// crashMinKill and crashMaxKill bound the delay between the child's
	// "ready" and the SIGKILL.
	crashMinKill = 5 * time.Millisecond
	crashMaxKill = 80 * time.Millisecond
	// crashPatience bounds every wait on the child (start, end of output),
	// generous for a -race binary on a loaded 2-core CI box.
	crashPatience = 30 * time.Second
	// crashChildLifetime ends a child that was never killed (a parent that
	// died or hung), so no appender outlives the test by much.
	crashChildLifetime = 2 * time.Minute
)

// crashAppender is the child: it opens the ledger for appending, prints
// "ready", and appends from crashWriters goroutines until it is killed,
// printing "ack <seq> <hash>" for every entry it knows to be durable: each
// entry of a Sync append that returned, and an Async entry once a later
// Sync call returned.
func crashAppender() error {
	path := os.Getenv(crashPathEnv)
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", crashSeedEnv, err)
	}
	l, err := ledger.Open(path, ledger.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	time.AfterFunc(crashChildLifetime, func() {
		fmt.Fprintf(os.Stderr, "crash child: not killed within %v\n", crashChildLifetime)
		os.Exit(4)
	})
	var mu sync.Mutex
	// report writes whole lines in one write(2) each (well under
	// PIPE_BUF), so a kill never leaves half a line in the pipe. A parent
	// that went away ends the child (EPIPE on stdout is fatal in Go).
	report := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(os.Stdout, s); err != nil {
			fmt.Fprintln(os.Stderr, "crash child: stdout:", err)
			os.Exit(5)
		}
	}
	report("ready\n")
	errc := make(chan error, crashWriters)
	for g := range crashWriters {
		go func() { errc <- crashWriter(l, g, rand.New(rand.NewPCG(seed, uint64(g))), report) }()
	}
	return <-errc // writers return only when an append fails
}

// crashWriter appends for ever: single records and small batches, Sync
// (1/3), Async followed by a Sync call (1/6) and plain Async (1/2).
func crashWriter(l *ledger.Ledger, g int, rng *rand.Rand, report func(string)) error {
	ctx := context.Background()
	var line strings.Builder
	for i := 0; ; i++ {
		recs := make([]ledger.Record, 1)
		if rng.IntN(8) == 0 {
			recs = make([]ledger.Record, 2+rng.IntN(3))
		}
		for j := range recs {
			recs[j] = crashRecord(g, i, j, rng)
		}
		mode := rng.IntN(6)
		d := ledger.Async
		if mode < 2 {
			d = ledger.Sync
		}
		app, err := l.Append(ctx, d, recs...)
		if err != nil {
			return fmt.Errorf("writer %d: %s append: %w", g, d, err)
		}
		switch mode {
		case 0, 1: // Sync: durable on return
		case 2:
			if err := l.Sync(ctx); err != nil {
				return fmt.Errorf("writer %d: sync: %w", g, err)
			}
		default:
			continue // Async: not known to be durable; never reported
		}
		line.Reset()
		for _, a := range app {
			fmt.Fprintf(&line, "ack %d %s\n", a.Seq, a.Hash)
		}
		report(line.String())
	}
}

// crashRecord is a ledger.note, one in six with a blob: a few shared
// contents (stored once) or fresh random content up to 16 KiB.
func crashRecord(g, i, j int, rng *rand.Rand) ledger.Record {
	data := map[string]any{"author": "crash-test", "text": fmt.Sprintf("writer %d append %d.%d", g, i, j)}
	rec := ledger.Record{Session: fmt.Sprintf("crash-%02d", g), Type: ledger.TypeNote, Data: data}
	if rng.IntN(6) == 0 {
		var content []byte
		if rng.IntN(2) == 0 {
			content = []byte(fmt.Sprintf("shared attachment %d", rng.IntN(4)))
		} else {
			content = make([]byte, rng.IntN(16<<10))
			for k := range content {
				content[k] = byte(rng.IntN(16)) // compressible, not trivially
			}
		}
		data["attachment"] = fmt.Sprintf("g%d-%d-%d.bin", g, i, j)
		data["blob"] = ledger.Sum(content).String()
		rec.Blobs = [][]byte{content}
	}
	return rec
}

// crashRun is what the parent saw of one child.
type crashRun struct {
	acked map[uint64]ledger.Hash // durable as the child reported
	lived time.Duration          // from "ready" to the kill
}

// runCrashChild starts a child on path, kills it with SIGKILL delay after
// it reports ready, reads every line it wrote and reaps it. It fails the
// test, with the child's stderr, if the child does not start, ends other
// than by the kill, or writes anything unexpected.
func runCrashChild(t *testing.T, round int, path string, seed uint64, delay time.Duration) crashRun {
	t.Helper()
	cmd := childCommand(crashMode, crashPathEnv+"="+path, crashSeedEnv+"="+strconv.FormatUint(seed, 10))
	var stderr bytes.Buffer // read only after Wait, which ends the copying
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("round %d: start child: %v", round, err)
	}
	lines := make(chan string)
	stop := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
	}()
	reaped := false
	fail := func(format string, args ...any) {
		t.Helper()
		if !reaped {
			close(stop)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
		t.Fatalf("round %d: %s\nchild stderr:\n%s", round, fmt.Sprintf(format, args...), stderr.String())
	}

	patience := time.NewTimer(crashPatience)
	defer patience.Stop()
	select {
	case l, ok := <-lines:
		if !ok {
			fail("child ended before it was ready")
		}
		if l != "ready" {
			fail("child said %q, want ready", l)
		}
	case <-patience.C:
		fail("child not ready within %v", crashPatience)
	}
	ready := time.Now()
	run := crashRun{acked: map[uint64]ledger.Hash{}}
	kill := time.NewTimer(delay)
	defer kill.Stop()
	patience.Reset(crashPatience + delay)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
				break
			}
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != "ack" {
				fail("unexpected child output %q", l)
			}
			seq, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				fail("ack %q: %v", l, err)
			}
			h, err := ledger.ParseHash(f[2])
			if err != nil {
				fail("ack %q: %v", l, err)
			}
			if old, dup := run.acked[seq]; dup && old != h {
				fail("seq %d acknowledged twice, as %s and %s", seq, old, h)
			}
			run.acked[seq] = h
		case <-kill.C:
			run.lived = time.Since(ready)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
				fail("kill: %v", err)
			}
		case <-patience.C:
			fail("child output did not end within %v", crashPatience)
		}
	}
	reaped = true
	werr := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		fail("child ended by itself (%v), not by SIGKILL", werr)
	}
	if s := stderr.String(); strings.Contains(s, "DATA RACE") || strings.Contains(s, "panic:") {
		fail("child reported a race or a panic")
	}
	return run
}

// TestCrash_SIGKILL kills an appender under load (16 goroutines, Sync and
// Async appends, blobs, real fsyncs) with SIGKILL at a random moment, 20
// times on one ledger file. After each kill: the file opens at once (the
// dead child's lock went with it), verifies strictly, holds every entry
// the child was told is durable with the hash it was told, keeps what
// earlier rounds left, and the next child continues the chain.
func TestCrash_SIGKILL(t *testing.T) {
	start := time.Now()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := l.Head() // head left by the previous round, durable by then
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(crashSeed, 0))
	var totalAcked int
	for round := range crashRounds {
		delay := crashMinKill + time.Duration(rng.Int64N(int64(crashMaxKill-crashMinKill)+1))
		run := runCrashChild(t, round, path, rng.Uint64(), delay)

		// OpenReadOnly waits at most 200ms for the lock: a lock that
		// survived the killed child would fail here with ErrLocked.
		r, err := ledger.OpenReadOnly(path)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		head := crashCheck(t, round, r, run.acked, prev)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		var maxAcked uint64
		for seq := range run.acked {
			maxAcked = max(maxAcked, seq)
		}
		totalAcked += len(run.acked)
		t.Logf("round %2d: killed %5.1fms after ready (planned %v): %4d entries acknowledged (up to seq %d), head %d (+%d)",
			round, float64(run.lived.Microseconds())/1000, delay, len(run.acked), maxAcked, head.Seq, head.Seq-prev.Seq)
		prev = head
	}
	if totalAcked == 0 || prev.Seq == 0 {
		t.Fatalf("children appended nothing (%d acknowledged, head %d): the test tested nothing", totalAcked, prev.Seq)
	}

	// A writer takes the ledger as the last child left it.
	l, err = ledger.Open(path, ledger.Options{})
	if err != nil {
		t.Fatalf("open for writing after the last kill: %v", err)
	}
	app, err := l.Append(context.Background(), ledger.Sync, ledger.Record{Type: ledger.TypeNote, Data: map[string]any{"author": "crash-test", "text": "after the crashes"}})
	if err != nil {
		t.Fatal(err)
	}
	if app[0].Seq != prev.Seq+1 {
		t.Errorf("append after the crashes got seq %d, want %d", app[0].Seq, prev.Seq+1)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	crashCheck(t, crashRounds, r, map[uint64]ledger.Hash{app[0].Seq: app[0].Hash}, prev)
	t.Logf("%d rounds, %d entries acknowledged, %d entries in all, %v", crashRounds, totalAcked, app[0].Seq+1, time.Since(start).Round(time.Millisecond))
}

// crashCheck checks a ledger after a kill and returns its head: a strict
// verify finds nothing; every acknowledged entry is there with its hash;
// the head is at or past the last acknowledged entry and the previous
// round's head, which is still the same entry.
func crashCheck(t *testing.T, round int, r *ledger.Ledger, acked map[uint64]ledger.Hash, prev ledger.Head) ledger.Head {
	t.Helper()
	rep, err := r.Verify(ledger.VerifyOptions{Strict: true})
	if err != nil {
		t.Fatalf("round %d: verify: %v", round, err)
	}
	if !rep.OK {
		for i, f := range rep.Failures {
			if i == 10 {
				t.Errorf("... and %d more", len(rep.Failures)-i)
				break
			}
			t.Errorf("round %d: seq %d %s: %s", round, f.Seq, f.Kind, f.Detail)
		}
		t.FailNow()
	}
	head, err := r.Head()
	if err != nil {
		t.Fatalf("round %d: head: %v", round, err)
	}
	if rep.HeadSeq != head.Seq || rep.Entries != head.Seq+1 {
		t.Fatalf("round %d: head %d, verify saw %d entries ending at %d", round, head.Seq, rep.Entries, rep.HeadSeq)
	}
	seqs := make([]uint64, 0, len(acked))
	for seq := range acked {
		seqs = append(seqs, seq)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	var lost []string
	for _, seq := range seqs {
		e, err := r.Get(seq)
		switch {
		case err != nil:
			lost = append(lost, fmt.Sprintf("seq %d (%s): %v", seq, acked[seq], err))
		case e.Hash() != acked[seq]:
			lost = append(lost, fmt.Sprintf("seq %d: acknowledged %s, stored %s", seq, acked[seq], e.Hash()))
		}
	}
	if len(lost) > 0 {
		t.Fatalf("round %d: head %d; %d of %d acknowledged entries lost or changed:\n%s", round, head.Seq, len(lost), len(seqs), strings.Join(lost, "\n"))
	}
	if len(seqs) > 0 && head.Seq < seqs[len(seqs)-1] {
		t.Fatalf("round %d: head %d is before the last acknowledged entry %d", round, head.Seq, seqs[len(seqs)-1])
	}
	if head.Seq < prev.Seq {
		t.Fatalf("round %d: head went back from %d to %d", round, prev.Seq, head.Seq)
	}
	if e, err := r.Get(prev.Seq); err != nil || e.Hash() != prev.Hash {
		t.Fatalf("round %d: the previous round's head %d %s is gone or changed: %v", round, prev.Seq, prev.Hash, err)
	}
	return head
}
