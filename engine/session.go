package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// session is a session's state, folded from the ledger at start and kept
// up to date as entries are recorded. (The projections issue moves this
// into p.* buckets written in the append transaction.)
type session struct {
	id, title, mode  string
	created, updated time.Time
	history          []*opxv1.ChatMessage
}

// inflight is a user message the agent is answering.
type inflight struct {
	session, messageID string
	toolCalls          int
	done               chan struct{}
	once               sync.Once
}

func (f *inflight) finish() { f.once.Do(func() { close(f.done) }) }

// load folds the ledger into sessions, records engine.crashed when the last
// engine.started has no engine.stopped after it, and records this engine's
// engine.started.
func (e *Engine) load() error {
	l := e.opts.Ledger
	h, err := l.Head()
	if err != nil {
		return err
	}
	var lastStart, lastSeq uint64
	running := false
	err = l.Range(0, h.Seq, func(en ledger.Entry) error {
		lastSeq = en.Seq
		ts, _ := en.Time()
		switch en.Type {
		case event.TypeEngineStarted:
			lastStart, running = en.Seq, true
		case event.TypeEngineStopped:
			running = false
		case event.TypeSessionCreated:
			var p event.SessionCreated
			if json.Unmarshal(en.Data, &p) == nil {
				e.sessions[en.Session] = &session{id: en.Session, mode: p.Mode, title: p.Title, created: ts, updated: ts}
			}
		case event.TypeSessionTitled:
			var p event.SessionTitled
			if s := e.sessions[en.Session]; s != nil && json.Unmarshal(en.Data, &p) == nil {
				s.title = p.Title
			}
		case event.TypeClientMessage:
			var p event.ClientMessage
			if s := e.sessions[en.Session]; s != nil && json.Unmarshal(en.Data, &p) == nil {
				s.history = append(s.history, &opxv1.ChatMessage{Id: p.MessageID, Role: "user", Content: p.Content, Timestamp: ts.UnixNano()})
				s.updated = ts
			}
		case event.TypeResponseComplete:
			var p event.ResponseComplete
			if s := e.sessions[en.Session]; s != nil && json.Unmarshal(en.Data, &p) == nil {
				s.history = append(s.history, assistantMessage(&p, ts))
				s.updated = ts
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	ctx := context.Background()
	if running {
		if _, err := e.rec.Record(ctx, ledger.Async, "", &event.EngineCrashed{StartedSeq: lastStart, LastSeq: lastSeq,
			Detail: fmt.Sprintf("the engine started at entry %d ended without engine.stopped", lastStart)}); err != nil {
			return err
		}
	}
	_, err = e.rec.Record(ctx, ledger.Sync, "", &event.EngineStarted{Version: e.opts.Version, PID: pid, Workspace: e.opts.Workspace,
		ConfigHash: e.opts.ConfigHash.String(), Policy: e.opts.Policy, PolicyHash: e.opts.Evaluator.PolicyHash().String(),
		Provider: e.opts.Provider.Name(), Model: e.opts.Provider.Model()})
	return err
}

func assistantMessage(p *event.ResponseComplete, ts time.Time) *opxv1.ChatMessage {
	m := &opxv1.ChatMessage{Id: p.MessageID + "/answer", Role: "assistant", Content: p.Content, Timestamp: ts.UnixNano(),
		TokenUsage: &opxv1.TokenUsage{InputTokens: p.Usage.InputTokens, OutputTokens: p.Usage.OutputTokens, TotalTokens: p.Usage.TotalTokens}}
	for _, t := range p.Thoughts {
		m.Thoughts = append(m.Thoughts, &opxv1.Thought{Stage: t.Stage, Summary: t.Summary, Detail: []byte(t.Detail)})
	}
	return m
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
