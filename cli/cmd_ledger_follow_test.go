package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// lockedBuffer is a bytes.Buffer safe for a running command and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// following is an `opx ledger follow` running in the test process.
type following struct {
	out, errOut *lockedBuffer
	cancel      context.CancelFunc
	done        chan error
	once        sync.Once
	err         error
}

func startFollow(t testing.TB, args ...string) *following {
	t.Helper()
	f := &following{out: &lockedBuffer{}, errOut: &lockedBuffer{}, done: make(chan error, 1)}
	app := cli.NewApp()
	app.Writer, app.ErrWriter = f.out, f.errOut
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	release := lockSetup(app) // until follow's action starts
	go func() {
		err := app.RunContext(ctx, append([]string{"opx", "ledger", "follow"}, args...))
		release()
		f.done <- err
	}()
	t.Cleanup(func() { f.stop() })
	return f
}

// stop stops follow as Ctrl-C does and returns what it returned.
func (f *following) stop() error {
	f.cancel()
	f.once.Do(func() { f.err = <-f.done })
	return f.err
}

// exited waits for follow to exit on its own.
func (f *following) exited(t *testing.T) error {
	t.Helper()
	select {
	case err := <-f.done:
		f.once.Do(func() { f.err = err })
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("follow did not exit:\n%s%s", f.out.String(), f.errOut.String())
		return nil
	}
}

// lines returns the --json lines printed so far, decoded.
func (f *following) lines(t *testing.T) []followLine {
	t.Helper()
	var out []followLine
	for _, s := range strings.Split(strings.TrimSuffix(f.out.String(), "\n"), "\n") {
		if s == "" {
			continue
		}
		var l followLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("follow printed %q: %v", s, err)
		}
		out = append(out, l)
	}
	return out
}

type followLine struct {
	Seq   uint64          `json:"seq"`
	Hash  string          `json:"hash"`
	Entry json.RawMessage `json:"entry"`
}

