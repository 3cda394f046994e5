package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
)

// inflight is a user message the agent is answering.
type inflight struct {
	session, messageID string
	toolCalls          int
	// turnSeq is its client.message (0 until recorded) and traceparent
	// the client's trace context recorded with it: the trace of its
	// calls as telemetry exports them (mcpTraceContext).
	turnSeq     uint64
	traceparent string
	done        chan struct{}
	once        sync.Once
}

func (f *inflight) finish() { f.once.Do(func() { close(f.done) }) }

// load records engine.crashed when the last engine.started has no
// engine.stopped after it, the outcome of any interrupted rollback
// (undo.RecoverRollbacks), then this engine's engine.started. Sessions and
// their history are not loaded: they are projections of the ledger, read
// when asked (readSession, readHistory).
func (e *Engine) load() error {
	l := e.opts.Ledger
	h, err := l.Head()
	if err != nil {
		return err
	}
	// From the head back to the last engine.started or engine.stopped:
	// after a clean stop that is the last entry or close to it.
	var lastStart uint64
	lastSeq, running := h.Seq, false
	err = l.Backward(func(seq uint64, raw []byte) (bool, error) {
		switch {
		case bytes.HasSuffix(raw, []byte(`"type":"`+event.TypeEngineStopped+`"}`)):
			return false, nil
		case bytes.HasSuffix(raw, []byte(`"type":"`+event.TypeEngineStarted+`"}`)):
			lastStart, running = seq, true
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	ctx := context.Background()
	if running {
		crashed := &event.EngineCrashed{StartedSeq: lastStart, LastSeq: lastSeq,
			Detail: fmt.Sprintf("the engine started at entry %d ended without engine.stopped", lastStart)}
		e.describeCrash(crashed)
		e.crashedSince, e.crashedHead = lastStart, lastSeq
		if _, err := e.rec.Record(ctx, ledger.Async, "", crashed); err != nil {
			return err
		}
		if err := e.denyOrphanedApprovals(ctx, lastStart); err != nil {
			return err
		}
		if err := e.failCrashedSubAgents(ctx, lastStart, lastSeq); err != nil {
			return err
		}
	}
	// A rollback this or another process was carrying out when it died
	// is recorded (what it left, measured from disk) before anything is
	// served.
	recovered, err := undo.RecoverRollbacks(ctx, l, e.rec, e.opts.Workspace)
	if err != nil {
		return err
	}
	// The signing key is recorded before anything it signs.
	if e.opts.Checkpoints != nil {
		if err := e.rec.Flush(ctx); err != nil {
			return err
		}
		if err := e.opts.Checkpoints.Setup(ctx, l); err != nil {
			return err
		}
	}
	for _, r := range recovered {
		e.opts.Logf("engine: the rollback planned at entry %d was interrupted; recorded what it left as entry %d", r.Plan, r.Rollback)
	}
	started := &event.EngineStarted{Version: e.opts.Version, PID: pid, Workspace: e.opts.Workspace,
		ConfigHash: e.opts.ConfigHash.String(), Policy: e.opts.Policy, PolicyHash: e.opts.Evaluator.PolicyHash().String(),
		Provider: e.opts.Provider.Name(), Model: e.opts.Provider.Model()}
	// With what a rerun needs to rebuild this configuration (the policy
	// text as a blob, Shield's paths, limits): completeStarted below.
	blobs := e.completeStarted(started)
	seq, err := e.rec.Record(ctx, ledger.Sync, "", started, blobs...)
	if err == nil {
		e.startedSeq = seq
		e.lastCheckpoint, _ = e.checkpoint()
	}
	return err
}

// checkpoint records the projections' state roots and the Merkle tree of
// the entries (ledger.checkpoint), so `opx ledger rebuild` can prove the
// entries fold to the state the engine had and verify that the tree was
// the same, signed when the engine has a key; then it publishes the note
// once the entry is durable. A ledger opened without projections (tests)
// records the tree alone; ErrNoProjection (nothing at all to record) is
// not an engine failure. It returns the checkpoint's seq.
func (e *Engine) checkpoint() (uint64, bool) {
	ctx := context.Background()
	if err := e.rec.Flush(ctx); err != nil {
		e.fatal(err)
		return 0, false
	}
	app, err := e.opts.Ledger.Checkpoint(ctx, ledger.Async)
	if err != nil {
		if !errors.Is(err, ledger.ErrNoProjection) {
			e.fatal(err)
		}
		return 0, false
	}
	if e.opts.Checkpoints != nil {
		if err := e.opts.Checkpoints.Publish(ctx, e.opts.Ledger, app.Seq); err != nil {
			// The signed note is in the ledger; only the copy in the
			// state directory is behind.
			e.opts.Logf("engine: checkpoint %d: %v", app.Seq, err)
		} else {
			e.submitCheckpoint(app.Seq) // Publish made it durable
		}
	}
	return app.Seq, true
}

// checkpointOnDemand records a checkpoint for a client that needs one
// covering an entry appended since the latest (opx ledger prove, through
// checkpoint.OnDemand, which bounds how often), and returns once it is
// durable. It records nothing once the engine stops: the checkpoint at
// stop is the last.
func (e *Engine) checkpointOnDemand(ctx context.Context) error {
	e.mu.Lock()
	running := e.running
	e.mu.Unlock()
	if running == nil || running.Err() != nil {
		return ErrStopping
	}
	if _, ok := e.checkpoint(); !ok {
		return errors.New("checkpoint on demand: none recorded (the ledger failed, or keeps no tree)")
	}
	return e.opts.Ledger.Sync(ctx)
}

// checkpointEvery records a checkpoint once n entries were appended
// since the last one, or period after it when any was, until ctx ends.
// It looks at the head every second at most, so n entries are noticed
// within a second.
func (e *Engine) checkpointEvery(ctx context.Context, period time.Duration, n uint64) {
	t := time.NewTicker(min(period, time.Second))
	defer t.Stop()
	// From the checkpoint load recorded: entries appended before this
	// goroutine runs count too.
	last, lastAt := e.lastCheckpoint, time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h, err := e.opts.Ledger.Head()
			if err != nil || h.Seq <= last || (h.Seq < last+n && now.Sub(lastAt) < period) {
				continue
			}
			if seq, ok := e.checkpoint(); ok {
				last = seq
			}
			lastAt = now
		}
	}
}

// readSession returns a session from the sessions projection. A session
// not found is looked for again after the ledger syncs: it may have been
// created by an entry still being committed.
func (e *Engine) readSession(ctx context.Context, id string) (projection.Session, bool, error) {
	read := func() (projection.Session, bool, error) {
		var s projection.Session
		var ok bool
		err := e.opts.Ledger.ReadProjection(projection.Sessions{}, func(b ledger.Bucket) error {
			s, ok = projection.ReadSession(b, id)
			return nil
		})
		return s, ok, err
	}
	s, ok, err := read()
	if err == nil && !ok && id != "" {
		if err := e.opts.Ledger.Sync(ctx); err != nil {
			return s, false, err
		}
		s, ok, err = read()
	}
	return s, ok, err
}

// denyOrphanedApprovals records a denial of each approval the crashed
// engine started at entry since left pending: no one waits for the
// answer any more (a stopping engine denies its own). An approval whose
// call was proposed again after it is left alone: the answer would be
// taken for the later call's. (ListApprovals lists only this engine's
// approvals either way.)
func (e *Engine) denyOrphanedApprovals(ctx context.Context, since uint64) error {
	l := e.opts.Ledger
	var orphans []projection.Approval
	err := l.ReadProjection(projection.Approvals{}, func(b ledger.Bucket) error {
		for _, a := range projection.ReadApprovals(b, "", true) {
			if a.RequestedSeq > since {
				orphans = append(orphans, a)
			}
		}
		return nil
	})
	if err != nil || len(orphans) == 0 {
		return err
	}
	h, err := l.Head()
	if err != nil {
		return err
	}
	proposed := map[[3]string]uint64{} // session, sub-agent, call -> last tool.proposed
	err = l.RangeRaw(orphans[0].RequestedSeq, h.Seq, func(seq uint64, raw []byte) error {
		if !bytes.Contains(raw, []byte(`"type":"`+event.TypeToolProposed+`"`)) {
			return nil
		}
		en, err := ledger.ParseEntry(raw)
		if err != nil || en.Type != event.TypeToolProposed {
			return nil
		}
		call, _ := ledger.FieldString(en.Data, "call_id")
		sub, _ := ledger.FieldString(en.Data, "subagent_id")
		proposed[[3]string{en.Session, sub, call}] = seq
		return nil
	})
	if err != nil {
		return fmt.Errorf("load approvals: %w", err)
	}
	for _, a := range orphans {
		if proposed[[3]string{a.Session, a.SubAgentID, a.CallID}] > a.RequestedSeq {
			continue
		}
		if _, err := e.rec.Record(ctx, ledger.Async, a.Session, &event.ApprovalResolved{ApprovalID: a.ID, SubAgentID: a.SubAgentID, CallID: a.CallID, Approved: false,
			By: "engine", Reason: "the engine that asked ended before anyone answered"}); err != nil {
			return err
		}
	}
	return nil
}

// readHistory returns a session's messages from the history projection.
func (e *Engine) readHistory(session string, offset, limit int) ([]*opxv1.ChatMessage, error) {
	var out []*opxv1.ChatMessage
	err := e.opts.Ledger.ReadProjection(projection.History{}, func(b ledger.Bucket) error {
		for _, m := range projection.ReadHistory(b, session, offset, limit) {
			out = append(out, chatMessage(m))
		}
		return nil
	})
	return out, err
}

func chatMessage(m projection.Message) *opxv1.ChatMessage {
	c := &opxv1.ChatMessage{Id: m.ID, Role: m.Role, Content: m.Content, Timestamp: unixNano(m.TS)}
	if m.Role == "assistant" {
		c.TokenUsage = &opxv1.TokenUsage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens, TotalTokens: m.Usage.TotalTokens}
		for _, t := range m.Thoughts {
			c.Thoughts = append(c.Thoughts, &opxv1.Thought{Stage: t.Stage, Summary: t.Summary, Detail: []byte(t.Detail)})
		}
	}
	return c
}

