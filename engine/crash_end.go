package engine

import (
	"fmt"

	"github.com/opx-dev/opx/ledger/event"
)

// ProcessEnd is how an engine process ended, as the process that waited
// for it or signalled it wrote it down (registry.End): its pid, its exit
// code or the signal that ended it, and for a signal who sent it
// (event.CrashSender*) and why.
type ProcessEnd struct {
	PID      int
	ExitCode int
	Signal   string // "SIGKILL"; "" when it exited
	Sender   string // event.CrashSenderManager, CrashSenderStop, CrashSenderUnknown, or ""
	Reason   string
	// Unconfirmed marks a note written before the signal was sent whose
	// sender did not see the process end (it died itself, or could not
	// wait for a process not its child).
	Unconfirmed bool
}

// describeCrash adds to c how the run that died ended, from
// Options.PreviousEnd, when that note is about the same process: the pid
// the run's engine.started names. A note about another process (an
// older run, a pid reused) is left out, and so is one that would not
// validate: the crash is recorded in any case.
func (e *Engine) describeCrash(c *event.EngineCrashed) {
	end := e.opts.PreviousEnd
	if end == nil || end.PID <= 0 {
		return
	}
	entry, err := e.opts.Ledger.Get(c.StartedSeq)
	if err != nil {
		return
	}
	p, err := event.Decode(entry)
	started, ok := p.(*event.EngineStarted)
	if err != nil || !ok || started.PID != end.PID {
		return
	}
	d := *c
	d.PID = end.PID
	if end.Signal == "" {
		d.ExitCode = end.ExitCode
		d.Detail += fmt.Sprintf(": its process (pid %d) exited with code %d", end.PID, end.ExitCode)
	} else {
		d.Signal, d.Sender, d.Reason = end.Signal, end.Sender, end.Reason
		switch end.Sender {
		case event.CrashSenderManager:
			if end.Unconfirmed {
				d.Detail += fmt.Sprintf(": its manager sent its process (pid %d) %s (%s); the manager did not see it end", end.PID, end.Signal, end.Reason)
				break
			}
			d.Detail += fmt.Sprintf(": its process (pid %d) was killed by %s, sent by its manager: %s", end.PID, end.Signal, end.Reason)
		case event.CrashSenderStop:
			d.Detail += fmt.Sprintf(": its process (pid %d) was sent %s by opx: %s", end.PID, end.Signal, end.Reason)
		default: // no reason: nobody who could give one is known
			d.Sender, d.Reason = event.CrashSenderUnknown, ""
			d.Detail += fmt.Sprintf(": its process (pid %d) was killed by %s, not sent by opx (the kernel does not say who sent it)", end.PID, end.Signal)
		}
	}
	if d.Validate() != nil {
		return
	}
	*c = d
}
