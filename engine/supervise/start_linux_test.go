package supervise_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/supervise"
	"golang.org/x/sys/unix"
)

// tieParent is the middle process of the StartTied tests: it starts an
// echoing grandchild (stdin fd 3, stdout fd 4, from the test) from a
// goroutine that locks its thread and returns, so the thread ends; once
// that thread is gone it prints the grandchild's pid and waits to be
// killed. With OPX_TIE_PLAIN=1 it forks the grandchild on that goroutine's
// own thread, as exec.Cmd.Start with a Pdeathsig would.
func tieParent() {
	// The main thread is never ended (a goroutine that returns locked to
	// it wedges it instead), so keep the other goroutine off it.
	runtime.LockOSThread()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OPX_SUPERVISE_CHILD=echo")
	in, out := os.NewFile(3, "in"), os.NewFile(4, "out")
	cmd.Stdin, cmd.Stdout = in, out
	type started struct {
		tid int
		err error
	}
	done := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // returning locked ends this thread
		var err error
		if os.Getenv("OPX_TIE_PLAIN") == "1" {
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			err = cmd.Start()
		} else {
			err = supervise.StartTied(cmd, syscall.SIGKILL)
		}
		done <- started{unix.Gettid(), err}
	}()
	s := <-done
	if s.err != nil {
		fmt.Println("error", s.err)
		os.Exit(1)
	}
	// Only the grandchild may hold the pipes: once it is gone the test
	// must read EOF, not wait for an echo that cannot come.
	in.Close()
	out.Close()
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", s.tid)); os.IsNotExist(err) {
			break // the thread has exited, and any signal tied to it is sent
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not a timing assumption
	}
	fmt.Println("ready", cmd.Process.Pid)
	io.Copy(io.Discard, os.Stdin) // until the test is gone: never outlive it
	os.Exit(0)
}

func echo() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(sc.Text())
	}
	os.Exit(0)
}

// tiedFamily starts a tieParent and returns it, the grandchild's pid and
// the pipes to and from the grandchild.
func tiedFamily(t *testing.T, plain bool) (*exec.Cmd, int, *os.File, *bufio.Reader) {
	t.Helper()
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OPX_SUPERVISE_CHILD=tie-parent")
	if plain {
		cmd.Env = append(cmd.Env, "OPX_TIE_PLAIN=1")
	}
	cmd.ExtraFiles = []*os.File{inR, outW}
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe() // held open until the test ends
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait(); inW.Close(); outR.Close() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "ready "))
	if err != nil || perr != nil {
		t.Fatalf("tie-parent said %q, %v", line, err)
	}
	return cmd, pid, inW, bufio.NewReader(outR)
}

// answers reports whether the grandchild still runs: a process with a
// SIGKILL pending never runs user code again, so it cannot echo.
func answers(in *os.File, out *bufio.Reader) bool {
	if _, err := in.WriteString("ping\n"); err != nil {
		return false
	}
	line, err := out.ReadString('\n')
	return err == nil && line == "ping\n"
}

// gone reports whether pid has exited (no process, or a zombie nobody
// reaps).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	f := strings.Fields(rest)
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a generous bound, not a timing assumption
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartTied_OutlivesSpawningThread_DiesWithProcess: a tied child
// survives the end of the goroutine (and thread) that asked for it, and
// dies when its parent is SIGKILLed.
func TestStartTied_OutlivesSpawningThread_DiesWithProcess(t *testing.T) {
	parent, pid, in, out := tiedFamily(t, false)
	if !answers(in, out) {
		t.Fatal("the tied child died with the thread that asked for it")
	}
	parent.Process.Signal(syscall.SIGKILL)
	waitGone(t, pid)
}

// TestStartTied_PlainStartDiesWithThread shows the kernel behaviour
// StartTied exists for: a Pdeathsig child forked on a thread that ends is
// signalled although its parent lives on.
func TestStartTied_PlainStartDiesWithThread(t *testing.T) {
	_, pid, in, out := tiedFamily(t, true)
	if answers(in, out) {
		t.Fatal("the child of an ended thread still runs: the premise of StartTied does not hold")
	}
	waitGone(t, pid)
}
