package replay

import (
	"sort"

	"github.com/opx-dev/opx/ledger/event"
)

// Totals count what a timeline holds. Token counts are the gateway's
// (llm.response), evaluator calls included.
type Totals struct {
	Turns          int          `json:"turns"`
	ModelCalls     int          `json:"model_calls"`     // the agent's and the evaluator's
	EvaluatorCalls int          `json:"evaluator_calls"` // Shield tier 2
	ModelErrors    int          `json:"model_errors"`
	Usage          event.Usage  `json:"usage"`
	LatencyMS      int64        `json:"latency_ms"` // sum over model calls
	ByModel        []ModelUsage `json:"by_model"`

	ToolCalls int `json:"tool_calls"`
	Executed  int `json:"executed"` // exec.started
	// Completed, Exited and Failed count the executions that ended so,
	// as event.ExecOutcome defines it.
	Completed int `json:"completed"`
	Exited    int `json:"exited"`
	Failed    int `json:"failed"`
	Blocked   int `json:"blocked"`
	// Flagged counts the results Shield flagged (shield.result_flagged):
	// a call that ran, whose answer carried something aimed at the agent.
	Flagged     int         `json:"flagged"`
	Escalations int         `json:"escalations"` // calls that went to a human
	Approved    int         `json:"approved"`
	Denied      int         `json:"denied"`
	ExecMS      int64       `json:"exec_ms"` // sum of execution durations
	ByTool      []ToolUsage `json:"by_tool"`
	// Interrupted counts the executions of an agent's calls (through its
	// hooks) whose end the agent never reported.
	Interrupted int `json:"interrupted,omitempty"`
	// AgentCalls counts the tool calls of an agent audited through its
	// hooks (each of one or more of ToolCalls), ByAgentTool by the
	// agent's own tool name.
	AgentCalls  int              `json:"agent_calls,omitempty"`
	ByAgentTool []AgentToolUsage `json:"by_agent_tool,omitempty"`

	Verdicts []VerdictCount `json:"verdicts"`

	// SubAgents counts the session's sub-agents; the counts above
	// include what they did (their turns are not in Turns).
	SubAgents SubAgentCounts `json:"subagents"`

	Snapshots   int   `json:"snapshots"`
	Rollbacks   int   `json:"rollbacks"`
	AgentErrors int   `json:"agent_errors"`
	Crashes     int   `json:"crashes"` // agent.crashed and engine.crashed in the session
	DurationMS  int64 `json:"duration_ms"`
}

// ModelUsage is the tokens and calls of one provider and model.
type ModelUsage struct {
	Provider  string      `json:"provider"`
	Model     string      `json:"model"`
	Calls     int         `json:"calls"`
	Errors    int         `json:"errors"`
	Usage     event.Usage `json:"usage"`
	LatencyMS int64       `json:"latency_ms"`
}

// ToolUsage is the calls of one tool.
type ToolUsage struct {
	Tool     string `json:"tool"`
	Calls    int    `json:"calls"`
	Executed int    `json:"executed"`
	Blocked  int    `json:"blocked"`
	Exited   int    `json:"exited"`
	Failed   int    `json:"failed"`
	TotalMS  int64  `json:"total_ms"`
	MaxMS    int64  `json:"max_ms"`
}

// AgentToolUsage is the calls of one tool of an agent audited through
// its hooks, by its own name, and how they ended.
type AgentToolUsage struct {
	AgentTool   string `json:"agent_tool"`
	Calls       int    `json:"calls"`
	Blocked     int    `json:"blocked"`
	Interrupted int    `json:"interrupted"`
}

// VerdictCount counts verdicts of one tier, rule and decision.
type VerdictCount struct {
	Tier     int    `json:"tier"`
	Rule     string `json:"rule"`
	Decision string `json:"decision"`
	Count    int    `json:"count"`
}

// ToolCalls returns every tool call of the timeline, its sub-agents'
// included, turn by turn, each turn's in the order the agent sent them.
func (t *Timeline) ToolCalls() []*ToolCall {
	var out []*ToolCall
	for _, tn := range t.allTurns() {
		out = append(out, tn.ToolCalls...)
	}
	return out
}

// Blocked returns the tool calls Shield blocked or a human denied, in
// order.
func (t *Timeline) Blocked() []*ToolCall {
	var out []*ToolCall
	for _, tc := range t.ToolCalls() {
		if tc.Outcome == OutcomeBlocked || tc.Outcome == OutcomeDenied {
			out = append(out, tc)
		}
	}
	return out
}

// Flagged returns the tool calls whose result Shield flagged
// (shield.result_flagged), in order.
func (t *Timeline) Flagged() []*ToolCall {
	var out []*ToolCall
	for _, tc := range t.ToolCalls() {
		if tc.Flagged != nil {
			out = append(out, tc)
		}
	}
	return out
}

// Failed returns the tool calls whose tool failed (event.ExecOutcome), in
// order.
func (t *Timeline) Failed() []*ToolCall {
	var out []*ToolCall
	for _, tc := range t.ToolCalls() {
		if tc.Outcome == OutcomeFailed {
			out = append(out, tc)
		}
	}
	return out
}

