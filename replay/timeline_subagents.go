package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// SubAgent is one sub-agent of the session, as a subtree of the parent's
// spawn call (ToolCall.SubAgent): what it was given at spawn, its process
// (Events), its own turns (model calls and tool calls, with every
// verdict, approval, snapshot and result), how it ended, and where the
// parent collected its result. Its entries interleave with its parent's
// and its siblings' in the ledger; here they are grouped, each group in
// seq order.
type SubAgent struct {
	ID              string   `json:"subagent_id"`
	SpawnedSeq      uint64   `json:"spawned_seq"`
	TS              string   `json:"ts"`
	ParentMessageID string   `json:"parent_message_id"`
	ParentCallID    string   `json:"parent_call_id"`
	Task            string   `json:"task,omitempty"`
	TaskBlob        string   `json:"task_blob,omitempty"`
	TaskSize        int64    `json:"task_size"`
	Tools           []string `json:"tools"`
	Model           string   `json:"model,omitempty"`
	MaxRounds       int      `json:"max_rounds"`
	TimeoutMS       int64    `json:"timeout_ms"`
	// Events are its process's entries (agent.spawned, sandbox.canary,
	// agent.ready, agent.exited, agent.crashed) and its other entries
	// outside its turns, in seq order.
	Events []*Event `json:"events"`
	Turns  []*Turn  `json:"turns"`
	// Status is SubAgentRunning, or how it ended.
	Status string       `json:"status"`
	End    *SubAgentEnd `json:"end,omitempty"`
	// ParentCalls are the proposals of the parent's later agent tool
	// calls whose "id" is it (agent_status, agent_result, agent_message,
	// cancel_agent), in seq order.
	ParentCalls []uint64 `json:"parent_calls"`
	// CollectedSeq is the engine.tool_result that told the parent how it
	// ended (its result, or its failure, cancel or timeout): the first
	// delivery after its end to the call that spawned it or to an executed
	// parent call about it (CollectedBy; for a completed sub-agent, an
	// agent_result); 0 if none is recorded.
	CollectedSeq uint64 `json:"collected_seq,omitempty"`
	CollectedBy  string `json:"collected_by,omitempty"`
	// CollectedUnknown is set, when CollectedSeq is 0, if the parent's
	// calls' arguments are withheld (off the record): which of them named
	// the sub-agent cannot be told.
	CollectedUnknown bool `json:"collected_unknown,omitempty"`
}

// Sub-agent statuses: running, or the end entry's kind.
const (
	SubAgentRunning   = "running"
	SubAgentCompleted = "completed"
	SubAgentFailed    = "failed"
	SubAgentCancelled = "cancelled"
	SubAgentTimedOut  = "timed_out"
)

// SubAgentEnd is the entry that ended a sub-agent: its result, or why it
// failed, who cancelled it, or the limit it ran into.
type SubAgentEnd struct {
	Seq        uint64      `json:"seq"`
	TS         string      `json:"ts"`
	Type       string      `json:"type"`
	Result     string      `json:"result,omitempty"`
	ResultBlob string      `json:"result_blob,omitempty"`
	Size       int64       `json:"size,omitempty"`
	Rounds     int         `json:"rounds,omitempty"`
	ToolCalls  int         `json:"tool_calls,omitempty"`
	Usage      event.Usage `json:"usage"`
	Reason     string      `json:"reason,omitempty"` // failed, cancelled
	Detail     string      `json:"detail,omitempty"` // failed
	ByCallID   string      `json:"by_call_id,omitempty"`
	TimeoutMS  int64       `json:"timeout_ms,omitempty"`
	DurationMS int64       `json:"duration_ms"`
}

// SubAgentCounts counts a session's sub-agents by how they ended.
type SubAgentCounts struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	TimedOut  int `json:"timed_out"`
	Running   int `json:"running"`
}

// SubAgents returns the session's sub-agents in spawn order.
func (t *Timeline) SubAgents() []*SubAgent { return t.subs }

// subagentOf reads the subagent_id of any payload ("" when it has none).
func subagentOf(e ledger.Entry) string {
	if !bytes.Contains(e.Data, []byte(`"subagent_id":`)) {
		return ""
	}
	var f struct {
		SubAgentID string `json:"subagent_id"`
	}
	_ = json.Unmarshal(e.Data, &f)
	return f.SubAgentID
}

// spawn opens a sub-agent and hangs it under the parent's call.
func (b *builder) spawn(e ledger.Entry, p *event.SubAgentSpawned) {
	sa := &SubAgent{ID: p.SubAgentID, SpawnedSeq: e.Seq, TS: e.TS, ParentMessageID: p.ParentMessageID, ParentCallID: p.ParentCallID,
		Task: p.Task, TaskBlob: p.TaskBlob, TaskSize: p.TaskSize, Tools: nonNil(p.Tools), Model: p.Model, MaxRounds: p.MaxRounds,
		TimeoutMS: p.TimeoutMS, Events: []*Event{}, Turns: []*Turn{}, Status: SubAgentRunning, ParentCalls: []uint64{}}
	if b.subs[p.SubAgentID] != nil {
		b.problem(e, fmt.Sprintf("sub-agent %s spawned a second time", p.SubAgentID))
		return
	}
	b.subs[p.SubAgentID] = sa
	b.t.subs = append(b.t.subs, sa)
	tc := b.calls[callKey{"", p.ParentCallID}]
	if tc == nil || tc.SubAgent != nil {
		b.problem(e, fmt.Sprintf("sub-agent %s names parent call %s, which did not spawn it in the session", p.SubAgentID, p.ParentCallID))
		b.t.OrphanSubAgents = append(b.t.OrphanSubAgents, sa)
		return
	}
	tc.SubAgent = sa
}

