package sandbox_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// The reaping launcher (RunSandboxedReaping, `opx internal-sandbox-exec
// --reap-group`) is tested as the engine runs it: the test binary
// re-executes itself as a parent (reapParentArg, the engine's part),
// which starts it once more as the launcher (reapLaunchArg) leading a
// process group of its own.
const (
	reapParentArg = "-opx-reap-parent"
	reapLaunchArg = "-opx-reap-launch"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case reapParentArg:
		// Starts the launcher with the rest of its arguments, in a group
		// of its own, with no death signal: the launcher has not handled
		// it yet, as under load. Then waits to be killed.
		cmd := exec.Command(os.Args[0], append([]string{reapLaunchArg}, os.Args[2:]...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			os.Stderr.WriteString("reap parent: " + err.Error() + "\n")
			syscall.Exit(1)
		}
		select {}
	case reapLaunchArg:
		err := sandbox.Launch(os.Args[2:], os.Environ())
		os.Stderr.WriteString("opx: " + err.Error() + "\n")
		syscall.Exit(1)
	}
}

// TestRunSandboxedReaping_ParentDiedCommandEnded: the parent (the
// engine) dies, and its death ends the command (a server reads EOF on
// its stdin and exits) before the launcher has acted on its death
// signal; the launcher then sees its command end. It must kill the rest
// of its group, the command's children, which nobody else will: the
// engine that would is gone. (CI failure of
// TestRV16_EngineCrashOrphansServerChildren on a loaded machine: the
// server's `sleep` outlived the engine by 30 s.)
func TestRunSandboxedReaping_ParentDiedCommandEnded(t *testing.T) {
	needCommandSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	fifo := filepath.Join(ws, "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	policy := sandbox.CommandPolicy{Workspace: ws, ReapGroup: true}
	// The command starts a child in its group, says its pid, and ends
	// once the test writes a line into the fifo.
	args := append([]string{reapParentArg}, policy.Args()...)
	args = append(args, "--", "sh", "-c", `sleep 3600 >/dev/null 2>&1 & echo $!; read x <"$1"`, "sh", fifo)
	parent := exec.Command(exe, args...)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// A file, not a pipe: the launcher and the command keep it open
	// after the parent is gone.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	parent.Stderr = stderr
	said := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		parent.Process.Kill()
		parent.Process.Wait()
		t.Fatalf("the command's child: %q %v %v\n%s", line, err, perr, said())
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of the child %d: %v", pid, err)
	}
	t.Cleanup(func() {
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		unix.Close(pidfd)
	})

	// The parent dies, and is reaped: the launcher has been reparented.
	parent.Process.Kill()
	parent.Process.Wait() // not parent.Wait: the command holds the stdout pipe
	// Only then does the command end.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the command to open it
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("end\n")
	f.Close()

	// The child must die: its pidfd becomes readable when it exits.
	if !exits(t, pidfd) {
		t.Fatalf("30 s after the launcher's parent died and its command ended, the command's child %d still runs (an orphan)\n%s", pid, said())
	}
}

// exits waits (bounded: 30 s) for the process of pidfd to exit: its
// pidfd becomes readable then.
func exits(t *testing.T, pidfd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
}

// TestRunSandboxedReaping_CommandEndKillsGroup: the command ends while
// its parent lives and does nothing (as an engine in the middle of dying
// does: its files closed, so the server read EOF and ended, but not yet
// reparented, so the launcher cannot tell). The launcher kills the
// command's children itself, and reports how the command ended on
// ReportFD, since it dies of SIGKILL. Run as the engine runs it: the
// test is the parent.
func TestRunSandboxedReaping_CommandEndKillsGroup(t *testing.T) {
	needCommandSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script, report string
		code           int
		sig            syscall.Signal
	}{
		{`sleep 3600 >/dev/null 2>&1 & echo $!; exit 7`, "exit 7\n", 7, 0},
		{`sleep 3600 >/dev/null 2>&1 & echo $!; kill -TERM $$`, "signal 15\n", -1, syscall.SIGTERM},
	} {
		policy := sandbox.CommandPolicy{Workspace: t.TempDir(), ReapGroup: true}
		args := append([]string{reapLaunchArg}, policy.Args()...)
		args = append(args, "--", "sh", "-c", tc.script)
		repR, repW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.ExtraFiles = []*os.File{repW}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		repW.Close()
		line, err := bufio.NewReader(out).ReadString('\n')
		pid, perr := strconv.Atoi(strings.TrimSpace(line))
		if err != nil || perr != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the command's child: %q %v %v\n%s", line, err, perr, stderr.String())
		}
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("pidfd of the child %d: %v", pid, err)
		}
		t.Cleanup(func() {
			unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
			unix.Close(pidfd)
		})
		// The launcher ends; this parent lives and kills nothing.
		werr := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("%s: the launcher ended with %v, want killed by its own SIGKILL of its group\n%s", tc.script, werr, stderr.String())
		}
		got, err := io.ReadAll(repR)
		repR.Close()
		if err != nil || string(got) != tc.report {
			t.Errorf("%s: end report %q (%v), want %q", tc.script, got, err, tc.report)
		}
		if code, sig, ok := sandbox.ParseEndReport(got); !ok || code != tc.code || sig != tc.sig {
			t.Errorf("ParseEndReport(%q) = %d %v %v, want %d %v", got, code, sig, ok, tc.code, tc.sig)
		}
		if !exits(t, pidfd) {
			t.Fatalf("%s: 30 s after the command ended, its child %d still runs while the launcher's parent lives and killed nothing", tc.script, pid)
		}
	}
}

func TestParseEndReport(t *testing.T) {
	for _, bad := range []string{"", "exit 7", "exit 7\n\n", "exit -1\n", "exit 256\n", "signal 0\n", "signal 65\n", "quit 1\n", "exit 07x\n", "exit 7\nsignal 9\n"} {
		if _, _, ok := sandbox.ParseEndReport([]byte(bad)); ok {
			t.Errorf("ParseEndReport(%q) accepted", bad)
		}
	}
}
