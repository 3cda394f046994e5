package engine_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

type allowAllPolicy struct{}

func (allowAllPolicy) PolicyHash() ledger.Hash { return ledger.Sum([]byte("allow-all")) }
func (allowAllPolicy) Evaluate(context.Context, judge.Proposal) []judge.Verdict {
	return []judge.Verdict{{Decision: event.Allow, Tier: 0, Rule: "test:allow", Reason: "test"}}
}

// TestSubAgents_CancelStopsExecution (REVIEW15 F9): a command a
// sub-agent started runs under the sub-agent: cancelling it kills the
// command (it never writes its file), its exec.completed says it was
// stopped, and it is recorded before cancel_agent answers, which comes
// only once nothing of the sub-agent runs any more.
func TestSubAgents_CancelStopsExecution(t *testing.T) {
	launches := make(chan engine.AgentLaunch, 8)
	var ws string
	r0 := startEngine(t, func(o *engine.Options) {
		ws = o.Workspace
		o.Evaluator = allowAllPolicy{}
		o.Shell = &executor.ShellConfig{Launcher: []string{"/usr/bin/env"}}
		o.Agents = engine.AgentsConfig{Enabled: true}
		main := o.SpawnAgent
		o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			if l.SubAgentID == "" {
				return main(ctx, l)
			}
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			launches <- l
			return cmd, nil
		}
	})
	r := &subRig{running: r0, launches: launches}
	r.parent = r0.connectAgent(t, <-r0.tokens)
	go func() {
		s, err := opxv1.NewClientServiceClient(r0.conn).SendMessage(r0.ctx, &opxv1.ClientMessageRequest{Content: "work"})
		if err == nil {
			for {
				if _, err := s.Recv(); err != nil {
					return
				}
			}
		}
	}()
	for r.msgID == "" {
		d, err := r.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if pr := d.GetProcessRequest(); pr != nil {
			r.msgID = pr.MessageId
		}
	}
	if res := r.call(t, "c1", "spawn_agent", `{"task":"x","tools":["execute_command"]}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	s := r.register(t, l, readyOf(l))
	d, err := s.Recv()
	if err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("first directive %v, %v", d, err)
	}
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				return
			}
		}
	}()
	// The command blocks until killed (no timing: with the kill it ends
	// at once; without, only the tool timeout would end it).
	if err := s.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolCall{ToolCall: &opxv1.ToolCallProposed{MessageId: d.GetProcessRequest().MessageId,
		CallId: "k1", ToolName: "execute_command", ArgumentsJson: `{"command":"sleep 100; echo late > after_cancel.txt"}`}}}); err != nil {
		t.Fatal(err)
	}
	sub := `"subagent_id":"` + l.SubAgentID + `"`
	r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeExecStarted && dataHas(e, sub) })
	if res := r.call(t, "c2", "cancel_agent", `{"id":"`+l.SubAgentID+`"}`); res.IsError {
		t.Fatal(res.Content)
	}
	var subDone, cancelDone, cancelled uint64
	var subEntry ledger.Entry
	for _, e := range r.entries(t) {
		switch {
		case e.Type == event.TypeExecCompleted && dataHas(e, sub):
			subDone, subEntry = e.Seq, e
		case e.Type == event.TypeExecCompleted && dataHas(e, `"call_id":"c2"`):
			cancelDone = e.Seq
		case e.Type == event.TypeSubAgentCancelled:
			cancelled = e.Seq
		}
	}
	switch {
	case subDone == 0:
		t.Fatalf("cancel_agent answered while the sub-agent's command had not ended")
	case !(cancelled < subDone && subDone < cancelDone):
		t.Errorf("subagent.cancelled %d, the command's exec.completed %d, cancel_agent's %d: want the command's end between", cancelled, subDone, cancelDone)
	case !dataHas(subEntry, `"stopped":true`):
		t.Errorf("the command's exec.completed does not say it was stopped: %s", subEntry.Data)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "after_cancel.txt")); err == nil {
		t.Errorf("the cancelled sub-agent's command wrote after_cancel.txt (%q)", b)
	}
}

// hangingProvider is a model that never answers: a call ends only when
// its context does.
type hangingProvider struct{ llm.Provider }

func (hangingProvider) Send(ctx context.Context, _ []byte) (io.ReadCloser, error) {
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

// TestSubAgents_CancelStopsModelCall (REVIEW15 F9, the model's side): a
// sub-agent's model call in progress when it is cancelled is aborted,
// its llm.response recording why, instead of running on after the end.
func TestSubAgents_CancelStopsModelCall(t *testing.T) {
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	r := startSubRig(t, engine.AgentsConfig{}, func(o *engine.Options) { o.Provider = hangingProvider{llm.NewScripted(tr)} })
	l, _, msg := spawnRegistered(t, r, "c1")
	gw := opxv1.NewLLMGatewayClient(r.conn)
	go func() {
		c, err := gw.Complete(agentCtx(l.Token), &opxv1.LLMRequest{SessionId: l.ParentSession, MessageId: msg,
			Messages: []*opxv1.ChatMessage{{Role: "user", Content: "x"}}})
		if err == nil {
			for {
				if _, err := c.Recv(); err != nil {
					return
				}
			}
		}
	}()
	sub := `"subagent_id":"` + l.SubAgentID + `"`
	r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeLLMRequest && dataHas(e, sub) })
	if res := r.call(t, "c2", "cancel_agent", `{"id":"`+l.SubAgentID+`"}`); res.IsError {
		t.Fatal(res.Content)
	}
	resp := r.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeLLMResponse && dataHas(e, sub) })
	if !dataHas(resp, "ended (cancelled)") {
		t.Errorf("the aborted model call's llm.response does not say why: %s", resp.Data)
	}
}
