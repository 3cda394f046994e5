package ledger_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// crashAppender is the child of TestCrash_SIGKILL: it appends from 16
// goroutines, Sync and Async mixed, some with blobs, with real fsyncs, and
// prints "seq hash" for every Sync append that returned, until killed.
func crashAppender() error {
	path := os.Getenv("OPX_LEDGER_TEST_PATH")
	l, err := ledger.Open(path, ledger.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				rec := ledger.Record{Session: fmt.Sprint("g", g), Type: "ledger.note", Data: map[string]any{"author": "crash", "text": fmt.Sprint(g, "/", i)}}
				if i%7 == 0 {
					content := []byte(fmt.Sprintf("blob %d/%d %s", g, i, strings.Repeat("x", i%500)))
					rec.Data.(map[string]any)["attachment"] = "a"
					rec.Data.(map[string]any)["blob"] = ledger.Sum(content).String()
					rec.Blobs = [][]byte{content}
				}
				d := ledger.Async
				if i%3 == 0 {
					d = ledger.Sync
				}
				a, err := l.Append(context.Background(), d, rec)
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(3)
				}
				if d == ledger.Sync {
					mu.Lock()
					fmt.Fprintf(out, "%d %s\n", a[0].Seq, a[0].Hash)
					out.Flush()
					mu.Unlock()
				}
			}
		}(g)
	}
	wg.Wait()
	return nil
}

// TestCrash_SIGKILL kills a child appending under load with SIGKILL at a
// random moment, 20 times on the same ledger. After each kill the ledger
// verifies, every Sync append the child saw return is there with its hash,
// and the next child continues the chain.
func TestCrash_SIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	rounds := 20
	var lastHead uint64
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=crash-appender", "OPX_LEDGER_TEST_PATH="+path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[uint64]string{}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		select {
		case l, ok := <-lines:
			if !ok || l != "ready" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: child did not start: %q\n%s", round, l, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("round %d: child silent\n%s", round, stderr.String())
		}
		kill := time.After(time.Duration(5+rng.IntN(76)) * time.Millisecond)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				f := strings.Fields(l)
				seq, _ := strconv.ParseUint(f[0], 10, 64)
				acked[seq] = f[1]
			case <-kill:
				cmd.Process.Signal(syscall.SIGKILL)
				kill = nil
			}
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v, not by SIGKILL\n%s", round, err, stderr.String())
		}

		r, err := ledger.OpenReadOnly(path)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		rep, err := r.Verify(ledger.VerifyOptions{Strict: true})
		if err != nil || !rep.OK {
			r.Close()
			t.Fatalf("round %d: verify after kill: %v %v", round, err, rep.Err())
		}
		var maxAcked uint64
		for seq, hash := range acked {
			e, err := r.Get(seq)
			if err != nil || e.Hash().String() != hash {
				r.Close()
				t.Fatalf("round %d: acknowledged Sync append %d (%s) lost: %v", round, seq, hash, err)
			}
			maxAcked = max(maxAcked, seq)
		}
		h, _ := r.Head()
		r.Close()
		if h.Seq < maxAcked || h.Seq < lastHead {
			t.Fatalf("round %d: head %d, acknowledged up to %d, previous head %d", round, h.Seq, maxAcked, lastHead)
		}
		t.Logf("round %d: %d Sync appends acknowledged, head %d (+%d)", round, len(acked), h.Seq, h.Seq-lastHead)
		lastHead = h.Seq
	}
	if lastHead == 0 {
		t.Error("no child ever appended anything")
	}
}
