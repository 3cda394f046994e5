package agentwire

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReadyTimeout bounds the wait for an agent's first message.
const ReadyTimeout = 10 * time.Second

// Stream is the engine's side of RunSession or RunSubAgent: the same
// messages either way.
type Stream interface {
	Send(*opxv1.EngineDirective) error
	Recv() (*opxv1.AgentEvent, error)
}

// RecvTimeout receives one event or gives up after d.
func RecvTimeout(stream Stream, d time.Duration) (*opxv1.AgentEvent, error) {
	type res struct {
		ev  *opxv1.AgentEvent
		err error
	}
	c := make(chan res, 1)
	go func() { ev, err := stream.Recv(); c <- res{ev, err} }()
	select {
	case r := <-c:
		return r.ev, r.err
	case <-time.After(d):
		return nil, fmt.Errorf("timed out after %v", d)
	}
}

// ParseCanary decodes the agent's canary result. A result that is missing
// or malformed counts as unsandboxed: the engine cannot vouch for it.
func ParseCanary(js string) (event.Canary, error) {
	var c event.Canary
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return event.Canary{Status: event.CanaryUnsandboxed, Summary: "malformed canary result", Probes: []event.Probe{}}, fmt.Errorf("malformed canary result: %v", err)
	}
	if c.Probes == nil {
		c.Probes = []event.Probe{}
	}
	if err := (&event.SandboxCanary{AgentID: "x", Action: "warned", Result: c}).Validate(); err != nil {
		return event.Canary{Status: event.CanaryUnsandboxed, Summary: "inconsistent canary result", Probes: []event.Probe{}}, fmt.Errorf("inconsistent canary result: %v", err)
	}
	return c, nil
}

// ResponseComplete is the response_complete entry of an agent's or
// sub-agent's answer.
func ResponseComplete(subagent string, rc *opxv1.AgentResponseComplete) *event.ResponseComplete {
	p := &event.ResponseComplete{SubAgentID: subagent, MessageID: rc.MessageId, Content: rc.Content, Thoughts: []event.Thought{}}
	for _, t := range rc.Thoughts {
		p.Thoughts = append(p.Thoughts, event.Thought{Stage: t.Stage, Summary: t.Summary, Detail: string(t.Detail)})
	}
	if u := rc.TokenUsage; u != nil {
		p.Usage = event.Usage{InputTokens: max(u.InputTokens, 0), OutputTokens: max(u.OutputTokens, 0), TotalTokens: max(u.TotalTokens, 0)}
	}
	return p
}

// AgentErrorPayload is the agent.error entry of an agent's or
// sub-agent's error event, its strings bounded.
func AgentErrorPayload(subagent string, ae *opxv1.AgentError) *event.AgentError {
	code := textclip.Cut(ae.Code, 64)
	if code == "" {
		code = "unspecified"
	}
	msg := textclip.Cut(ae.Message, 4096)
	if msg == "" {
		msg = "(no message)"
	}
	return &event.AgentError{SubAgentID: subagent, MessageID: textclip.Cut(ae.MessageId, 128), Code: code, Message: msg}
}

// NonNil returns s, or an empty list for nil.
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NonEmpty names a missing call id in the record.
func NonEmpty(id string) string {
	if strings.TrimSpace(id) == "" {
		return "(none)"
	}
	return textclip.Cut(id, 128)
}

// ProtoDefs returns tool definitions as the agent protocol sends them.
func ProtoDefs(defs []executor.ToolDef) []*opxv1.ToolDef {
	out := make([]*opxv1.ToolDef, 0, len(defs))
	for _, d := range defs {
		out = append(out, &opxv1.ToolDef{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, Group: d.Group})
	}
	return out
}

// LLMResponse is the llm.response entry of one exchange, with the raw
// response body as its blob: what the model answered, or why it did not.
// The gateway and the tier 2 evaluator record their calls the same way.
func LLMResponse(p llm.Provider, subagent, reqID string, x *llm.Exchange, callErr error) (*event.LLMResponse, [][]byte) {
	r := &event.LLMResponse{SubAgentID: subagent, RequestID: reqID, Provider: p.Name(), Model: p.Model(), Attempts: 1, ToolCalls: []event.ToolCall{}}
	var blobs [][]byte
	if x != nil {
		if len(x.ResponseBody) > 0 {
			r.Blob, r.Size = ledger.Sum(x.ResponseBody).String(), int64(len(x.ResponseBody))
			blobs = append(blobs, x.ResponseBody)
		}
		if n := len(x.Attempts); n > 0 {
			r.Attempts, r.Status = n, x.Attempts[n-1].Status
		}
		r.LatencyMS = x.Latency.Milliseconds()
		r.Text = x.Text
		for _, tc := range x.ToolCalls {
			r.ToolCalls = append(r.ToolCalls, event.ToolCall{CallID: NonEmpty(tc.ID), Tool: NonEmpty(tc.Name), Arguments: tc.Arguments})
		}
		if x.Done != nil {
			r.FinishReason = x.Done.FinishReason
			r.Usage = event.Usage{InputTokens: x.Done.Usage.InputTokens, OutputTokens: x.Done.Usage.OutputTokens,
				TotalTokens: x.Done.Usage.InputTokens + x.Done.Usage.OutputTokens}
		}
	}
	if callErr != nil {
		r.Error = textclip.Cut(callErr.Error(), 4096)
	}
	if r.Blob == "" && r.Error == "" {
		r.Error = "empty response"
	}
	return r, blobs
}

// Received is one Recv of a Stream: an event, or why there is none.
type Received struct {
	Event *opxv1.AgentEvent
	Err   error
}

// Events receives stream's events in the background and hands them on in
// order, the last one with Recv's error, until done is closed (the
// handler returned). It lets a handler end its stream when the engine
// stops although the agent keeps it open (Next).
func Events(stream Stream, done <-chan struct{}) <-chan Received {
	c := make(chan Received)
	go func() {
		for {
			ev, err := stream.Recv()
			select {
			case c <- Received{ev, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// Next returns the next of events; once ended is closed (the engine has
// stopped its agents), one already received if any, else an Unavailable
// error: the engine ends the stream.
func Next(events <-chan Received, ended <-chan struct{}) Received {
	select {
	case r := <-events:
		return r
	case <-ended:
		select {
		case r := <-events:
			return r
		default:
			return Received{Err: status.Error(codes.Unavailable, "the engine stopped")}
		}
	}
}