// unixNano parses an entry timestamp; 0 if it does not parse.
func unixNano(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// failInflight ends every message in flight with an error event.
func (e *Engine) failInflight(reason string) {
	e.mu.Lock()
	fs := make([]*inflight, 0, len(e.inflight))
	for id, f := range e.inflight {
		fs = append(fs, f)
		delete(e.inflight, id)
	}
	e.mu.Unlock()
	for _, f := range fs {
		e.rec.otr.Ended(f.messageID)
		e.publish(f.session, f.messageID, "error", 0, map[string]string{"code": "engine", "message": reason})
		f.finish()
	}
}

// message returns the in-flight message with id, or nil.
func (e *Engine) message(id string) *inflight {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inflight[id]
}

// messageSession returns the in-flight message with id and its session,
// or nil and "" (entries about unknown messages are recorded outside any
// session).
func (e *Engine) messageSession(id string) (*inflight, string) {
	f := e.message(id)
	if f == nil {
		return nil, ""
	}
	return f, f.session
}

// publish sends a pipeline event to the session's subscribers.
func (e *Engine) publish(session, messageID, typ string, seq uint64, data any) {
	b, _ := json.Marshal(data)
	e.bc.Publish(&opxv1.PipelineEvent{Type: typ, SessionId: session, MessageId: messageID, Data: b, Timestamp: time.Now().UnixNano(), Seq: seq})
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

// What engine.started records so that a rerun can rebuild the engine's
// configuration (engine/redrive rebuilds it).

// checkPolicyText refuses a policy text that is not the evaluator's
// policy: engine.started would name one policy and hold another.
func checkPolicyText(opts Options) error {
	if opts.PolicyText == nil {
		return nil
	}
	if got, want := ledger.Sum(opts.PolicyText), opts.Evaluator.PolicyHash(); got != want {
		return fmt.Errorf("engine: the policy text hashes to %s, the evaluator's policy to %s", got, want)
	}
	return nil
}

// completeStarted adds to engine.started what a rerun needs beside the
// hashes, and returns the blobs it names (the policy text).
func (e *Engine) completeStarted(s *event.EngineStarted) [][]byte {
	var blobs [][]byte
	text := e.opts.PolicyText
	if _, ok := e.opts.Evaluator.(ReadOnlyPolicy); ok && text == nil {
		text = []byte(readOnlyPolicyText)
	}
	if text != nil && ledger.Sum(text).String() == s.PolicyHash {
		s.PolicyBlob = s.PolicyHash
		blobs = append(blobs, text)
	}
	s.Shield = e.opts.ShieldEnv
	s.MaxToolCalls = e.opts.MaxToolCalls
	s.ApprovalTimeoutMS = e.approvals.timeout.Milliseconds()
	s.ProviderMaxTokens = e.opts.ProviderMaxTokens
	if t2 := e.opts.Tier2Provider; t2 != nil {
		s.Tier2Provider, s.Tier2Model = t2.Name(), t2.Model()
		s.Tier2DailyBudget = cmp.Or(e.opts.Tier2DailyBudget, tier2.DefaultDailyBudget)
	}
	if a := e.opts.Agents; a.Enabled {
		s.Agents = &event.AgentLimits{MaxConcurrent: a.MaxConcurrent, MaxRounds: a.MaxRounds, TimeoutMS: a.Timeout.Milliseconds()}
	}
	s.Replay = e.opts.replay != nil
	return blobs
}

// readTaint returns the session's calls that read something sensitive and
// ran (projection.Taint), for Pipeline.Taint. A projection that cannot be
// read leaves the taint unknown, which is judged as taint: what can carry
// data out is then asked about rather than let through.
func (e *Engine) readTaint(_ context.Context, session string) []event.Taint {
	var out []event.Taint
	// ViewProjection, not ReadProjection: the engine's projections are
	// folded in the transaction that commits each entry, so the file's is
	// current; folding the whole ledger into memory instead, on every
	// proposal, is what ReadProjection would do for a ledger opened
	// without it.
	err := e.opts.Ledger.ViewProjection(projection.Taint{}, func(b ledger.Bucket) error {
		out = projection.ReadTaint(b, session)
		return nil
	})
	switch {
	case err == nil:
		return out
	case errors.Is(err, ledger.ErrNoProjection):
		return nil // a ledger opened without projections (tests): no taint is kept
	default:
		return []event.Taint{{What: "data that cannot be known (the taint projection could not be read: " + err.Error() + ")"}}
	}
}
