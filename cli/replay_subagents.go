package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/replay"
)

// printSubAgent prints a sub-agent as the last branch of its spawn call:
// what it was given, then in seq order its process's events, its turns
// (each a tree of model calls and tool calls), how it ended, and where
// the parent collected its result.
func printSubAgent(w io.Writer, indent string, sa *replay.SubAgent) {
	fmt.Fprintf(w, "%s└─ %s\n", indent, subAgentLine(w, sa))
	indent += "   "
	type node struct {
		seq   uint64
		line  string
		turn  *replay.Turn
		color string
	}
	var nodes []node
	for _, ev := range sa.Events {
		nodes = append(nodes, node{seq: ev.Seq, line: fmt.Sprintf("#%d %s", ev.Seq, eventLine(w, ev))})
	}
	for _, tn := range sa.Turns {
		what := "task"
		if tn.N > 1 {
			what = "message from the parent"
		}
		nodes = append(nodes, node{seq: tn.Seq, turn: tn, line: fmt.Sprintf("#%d %s %d (%s): %s", tn.Seq,
			ui.Paint(w, "1", "sub-agent turn"), tn.N, what, quoteText(tn.Content, 200))})
	}
	if sa.End != nil {
		nodes = append(nodes, node{seq: sa.End.Seq, line: subAgentEndLine(w, sa)})
	}
	if sa.CollectedSeq != 0 {
		what := "learned of its end"
		if sa.Status == replay.SubAgentCompleted {
			what = "collected the result"
		}
		nodes = append(nodes, node{seq: sa.CollectedSeq, line: fmt.Sprintf("#%d the parent %s (call %s)", sa.CollectedSeq, what,
			clean(sa.CollectedBy, 40))})
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].seq < nodes[j].seq })
	switch {
	case sa.End == nil:
		nodes = append(nodes, node{line: ui.Paint(w, "33", "no end recorded: still running when the ledger was read, or its engine died")})
	case sa.Status == replay.SubAgentCompleted && sa.CollectedSeq == 0 && !sa.CollectedUnknown:
		nodes = append(nodes, node{line: ui.Paint(w, "33", "the parent never collected the result")})
	}
	for i, n := range nodes {
		branch, sub := indent+"├─ ", indent+"│  "
		if i == len(nodes)-1 {
			branch, sub = indent+"└─ ", indent+"   "
		}
		fmt.Fprintf(w, "%s%s\n", branch, n.line)
		if n.turn != nil {
			printSteps(w, sub, n.turn)
		}
	}
}

// subAgentLine is a sub-agent's head: id, task, tools, limits and how it
// ended.
func subAgentLine(w io.Writer, sa *replay.SubAgent) string {
	task := quoteText(sa.Task, 200)
	if sa.TaskBlob != "" {
		task = resultText("", sa.TaskBlob, sa.TaskSize)
	}
	var tools []string
	for _, t := range sa.Tools {
		tools = append(tools, clean(t, 40))
	}
	model := ""
	if sa.Model != "" {
		model = ", model " + clean(sa.Model, 60)
	}
	return fmt.Sprintf("#%d %s %s → %s: %s; tools %s%s; at most %d rounds, %s", sa.SpawnedSeq, ui.Paint(w, "1", "sub-agent"),
		clean(sa.ID, 40), subAgentStatus(w, sa.Status), task, orDash(strings.Join(tools, ", ")), model, sa.MaxRounds, duration(sa.TimeoutMS))
}

func subAgentStatus(w io.Writer, status string) string {
	switch status {
	case replay.SubAgentCompleted:
		return ui.Green(w, status)
	case replay.SubAgentFailed, replay.SubAgentTimedOut:
		return ui.Red(w, strings.ToUpper(strings.ReplaceAll(status, "_", " ")))
	}
	return ui.Paint(w, "33", clean(status, 20))
}

// subAgentEndLine says how a sub-agent ended.
func subAgentEndLine(w io.Writer, sa *replay.SubAgent) string {
	x := sa.End
	switch sa.Status {
	case replay.SubAgentCompleted:
		return fmt.Sprintf("#%d %s after %s (%s, %s, %s): %s", x.Seq, ui.Green(w, "completed"), duration(x.DurationMS),
			ui.Plural(uint64(x.Rounds), "round", "rounds"), ui.Plural(uint64(x.ToolCalls), "tool call", "tool calls"), tokens(x.Usage),
			resultText(x.Result, x.ResultBlob, x.Size))
	case replay.SubAgentFailed:
		return fmt.Sprintf("#%d %s (%s) after %s: %s", x.Seq, ui.Red(w, "FAILED"), clean(x.Reason, 40), duration(x.DurationMS), clean(x.Detail, 300))
	case replay.SubAgentCancelled:
		by := "by the engine"
		if x.ByCallID != "" {
			by = "by the parent's call " + clean(x.ByCallID, 40)
		}
		return fmt.Sprintf("#%d %s %s after %s: %s", x.Seq, ui.Paint(w, "33", "cancelled"), by, duration(x.DurationMS), clean(x.Reason, 200))
	default:
		return fmt.Sprintf("#%d %s at its %s limit (after %s)", x.Seq, ui.Red(w, "TIMED OUT"), duration(x.TimeoutMS), duration(x.DurationMS))
	}
}

// subAgentTotals is the totals' sub-agent clause, "" without any.
func subAgentTotals(c replay.SubAgentCounts) string {
	if c.Spawned == 0 {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{c.Completed, "completed"}, {c.Failed, "failed"}, {c.Cancelled, "cancelled"}, {c.TimedOut, "timed out"}, {c.Running, "running"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	return fmt.Sprintf("%s (%s)", ui.Plural(uint64(c.Spawned), "sub-agent", "sub-agents"), strings.Join(parts, ", "))
}
