package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"golang.org/x/sys/unix"
)

// The process tree's lifetime, end to end: no engine or agent outlives
// its manager, an engine left by a dead manager is found and stopped, an
// engine that cannot start says why once. Every wait is for a condition,
// bounded generously; none is a sleep that correctness depends on.

// waitFor polls cond until it holds, failing the test after a generous
// bound (a busy 2-core CI machine must never hit it).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether pid has exited: no process, or a zombie (which
// nobody may reap in a container without an init).
func gone(pid int) bool {
	_, err := registry.StartTime(pid)
	return errors.Is(err, registry.ErrGone)
}

// stateDir is the workspace's registry and ledger directory.
func (w *world) stateDir() string {
	w.t.Helper()
	id, err := ledger.WorkspaceID(w.ws)
	if err != nil {
		w.t.Fatal(err)
	}
	return filepath.Join(w.state, "opx", id)
}

// strays returns the live processes whose command line names the world's
// workspace or state directory: a manager, engine or agent (its canary
// lives in the state directory) still running.
func (w *world) strays() []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() || gone(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && (strings.Contains(cmd, w.ws) || strings.Contains(cmd, w.state)) {
			out = append(out, fmt.Sprintf("%d: %s", pid, cmd))
		}
	}
	return out
}

// lastStop verifies the ledger strictly and returns its last entry's
// payload, which must be engine.stopped.
func (w *world) lastStop(path string) *event.EngineStopped {
	w.t.Helper()
	types := w.types(path) // verifies strictly
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	var last ledger.Entry
	l.Range(uint64(len(types)-1), uint64(len(types)-1), func(e ledger.Entry) error { last = e; return nil })
	p, err := event.Decode(last)
	stopped, ok := p.(*event.EngineStopped)
	if err != nil || !ok {
		w.t.Fatalf("the ledger ends with %s (%v), not engine.stopped", last.Type, err)
	}
	return stopped
}

// TestProcess_ManagerKilled: SIGKILL the manager; the engine and the agent
// go, the engine's last entry says its manager was gone, nothing is left
// locked or running, status says not running and the next start works.
func TestProcess_ManagerKilled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	t.Cleanup(func() { // should the engine not follow, do not leave it running
		for _, pid := range []int{st.EnginePID, st.AgentPID} {
			w.signal(pid, syscall.SIGKILL) // only if it is still ours
		}
	})
	w.kill(st.ManagerPID)
	// Not <-m.done: an engine left running would hold the manager's
	// output pipe open, and the test would hang instead of failing.
	waitFor(t, "the manager to die", func() bool { return gone(st.ManagerPID) })
	waitFor(t, "the engine to follow its manager", func() bool { return gone(st.EnginePID) })
	waitFor(t, "the agent to follow its engine", func() bool { return gone(st.AgentPID) })
	if s := w.strays(); len(s) != 0 {
		t.Errorf("processes left: %v", s)
	}
	if stop := w.lastStop(st.LedgerPath); stop.Cause != event.StopManagerGone || !strings.Contains(stop.Reason, "manager gone") {
		t.Errorf("engine.stopped %+v, want cause %s", stop, event.StopManagerGone)
	}
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Errorf("verify --strict: %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := w.run("status"); code != 1 || !strings.Contains(errOut, "not running") || strings.Contains(errOut, "still runs") {
		t.Errorf("status after the manager died: %d %s", code, errOut)
	}
	canaries, _ := filepath.Glob(filepath.Join(w.stateDir(), "run", "opx-canary-*"))
	if len(canaries) != 0 {
		t.Errorf("canary dirs left: %v", canaries)
	}
	<-m.done
	m = w.start()
	w.stop(m)
	types := w.types(st.LedgerPath)
	if n := count(types, "engine.crashed"); n != 0 {
		t.Errorf("%d engine.crashed: the first engine's stop was not recorded", n)
	}
}

// orphan starts an engine as a manager would, with the test holding the
// liveness pipe's write end, and registers it as a manager that died
// would have left it: engine.json naming it, the lock free.
func (w *world) orphan() (*exec.Cmd, *os.File) {
	w.t.Helper()
	dir := w.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "client.token")
	if err := os.WriteFile(tokenFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	r, keep, err := os.Pipe()
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(w.bin, "internal-engine", "--workspace", w.ws, "--token-file", tokenFile,
		"--manager-pid", strconv.Itoa(os.Getpid()), "--manager-fd", "3")
	cmd.Env = w.env()
	cmd.ExtraFiles = []*os.File{r}
	out, _ := cmd.StdoutPipe()
	var errOut syncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	r.Close()
	w.t.Cleanup(func() { keep.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "PORT:")))
	if err != nil || perr != nil {
		w.t.Fatalf("engine said %q (%v)\n%s", line, err, errOut.String())
	}
	go func() {
		b := make([]byte, 512)
		for {
			if _, err := out.Read(b); err != nil {
				return
			}
		}
	}()
	start, err := registry.StartTime(cmd.Process.Pid)
	if err != nil {
		w.t.Fatal(err)
	}
	dead := exec.Command("true")
	dead.Run()
	b, _ := json.Marshal(registry.Entry{Workspace: w.ws, ManagerPID: dead.Process.Pid, ManagerStart: 1, EnginePID: cmd.Process.Pid,
		EngineStart: start, Port: port})
	if err := os.WriteFile(filepath.Join(dir, "engine.json"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "engine.lock"), nil, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return cmd, keep
}

