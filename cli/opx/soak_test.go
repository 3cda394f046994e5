package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"golang.org/x/sys/unix"
)

// TestSoak_ProcessTree SIGKILLs the manager, the engine or the agent at
// random moments while clients send, then checks that nothing is left
// running or locked, that opx starts again, that the ledger verifies
// strictly and that every message a send acknowledged is in it.
//
// The moments are events, not times: a kill comes after a random number
// of acknowledged sends since the system was last up. OPX_SOAK_ROUNDS
// sets the number of kills (default 3, for CI); OPX_SOAK_SEED replays a
// run (the seed is logged).
func TestSoak_ProcessTree(t *testing.T) {
	t.Parallel()
	rounds := 3
	if v := os.Getenv("OPX_SOAK_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("OPX_SOAK_ROUNDS=%q", v)
		}
		rounds = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("OPX_SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("OPX_SOAK_SEED=%q", v)
		}
		seed = s
	}
	t.Logf("OPX_SOAK_SEED=%d OPX_SOAK_ROUNDS=%d", seed, rounds)
	rng := rand.New(rand.NewPCG(seed, 0))

	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	path := st.LedgerPath

	var (
		mu    sync.Mutex
		acked []string // the content of every send that returned success
		wake  = make(chan struct{}, 1)
	)
	ctx, stopClients := context.WithCancel(context.Background())
	var clients sync.WaitGroup
	for c := 0; c < 2; c++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for n := 0; ctx.Err() == nil; n++ {
				text := fmt.Sprintf("soak client %d message %d", c, n)
				cmd := exec.CommandContext(ctx, w.bin, "send", "--workspace", w.ws, text)
				cmd.Env = w.env()
				if cmd.Run() == nil {
					mu.Lock()
					acked = append(acked, text)
					mu.Unlock()
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	ackedN := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }

	victims := []string{"manager", "engine", "agent"}
	for round := 0; round < rounds; round++ {
		// Wait for the system to be up and then for 1 to 3 more
		// acknowledged sends.
		up := w.waitUp(&m)
		target := ackedN() + 1 + rng.IntN(3)
		deadline := time.Now().Add(2 * time.Minute)
		for ackedN() < target {
			select {
			case <-wake:
			case <-time.After(time.Second): // re-check; the deadline bounds the wait
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no acknowledged send for 2 minutes", round)
			}
		}
		victim := victims[rng.IntN(len(victims))]
		pid := map[string]int{"manager": up.ManagerPID, "engine": up.EnginePID, "agent": up.AgentPID}[victim]
		t.Logf("round %d: SIGKILL the %s (pid %d) after %d acknowledged sends", round, victim, pid, ackedN())
		w.signal(pid, syscall.SIGKILL) // not a process that reused a pid read minutes ago
		waitFor(t, "the "+victim+" to die", func() bool { return gone(pid) })
		if victim == "engine" {
			waitFor(t, "the agent to follow its engine", func() bool { return gone(up.AgentPID) })
		}
		if victim == "manager" {
			waitFor(t, "the engine and agent to follow the manager", func() bool { return gone(up.EnginePID) && gone(up.AgentPID) })
			<-m.done
			m = w.start()
		}
	}
	stopClients()
	clients.Wait()
	w.waitUp(&m)
	w.stop(m)

	// Nothing left running or locked.
	waitFor(t, "every opx process of the workspace to end", func() bool { return len(w.strays()) == 0 })
	f, err := os.Open(filepath.Join(w.stateDir(), "engine.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("registry lock still held: %v", err)
	}
	f.Close()
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		t.Fatalf("the ledger is still locked: %v", err)
	}
	l.Close()

	// opx starts again, and the ledger holds every acknowledged message.
	w.stop(w.start())
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Fatalf("verify --strict: %d\n%s%s", code, out, errOut)
	}
	w.types(path) // verifies strictly
	l, err = ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	head, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	l.Range(0, head.Seq, func(e ledger.Entry) error {
		if p, err := event.Decode(e); err == nil {
			if cm, ok := p.(*event.ClientMessage); ok {
				recorded[cm.Content] = true
			}
		}
		return nil
	})
	for _, text := range acked {
		if !recorded[text] {
			t.Errorf("acknowledged %q is not in the ledger", text)
		}
	}
	t.Logf("%d acknowledged sends, all recorded; %d client messages in the ledger", len(acked), len(recorded))
}

// waitUp waits until the workspace's engine runs with an agent, starting a
// new manager if the current one gave up (killing the engine or agent too
// often spends their crash budgets, which is the designed outcome).
func (w *world) waitUp(m **manager) status {
	w.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, code := w.status(); code == 0 && st.AgentPID != 0 && st.SandboxStatus != "no agent" {
			return st
		}
		select {
		case err := <-(*m).exited:
			w.t.Logf("the manager exited (%v); starting another", err)
			*m = w.start()
			continue
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the engine and agent did not come back up:\n%s", (*m).out.String())
		}
	}
}
