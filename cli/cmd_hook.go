package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/config"
	"github.com/urfave/cli/v2"
)

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "answer a coding agent's hook (Claude Code, Codex CLI, Gemini CLI): each tool call judged and recorded",
		UsageText: "opx hook AGENT [--workspace DIR] [--flush]",
		Description: "The command the hook configuration of Claude Code (AGENT claude), Codex CLI (codex) or Gemini CLI\n" +
			"(gemini) runs before and after each tool call and at its session events (`opx agents install AGENT`\n" +
			"writes that configuration). It reads the event the CLI writes on stdin, hands it to the workspace's\n" +
			"engine (started in the background if none runs, as `opx start --daemon` would), and answers in the\n" +
			"CLI's format: a tool call allowed, denied with Shield's reason (the model reads it), or handed to the\n" +
			"CLI's own prompt. The workspace is --workspace, else the nearest directory at or above the CLI's\n" +
			"project directory (else the event's cwd) that holds .opx/ or has a ledger.\n\n" +
			"stdout is the CLI's: everything opx says goes to stderr.\n\n" +
			"Fail closed: before a tool call, anything that keeps opx from deciding (an event it cannot read, no\n" +
			"workspace, no engine, no answer within hooks.decision_timeout, an internal error) denies the call with\n" +
			"the reason. With hooks.on_engine_down: allow (.opx/config.yaml), a call made while no engine can be\n" +
			"reached or started is allowed instead and written down in the state directory's " + unrecorded.File + "\n" +
			"for the next engine to record. Other events are never denied: a failure is reported on stderr.\n\n" +
			"At the session's end (or at any event, with --flush) the agent's transcript file is sent to the engine\n" +
			"(at most its first 64 MiB) and stored with the session.\n\n" +
			"EXIT CODES: (what the CLI reads)\n" +
			"   0  answered: the tool call allowed (or the answer on stdout), or an event that takes no decision\n" +
			"   2  the tool call denied, the reason on stderr (Claude Code, Codex CLI; Gemini CLI reads a denial\n" +
			"      on stdout with exit 0); also a usage error, which each CLI takes as a denial",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", TakesFile: true,
				Usage: "workspace `DIR` (default: the one holding the CLI's project directory, else the event's cwd)"},
			&cli.BoolFlag{Name: "flush", Usage: "also send the agent's transcript (the event's transcript_path) to the engine"},
		},
		Action: runHook,
	}
}

// Bounds of what the hook sends the engine.
const (
	// hookMaxSend is the largest event sent as it is: the engine's gRPC
	// limit on a message (4 MiB), less room for the request's other
	// fields.
	hookMaxSend = 4<<20 - 64<<10
	// hookCutResponse is what is kept of the tool response of a larger
	// post-tool event.
	hookCutResponse = 1 << 20
)

// hookRun is one run of opx hook: one event of one agent.
type hookRun struct {
	c     *cli.Context
	agent hookproto.Agent
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

func runHook(c *cli.Context) (err error) {
	args, err := wantArgs(c, 1, 1, "AGENT (claude, codex or gemini)")
	if err != nil {
		return err
	}
	agent, err := hookproto.ParseAgent(args[0])
	if err != nil {
		return usage.Errorf(c, "%v", err)
	}
	h := &hookRun{c: c, agent: agent, kind: hookproto.KindPreTool, notes: &lockedBuffer{}}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	// What attachEngine says goes to the notes, not straight to stderr.
	// Not restored: a goroutine that gave up on the engine may still
	// write, and nothing but this answer is written after it.
	c.App.ErrWriter = h.notes
	var reply hookproto.Reply
	func() {
		defer func() {
			if r := recover(); r != nil {
				reply = h.refuse(fmt.Errorf("internal error: %v", r))
			}
		}()
		reply = h.answer()
	}()
	deny := reply.ExitCode == 2
	if !deny {
		stderr.Write(h.notes.Bytes())
	}
	stderr.Write(reply.Stderr)
	if _, err := stdout.Write(reply.Stdout); err != nil && h.kind == hookproto.KindPreTool {
		// The answer did not reach the CLI (Gemini reads a denial on
		// stdout): exit 2, which every CLI takes as a denial.
		fmt.Fprintf(stderr, "opx hook: the answer could not be written: %v\n", err)
		return &statusError{code: 2}
	}
	if reply.ExitCode != 0 {
		return &statusError{code: reply.ExitCode}
	}
	return nil
}

// answer reads the event, has the engine decide or record it, and
// returns what the CLI is to be told.
func (h *hookRun) answer() hookproto.Reply {
	raw, err := readEvent(h.c.App.Reader)
	h.name, h.kind = sniffKind(h.agent, raw)
	if err != nil {
		return h.refuse(err)
	}
	ev, err := hookproto.Parse(h.agent, raw, os.Getenv)
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
	return h.decide(ws, cfg.Hooks, send)
}

// workspace is --workspace, else the opx workspace that holds the CLI's
// project directory, else the one that holds the event's cwd.
func (h *hookRun) workspace() (string, error) {
	if ws, ok := usage.FlagGiven(h.c, "workspace"); ok && ws != "" {
		return ledgerloc.WorkspaceDir(h.c)
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
func (h *hookRun) refuse(err error) hookproto.Reply {
	if h.kind != hookproto.KindPreTool {
		return hookproto.Reply{Stderr: fmt.Appendf(nil, "opx hook: %s event not recorded: %v\n", h.eventName(), err)}
	}
	return h.deny("opx could not judge this call: " + err.Error())
}

// deny denies the tool call with reason, in the CLI's format.
func (h *hookRun) deny(reason string) hookproto.Reply {
	r, err := hookproto.Encode(h.agent, hookproto.KindPreTool, hookproto.Answer{Decision: hookproto.Deny, Reason: reason})
	if err != nil {
		return hookproto.Refuse(reason)
	}
	return r
}

// eventName names the event for a message.
func (h *hookRun) eventName() string {
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

// errEngineDown marks the failures in which no engine could be reached
// or started (hooks.on_engine_down decides).
var errEngineDown = errors.New("no engine")

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
