package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// LoadTools is the meta-tool the model calls to get more tool groups.
const LoadTools = "load_tools"

var loadToolsDef = &opxv1.ToolDef{
	Name:        LoadTools,
	Description: "Load more tools by group name (for example \"git\"). The new tools are available from the next step on.",
	InputSchema: []byte(`{"type":"object","properties":{"groups":{"type":"array","items":{"type":"string"}}},"required":["groups"]}`),
	Group:       "meta",
}

// round is what one model call produced.
type round struct {
	text  strings.Builder
	calls []*opxv1.ToolCall
	usage *opxv1.TokenUsage
}

// process answers one user message: model calls and tool calls in rounds
// until the model answers without calling a tool.
func (a *agent) process(ctx context.Context, pr *opxv1.ProcessRequest) {
	msgs := make([]*opxv1.ChatMessage, 0, len(pr.History)+2)
	msgs = append(msgs, &opxv1.ChatMessage{Role: "system", Content: a.cfg.SystemPrompt})
	msgs = append(msgs, pr.History...)
	msgs = append(msgs, &opxv1.ChatMessage{Id: pr.MessageId, Role: "user", Content: pr.Content})
	tools := append([]*opxv1.ToolDef{}, pr.Tools...)
	if a.cfg.SubAgentID == "" {
		// A sub-agent's tools are granted at spawn: it loads none.
		tools = append(tools, loadToolsDef)
	}
	var usage opxv1.TokenUsage
	var thoughts []*opxv1.Thought
	for n := 0; n < a.cfg.MaxRounds; n++ {
		r, err := a.complete(ctx, pr, msgs, tools)
		if err != nil {
			if ctx.Err() == nil {
				a.sendError(pr.MessageId, "llm_error", err.Error())
			}
			return
		}
		if r.usage != nil {
			usage.InputTokens += r.usage.InputTokens
			usage.OutputTokens += r.usage.OutputTokens
			usage.TotalTokens += r.usage.TotalTokens
		}
		if len(r.calls) == 0 {
			_ = a.send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ResponseComplete{ResponseComplete: &opxv1.AgentResponseComplete{
				MessageId: pr.MessageId, Content: r.text.String(), Thoughts: thoughts, TokenUsage: &usage}}})
			return
		}
		msgs = append(msgs, &opxv1.ChatMessage{Role: "assistant", Content: r.text.String(), ToolCalls: r.calls})
		for _, c := range r.calls {
			content, isErr, err := a.call(ctx, pr.MessageId, c, &tools)
			if err != nil {
				return // the stream is gone or we are stopping
			}
			thoughts = append(thoughts, thought(c, isErr))
			if isErr {
				content = "error: " + content
			}
			msgs = append(msgs, &opxv1.ChatMessage{Role: "tool", Content: content, ToolCallId: c.CallId})
		}
	}
	a.sendError(pr.MessageId, "max_rounds", fmt.Sprintf("no answer after %d model calls; stopped", a.cfg.MaxRounds))
}

// complete runs one model call through the gateway, streaming text tokens
// to the engine as they arrive.
func (a *agent) complete(ctx context.Context, pr *opxv1.ProcessRequest, msgs []*opxv1.ChatMessage, tools []*opxv1.ToolDef) (*round, error) {
	s, err := a.gw.Complete(ctx, &opxv1.LLMRequest{SessionId: pr.SessionId, MessageId: pr.MessageId, Messages: msgs, Tools: tools, MaxTokens: a.cfg.MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("model call: %w", err)
	}
	r := &round{}
	done := false
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("model call: %w", err)
		}
		switch x := ch.Chunk.(type) {
		case *opxv1.LLMChunk_Text:
			r.text.WriteString(x.Text)
			if err := a.send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_LlmToken{LlmToken: &opxv1.LLMTokenEmitted{MessageId: pr.MessageId, Token: x.Text}}}); err != nil {
				return nil, err
			}
		case *opxv1.LLMChunk_ToolCall:
			r.calls = append(r.calls, x.ToolCall)
		case *opxv1.LLMChunk_Done:
			r.usage = x.Done.Usage
			done = true
		}
	}
	if !done {
		return nil, errors.New("model call: the answer ended before it was complete")
	}
	return r, nil
}

// call proposes one tool call (or loads tools) and waits for the engine's
// answer. The error is set only when the answer cannot come.
func (a *agent) call(ctx context.Context, messageID string, c *opxv1.ToolCall, tools *[]*opxv1.ToolDef) (string, bool, error) {
	wait := a.expect(c.CallId)
	var ev *opxv1.AgentEvent
	if c.ToolName == LoadTools && a.cfg.SubAgentID == "" {
		var args struct {
			Groups []string `json:"groups"`
		}
		if err := json.Unmarshal([]byte(c.ArgumentsJson), &args); err != nil || len(args.Groups) == 0 {
			a.forget(c.CallId)
			return `load_tools needs {"groups": ["name", ...]}`, true, nil
		}
		ev = &opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolDefsRequest{ToolDefsRequest: &opxv1.ToolDefsRequest{Groups: args.Groups, CallId: c.CallId}}}
	} else {
		ev = &opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{
			CallId: c.CallId, ToolName: c.ToolName, ArgumentsJson: c.ArgumentsJson, MessageId: messageID}}}
	}
	if err := a.send(ev); err != nil {
		a.forget(c.CallId)
		return "", false, err
	}
	var d *opxv1.EngineDirective
	select {
	case d = <-wait:
	case <-ctx.Done():
		a.forget(c.CallId)
		return "", false, ctx.Err()
	}
	if defs := d.GetToolDefs(); defs != nil {
		var names []string
		for _, t := range defs.Tools {
			if !hasTool(*tools, t.Name) {
				*tools = append(*tools, t)
			}
			names = append(names, t.Name)
		}
		if len(names) == 0 {
			return "no tools in groups " + strings.Join(mustGroups(c.ArgumentsJson), ", "), true, nil
		}
		return "loaded tools: " + strings.Join(names, ", "), false, nil
	}
	res := d.GetToolResult()
	return res.Content, res.IsError, nil
}

func hasTool(tools []*opxv1.ToolDef, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func mustGroups(args string) []string {
	var a struct {
		Groups []string `json:"groups"`
	}
	json.Unmarshal([]byte(args), &a)
	return a.Groups
}

// thought summarises a tool call for the user.
func thought(c *opxv1.ToolCall, isErr bool) *opxv1.Thought {
	summary := c.ToolName + " " + c.ArgumentsJson
	if utf8.RuneCountInString(summary) > 120 {
		summary = string([]rune(summary)[:117]) + "..."
	}
	detail, _ := json.Marshal(struct {
		CallID  string `json:"call_id"`
		Tool    string `json:"tool"`
		IsError bool   `json:"is_error"`
	}{c.CallId, c.ToolName, isErr})
	return &opxv1.Thought{Stage: "tool_call", Summary: summary, Detail: detail}
}
