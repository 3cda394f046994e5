package engine

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
// configured from the engine run in force), and answers the Nth call with
// the Nth recorded raw response body, once the request body is the
// recorded one byte for byte. The gateway's and the tier 2 evaluator's
// live code run unchanged on top of it, so what they record is produced,
// not copied.
//
// A recorded call that took several attempts is served as that many:
// retryable failures, then the recorded outcome, so llm.response's
// attempts and status come out as recorded.
type replayProvider struct {
	s     *replayState
	what  string
	calls []*rerun.ModelCall
	// kind names the provider, model and max_tokens of an engine run.
	kind func(*rerun.Engine) (provider, model string, maxTokens int64)

	mu      sync.Mutex
	next    int // the call to serve next
	attempt int // attempts of it served
	codecs  map[string]llm.Provider
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
	n := p.next
	if n >= len(p.calls) {
		p.mu.Unlock()
		p.s.offRecordf("%s %d: the record holds only %d", p.what, n+1, len(p.calls))
		return nil, recordedError{fmt.Sprintf("opx replay: the record holds no %s %d", p.what, n+1)}
	}
	c := p.calls[n]
	if !bytes.Equal(body, c.Request) {
		p.next, p.attempt = n+1, 0
		p.mu.Unlock()
		p.s.offRecordf("%s %d: the request body differs from the one recorded at entry %d", p.what, n+1, c.RequestSeq)
		return nil, recordedError{fmt.Sprintf("opx replay: the request body differs from the one recorded at entry %d", c.RequestSeq)}
	}
	p.attempt++
	if p.attempt < c.Attempts {
		p.mu.Unlock()
		return nil, errEarlierAttempt
	}
	p.next, p.attempt = n+1, 0
	p.mu.Unlock()
	switch {
	case c.Response != nil:
		return io.NopCloser(bytes.NewReader(c.Response)), nil
	case c.ResponseSeq == 0:
		p.s.offRecordf("%s %d (entry %d): the record holds no response", p.what, n+1, c.RequestSeq)
		return nil, recordedError{"opx replay: the record holds no response to this call"}
	default:
		return nil, replayedFailure(c)
	}
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
