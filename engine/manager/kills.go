package manager

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/engine/supervise"
	"golang.org/x/sys/unix"
)

// killLedger is what the manager knows of the signals it sent its
// engines. Every signal is logged and written down as an end note
// (registry.WriteEnd, Sent) before it is sent; when the engine then
// ends, its end is written down again with what the kernel said (the
// exit code or the signal) and, for a signal, who sent it: the manager
// when it sent that signal to that engine, else SenderUnknown. The
// kernel never names the sender of the signal that killed a child
// (waitid's siginfo for CLD_KILLED carries the child's own pid and uid),
// so what the manager did not send is "not the manager", never a guess.
type killLedger struct {
	dir  registry.Dir
	logf func(format string, args ...any)

	// mu is held while a note is written too: a kill at start-up may
	// race its engine's end, whose note must be the last written.
	mu     sync.Mutex
	starts map[int]uint64 // engine pid → start time, while it runs
	sent   map[int]sentSignal
}

// write writes the end note e; k.mu is held.
func (k *killLedger) write(e registry.End) {
	if err := registry.WriteEnd(k.dir, e); err != nil {
		k.logf("opx: write the engine's end note: %v", err)
	}
}

// sentSignal is the last signal the manager sent one engine.
type sentSignal struct {
	sig    syscall.Signal
	reason string
}

// started notes a new engine's start time, so its end note names it
// beyond its pid.
func (k *killLedger) started(pid int) {
	st, _ := registry.StartTime(pid)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.starts == nil {
		k.starts = map[int]uint64{}
	}
	k.starts[pid] = st
}

// noteSent logs and writes down that the manager is about to send sig
// to the engine pid, and why. It is called before the signal is sent,
// and reports false (nothing written) when that engine has already
// ended: its end is written down, and the signal must not be sent.
func (k *killLedger) noteSent(pid int, sig syscall.Signal, reason string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	start, running := k.starts[pid]
	if !running {
		return false
	}
	if k.sent == nil {
		k.sent = map[int]sentSignal{}
	}
	k.sent[pid] = sentSignal{sig, reason}
	k.logf("opx: sending %s to the engine (pid %d): %s", unix.SignalName(sig), pid, reason)
	k.write(registry.End{PID: pid, Start: start, ExitCode: -1, Signal: unix.SignalName(sig),
		Sender: registry.SenderManager, SenderPID: os.Getpid(), Reason: reason, Sent: true})
	return true
}

// send records, then sends sig to cmd's engine, unless it has ended.
func (k *killLedger) send(cmd *exec.Cmd, sig syscall.Signal, reason string) {
	if k.noteSent(cmd.Process.Pid, sig, reason) {
		_ = cmd.Process.Signal(sig)
	}
}

// ended writes down how the engine of ev ended and returns it.
func (k *killLedger) ended(ev supervise.Event) registry.End {
	k.mu.Lock()
	defer k.mu.Unlock()
	sent, wasSent := k.sent[ev.Pid]
	start := k.starts[ev.Pid]
	delete(k.sent, ev.Pid)
	delete(k.starts, ev.Pid)
	end := registry.End{PID: ev.Pid, Start: start, ExitCode: ev.ExitCode}
	if ev.SigNum != 0 {
		end.Signal = unix.SignalName(ev.SigNum)
		end.Sender = registry.SenderUnknown
		if wasSent && sent.sig == ev.SigNum {
			end.Sender, end.SenderPID, end.Reason = registry.SenderManager, os.Getpid(), sent.reason
		}
	}
	k.write(end)
	return end
}

// describeEnd says how an engine ended, for the manager's log.
func describeEnd(e registry.End) string {
	switch {
	case e.Signal == "":
		return fmt.Sprintf("exit code %d", e.ExitCode)
	case e.Sender == registry.SenderManager:
		return fmt.Sprintf("killed by %s, sent by this manager: %s", e.Signal, e.Reason)
	default:
		return fmt.Sprintf("killed by %s; not sent by this manager (the kernel does not say who sent it)", e.Signal)
	}
}
