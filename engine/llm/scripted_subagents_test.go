package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine/llm"
)

// dialog is a conversation with the scripted model: ask answers the
// conversation so far, answer gives each of the last step's calls its
// result.
type dialog struct {
	t   *testing.T
	p   *llm.ScriptedProvider
	req *llm.Request
}

func (c *dialog) ask() *llm.Exchange {
	c.t.Helper()
	x, err := llm.Complete(context.Background(), c.p, c.req, llm.RetryPolicy{}, func(llm.Chunk) error { return nil })
	if err != nil {
		c.t.Fatal(err)
	}
	c.req.Messages = append(c.req.Messages, llm.Message{Role: llm.RoleAssistant, Content: x.Text, ToolCalls: x.ToolCalls})
	return x
}

func (c *dialog) answer(x *llm.Exchange, results ...string) {
	c.t.Helper()
	if len(results) != len(x.ToolCalls) {
		c.t.Fatalf("%d results for calls %+v", len(results), x.ToolCalls)
	}
	for i, tc := range x.ToolCalls {
		c.req.Messages = append(c.req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: results[i]})
	}
}

func talk(t *testing.T, user string) *dialog {
	return &dialog{t: t, p: loadDefault(t), req: &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}}}
}

// demoSubAgents is what `opx demo` asks for the sub-agent scene.
const demoSubAgents = "ask two sub-agents in parallel: one to summarise invoice.sh, one to run the tests"

// TestScripted_DefaultTranscriptSubAgents: the demo's sub-agent turn
// spawns two sub-agents in one step, whose tasks the transcript scripts
// too, collects both results with agent_result (the ids taken from the
// spawn results) and answers with what they returned.
func TestScripted_DefaultTranscriptSubAgents(t *testing.T) {
	c := talk(t, demoSubAgents)
	x := c.ask()
	if len(x.ToolCalls) != 2 || x.ToolCalls[0].Name != "spawn_agent" || x.ToolCalls[1].Name != "spawn_agent" {
		t.Fatalf("step 0: %+v, want two spawn_agent calls", x.ToolCalls)
	}
	var tasks []string
	for _, tc := range x.ToolCalls {
		var a struct{ Task string }
		if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, a.Task)
	}
	c.answer(x, `spawned sub-agent sub_0123456789ab with tools read_file; it works in parallel: agent_result {"id": "sub_0123456789ab"} waits for its answer`,
		`spawned sub-agent sub_ba9876543210_2 with tools execute_command; it works in parallel`)
	x = c.ask()
	if len(x.ToolCalls) != 2 || !strings.Contains(x.ToolCalls[0].Arguments, `"sub_0123456789ab"`) || !strings.Contains(x.ToolCalls[1].Arguments, `"sub_ba9876543210_2"`) {
		t.Fatalf("step 1: %+v, want agent_result for both ids", x.ToolCalls)
	}
	c.answer(x, "invoice.sh has 4 lines; SUMMARY", "error: sub-agent sub_ba9876543210_2 timed out")
	x = c.ask()
	if !strings.Contains(x.Text, "answered: invoice.sh has 4 lines; SUMMARY") || !strings.Contains(x.Text, "did not answer: sub-agent sub_ba9876543210_2 timed out") {
		t.Errorf("step 2 does not say what the results show: %q", x.Text)
	}

	// A refused spawn: no agent_result, and the answer says so.
	c = talk(t, demoSubAgents)
	x = c.ask()
	c.answer(x, "spawned sub-agent sub_0123456789ab with tools read_file", "error: blocked by Shield (policy:no-agents): no")
	if x = c.ask(); len(x.ToolCalls) != 0 || !strings.Contains(x.Text, "refused or failed: blocked by Shield") {
		t.Errorf("after a refused spawn: %q %+v", x.Text, x.ToolCalls)
	}

	// Each task selects its own turn.
	sub := talk(t, tasks[0])
	x = sub.ask()
	if len(x.ToolCalls) != 1 || x.ToolCalls[0].Name != "read_file" {
		t.Fatalf("summary task: %+v", x.ToolCalls)
	}
	sub.answer(x, "#!/bin/sh\nawk -F, '{ total += $2 }' \"$1\"\n")
	if x = sub.ask(); !strings.Contains(x.Text, "2 lines; its awk program computes: awk -F,") {
		t.Errorf("summary: %q", x.Text)
	}
	sub = talk(t, tasks[1])
	x = sub.ask()
	if len(x.ToolCalls) != 1 || x.ToolCalls[0].Name != "execute_command" {
		t.Fatalf("test task: %+v", x.ToolCalls)
	}
	sub.answer(x, "error: FAIL testdata/refund.csv: got 1000, want 700")
	if x = sub.ask(); !strings.HasPrefix(x.Text, "The tests fail:\nFAIL testdata/refund.csv") {
		t.Errorf("tests: %q", x.Text)
	}
}
