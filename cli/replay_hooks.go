package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/replay"
)

// printHookAgent prints, in a hook session's header, the agent audited
// through its hooks and its transcripts: its model calls did not pass
// through opx, so the transcript is where what the model was told lies.
func printHookAgent(w io.Writer, t *replay.Timeline) {
	a := t.Agent
	if a == nil {
		return
	}
	s := "  agent " + clean(a.Name, 40)
	if a.AgentVersion != "" {
		s += " " + clean(a.AgentVersion, 40)
	}
	s += fmt.Sprintf(" (seq %d), its session %s", a.Seq, quoteText(a.AgentSessionID, 80))
	if a.Model != "" {
		s += ", model " + clean(a.Model, 60)
	}
	fmt.Fprintf(w, "%s, in %s\n", s, clean(a.Cwd, 120))
	fmt.Fprintf(w, "  audited through its hooks: each tool call shown with the agent's own tool and input beside opx's judgment; its model calls did not pass through opx\n")
	switch {
	case len(t.Transcripts) > 0:
		for _, tr := range t.Transcripts {
			what := fmt.Sprintf("%d bytes", tr.Stored)
			if tr.Truncated {
				what = fmt.Sprintf("its first %d of %d bytes", tr.Stored, tr.Size)
			}
			fmt.Fprintf(w, "  transcript %s stored at seq %d: %s in blob %s\n", clean(tr.Path, 120), tr.Seq, what, shortHash(tr.Blob))
		}
	case a.TranscriptPath != "":
		fmt.Fprintf(w, "  transcript %s: %s\n", clean(a.TranscriptPath, 120), ui.Paint(w, "33", "not stored (the session has not ended, or its hook did not send it)"))
	}
}

// agentCallLine is an agent's call through its hooks in one line: its
// own tool and input in short, what opx understood it as, and how it
// ended.
func agentCallLine(w io.Writer, ac *replay.AgentCall) string {
	s := fmt.Sprintf("#%d %s %s", ac.Seq, ui.Paint(w, "1", clean(ac.AgentTool, 60)), quoteText(ac.Short, 200))
	what := ac.Kind
	if ac.Calls > 1 {
		what += fmt.Sprintf(", %d opx calls", ac.Calls)
	}
	if ac.Sandboxed {
		what += ", run in opx's sandbox"
	}
	s += " (" + what + ")"
	if len(ac.Unknown) > 0 {
		s += "; opx could not understand: " + clean(strings.Join(ac.Unknown, "; "), 200)
	}
	return s + " → " + agentOutcomeWord(w, ac)
}

func agentOutcomeWord(w io.Writer, ac *replay.AgentCall) string {
	switch ac.Outcome {
	case replay.OutcomeBlocked, replay.OutcomeDenied:
		return ui.Red(w, strings.ToUpper(ac.Outcome))
	case replay.OutcomeCompleted, replay.OutcomeAllowed:
		return ui.Green(w, ac.Outcome)
	case replay.OutcomeFailed:
		return ui.Red(w, ac.Outcome)
	case replay.OutcomeInterrupted:
		return ui.Paint(w, "33", "INTERRUPTED: the agent never reported its end")
	case replay.OutcomeExited:
		if cs := ac.OpxCalls(); len(cs) > 0 && cs[0].Exec != nil {
			return ui.Paint(w, "33", fmt.Sprintf("ran, exit %d", cs[0].Exec.ExitCode))
		}
	}
	return ui.Paint(w, "33", ac.Outcome)
}

// agentTotals is a hook session's line of totals: the agent's calls by
// its own tool names, blocked and interrupted.
func agentTotals(w io.Writer, tt replay.Totals) string {
	if tt.AgentCalls == 0 {
		return ""
	}
	var tools []string
	for _, u := range tt.ByAgentTool {
		tools = append(tools, fmt.Sprintf("%s %d", clean(u.AgentTool, 40), u.Calls))
	}
	blocked, interrupted := 0, 0
	for _, u := range tt.ByAgentTool {
		blocked += u.Blocked
		interrupted += u.Interrupted
	}
	return fmt.Sprintf("agent calls: %d (%s): %s, %s", tt.AgentCalls, strings.Join(tools, ", "),
		paintIf(w, blocked > 0, "31", fmt.Sprintf("%d blocked", blocked)), paintIf(w, interrupted > 0, "33", fmt.Sprintf("%d interrupted", interrupted)))
}

// byAgent names the agent's call an opx call is part of ("" for opx's own).
func byAgent(t *replay.Timeline, tc *replay.ToolCall) string {
	if ac := t.AgentCallOf(tc); ac != nil {
		return "[" + clean(ac.AgentTool, 40) + "] "
	}
	return ""
}
