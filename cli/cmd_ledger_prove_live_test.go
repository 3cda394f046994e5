package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerLive_Checkpoints: while an engine holds the ledger, key,
// checkpoint, prove (LedgerService.Prove) and verify --since
// (LedgerService.ConsistencyProof) answer through it, and everything the
// engine sends is checked here against the signed note and the key read
// from the state directory.
func TestLedgerLive_Checkpoints(t *testing.T) {
	s := signedLedger(t, 20, 10)
	saved := saveNote(t, s.Notes[12])
	serveLedgerWith(t, s.Path, checkpoint.NewKeeper(s.Dir))

	r := run(t, "ledger", "key", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if r.stdout != s.Key.String()+"\n" {
		t.Errorf("key through the engine: %q, want %q", r.stdout, s.Key)
	}
	r = run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	note := r.stdout
	cp, err := tlog.Open([]byte(note), s.Key)
	if err != nil || cp.Size <= 23 {
		t.Fatalf("checkpoint through the engine: %+v %v (the engine signs one at start)", cp, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, tlog.NoteFile)); err != nil || string(b) != note {
		t.Errorf("the note file %q (%v), the engine's latest %q", b, err, note)
	}
	r = run(t, "ledger", "prove", "5", "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	p, err := tlog.ParseProof([]byte(r.stdout))
	if err != nil || p.TreeSize != cp.Size || p.Checkpoint != note {
		t.Fatalf("prove through the engine: %+v %v", p, err)
	}
	v := run(t, "ledger", "verify-proof", writeFile(t, "proof.json", []byte(r.stdout)), "--key", s.Key.String())
	v.wantCode(t, cli.ExitOK)
	r = run(t, "ledger", "prove", "5", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "proved: entry 5", fmt.Sprintf("(the checkpoint of entry %d)", cp.Size)) // as offline
	r = run(t, "ledger", "prove", "3", "--checkpoint", saved, "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	if p, err := tlog.ParseProof([]byte(r.stdout)); err != nil || p.TreeSize != 12 {
		t.Fatalf("prove --checkpoint through the engine: %+v %v", p, err)
	}
	other := signedLedger(t, 20, 10)
	r = run(t, "ledger", "prove", "3", "--checkpoint", saveNote(t, other.Notes[12]), "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r = run(t, "ledger", "verify", "--since", saved, "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "is an append-only extension of "+saved)
	r = run(t, "ledger", "verify", "--since", saveNote(t, other.Notes[12]), "--key", other.Key.String(), "--ledger", s.Path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension")
}

// TestLedgerLive_ProveNewest: while an engine runs, prove of an entry its
// latest signed checkpoint does not cover (the newest, appended since)
// succeeds at once: the engine signs a checkpoint that covers it. The
// periodic checkpoint is an hour away, so only that can make it succeed.
// Many proves at once share one such checkpoint, and proving the
// checkpoint entries themselves again and again (each needs a newer one)
// signs at most one a second.
func TestLedgerLive_ProveNewest(t *testing.T) {
	s := signedLedger(t, 20, 10)
	sl := serveLedgerOpts(t, s.Path, checkpoint.NewKeeper(s.Dir), func(o *engine.Options) {
		o.CheckpointInterval, o.CheckpointEntries = time.Hour, 1<<40
	})
	run(t, "ledger", "note", "--ledger", s.Path, "the newest entry").wantCode(t, cli.ExitOK)
	head, covered, before := checkpointsOf(t, sl.l)
	if covered > head {
		t.Fatalf("the latest checkpoint covers %d entries, the newest is entry %d: nothing to prove here", covered, head)
	}
	r := run(t, "ledger", "prove", strconv.FormatUint(head, 10), "--json", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	p, err := tlog.ParseProof([]byte(r.stdout))
	if err != nil || p.Index != head || p.TreeSize <= head {
		t.Fatalf("prove of the newest entry %d: %+v %v", head, p, err)
	}
	run(t, "ledger", "verify-proof", writeFile(t, "proof.json", []byte(r.stdout)), "--key", s.Key.String()).wantCode(t, cli.ExitOK)

	// Twenty at once of the same entry, the newest (the checkpoint just
	// signed): one more checkpoint for all of them.
	newest, _, n := checkpointsOf(t, sl.l)
	if n != before+1 {
		t.Fatalf("%d checkpoints signed for one prove, want 1", n-before)
	}
	sizes := proveAtOnce(t, s.Path, newest, 20)
	_, _, n2 := checkpointsOf(t, sl.l)
	if n2 != n+1 || len(sizes) != 1 {
		t.Errorf("20 proves of entry %d at once: %d checkpoints signed, proofs against trees %v; want 1 and one tree", newest, n2-n, sizes)
	}
	// Each of these needs a checkpoint newer than the last: a client
	// cannot make the engine sign faster than one a second.
	start := time.Now()
	for range 3 {
		seq, _, _ := checkpointsOf(t, sl.l)
		proveAtOnce(t, s.Path, seq, 2)
	}
	_, _, n3 := checkpointsOf(t, sl.l)
	if n3 != n2+3 {
		t.Errorf("3 rounds of proving the newest checkpoint: %d checkpoints signed, want 3", n3-n2)
	}
	if took := time.Since(start); took < 2*checkpoint.DefaultOnDemandEvery {
		t.Errorf("3 checkpoints on demand signed in %v: more than one a second", took)
	}
}

// proveAtOnce runs n proves of entry seq at the same time and returns
// the tree sizes they proved against; each must succeed.
func proveAtOnce(t *testing.T, path string, seq uint64, n int) map[uint64]bool {
	t.Helper()
	var mu sync.Mutex
	sizes := map[uint64]bool{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(t, "ledger", "prove", strconv.FormatUint(seq, 10), "--json", "--ledger", path)
			p, err := tlog.ParseProof([]byte(r.stdout))
			if r.code != cli.ExitOK || err != nil {
				t.Errorf("prove %d: exit %d %v\n%s", seq, r.code, err, r.stderr)
				return
			}
			mu.Lock()
			sizes[p.TreeSize] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sizes
}

// checkpointsOf returns l's durable head, the tree size of its latest
// checkpoint and how many ledger.checkpoint entries it holds.
func checkpointsOf(t *testing.T, l *ledger.Ledger) (head, covered uint64, n int) {
	t.Helper()
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	suffix := []byte(`"type":"` + ledger.TypeCheckpoint + `"}`)
	err = l.RangeRaw(0, h.Seq, func(seq uint64, raw []byte) error {
		if bytes.HasSuffix(raw, suffix) {
			n++
			covered = seq // a checkpoint at entry n covers the tree of n entries
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.Seq, covered, n
}
