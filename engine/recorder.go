package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/opx-dev/opx/engine/agentwire"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/engine/tier2"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// maxCoalesced bounds the text of one agent.tokens entry.
const maxCoalesced = 4 << 10

// Recorder is the engine's only way to write the ledger. It appends typed
// payloads in the order they are recorded and coalesces streamed tokens.
//
// Order: every Record first flushes pending tokens, so the ledger shows
// tokens and events in the order the engine saw them. Durability: Sync
// returns only once the entry and everything recorded before it are
// fsynced; the append itself happens under the lock as Async so a slow
// fsync never blocks other sessions from recording.
//
// Off the record: an entry of an off-the-record session (or about one of
// its messages) is recorded withheld (event.Withhold, under the
// session's key) and without its blobs; this is the one place that
// decides it, so no path records such content (docs/otr.md).
type Recorder struct {
	l   *ledger.Ledger
	mu  sync.Mutex
	otr *otr.State

	pending struct {
		session, subagent, messageID string
		otr                          *otr.Session
		text                         strings.Builder
		count                        int
	}
}

// NewRecorder records into l.
func NewRecorder(l *ledger.Ledger) *Recorder { return &Recorder{l: l, otr: otr.New(l)} }

// offRecord returns p as recorded for session: withheld, with no blobs,
// when the entry belongs to an off-the-record session.
// The payload is validated first (an invalid one is never recorded);
// off the record, the error does not say why, as the reason may quote the
// content (the engine logs it when it stops).
func (r *Recorder) offRecord(session string, p event.Payload, blobs [][]byte) (event.Payload, [][]byte, error) {
	s, err := r.otr.ForEntry(session, p)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Validate(); err != nil {
		if s != nil {
			err = errors.New("(the reason is withheld: off the record)")
		}
		return nil, nil, fmt.Errorf("%w: %s: %v", event.ErrInvalidPayload, p.Type(), err)
	}
	if s == nil {
		return p, blobs, nil
	}
	w, err := r.otr.Withhold(s, p)
	if err != nil {
		return nil, nil, err
	}
	// No blob: an unkeyed blob hash is guessable and a body is the
	// content.
	return w, nil, nil
}

// Ledger returns the ledger recorded into.
func (r *Recorder) Ledger() *ledger.Ledger { return r.l }

// Record appends p (and the blobs it names) and returns its seq.
func (r *Recorder) Record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) (uint64, error) {
	w, blobs, err := r.offRecord(session, p, blobs)
	if err != nil {
		return 0, fmt.Errorf("record %s: %w", p.Type(), err)
	}
	rec, err := event.Record(session, w, blobs...)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	err = r.flushLocked(ctx)
	var app []ledger.Appended
	if err == nil {
		app, err = r.l.Append(ctx, ledger.Async, rec)
	}
	r.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("record %s: %w", p.Type(), err)
	}
	if d == ledger.Sync {
		if err := r.l.Sync(ctx); err != nil {
			return app[0].Seq, fmt.Errorf("record %s: %w", p.Type(), err)
		}
	}
	return app[0].Seq, nil
}

// Token adds one streamed token to the pending agent.tokens entry of its
// message, starting a new entry when the message changes or the text grows
// past maxCoalesced.
func (r *Recorder) Token(ctx context.Context, session, subagent, messageID, token string) error {
	// Looked up before the lock: it may read the sessions projection.
	os, err := r.otr.ForEntry(session, &event.AgentTokens{MessageID: messageID})
	if err != nil {
		return fmt.Errorf("record agent.tokens: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.pending
	if p.count > 0 && (p.session != session || p.subagent != subagent || p.messageID != messageID || p.text.Len()+len(token) > maxCoalesced) {
		if err := r.flushLocked(ctx); err != nil {
			return err
		}
	}
	p.session, p.subagent, p.messageID, p.otr = session, subagent, messageID, os
	p.text.WriteString(token)
	p.count++
	return nil
}

// Flush writes pending tokens (Async).
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushLocked(ctx)
}

func (r *Recorder) flushLocked(ctx context.Context) error {
	p := &r.pending
	if p.count == 0 {
		return nil
	}
	var tokens event.Payload = &event.AgentTokens{SubAgentID: p.subagent, MessageID: p.messageID, Text: p.text.String(), Count: p.count}
	var err error
	if p.otr != nil {
		tokens, err = r.otr.Withhold(p.otr, tokens)
	}
	p.text.Reset()
	p.count = 0
	if err != nil {
		return fmt.Errorf("record agent.tokens: %w", err)
	}
	rec, err := event.Record(p.session, tokens)
	if err != nil {
		return err
	}
	if _, err := r.l.Append(ctx, ledger.Async, rec); err != nil {
		return fmt.Errorf("record agent.tokens: %w", err)
	}
	return nil
}

// Prune records a chronicle.pruned entry and removes its blobs
// (ledger.PruneBlobsKeeping), in order with everything else recorded;
// blobs that entries from keepFrom on name are kept.
func (r *Recorder) Prune(ctx context.Context, rec ledger.Record, keepFrom uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.flushLocked(ctx); err != nil {
		return err
	}
	if _, err := r.l.PruneBlobsKeeping(ctx, rec, keepFrom); err != nil {
		return fmt.Errorf("record %s: %w", rec.Type, err)
	}
	return nil
}

// Tier 2 (the model asked about escalations) lives in engine/tier2,
// below the core: the engine builds it (New; in replay mode, engine/
// redrive's Attach) and asks it through Tier2; it records through the
// engine's Recorder.

// Tier2 answers escalations to tier 2 (tier2.LLMEvaluator).
type Tier2 interface {
	// Judge returns an allow or block verdict (tier 2) on p, which esc
	// escalated. The error is non-nil only when the ledger failed.
	Judge(ctx context.Context, p judge.Proposal, esc judge.Verdict) (judge.Verdict, error)
}

var _ tier2.Recorder = (*Recorder)(nil)

// RecordLLMResponse records the llm.response of one exchange the way the
// gateway records its own (agentwire.LLMResponse): tier 2's, through
// tier2.Recorder.
func (r *Recorder) RecordLLMResponse(ctx context.Context, d ledger.Durability, session string, p llm.Provider, subagent, reqID string, x *llm.Exchange, callErr error) (uint64, error) {
	resp, blobs := agentwire.LLMResponse(p, subagent, reqID, x, callErr)
	return r.Record(ctx, d, session, resp, blobs...)
}
