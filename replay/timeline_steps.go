package replay

import "sort"

// Step is one node of a turn's tree, in seq order: a model call with the
// tool calls it asked for, an agent's call through its hooks with its opx
// calls, a tool call no recorded model call asked for, an event, an agent
// error, or the answer. Exactly one of Model, Agent, Event, Error,
// Response is set, or only Calls (one orphan call).
type Step struct {
	Seq      uint64
	Model    *ModelCall
	Agent    *AgentCall
	Calls    []*ToolCall
	Event    *Event
	Error    *AgentErr
	Response *Response
}

// Steps returns the turn as a tree for display: what the model was asked
// and answered, and under each model call the tool calls it asked for.
func (tn *Turn) Steps() []Step {
	var out []Step
	byResponse := map[uint64]int{}
	for _, mc := range tn.ModelCalls {
		seq := mc.RequestSeq
		if seq == 0 {
			seq = mc.ResponseSeq
		}
		if mc.ResponseSeq != 0 {
			byResponse[mc.ResponseSeq] = len(out)
		}
		out = append(out, Step{Seq: seq, Model: mc})
	}
	agent := map[uint64]bool{}
	for _, ac := range tn.AgentCalls {
		out = append(out, Step{Seq: ac.Seq, Agent: ac, Calls: append([]*ToolCall(nil), ac.calls...)})
		agent[ac.Seq] = true
	}
	for _, tc := range tn.ToolCalls {
		if tc.AgentCall != 0 && agent[tc.AgentCall] {
			continue
		}
		if i, ok := byResponse[tc.AskedBy]; ok && tc.AskedBy != 0 {
			out[i].Calls = append(out[i].Calls, tc)
			continue
		}
		out = append(out, Step{Seq: tc.FirstSeq(), Calls: []*ToolCall{tc}})
	}
	for _, ev := range tn.Events {
		out = append(out, Step{Seq: ev.Seq, Event: ev})
	}
	for _, e := range tn.Errors {
		out = append(out, Step{Seq: e.Seq, Error: e})
	}
	if tn.Response != nil {
		out = append(out, Step{Seq: tn.Response.Seq, Response: tn.Response})
	}
	for _, st := range out {
		// A model call's tool calls, in the order of the seq each is
		// shown under: the proposal, or the agent's call when none was
		// recorded (yet, with --at). By proposal alone they are in the
		// agent's order, but a call not proposed would show its earlier
		// seq after a later proposal's.
		sort.SliceStable(st.Calls, func(i, j int) bool { return st.Calls[i].ShownSeq() < st.Calls[j].ShownSeq() })
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// ShownSeq is the entry a call is shown under: its proposal (what Shield
// judged), else the agent's tool call.
func (tc *ToolCall) ShownSeq() uint64 {
	if tc.Seq != 0 {
		return tc.Seq
	}
	return tc.AgentSeq
}

// FirstSeq is the first entry of the call: the agent's tool call, else
// the proposal.
func (tc *ToolCall) FirstSeq() uint64 {
	if tc.AgentSeq != 0 {
		return tc.AgentSeq
	}
	return tc.Seq
}

// Item is one entry of the timeline's top level: a turn or an event
// outside any turn.
type Item struct {
	Seq   uint64
	Turn  *Turn
	Event *Event
}

// Items returns the turns and the events outside them, in seq order.
func (t *Timeline) Items() []Item {
	out := make([]Item, 0, len(t.Turns)+len(t.Events))
	for _, tn := range t.Turns {
		out = append(out, Item{Seq: tn.Seq, Turn: tn})
	}
	for _, ev := range t.Events {
		out = append(out, Item{Seq: ev.Seq, Event: ev})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// CallStep is one entry about a tool call after its proposal, for
// display in seq order: a verdict, the approval asked or answered, the
// snapshot, the execution (at its start), Shield's finding in its result,
// or the result delivered.
// Exactly one field besides Seq is set.
type CallStep struct {
	Seq            uint64
	Verdict        *Verdict
	ApprovalAsked  *Approval
	ApprovalAnswer *Approval
	Snapshot       *Snapshot
	Exec           *Execution
	Flagged        *Flag
	Result         *Delivery
}

// Steps returns what happened to the call after it was proposed, in seq
// order (a human's approval can come between two verdicts).
func (tc *ToolCall) Steps() []CallStep {
	var out []CallStep
	for _, v := range tc.Verdicts {
		out = append(out, CallStep{Seq: v.Seq, Verdict: v})
	}
	if a := tc.Approval; a != nil {
		if a.RequestedSeq != 0 {
			out = append(out, CallStep{Seq: a.RequestedSeq, ApprovalAsked: a})
		}
		if a.ResolvedSeq != 0 {
			out = append(out, CallStep{Seq: a.ResolvedSeq, ApprovalAnswer: a})
		}
	}
	if s := tc.Snapshot; s != nil {
		out = append(out, CallStep{Seq: s.Seq, Snapshot: s})
	}
	if x := tc.Exec; x != nil {
		seq := x.StartedSeq
		if seq == 0 {
			seq = x.EndSeq
		}
		out = append(out, CallStep{Seq: seq, Exec: x})
	}
	if f := tc.Flagged; f != nil {
		out = append(out, CallStep{Seq: f.Seq, Flagged: f})
	}
	if r := tc.Result; r != nil {
		out = append(out, CallStep{Seq: r.Seq, Result: r})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
