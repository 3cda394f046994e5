package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Tests signal processes they know by pid only (from opx status, or a
// server's answer), and this machine's pid_max is often 32768: a pid
// read a while ago may have been reused by then, by another test's
// process or a user's own engine, which a plain kill(2) would SIGKILL
// with no trace of who did (issue 24, item 2). So every signal a test
// sends by pid goes through a pidfd taken while the pid is checked to
// be the process meant, and never to another.

// signal sends sig to pid if it is a process of the world's opx binary
// (its argv[0]): the pidfd pins it between that check and the signal. It
// reports whether the signal was sent.
func (w *world) signal(pid int, sig syscall.Signal) bool {
	if pid <= 0 {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(b, []byte{0})
	if !sameFile(string(argv0), w.bin) {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// kill is signal with SIGKILL, failing the test when pid is not a live
// process of the world's binary.
func (w *world) kill(pid int) {
	w.t.Helper()
	if !w.signal(pid, syscall.SIGKILL) {
		w.t.Fatalf("pid %d is not a live process of %s: not killed", pid, w.bin)
	}
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// pinned is a process pinned by a pidfd when it was known to be the one
// meant: a later signal reaches it or nothing, never a process that
// reused its pid.
type pinned struct{ fd int }

// pin pins pid now; the pidfd is closed when the test ends. A pid that
// is already gone pins nothing (its signals are not sent).
func pin(t *testing.T, pid int) *pinned {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return &pinned{fd: -1}
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &pinned{fd: fd}
}

// signal sends sig to the pinned process, if it still runs (else ESRCH).
func (p *pinned) signal(sig syscall.Signal) error {
	if p.fd < 0 {
		return unix.ESRCH
	}
	return unix.PidfdSendSignal(p.fd, sig, nil, 0)
}

// TestSignal_NeverAnotherProgram: a pid that now names a process of
// another program (as a reused pid would) is not signalled, while one of
// the world's opx processes is; a pinned process that has exited takes
// its signal to nobody.
func TestSignal_NeverAnotherProgram(t *testing.T) {
	t.Parallel()
	w := &world{t: t, bin: buildOpx(t)}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	if w.signal(other.Process.Pid, syscall.SIGKILL) {
		t.Fatal("signalled a process of another program")
	}
	// A process whose argv[0] is the world's binary, as its manager,
	// engine and agent are.
	ours := exec.Command("bash", "-c", `exec -a "$0" sleep 60`, w.bin)
	if err := ours.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bash to exec", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ours.Process.Pid))
		return bytes.HasPrefix(b, []byte(w.bin+"\x00"))
	})
	if !w.signal(ours.Process.Pid, syscall.SIGKILL) {
		t.Fatal("did not signal a process whose argv[0] is the world's binary")
	}
	ours.Wait()
	p := pin(t, other.Process.Pid)
	other.Process.Kill()
	other.Wait()
	// The pid may be reused now: the pidfd names the dead process only.
	if err := p.signal(syscall.SIGKILL); err != unix.ESRCH {
		t.Errorf("signal to a pinned process that is gone: %v, want ESRCH", err)
	}
}
