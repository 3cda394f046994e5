package hookrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/engine/config"
)

// Bounds of what the hook sends the engine.
const (
	// maxSend is the largest event sent as it is: the engine's gRPC limit
	// on a message (4 MiB), less room for the request's other fields.
	maxSend = 4<<20 - 64<<10
	// cutResponse is what is kept of the tool response of a larger
	// post-tool event.
	cutResponse = 1 << 20
)

// Options are one run's inputs: the command line, the streams and how to
// start an engine.
type Options struct {
	// Agent is the CLI whose event this is.
	Agent hookproto.Agent
	// Workspace is --workspace ("" when not given: the workspace is the
	// one holding the CLI's project directory, else the event's cwd).
	Workspace string
	// Flush also sends the agent's transcript, whatever the event.
	Flush bool
	// Stdin is the event; Stdout the answer; Stderr what opx says.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Program is the opx binary that starts an engine when none runs
	// (`Program() start --workspace WS`).
	Program func() (string, error)
	// Client names this client to the engine ("opx hook", "opx-hook").
	Client string
}

// run is one run of the hook: one event of one agent.
type run struct {
	o Options
	// kind is what the event is as far as known: pre-tool until the
	// event says otherwise, so that a failure before then denies.
	kind hookproto.Kind
	// name is the event's name as far as known ("" if it names none).
	name string
	ev   *hookproto.Event
	// notes is what opx says on stderr besides the answer (written
	// unless the answer is an exit-2 denial, whose stderr is the reason
	// the model reads).
	notes *lockedBuffer
}

// Run answers one event and returns the process's exit code: 0 when the
// event was answered on stdout (a tool call allowed, or Gemini's denial),
// 2 for a tool call denied (the reason on stderr).
func Run(ctx context.Context, o Options) int {
	h := &run{o: o, kind: hookproto.KindPreTool, notes: &lockedBuffer{}}
	var reply hookproto.Reply
	func() {
		defer func() {
			if r := recover(); r != nil {
				reply = h.refuse(fmt.Errorf("internal error: %v", r))
			}
		}()
		reply = h.answer(ctx)
	}()
	if reply.ExitCode != 2 {
		o.Stderr.Write(h.notes.Bytes())
	}
	o.Stderr.Write(reply.Stderr)
	if _, err := o.Stdout.Write(reply.Stdout); err != nil && h.kind == hookproto.KindPreTool {
		// The answer did not reach the CLI (Gemini reads a denial on
		// stdout): exit 2, which every CLI takes as a denial.
		fmt.Fprintf(o.Stderr, "opx hook: the answer could not be written: %v\n", err)
		return 2
	}
	return reply.ExitCode
}

// answer reads the event, has the engine decide or record it, and
// returns what the CLI is to be told.
func (h *run) answer(ctx context.Context) hookproto.Reply {
	raw, err := readEvent(h.o.Stdin)
	h.name, h.kind = sniffKind(h.o.Agent, raw)
	if err != nil {
		return h.refuse(err)
	}
	ev, err := hookproto.Parse(h.o.Agent, raw, os.Getenv)
	if err != nil {
		return h.refuse(err)
	}
	h.ev, h.name, h.kind = ev, ev.Name, ev.Kind
	send, err := fitEvent(raw, h.kind)
	if err != nil {
		return h.refuse(err)
	}
	ws, err := h.workspace()
	if err != nil {
		return h.refuse(err)
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return h.refuse(err)
	}
	return h.decide(ctx, ws, cfg.Hooks, send)
}

// workspace is --workspace, else the opx workspace that holds the CLI's
// project directory, else the one that holds the event's cwd.
func (h *run) workspace() (string, error) {
	if h.o.Workspace != "" {
		return workspaceDir(h.o.Workspace)
	}
	from := h.ev.ProjectDir
	if from == "" {
		from = h.ev.Cwd
	}
	return findWorkspace(from)
}

// refuse is the answer when opx cannot decide: a denial of a tool call,
// in the CLI's format; for any other event, the reason on stderr and
// exit 0 (there is nothing to deny).
func (h *run) refuse(err error) hookproto.Reply {
	if h.kind != hookproto.KindPreTool {
		return hookproto.Reply{Stderr: fmt.Appendf(nil, "opx hook: %s event not recorded: %v\n", h.eventName(), err)}
	}
	return h.deny("opx could not judge this call: " + err.Error())
}

// deny denies the tool call with reason, in the CLI's format.
func (h *run) deny(reason string) hookproto.Reply {
	r, err := hookproto.Encode(h.o.Agent, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Deny, Reason: reason})
	if err != nil {
		return hookproto.Refuse(reason)
	}
	return r
}

// eventName names the event for a message.
func (h *run) eventName() string {
	if h.name != "" {
		return h.name
	}
	return string(h.kind)
}

// timeoutError is the failure of a decision not made within
// hooks.decision_timeout.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no decision within %s (hooks.decision_timeout)", e.after)
}

// engineDownError is a failure to reach or start the workspace's engine
// (hooks.on_engine_down decides what a tool call is then told).
type engineDownError struct{ err error }

func (e *engineDownError) Error() string { return "no engine: " + e.err.Error() }
func (e *engineDownError) Unwrap() error { return e.err }

// errNoProgram is returned when no opx binary can be found to start an
// engine with.
var errNoProgram = errors.New("no opx binary to start an engine with")

// lockedBuffer is a bytes.Buffer safe for the goroutine that talks to
// the engine and the one that gives up on it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Bytes returns a copy of what was written.
func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}