// Models returns the distinct models the session called, as
// "provider/model", in the order first called.
func (t *Timeline) Models() []string {
	var out []string
	seen := map[string]bool{}
	for _, tn := range t.allTurns() {
		for _, mc := range tn.ModelCalls {
			m := mc.Provider + "/" + mc.Model
			if mc.Model != "" && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// PrunedBy returns the chronicle.pruned entry that removed blob hash (64
// hex), if one did by the timeline's end.
func (t *Timeline) PrunedBy(hash string) (uint64, bool) {
	seq, ok := t.pruned[hash]
	return seq, ok
}

func totals(t *Timeline) Totals {
	tt := Totals{Turns: len(t.Turns), Snapshots: len(t.Snapshots), ByModel: []ModelUsage{}, ByTool: []ToolUsage{},
		Verdicts: []VerdictCount{}, SubAgents: subAgentCounts(t.subs)}
	models := map[[2]string]*ModelUsage{}
	tools := map[string]*ToolUsage{}
	agentTools := map[string]*AgentToolUsage{}
	verdicts := map[VerdictCount]int{}
	for _, tn := range t.allTurns() {
		tt.AgentErrors += len(tn.Errors)
		for _, mc := range tn.ModelCalls {
			tt.ModelCalls++
			if mc.Evaluator {
				tt.EvaluatorCalls++
			}
			k := [2]string{mc.Provider, mc.Model}
			mu := models[k]
			if mu == nil {
				mu = &ModelUsage{Provider: mc.Provider, Model: mc.Model}
				models[k] = mu
			}
			mu.Calls++
			if mc.Error != "" {
				mu.Errors++
				tt.ModelErrors++
			}
			mu.Usage = addUsage(mu.Usage, mc.Usage)
			mu.LatencyMS += mc.LatencyMS
			tt.Usage = addUsage(tt.Usage, mc.Usage)
			tt.LatencyMS += mc.LatencyMS
		}
		for _, tc := range tn.ToolCalls {
			tt.ToolCalls++
			tu := tools[tc.Tool]
			if tu == nil {
				tu = &ToolUsage{Tool: tc.Tool}
				tools[tc.Tool] = tu
			}
			tu.Calls++
			for _, v := range tc.Verdicts {
				verdicts[VerdictCount{Tier: v.Tier, Rule: v.Rule, Decision: v.Decision}]++
			}
			if a := tc.Approval; a != nil {
				tt.Escalations++
				switch {
				case a.ResolvedSeq != 0 && a.Approved:
					tt.Approved++
				case a.ResolvedSeq != 0:
					tt.Denied++
				}
			}
			if tc.Flagged != nil {
				tt.Flagged++
			}
			switch tc.Outcome {
			case OutcomeBlocked, OutcomeDenied:
				tt.Blocked++
				tu.Blocked++
			}
			if x := tc.Exec; x != nil {
				if x.StartedSeq != 0 {
					tt.Executed++
					tu.Executed++
				}
				switch x.Status {
				case event.ExecOK:
					tt.Completed++
				case event.ExecExited:
					tt.Exited++
					tu.Exited++
				case event.ExecError:
					tt.Failed++
					tu.Failed++
				}
				if x.Interrupted {
					tt.Interrupted++
				}
				tt.ExecMS += x.DurationMS
				tu.TotalMS += x.DurationMS
				tu.MaxMS = max(tu.MaxMS, x.DurationMS)
			}
		}
		for _, ac := range tn.AgentCalls {
			tt.AgentCalls++
			au := agentTools[ac.AgentTool]
			if au == nil {
				au = &AgentToolUsage{AgentTool: ac.AgentTool}
				agentTools[ac.AgentTool] = au
			}
			au.Calls++
			switch ac.Outcome {
			case OutcomeBlocked, OutcomeDenied:
				au.Blocked++
			case OutcomeInterrupted:
				au.Interrupted++
			}
		}
		for _, ev := range tn.Events {
			countEvent(&tt, ev)
		}
	}
	for _, ev := range t.Events {
		countEvent(&tt, ev)
	}
	for _, sa := range t.subs {
		for _, ev := range sa.Events {
			countEvent(&tt, ev)
		}
	}
	for _, mu := range models {
		tt.ByModel = append(tt.ByModel, *mu)
	}
	sort.Slice(tt.ByModel, func(i, j int) bool {
		a, b := tt.ByModel[i], tt.ByModel[j]
		return a.Provider < b.Provider || a.Provider == b.Provider && a.Model < b.Model
	})
	for _, tu := range tools {
		tt.ByTool = append(tt.ByTool, *tu)
	}
	sort.Slice(tt.ByTool, func(i, j int) bool { return tt.ByTool[i].Tool < tt.ByTool[j].Tool })
	for _, au := range agentTools {
		tt.ByAgentTool = append(tt.ByAgentTool, *au)
	}
	sort.Slice(tt.ByAgentTool, func(i, j int) bool { return tt.ByAgentTool[i].AgentTool < tt.ByAgentTool[j].AgentTool })
	for k, n := range verdicts {
		k.Count = n
		tt.Verdicts = append(tt.Verdicts, k)
	}
	sort.Slice(tt.Verdicts, func(i, j int) bool {
		a, b := tt.Verdicts[i], tt.Verdicts[j]
		if a.Tier != b.Tier {
			return a.Tier < b.Tier
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Decision < b.Decision
	})
	tt.DurationMS = msBetween(t.Start, t.End)
	return tt
}

func countEvent(tt *Totals, ev *Event) {
	switch ev.Type {
	case event.TypeRollback:
		tt.Rollbacks++
	case event.TypeAgentCrashed, event.TypeEngineCrashed:
		tt.Crashes++
	case event.TypeAgentError:
		tt.AgentErrors++
	}
}

func addUsage(a, b event.Usage) event.Usage {
	return event.Usage{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		TotalTokens: a.TotalTokens + b.TotalTokens}
}