// waitLines waits until follow has printed through entry seq, or exits.
func (f *following) waitThrough(t *testing.T, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ls := f.lines(t); len(ls) > 0 && ls[len(ls)-1].Seq >= seq {
			return
		}
		select {
		case err := <-f.done:
			f.once.Do(func() { f.err = err }) // so that stop does not wait for it again
			t.Fatalf("follow exited (%v) before entry %d:\n%s%s", err, seq, f.out.String(), f.errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("follow did not print entry %d:\n%s%s", seq, f.out.String(), f.errOut.String())
}

// checkAgainst fails unless the lines are exactly entries from..head of
// the ledger at path, in order, each with its stored bytes and hash.
func checkAgainst(t *testing.T, lines []followLine, path string, from uint64) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	if uint64(len(lines)) != h.Seq-from+1 {
		t.Errorf("follow printed %d entries, the ledger holds %d from %d", len(lines), h.Seq-from+1, from)
	}
	for i, ln := range lines {
		e, err := l.Get(from + uint64(i))
		if err != nil || ln.Seq != e.Seq || ln.Hash != e.Hash().String() || !bytes.Equal(ln.Entry, e.Raw) {
			t.Fatalf("line %d is entry %d %s, the ledger's is %d %s (%v)", i, ln.Seq, ln.Hash, e.Seq, e.Hash(), err)
		}
	}
}

// TestLedgerFollow_EngineRestart: follow prints every entry once, in
// order, while entries are appended through a real engine, while no
// engine runs (from the file, which it must not keep open: the next
// engine opens it) and after the next engine starts: no gap, no
// duplicate.
func TestLedgerFollow_EngineRestart(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	dir := t.TempDir()
	path := ledgertest.Copy(t, newLedger(t, 5).Path, filepath.Join(dir, "ledger.db"))
	srv := serveLedger(t, path)
	f := startFollow(t, "--ledger", path, "--from", "0", "--json")
	h, _ := srv.l.Head()
	f.waitThrough(t, h.Seq)
	for i := 0; i < 3; i++ {
		run(t, "ledger", "note", "--ledger", path, fmt.Sprint("live ", i)).wantCode(t, cli.ExitOK)
	}
	h, _ = srv.l.Head()
	f.waitThrough(t, h.Seq)
	srv.stop() // engine.stopped is appended as the engine lets go: follow reads it from the file
	off, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _ = off.Head()
	off.Close()
	f.waitThrough(t, h.Seq)
	run(t, "ledger", "note", "--ledger", path, "offline").wantCode(t, cli.ExitOK) // no engine: written to the file
	f.waitThrough(t, h.Seq+1)
	srv = serveLedger(t, path) // would fail if follow held the file
	run(t, "ledger", "note", "--ledger", path, "after the restart").wantCode(t, cli.ExitOK)
	h, _ = srv.l.Head()
	f.waitThrough(t, h.Seq)
	srv.stop()
	off, err = ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _ = off.Head()
	off.Close()
	f.waitThrough(t, h.Seq)
	if err := f.stop(); err != nil {
		t.Errorf("follow after Ctrl-C: %v", err)
	}
	checkAgainst(t, f.lines(t), path, 0)
	if errs := f.errOut.String(); errs != "" {
		t.Errorf("stderr: %s", errs)
	}
}

// TestLedgerFollow_ChainDoesNotContinue: when the file follow reads is
// replaced by another ledger, or by a fork of the same one, follow says
// so and exits 4.
func TestLedgerFollow_ChainDoesNotContinue(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	base := newLedger(t, 6)
	other := newLedger(t, 6)
	for name, replace := range map[string]func(t *testing.T, path string){
		"another ledger": func(t *testing.T, path string) {
			ledgertest.Copy(t, other.Path, path+".new")
		},
		"a fork": func(t *testing.T, path string) {
			ledgertest.Copy(t, base.Path, path+".new")
			run(t, "ledger", "note", "--ledger", path+".new", "the fork").wantCode(t, cli.ExitOK)
			run(t, "ledger", "note", "--ledger", path+".new", "more").wantCode(t, cli.ExitOK)
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), "ledger.db"))
			f := startFollow(t, "--ledger", path, "--json")
			f.waitThrough(t, uint64(base.Entries-1))
			run(t, "ledger", "note", "--ledger", path, "the original").wantCode(t, cli.ExitOK)
			f.waitThrough(t, uint64(base.Entries))
			replace(t, path)
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
			err := f.exited(t)
			if code := cli.ExitCode(err); code != cli.ExitIntegrity || !strings.Contains(err.Error(), "does not continue") {
				t.Errorf("follow exited %d: %v", code, err)
			}
		})
	}
}

