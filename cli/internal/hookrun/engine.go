package hookrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/engine/config"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// engineMargin is how much sooner than the hook the engine is asked to
// give up (deadline_ms), so that its own denial, recorded, arrives
// before the hook's.
const engineMargin = time.Second

// exchange is what the goroutine that talks to the engine delivers: the
// engine's reply or why there is none, then (flushed) the outcome of
// sending the transcript, if one was sent.
type exchange struct {
	reply   chan exchangeReply
	flushed chan error
}

type exchangeReply struct {
	rep *opxv1.HookEventReply
	err error
}

// decide has the engine of ws decide or record the event and returns the
// CLI's answer. Everything, an engine's start included, happens within
// hooks.decision_timeout: past it a tool call is denied.
func (h *run) decide(parent context.Context, ws string, cfg config.Hooks, send []byte) hookproto.Reply {
	timeout := time.Duration(cfg.DecisionTimeout)
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	x := h.start(ctx, timeout, ws, send)
	var got exchangeReply
	select {
	case got = <-x.reply:
	case <-ctx.Done():
		return h.refuse(&timeoutError{after: timeout})
	}
	reply := h.encode(ws, cfg, got)
	select {
	case err, sent := <-x.flushed:
		if sent && err != nil {
			fmt.Fprintf(h.notes, "opx hook: the transcript was not stored: %v\n", err)
		}
	case <-ctx.Done():
		fmt.Fprintf(h.notes, "opx hook: the transcript was not stored within %s (hooks.decision_timeout)\n", timeout)
	}
	return reply
}

// start talks to the engine in a goroutine, so that an engine that does
// not come up or answer in time cannot hold the hook past its deadline.
func (h *run) start(ctx context.Context, timeout time.Duration, ws string, send []byte) exchange {
	x := exchange{reply: make(chan exchangeReply, 1), flushed: make(chan error, 1)}
	go func() {
		replied := false
		defer func() {
			if r := recover(); r != nil {
				err := fmt.Errorf("internal error: %v", r)
				if !replied {
					x.reply <- exchangeReply{err: err}
				} else {
					x.flushed <- err
				}
			}
			close(x.flushed)
		}()
		// The CLI's process, for the engine to watch (its calls still
		// open when it dies are closed as interrupted), and its version
		// for the session's record: looked for in /proc while the
		// connection to the engine is made.
		type process struct {
			pid     int
			version string
		}
		found := make(chan process, 1)
		go func() {
			var p process
			// A panic here only leaves the process unknown.
			defer func() { recover(); found <- p }()
			p.pid, p.version = agentProcess(h.o.Agent)
		}()
		ec, err := h.attach(ctx, ws)
		if err != nil {
			x.reply <- exchangeReply{err: &engineDownError{err: err}}
			return
		}
		defer ec.Close()
		ec.conn.Connect()
		req := &opxv1.HookEventRequest{Agent: string(h.o.Agent), Event: send, ProjectDir: h.ev.ProjectDir}
		p := <-found
		pid, version := p.pid, p.version
		req.AgentPid = int32(pid)
		if h.kind == hookproto.KindSessionStart {
			req.AgentVersion = version
		}
		if d, ok := ctx.Deadline(); ok {
			left := time.Until(d)
			if left > 2*engineMargin {
				left -= engineMargin
			}
			req.DeadlineMs = max(left.Milliseconds(), 1)
		}
		rep, err := ec.hooks.Event(ec.ctx, req)
		x.reply <- exchangeReply{rep: rep, err: rpcFailure(ctx, err, timeout)}
		replied = true
		if err != nil {
			return
		}
		path := rep.TranscriptPath
		if path == "" && h.o.Flush {
			path = h.ev.TranscriptPath
		}
		if path != "" {
			x.flushed <- sendTranscript(ec, h.o.Agent, h.ev.SessionID, path)
		}
	}()
	return x
}

// rpcFailure says why the engine did not answer, in words.
func rpcFailure(ctx context.Context, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	st, _ := status.FromError(err)
	switch {
	case ctx.Err() != nil || st.Code() == codes.DeadlineExceeded:
		return &timeoutError{after: timeout}
	case st.Code() == codes.Unavailable:
		return &engineDownError{err: fmt.Errorf("the engine cannot be reached: %s", st.Message())}
	case st.Code() == codes.Unimplemented:
		return fmt.Errorf("the engine does not answer hooks (an older opx? opx restart): %s", st.Message())
	}
	return fmt.Errorf("the engine refused the event: %s: %s", st.Code(), st.Message())
}

// encode turns the engine's reply (or the failure to get one) into the
// CLI's answer.
func (h *run) encode(ws string, cfg config.Hooks, got exchangeReply) hookproto.Reply {
	var down *engineDownError
	switch {
	case errors.As(got.err, &down):
		return h.engineDown(ws, cfg, down)
	case got.err != nil:
		return h.refuse(got.err)
	}
	a := hookproto.Answer{Decision: hookproto.Decision(got.rep.Decision), Reason: got.rep.Reason, UpdatedInput: got.rep.UpdatedInput}
	if h.kind != hookproto.KindPreTool && a.Decision == "" {
		a.Decision = hookproto.Allow // recorded; nothing to decide
	}
	r, err := hookproto.Encode(h.o.Agent, h.kind, a)
	if err != nil {
		return h.refuse(fmt.Errorf("the engine's answer cannot be given to %s: %w", h.o.Agent, err))
	}
	return r
}

// engineDown answers an event no engine could take. A tool call is
// denied, unless hooks.on_engine_down is allow: then it is allowed and
// written down for the next engine to record.
func (h *run) engineDown(ws string, cfg config.Hooks, down *engineDownError) hookproto.Reply {
	if h.kind != hookproto.KindPreTool || cfg.OnEngineDown != config.HooksAllow {
		return h.refuse(down)
	}
	reason := down.Error() + "; hooks.on_engine_down: allow"
	line := unrecorded.Line{Agent: string(h.o.Agent), AgentSessionID: h.ev.SessionID, Name: h.ev.Name, AgentTool: h.ev.Tool,
		Input: string(h.ev.ToolInput), Cwd: h.ev.Cwd, At: time.Now().UTC().Format(time.RFC3339Nano),
		Decision: string(hookproto.Allow), Reason: reason}
	if path, err := writeUnrecorded(ws, line); err != nil {
		fmt.Fprintf(h.notes, "opx hook: WARNING: %s: the %s call runs unjudged and is NOT written down: %v\n", reason, h.ev.Tool, err)
	} else {
		fmt.Fprintf(h.notes, "opx hook: %s: the %s call runs unjudged; written down in %s for the next engine to record\n", reason, h.ev.Tool, path)
	}
	r, err := hookproto.Encode(h.o.Agent, h.kind, hookproto.Answer{Decision: hookproto.Allow})
	if err != nil {
		return h.refuse(err)
	}
	return r
}

// writeUnrecorded appends line to the workspace's unrecorded-calls file
// and returns its path.
func writeUnrecorded(ws string, line unrecorded.Line) (string, error) {
	dir, err := stateDir(ws)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(string(dir), unrecorded.File)
	return path, unrecorded.Append(path, line)
}
