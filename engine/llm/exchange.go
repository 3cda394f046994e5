package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// RetryPolicy bounds retries of rate-limited and failed calls.
type RetryPolicy struct {
	MaxAttempts  int           // total tries; default 4
	BaseDelay    time.Duration // first backoff when no Retry-After; default 500ms
	MaxDelay     time.Duration // cap on any wait, Retry-After included; default 30s
	MaxResponse  int64         // cap on a raw response; default 32 MiB
	CallTimeout  time.Duration // per attempt, including the stream; default 5m
	Sleep        func(ctx context.Context, d time.Duration) error
	DisableRetry bool
}

func (p *RetryPolicy) defaults() {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxResponse <= 0 {
		p.MaxResponse = 32 << 20
	}
	if p.CallTimeout <= 0 {
		p.CallTimeout = 5 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Attempt records one try of a call, for the ledger.
type Attempt struct {
	Status     int           // HTTP status, 0 when no answer came
	Error      string        // empty on success
	RetryAfter time.Duration // what the provider asked for
	Waited     time.Duration // what we waited before the next try
}

// Exchange is everything a completed (or failed) call leaves for the
// record: the exact bytes sent and received, the attempts, the parsed
// result and the latency.
type Exchange struct {
	Provider     string
	Model        string
	RequestBody  []byte
	ResponseBody []byte // raw stream of the last attempt, possibly partial
	Attempts     []Attempt
	ToolCalls    []ToolCall
	Text         string
	Done         *Done
	Latency      time.Duration // first byte sent to last byte parsed, last attempt
}

// Complete runs one model call through p: encode, send with retries on
// 429/408/5xx and transport errors (honouring Retry-After, capped), tee
// the raw response, and parse it, passing each chunk to fn as it arrives.
// The Exchange is returned even on error, so the failure can be recorded.
// A stream that broke after chunks were delivered is not retried: the
// agent has already seen part of it.
func Complete(ctx context.Context, p Provider, req *Request, policy RetryPolicy, fn func(Chunk) error) (*Exchange, error) {
	policy.defaults()
	x := &Exchange{Provider: p.Name(), Model: req.Model}
	if x.Model == "" {
		x.Model = p.Model()
	}
	body, err := p.Encode(req)
	if err != nil {
		return x, fmt.Errorf("encode request: %w", err)
	}
	x.RequestBody = body
	for attempt := 1; ; attempt++ {
		delivered, err := x.try(ctx, p, body, policy, fn)
		if err == nil {
			return x, nil
		}
		a := &x.Attempts[len(x.Attempts)-1]
		wait, retry := retryDelay(err, attempt, policy)
		if delivered || !retry || attempt >= policy.MaxAttempts || ctx.Err() != nil {
			return x, err
		}
		a.Waited = wait
		if serr := policy.Sleep(ctx, wait); serr != nil {
			return x, fmt.Errorf("%w (gave up waiting to retry: %v)", err, serr)
		}
	}
}

// try runs one attempt and reports whether any chunk reached fn.
func (x *Exchange) try(ctx context.Context, p Provider, body []byte, policy RetryPolicy, fn func(Chunk) error) (delivered bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, policy.CallTimeout)
	defer cancel()
	start := time.Now()
	x.ResponseBody, x.ToolCalls, x.Text, x.Done = nil, nil, "", nil
	rc, err := p.Send(ctx, body)
	if err != nil {
		a := Attempt{Error: err.Error()}
		var he *HTTPError
		if errors.As(err, &he) {
			a.Status, a.RetryAfter = he.Status, he.RetryAfter
		}
		x.Attempts = append(x.Attempts, a)
		return false, err
	}
	defer rc.Close()
	var raw bytes.Buffer
	tee := io.TeeReader(io.LimitReader(rc, policy.MaxResponse+1), &raw)
	var text bytes.Buffer
	err = p.Parse(tee, func(c Chunk) error {
		switch {
		case c.Text != "":
			text.WriteString(c.Text)
		case c.ToolCall != nil:
			x.ToolCalls = append(x.ToolCalls, *c.ToolCall)
		case c.Done != nil:
			x.Done = c.Done
		}
		delivered = true
		return fn(c)
	})
	x.ResponseBody, x.Text, x.Latency = raw.Bytes(), text.String(), time.Since(start)
	if err == nil && int64(raw.Len()) > policy.MaxResponse {
		err = fmt.Errorf("%w: response larger than %d bytes", ErrMalformed, policy.MaxResponse)
	}
	a := Attempt{Status: 200}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %v", ErrTruncated, ctx.Err())
		}
		a.Error = err.Error()
	}
	x.Attempts = append(x.Attempts, a)
	return delivered, err
}

// retryDelay says whether err is worth another try and how long to wait.
func retryDelay(err error, attempt int, p RetryPolicy) (time.Duration, bool) {
	if p.DisableRetry {
		return 0, false
	}
	backoff := p.BaseDelay << (attempt - 1)
	var he *HTTPError
	switch {
	case errors.As(err, &he):
		if !he.Retryable() {
			return 0, false
		}
		if he.RetryAfter > 0 {
			backoff = he.RetryAfter
		}
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrConfig), errors.Is(err, ErrNoScript):
		return 0, false
	case errors.Is(err, context.Canceled):
		return 0, false
	}
	if backoff > p.MaxDelay {
		backoff = p.MaxDelay
	}
	return backoff, true
}