// TestLedgerFollow_Offline: without an engine, follow prints what the
// file holds, as tail prints it (the last 10 entries by default), then
// waits; --type filters what is printed.
func TestLedgerFollow_Offline(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	lg := newLedger(t, 30)
	tail := run(t, "ledger", "tail", "--ledger", lg.Path)
	tail.wantCode(t, cli.ExitOK)
	f := startFollow(t, "--ledger", lg.Path)
	waitFor(t, func() bool { return f.out.String() == tail.stdout })
	run(t, "ledger", "note", "--ledger", lg.Path, "one more").wantCode(t, cli.ExitOK)
	waitFor(t, func() bool { return strings.Count(f.out.String(), "\n") == 11 })
	if err := f.stop(); err != nil {
		t.Errorf("follow: %v", err)
	}

	g := startFollow(t, "--ledger", lg.Path, "--from", "0", "--type", "ledger.genesis", "--json")
	waitFor(t, func() bool { return strings.Count(g.out.String(), "\n") == 1 })
	if ls := g.lines(t); ls[0].Seq != 0 || !strings.Contains(string(ls[0].Entry), `"type":"ledger.genesis"`) {
		t.Errorf("follow --type ledger.genesis: %s", g.out.String())
	}
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLedgerFollow_Help: the help promises what follow checks, no more:
// one unbroken chain from the anchor, the last entry printed confirmed
// only by the next one or on a reconnect.
func TestLedgerFollow_Help(t *testing.T) {
	r := run(t, "ledger", "follow", "--help")
	help := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{"one unbroken chain from the anchor", "confirmed by the next one", "the last entry printed is not confirmed yet"} {
		if !strings.Contains(help, want) {
			t.Errorf("follow --help does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(help, "cannot slip in") {
		t.Errorf("follow --help promises more than follow checks:\n%s", r.stdout)
	}
}

// TestLedgerFollow_ConfirmsSignedCheckpoint: a signed checkpoint that
// arrives through follow is checked with the key in the state directory
// and the engine's proof of the entry before it: follow says the entries
// it printed are confirmed through that entry.
func TestLedgerFollow_ConfirmsSignedCheckpoint(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	s := signedLedger(t, 20, 10)
	serveLedgerWith(t, s.Path, checkpoint.NewKeeper(s.Dir))
	// The engine's latest checkpoint, asked before follow starts: two
	// apps must not run at once in one process (urfave/cli's flags are
	// shared), and follow reads from genesis, so it sees this one too.
	r := run(t, "ledger", "checkpoint", "--ledger", s.Path)
	r.wantCode(t, cli.ExitOK)
	cp, err := tlog.Open([]byte(r.stdout), s.Key)
	if err != nil {
		t.Fatal(err)
	}
	fw := startFollow(t, "--ledger", s.Path, "--json")
	// The checkpoint of the tree of N entries is entry N.
	want := fmt.Sprintf("confirmed through %d: checkpoint %d is signed by the key in %s", cp.Size-1, cp.Size, s.Dir)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(fw.errOut.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("follow did not say %q:\n%s%s", want, fw.out.String(), fw.errOut.String())
		}
		select {
		case err := <-fw.done:
			fw.once.Do(func() { fw.err = err })
			t.Fatalf("follow exited (%v):\n%s%s", err, fw.out.String(), fw.errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := fw.stop(); err != nil {
		t.Fatalf("follow: %v\n%s", err, fw.errOut.String())
	}
}

// TestLedgerFollow_CheckpointLyingProver: the confirmation of a signed
// checkpoint follow prints rests on a proof checked here: an engine whose
// proof of the entry before it is forged is caught (exit 4), an honest one
// confirms the entries through it.
func TestLedgerFollow_CheckpointLyingProver(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	for _, lie := range []bool{false, true} {
		t.Run(fmt.Sprintf("lie=%v", lie), func(t *testing.T) {
			s := signedLedger(t, 20, 10) // the checkpoint of the tree of 12 entries is entry 12
			l, err := ledger.Open(s.Path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			es := entriesOf(t, l)
			f := &lyingProver{lyingEngine: &lyingEngine{l: l, follow: func(send func(*opxv1.LedgerEntry) error) error {
				for _, e := range es {
					if err := send(e); err != nil {
						return err
					}
				}
				return nil
			}}}
			if lie {
				f.prove = func(r *opxv1.ProveResponse) { r.Hashes[0][0] ^= 1 }
			}
			serveLying(t, s.Path, f)
			fw := startFollow(t, "--ledger", s.Path, "--from", "0", "--json")
			if lie {
				if code := cli.ExitCode(fw.exited(t)); code != cli.ExitIntegrity {
					t.Fatalf("follow exited %d, want %d:\n%s", code, cli.ExitIntegrity, fw.errOut.String())
				}
				return
			}
			fw.waitThrough(t, es[len(es)-1].Seq)
			if err := fw.stop(); err != nil {
				t.Fatal(err)
			}
			if want := "confirmed through 11: checkpoint 12 is signed"; !strings.Contains(fw.errOut.String(), want) {
				t.Errorf("follow said %q, want %q", fw.errOut.String(), want)
			}
		})
	}
}