// end records the entry that ended a sub-agent.
func (b *builder) end(e ledger.Entry, p event.Payload) {
	x := &SubAgentEnd{Seq: e.Seq, TS: e.TS, Type: e.Type}
	var id, status string
	switch p := p.(type) {
	case *event.SubAgentCompleted:
		id, status = p.SubAgentID, SubAgentCompleted
		x.Result, x.ResultBlob, x.Size, x.Rounds, x.ToolCalls, x.Usage, x.DurationMS = p.Result, p.ResultBlob, p.Size, p.Rounds, p.ToolCalls, p.Usage, p.DurationMS
	case *event.SubAgentFailed:
		id, status = p.SubAgentID, SubAgentFailed
		x.Reason, x.Detail, x.DurationMS = p.Reason, p.Detail, p.DurationMS
	case *event.SubAgentCancelled:
		id, status = p.SubAgentID, SubAgentCancelled
		x.Reason, x.ByCallID, x.DurationMS = p.Reason, p.ByCallID, p.DurationMS
	case *event.SubAgentTimedOut:
		id, status = p.SubAgentID, SubAgentTimedOut
		x.TimeoutMS, x.DurationMS = p.TimeoutMS, p.DurationMS
	}
	sa := b.subs[id]
	switch {
	case sa == nil:
		b.problem(e, fmt.Sprintf("%s of sub-agent %s, which was never spawned in the session", e.Type, id))
		b.float(e, fmt.Sprintf("%s of unknown sub-agent %s", e.Type, id))
	case sa.End != nil:
		b.problem(e, fmt.Sprintf("sub-agent %s ended a second time (%s, after %s at seq %d)", id, e.Type, sa.End.Type, sa.End.Seq))
		sa.Events = append(sa.Events, b.event(e, summarise(e, p)))
	default:
		sa.End, sa.Status = x, status
	}
}

// subEvent keeps an entry of a known sub-agent outside its turns; it
// reports whether the entry was one.
func (b *builder) subEvent(e ledger.Entry, p event.Payload) bool {
	sa := b.subs[subagentOf(e)]
	if sa == nil {
		return false
	}
	sa.Events = append(sa.Events, b.event(e, summarise(e, p)))
	return true
}

// aboutTools are the agent tools whose "id" argument names one sub-agent;
// agent_result hands its result over.
var aboutTools = map[string]bool{"agent_status": true, "agent_result": true, "agent_message": true, "cancel_agent": true}

// parentCall links a proposal of the session's own agent to the
// sub-agent it is about: an agent tool's call whose "id" argument is
// exactly that sub-agent's id (other calls that merely mention an id are
// not about it).
func (b *builder) parentCall(tc *ToolCall) {
	if !aboutTools[tc.Tool] {
		return
	}
	if _, ok := event.Withheld(tc.Arguments); ok {
		b.withheldArgs = true
		return
	}
	var args struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(tc.Arguments), &args) != nil {
		return
	}
	if sa := b.subs[args.ID]; sa != nil {
		tc.AboutSubAgent = sa.ID
		sa.ParentCalls = append(sa.ParentCalls, tc.Seq)
	}
}

// collected notes where the parent learned how a sub-agent ended: the
// first result delivered, after the sub-agent's end, by its spawn call
// or by an executed agent tool call about it. A completed sub-agent's
// result is collected by agent_result only (agent_status and the others
// do not hand it over).
func (b *builder) collected(e ledger.Entry, tc *ToolCall) {
	sa := tc.SubAgent
	if sa == nil {
		sa = b.subs[tc.AboutSubAgent]
		if sa != nil && (tc.Exec == nil || sa.Status == SubAgentCompleted && tc.Tool != "agent_result") {
			return
		}
	}
	if sa != nil && sa.End != nil && sa.CollectedSeq == 0 {
		sa.CollectedSeq, sa.CollectedBy = e.Seq, tc.CallID
	}
}

// finishSubAgents numbers each sub-agent's turns and finishes them.
func (b *builder) finishSubAgents() {
	for _, sa := range b.t.subs {
		sa.CollectedUnknown = sa.CollectedSeq == 0 && b.withheldArgs
		for i, tn := range sa.Turns {
			tn.N = i + 1
			finishTurn(tn)
		}
		sort.SliceStable(sa.Events, func(i, j int) bool { return sa.Events[i].Seq < sa.Events[j].Seq })
	}
}

// subAgentCounts counts the sub-agents by status.
func subAgentCounts(subs []*SubAgent) SubAgentCounts {
	c := SubAgentCounts{Spawned: len(subs)}
	for _, sa := range subs {
		switch sa.Status {
		case SubAgentCompleted:
			c.Completed++
		case SubAgentFailed:
			c.Failed++
		case SubAgentCancelled:
			c.Cancelled++
		case SubAgentTimedOut:
			c.TimedOut++
		default:
			c.Running++
		}
	}
	return c
}

// allTurns are the parent's turns and every sub-agent's, in seq order.
func (t *Timeline) allTurns() []*Turn {
	out := append([]*Turn{}, t.Turns...)
	for _, sa := range t.subs {
		out = append(out, sa.Turns...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
