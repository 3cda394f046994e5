package supervise_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/supervise"
)

// The test binary doubles as the supervised child: with OPX_SUPERVISE_CHILD
// set it runs a script from the environment instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("OPX_SUPERVISE_CHILD"); mode != "" {
		child(mode)
		return
	}
	os.Exit(m.Run())
}

func child(mode string) {
	switch mode {
	case "exit":
		code, _ := strconv.Atoi(os.Getenv("OPX_EXIT"))
		os.Exit(code)
	case "sequence":
		// Exit codes from a file, one per run, so runs differ.
		path := os.Getenv("OPX_SEQ")
		b, _ := os.ReadFile(path)
		n := len(b)
		os.WriteFile(path, append(b, 'x'), 0o600)
		codes := []int{75, 75, 3, 0}
		os.Exit(codes[min(n, len(codes)-1)])
	case "sleep":
		time.Sleep(time.Minute)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
	case "tie-parent":
		tieParent()
	case "echo":
		echo()
	case "graceful":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		os.Stdout.WriteString("ready\n")
		<-c
		os.Exit(0)
	}
	os.Exit(99)
}

func spawner(env ...string) supervise.Spawn {
	s, _ := readySpawner(env...)
	return s
}

// readySpawner is spawner plus a channel that receives once a child has
// printed "ready" (its signal handling is set up).
func readySpawner(env ...string) (supervise.Spawn, <-chan struct{}) {
	ready := make(chan struct{}, 16)
	return func(ctx context.Context) (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), env...)
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout = pw
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		pw.Close()
		go func() { // wait for "ready" from children that print it
			b := make([]byte, 6)
			if n, _ := io.ReadFull(pr, b); n == 6 {
				ready <- struct{}{}
			}
			pr.Close()
		}()
		return cmd, nil
	}, ready
}

type recorder struct {
	mu     sync.Mutex
	events []supervise.Event
}

func (r *recorder) on(e supervise.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds() []supervise.EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var k []supervise.EventKind
	for _, e := range r.events {
		k = append(k, e.Kind)
	}
	return k
}

func fast() supervise.Policy {
	return supervise.Policy{MaxCrashes: 5, Window: time.Minute, Pause: 10 * time.Millisecond, Grace: 300 * time.Millisecond}
}

func TestRun_CleanStop(t *testing.T) {
	var r recorder
	err := supervise.Run(context.Background(), fast(), spawner("OPX_SUPERVISE_CHILD=exit", "OPX_EXIT=0"), r.on)
	if err != nil || len(r.events) != 2 || r.events[1].Kind != supervise.Stopped {
		t.Fatalf("err %v events %+v", err, r.events)
	}
}

func TestRun_GivesUpAfterFiveCrashes(t *testing.T) {
	var r recorder
	err := supervise.Run(context.Background(), fast(), spawner("OPX_SUPERVISE_CHILD=exit", "OPX_EXIT=2"), r.on)
	if !errors.Is(err, supervise.ErrGaveUp) {
		t.Fatalf("err = %v", err)
	}
	crashes := 0
	for _, e := range r.events {
		if e.Kind == supervise.Crashed {
			crashes++
			if e.ExitCode != 2 {
				t.Errorf("crash exit code %d", e.ExitCode)
			}
		}
	}
	if crashes != 5 || r.events[len(r.events)-1].Kind != supervise.GaveUp {
		t.Errorf("crashes %d, events %v", crashes, r.kinds())
	}
}

func TestRun_RestartIsNotACrash(t *testing.T) {
	var r recorder
	seq := t.TempDir() + "/seq"
	err := supervise.Run(context.Background(), fast(), spawner("OPX_SUPERVISE_CHILD=sequence", "OPX_SEQ="+seq), r.on)
	if err != nil {
		t.Fatal(err)
	}
	want := []supervise.EventKind{supervise.Started, supervise.Restarted, supervise.Started, supervise.Restarted, supervise.Started, supervise.Crashed, supervise.Started, supervise.Stopped}
	if got := r.kinds(); len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i, k := range r.kinds() {
		if k != want[i] {
			t.Errorf("event %d = %s, want %s", i, k, want[i])
		}
	}
	if r.events[5].Crashes != 1 {
		t.Errorf("restarts were counted as crashes: %+v", r.events[5])
	}
}

func TestRun_CancelSendsSIGTERM(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var r recorder
	spawn, ready := readySpawner("OPX_SUPERVISE_CHILD=graceful")
	go func() { <-ready; cancel() }()
	p := fast()
	p.Grace = 5 * time.Second
	start := time.Now()
	err := supervise.Run(ctx, p, spawn, r.on)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	last := r.events[len(r.events)-1]
	if last.Kind != supervise.Stopped || last.ExitCode != 0 || time.Since(start) > 4*time.Second {
		t.Errorf("child did not stop gracefully: %+v after %s", last, time.Since(start))
	}
}

func TestRun_CancelKillsAfterGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var r recorder
	spawn, ready := readySpawner("OPX_SUPERVISE_CHILD=stubborn")
	go func() { <-ready; cancel() }()
	err := supervise.Run(ctx, fast(), spawn, r.on)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	last := r.events[len(r.events)-1]
	if last.Signal != "killed" || last.SigNum != syscall.SIGKILL {
		t.Errorf("stubborn child not SIGKILLed: %+v", last)
	}
	// Each signal is announced, with its reason, before it is sent.
	var sent []string
	for _, e := range r.events {
		if e.Kind == supervise.Signalling {
			sent = append(sent, e.SigNum.String()+": "+e.Reason)
		}
	}
	if len(sent) != 2 || !strings.HasPrefix(sent[0], "terminated: stopping") || !strings.Contains(sent[1], "did not exit within 300ms of SIGTERM") {
		t.Errorf("signals announced: %q", sent)
	}
}

// TestRun_RefusedGivesUpAtOnce: exit 78 is not retried and spends no
// budget.
func TestRun_RefusedGivesUpAtOnce(t *testing.T) {
	var r recorder
	err := supervise.Run(context.Background(), fast(), spawner("OPX_SUPERVISE_CHILD=exit", "OPX_EXIT=78"), r.on)
	if !errors.Is(err, supervise.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	want := []supervise.EventKind{supervise.Started, supervise.Refused}
	if got := r.kinds(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestBudget_SlidingWindow(t *testing.T) {
	b := supervise.NewBudget(5, time.Minute)
	t0 := time.Unix(0, 0)
	for i := 0; i < 4; i++ {
		if b.Crash(t0.Add(time.Duration(i) * 20 * time.Second)) {
			t.Fatalf("spent after %d crashes", i+1)
		}
	}
	// Crashes at 0, 20, 40, 60 and 80 s: at 80 s only those after 20 s
	// are inside the 60 s window.
	if b.Crash(t0.Add(80 * time.Second)) {
		t.Error("crashes older than the window still counted")
	}
	if n := b.Recent(t0.Add(80 * time.Second)); n != 3 {
		t.Errorf("recent = %d, want 3 (40, 60, 80 s)", n)
	}
	if b.Crash(t0.Add(81 * time.Second)) {
		t.Error("spent at 4 crashes in the window")
	}
	if !b.Crash(t0.Add(82 * time.Second)) {
		t.Error("not spent at 5 crashes in the window (40, 60, 80, 81, 82 s)")
	}
}
