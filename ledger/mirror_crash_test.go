package ledger_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

const (
	mirrorCrashMode = "mirror-appender"
	mirrorSrcEnv    = "OPX_LEDGER_MIRROR_SRC"
	mirrorDstEnv    = "OPX_LEDGER_MIRROR_DST"
)

func init() { childModes[mirrorCrashMode] = mirrorAppender }

// mirrorAppender is the child: it creates or opens the mirror and appends
// the source's entries (and their blobs) from where the mirror stands, in
// batches of 1 to 64, Sync, printing "ack <seq>" after each; at the end
// it prints "done" and waits to be killed.
func mirrorAppender() error {
	src, err := ledger.OpenReadOnly(os.Getenv(mirrorSrcEnv))
	if err != nil {
		return err
	}
	dst := os.Getenv(mirrorDstEnv)
	all, frames := [][]byte{}, map[ledger.Hash][]byte{}
	err = src.RangeRaw(0, ^uint64(0), func(_ uint64, raw []byte) error {
		all = append(all, append([]byte(nil), raw...))
		e, _ := ledger.ParseEntry(raw)
		refs, _ := ledger.BlobRefs(e.Data)
		for _, h := range refs {
			f, err := src.BlobFrame(h)
			if err != nil {
				return err
			}
			frames[h] = f
		}
		return nil
	})
	if err != nil {
		return err
	}
	m, err := ledger.OpenMirror(dst, ledger.Options{LockTimeout: 5 * time.Second})
	if errors.Is(err, ledger.ErrNotExist) {
		m, err = ledger.CreateMirror(dst, all[0], ledger.Options{})
	}
	if err != nil {
		return err
	}
	fmt.Println("ready")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for next, _ := m.MirrorNext(); next < uint64(len(all)); next, _ = m.MirrorNext() {
		n := min(uint64(1+rng.IntN(64)), uint64(len(all))-next)
		batch := all[next : next+n]
		for _, raw := range batch {
			e, _ := ledger.ParseEntry(raw)
			refs, _ := ledger.BlobRefs(e.Data)
			for _, h := range refs {
				if err := m.PutBlobFrame(ctx, ledger.Async, h, frames[h]); err != nil {
					return err
				}
			}
		}
		if _, err := m.AppendVerbatim(ctx, ledger.Sync, batch...); err != nil {
			return err
		}
		fmt.Printf("ack %d\n", next+n-1)
	}
	fmt.Println("done")
	select {}
}

// TestMirror_CrashSIGKILL kills a mirror's appender (real fsyncs) with
// SIGKILL at random moments until it has mirrored the whole source. After
// each kill the mirror opens, holds every entry acknowledged and only the
// source's entries, verifies, and the next appender goes on from its head.
func TestMirror_CrashSIGKILL(t *testing.T) {
	dir := t.TempDir()
	// 1000 entries (many batches of 1 to 64, several tiles of 256) take
	// some 20 rounds of kills; 3000 took 60 to 90, each child reading the
	// whole source and each round verifying the whole mirror, for no
	// path that 1000 does not take.
	src := ledgertest.New(t, filepath.Join(dir, "src.db"), 1000)
	dst := filepath.Join(dir, "mirror", "ledger.db")
	want, _ := sourceOf(t, src.Path)
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; ; round++ {
		if round > 200 {
			t.Fatal("the mirror never completed")
		}
		acked, done := runMirrorChild(t, round, src.Path, dst, time.Duration(2+rng.IntN(40))*time.Millisecond)
		m, err := ledger.OpenMirror(dst, ledger.Options{})
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		h, err := m.Head()
		m.Close()
		if err != nil || (acked >= 0 && h.Seq < uint64(acked)) {
			t.Fatalf("round %d: head %d (%v), %d acknowledged", round, h.Seq, err, acked)
		}
		got, _ := sourceOf(t, dst)
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("round %d: entry %d is not the source's", round, i)
			}
		}
		ledgertest.MustVerify(t, dst)
		if done {
			if len(got) != len(want) {
				t.Fatalf("done with %d of %d entries", len(got), len(want))
			}
			if round < 3 {
				t.Fatalf("mirrored in %d rounds: the kills came too late to test anything", round+1)
			}
			t.Logf("mirrored %d entries in %d rounds", len(got), round+1)
			return
		}
	}
}

// runMirrorChild runs a mirror appender, kills it delay after it is
// ready (or once it is done) and returns the last seq it acknowledged
// (-1: none) and whether it was done.
func runMirrorChild(t *testing.T, round int, srcPath, dst string, delay time.Duration) (acked int64, done bool) {
	t.Helper()
	cmd := childCommand(mirrorCrashMode, mirrorSrcEnv+"="+srcPath, mirrorDstEnv+"="+dst)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	acked = -1
	var kill <-chan time.Time
	patience := time.After(crashPatience)
	for open := true; open; {
		select {
		case l, ok := <-lines:
			switch {
			case !ok:
				open = false
			case l == "ready":
				kill = time.After(delay)
			case l == "done":
				done = true
				cmd.Process.Signal(syscall.SIGKILL)
			case strings.HasPrefix(l, "ack "):
				n, err := strconv.ParseInt(l[4:], 10, 64)
				if err != nil {
					t.Fatalf("round %d: child said %q", round, l)
				}
				acked = n
			default:
				cmd.Process.Signal(syscall.SIGKILL)
				t.Fatalf("round %d: child said %q", round, l)
			}
		case <-kill:
			cmd.Process.Signal(syscall.SIGKILL)
			kill = nil
		case <-patience:
			cmd.Process.Signal(syscall.SIGKILL)
			t.Fatalf("round %d: child did not end\n%s", round, stderr.String())
		}
	}
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("round %d: child ended by itself: %v\n%s", round, cmd.ProcessState, stderr.String())
	}
	return acked, done
}
