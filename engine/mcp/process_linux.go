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
	report *os.File // read end of the launcher's end report (sandbox.ReportFD), non-blocking

	mu     sync.Mutex
	reaped bool
	// exited is closed once the leader has exited, the rest of its group
	// has been killed, and it has been reaped; state then says how.
	exited chan struct{}
	state  *os.ProcessState
	ended  *endReport // what the launcher reported of its command, nil if nothing
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
	repR, repW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.ExtraFiles = []*os.File{repW} // sandbox.ReportFD
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
	repW.Close() // only the launcher writes it: it reads EOF once the launcher is gone
	if err != nil {
		release()
		inW.Close()
		outR.Close()
		errR.Close()
		repR.Close()
		return nil, fmt.Errorf("cannot start the sandbox launcher: %w", err)
	}
	// Read once the launcher has exited, never waiting.
	unix.SetNonblock(int(repR.Fd()), true)
	p := &process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR, report: repR, exited: make(chan struct{})}
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
	p.ended = p.readReport()
	p.mu.Unlock()
	close(p.exited)
}

// readReport reads the launcher's end report, written before it killed
// its group and itself (bounded: a line of a few bytes is all it writes).
func (p *process) readReport() *endReport {
	defer p.report.Close()
	buf := make([]byte, 64)
	n, err := unix.Read(int(p.report.Fd()), buf)
	if err != nil || n <= 0 {
		return nil
	}
	code, sig, ok := sandbox.ParseEndReport(buf[:n])
	if !ok {
		return nil
	}
	return &endReport{code: code, signal: sig}
}

// endReport is how the server (the launcher's command) ended.
type endReport struct {
	code   int
	signal syscall.Signal
}

// signal sends sig to the whole group, unless it has been reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		unix.Kill(-p.pid, sig)
	}
}

// signalLeader sends sig to the launcher alone, unless it has been
// reaped.
func (p *process) signalLeader(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		unix.Kill(p.pid, sig)
	}
}

// exitStatus renders how the server ended: its exit code (-1 when a
// signal killed it) and the signal's name — as its launcher reported it,
// else (the launcher was killed, or failed before starting it) how the
// launcher itself ended.
func (p *process) exitStatus() (code int, signal string) {
	if p.ended != nil {
		if p.ended.signal != 0 {
			return -1, unix.SignalName(p.ended.signal)
		}
		return p.ended.code, ""
	}
	if p.state == nil {
		return -1, ""
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return -1, unix.SignalName(ws.Signal())
	}
	return p.state.ExitCode(), ""
}
