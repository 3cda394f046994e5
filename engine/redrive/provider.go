package redrive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/replay/rerun"
)

// replayProvider is the model of an engine in replay mode. It encodes and
// parses as the recorded provider did (the same Encode and Parse code,
// configured from the engine run in force), and answers the Nth call of
// each thread (the session's own agent, each sub-agent) with that
// thread's Nth recorded raw response body, once the request body is the
// recorded one byte for byte. The gateway's and the tier 2 evaluator's
// live code run unchanged on top of it, so what they record is produced,
// not copied.
//
// # Threads
//
// Parallel sub-agents call the model in an order that depends on
// scheduling, so the calls are not served in the record's global order.
// A call names no thread to the provider; its request body does: it is
// served as the next recorded call of the thread whose next recorded
// request is exactly this body (the conversations of two threads differ
// from their first message, a sub-agent's task, on). Two threads whose
// next requests are byte-identical asked the same thing: the one with a
// call in progress (retries), else the first spawned, is served first.
// A model that answered identical requests differently may so swap the
// answers, and the rerun shows it as a divergence of those threads.
//
// A recorded call that took several attempts is served as that many:
// retryable failures, then the recorded outcome, so llm.response's
// attempts and status come out as recorded.
type replayProvider struct {
	s    *replayState
	what string
	// kind names the provider, model and max_tokens of an engine run.
	kind func(*rerun.Engine) (provider, model string, maxTokens int64)

	mu      sync.Mutex
	threads []*replayThread // in the order of their first recorded call
	codecs  map[string]llm.Provider
}

// replayThread is one thread's recorded calls and how far they are served.
type replayThread struct {
	subagent string
	calls    []*rerun.ModelCall
	next     int // the call to serve next
	attempt  int // attempts of it served
}

// newReplayProvider serves calls, split by thread.
func newReplayProvider(s *replayState, what string, calls []*rerun.ModelCall, kind func(*rerun.Engine) (string, string, int64)) *replayProvider {
	p := &replayProvider{s: s, what: what, kind: kind}
	byID := map[string]*replayThread{}
	for _, c := range calls {
		t := byID[c.SubAgentID]
		if t == nil {
			t = &replayThread{subagent: c.SubAgentID}
			byID[c.SubAgentID] = t
			p.threads = append(p.threads, t)
		}
		t.calls = append(t.calls, c)
	}
	return p
}

// errEarlierAttempt stands for a recorded call's failed attempts before
// its last one; only their number was recorded.
var errEarlierAttempt = &llm.HTTPError{Status: 503, Body: "opx replay: an earlier attempt of this call, as recorded"}

// codec returns the provider that encodes and parses for the engine run
// in force (never used to send).
func (p *replayProvider) codec() (llm.Provider, error) {
	kind, model, maxTokens := p.kind(p.s.current())
	key := fmt.Sprint(kind, "\x00", model, "\x00", maxTokens)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.codecs[key]; c != nil {
		return c, nil
	}
	var c llm.Provider
	var err error
	switch kind {
	case "scripted", "":
		c = llm.NewScripted(&llm.Transcript{Model: model})
	case "openai":
		c, err = llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "http://replay.invalid", Model: model})
	case "anthropic":
		c, err = llm.NewAnthropic(llm.AnthropicConfig{APIKey: "replay", Model: model, MaxTokens: maxTokens})
	default:
		err = fmt.Errorf("%w: provider %q cannot be replayed", rerun.ErrNotReplayable, kind)
	}
	if err != nil {
		return nil, err
	}
	if p.codecs == nil {
		p.codecs = map[string]llm.Provider{}
	}
	p.codecs[key] = c
	return c, nil
}

// Name implements llm.Provider: the recorded provider's kind.
func (p *replayProvider) Name() string {
	kind, _, _ := p.kind(p.s.current())
	return kind
}

// Model implements llm.Provider.
func (p *replayProvider) Model() string {
	_, model, _ := p.kind(p.s.current())
	return model
}

// Encode implements llm.Provider with the recorded provider's encoder.
func (p *replayProvider) Encode(req *llm.Request) ([]byte, error) {
	c, err := p.codec()
	if err != nil {
		return nil, err
	}
	return c.Encode(req)
}

// Parse implements llm.Provider with the recorded provider's parser.
func (p *replayProvider) Parse(r io.Reader, fn func(llm.Chunk) error) error {
	c, err := p.codec()
	if err != nil {
		return err
	}
	return c.Parse(r, fn)
}

