package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// process is a server's sandboxed process: the launcher, which confines
// itself and execs the server, as the leader of its own process group.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our ends of its pipes
	stdout *os.File
	stderr *os.File

	mu     sync.Mutex
	reaped bool
	// exited is closed once the leader has exited, the rest of its group
	// has been killed, and it has been reaped; state then says how.
	exited chan struct{}
	state  *os.ProcessState
}

// startProcess starts argv (the launcher's) in dir with exactly env.
// The process gets SIGTERM if the engine dies, on which the launcher
// kills its group.
func startProcess(argv []string, dir string, env []string) (*process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The launcher's Landlock rules for /proc name inodes that hold only
	// while their dentries live: keep them open while it starts.
	release := sandbox.PinCommandPaths()
	// SIGTERM, not SIGKILL: the launcher (--reap-group) catches it and
	// kills its whole group, the server's children included.
	err = supervise.StartTied(cmd, syscall.SIGTERM)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		release()
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("cannot start the sandbox launcher: %w", err)
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{})}
	go func() {
		defer release()
		p.wait()
	}()
	return p, nil
}

// wait waits for the leader to exit, kills what it left in its group
// (the leader is not reaped yet, so its pid, the group's id, cannot be
// reused meanwhile), then reaps it.
func (p *process) wait() {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	p.mu.Lock()
	unix.Kill(-p.pid, unix.SIGKILL)
	p.cmd.Wait()
	p.reaped = true
	p.state = p.cmd.ProcessState
	p.mu.Unlock()
	close(p.exited)
}

// signal sends sig to the whole group, unless it has been reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		unix.Kill(-p.pid, sig)
	}
}

// exitStatus renders how the process ended: its exit code (-1 when a
// signal killed it) and the signal's name.
func (p *process) exitStatus() (code int, signal string) {
	if p.state == nil {
		return -1, ""
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return -1, unix.SignalName(ws.Signal())
	}
	return p.state.ExitCode(), ""
}
