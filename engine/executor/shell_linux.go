package executor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// outputGrace bounds the wait for the output pipe to close once the
// command's process group is dead. Only a process outside the group could
// hold it open longer, and the command sandbox lets none leave the group;
// the bound is there so the engine can never hang on a pipe.
const outputGrace = time.Second

// runProcess runs argv in dir with exactly env, stdin from /dev/null and
// stdout and stderr into one capped pipe, as the leader of a new process
// group. When the leader exits, when timeout passes or when ctx ends, the
// whole group is killed with SIGKILL, so nothing the command started in
// the background outlives it or keeps writing into the workspace.
//
// The output pipe is the engine's own (not exec.Cmd's copying), so the
// engine decides when to stop reading: right after the group is killed,
// and after outputGrace at most. That is what cmd.WaitDelay would bound,
// without waiting for it each time a command leaves a background child.
func runProcess(ctx context.Context, argv []string, dir string, env []string, timeout time.Duration, outputCap int) runResult {
	if err := ctx.Err(); err != nil {
		return runResult{exitCode: -1, failed: "not started: " + context.Cause(ctx).Error()}
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return runResult{exitCode: -1, failed: err.Error()}
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{exitCode: -1, failed: err.Error()}
	}
	defer pr.Close()
	// The launcher's Landlock rules for /proc name inodes that hold only
	// while their dentries live: keep them open until the command ends.
	release := sandbox.PinCommandPaths()
	defer release()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, pw, pw
	// If the engine dies, its direct child goes too (StartTied: the
	// signal must not fire when the goroutine's thread happens to end).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = supervise.StartTied(cmd, syscall.SIGKILL)
	pw.Close()
	if err != nil {
		return runResult{exitCode: -1, failed: "cannot start the command launcher: " + err.Error()}
	}
	pgid := cmd.Process.Pid // Setpgid: the leader's pid is the group's id

	buf := newCapBuffer(outputCap)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(buf, pr)
	}()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitExited(pgid)
	}()

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var killedBecause string
	select {
	case <-exited:
	case <-tctx.Done():
		unix.Kill(-pgid, unix.SIGKILL)
		<-exited
		if ctx.Err() != nil {
			killedBecause = "killed: " + context.Cause(ctx).Error()
		} else {
			killedBecause = fmt.Sprintf("killed: timed out after %v", timeout)
		}
	}
	// The leader has exited but is not reaped yet, so its pid — the
	// group's id — cannot be reused: kill whatever it left in the group.
	unix.Kill(-pgid, unix.SIGKILL)
	cmd.Wait() // reaps; the outcome is in ProcessState
	select {
	case <-copied:
	case <-time.After(outputGrace):
		pr.Close() // unblocks the copy
		<-copied
	}

	r := runResult{}
	r.output, r.truncated = buf.Result()
	st := cmd.ProcessState
	if st == nil {
		return runResult{exitCode: -1, failed: "the launcher's status is unknown"}
	}
	r.exitCode = st.ExitCode()
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled() && killedBecause != "":
		r.status = killedBecause
	case ws.Signaled():
		r.status = "killed by signal " + unix.SignalName(ws.Signal())
	default:
		r.status = fmt.Sprintf("exit status %d", r.exitCode)
	}
	return r
}

// waitExited blocks until process pid has exited, without reaping it.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