// TestProcess_OrphanedEngine: an engine whose manager is gone but which
// did not follow it (its liveness pipe is still open) is reported, and
// stopped by opx stop and by the next opx start; closing the pipe alone
// ends it, recording that its manager is gone.
func TestProcess_OrphanedEngine(t *testing.T) {
	w := newWorld(t)
	path := filepath.Join(w.stateDir(), "ledger.db")

	eng, _ := w.orphan()
	if _, errOut, code := w.run("status"); code != 1 || !strings.Contains(errOut, fmt.Sprintf("engine (pid %d) still runs without its manager", eng.Process.Pid)) {
		t.Errorf("status with an orphaned engine: %d %s", code, errOut)
	}
	out, errOut, code := w.run("stop")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("stopped the engine (pid %d) that ran without its manager", eng.Process.Pid)) {
		t.Fatalf("opx stop of an orphaned engine: %d\n%s%s", code, out, errOut)
	}
	eng.Wait()
	if stop := w.lastStop(path); stop.Cause != event.StopSignal {
		t.Errorf("engine.stopped %+v after opx stop, want cause %s", stop, event.StopSignal)
	}
	if _, errOut, code := w.run("stop"); code != 1 || !strings.Contains(errOut, "not running") {
		t.Errorf("second opx stop: %d %s", code, errOut)
	}

	eng, _ = w.orphan()
	m := w.start()
	eng.Wait()
	if !strings.Contains(m.out.String(), fmt.Sprintf("the engine (pid %d) of a manager that is gone", eng.Process.Pid)) {
		t.Errorf("opx start did not say it stopped the orphan:\n%s", m.out.String())
	}
	w.stop(m)

	eng, keep := w.orphan()
	keep.Close() // as the kernel does when the manager dies
	eng.Wait()
	if stop := w.lastStop(path); stop.Cause != event.StopManagerGone {
		t.Errorf("engine.stopped %+v after its liveness pipe closed, want cause %s", stop, event.StopManagerGone)
	}
	if n := count(w.types(path), "engine.crashed"); n != 0 {
		t.Errorf("%d engine.crashed", n)
	}
	waitFor(t, "the agents to go", func() bool { return len(w.strays()) == 0 })
}

// TestProcess_EngineRefusesOnce: an engine that cannot open its ledger
// refuses to start (exit 78) and the manager gives up at once, saying why
// once, instead of crash-looping.
func TestProcess_EngineRefusesOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(w.stateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Create(filepath.Join(w.stateDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // holds the file's lock for the whole test
	_, errOut, code := w.run("start")
	if code != 1 || strings.Count(errOut, "refused to start") != 1 || strings.Count(errOut, "ledger is locked") != 1 ||
		strings.Contains(errOut, "crashed") || strings.Contains(errOut, "restarting") {
		t.Errorf("opx start on a locked ledger: exit %d\n%s", code, errOut)
	}
	if _, _, code := w.run("status"); code != 1 {
		t.Errorf("status after a refused start: %d", code)
	}
	// The registry lock is free again.
	f, err := os.Open(filepath.Join(w.stateDir(), "engine.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("registry lock still held: %v", err)
	}
}

// TestProcess_EngineBadLivenessFD: an engine told to watch a descriptor
// that is not a pipe refuses to start rather than take the first read
// error for its manager's death.
func TestProcess_EngineBadLivenessFD(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("x\n"), 0o600)
	for _, fd := range []string{"0", "3", "9"} {
		cmd := exec.Command(w.bin, "internal-engine", "--workspace", w.ws, "--token-file", tok, "--manager-fd", fd)
		cmd.Env = w.env()
		if fd == "3" {
			f, _ := os.Open(tok) // a regular file, not a pipe
			defer f.Close()
			cmd.ExtraFiles = []*os.File{f}
		}
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 78 || !strings.HasPrefix(string(out), "REFUSED:--manager-fd "+fd+" is not the manager's liveness pipe") {
			t.Errorf("--manager-fd %s: %v, stdout %q", fd, err, out)
		}
	}
}