// Send implements llm.Provider: the recorded answer to this call.
func (p *replayProvider) Send(ctx context.Context, body []byte) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	t := p.thread(body)
	if t == nil {
		why := p.unmatched()
		p.mu.Unlock()
		p.s.offRecordf("%s", why)
		return nil, recordedError{"opx replay: " + why}
	}
	n, c := t.next, t.calls[t.next]
	t.attempt++
	if t.attempt < c.Attempts {
		p.mu.Unlock()
		return nil, errEarlierAttempt
	}
	t.next, t.attempt = n+1, 0
	p.mu.Unlock()
	if t.subagent != "" && p.s.heldAt(t.subagent, c.ResponseSeq) {
		// Answered after its sub-agent's end, or never: served once the
		// rerun's sub-agent has ended too (subagents.go).
		p.s.hold(t.subagent)
		if c.Response == nil {
			return nil, recordedError{"opx replay: the sub-agent ended before this call was answered"}
		}
	}
	switch {
	case c.Response != nil:
		return io.NopCloser(bytes.NewReader(c.Response)), nil
	case c.ResponseSeq == 0:
		p.s.offRecordf("%s %d%s (entry %d): the record holds no response", p.what, n+1, threadName(t.subagent), c.RequestSeq)
		return nil, recordedError{"opx replay: the record holds no response to this call"}
	default:
		return nil, replayedFailure(c)
	}
}

// thread returns the thread whose next recorded call has this request
// body (preferring one whose call is in progress), or nil. p.mu is held.
func (p *replayProvider) thread(body []byte) *replayThread {
	var found *replayThread
	for _, t := range p.threads {
		if t.next < len(t.calls) && bytes.Equal(t.calls[t.next].Request, body) {
			if t.attempt > 0 {
				return t
			}
			if found == nil {
				found = t
			}
		}
	}
	return found
}

// unmatched says why a request body is the next recorded call of no
// thread. With one thread left to serve, the call is taken to be its next
// (which the request then failed), so what follows in it is off the
// record too. p.mu is held.
func (p *replayProvider) unmatched() string {
	var left []*replayThread
	served := 0
	for _, t := range p.threads {
		served += t.next
		if t.next < len(t.calls) {
			left = append(left, t)
		}
	}
	switch len(left) {
	case 0:
		return fmt.Sprintf("%s %d: the record holds only %d", p.what, served+1, served)
	case 1:
		t := left[0]
		c := t.calls[t.next]
		t.next, t.attempt = t.next+1, 0
		return fmt.Sprintf("%s %d%s: the request body differs from the one recorded at entry %d", p.what, t.next, threadName(t.subagent), c.RequestSeq)
	}
	var next []string
	for _, t := range left {
		next = append(next, fmt.Sprintf("entry %d%s", t.calls[t.next].RequestSeq, threadName(t.subagent)))
	}
	return fmt.Sprintf("a %s: the request body differs from the next one recorded in every thread (%s)", p.what, strings.Join(next, ", "))
}

// threadName names a sub-agent's thread in a note; "" for the session's
// own agent.
func threadName(subagent string) string {
	if subagent == "" {
		return ""
	}
	return " of sub-agent " + subagent
}

// replayedFailure is a recorded call's failure without a body, as the
// live call saw it: the provider's HTTP error, or the transport's.
func replayedFailure(c *rerun.ModelCall) error {
	if c.Status != 0 && c.Status != 200 {
		prefix := fmt.Sprintf("provider answered %d", c.Status)
		if rest, ok := strings.CutPrefix(c.Error, prefix+": "); ok {
			return &llm.HTTPError{Status: c.Status, Body: rest}
		}
		if rest, ok := strings.CutPrefix(c.Error, prefix+" (retry after "); ok {
			if d, body, ok := strings.Cut(rest, "): "); ok {
				if after, err := time.ParseDuration(d); err == nil {
					return &llm.HTTPError{Status: c.Status, RetryAfter: after, Body: body}
				}
			}
		}
	}
	return recordedError{c.Error}
}

// recordedError is a failure replayed with its recorded text. It is not
// retried: the live call ended with it.
type recordedError struct{ text string }

func (e recordedError) Error() string        { return e.text }
func (e recordedError) Is(target error) bool { return errors.Is(llm.ErrConfig, target) }
