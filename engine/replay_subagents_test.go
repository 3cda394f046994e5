package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
)

// subAgentTranscript: the session's agent spawns two sub-agents in one
// step, asks one's status (an answer that depends on timing), waits for
// both results and answers with them; each sub-agent reads on its own.
const subAgentTranscript = `{"model": "replay-sub-1", "turns": [
 {"match": "^Alpha:", "steps": [
  {"tool_calls": [{"name": "list_directory", "arguments": "{\"path\": \".\"}"}]},
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"README.md\"}"}]},
  {"text": "alpha saw {{lines (index .Results 0).Content}} entries and {{(index .Results 1).Content}}"}
 ]},
 {"match": "^Beta:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}, {"name": "read_file", "arguments": "{\"path\": \"~/.ssh/id_rsa\"}"}]},
  {"text": "beta read: {{(index .Results 0).Content}} and was refused: {{(index .Results 1).Refused}}"}
 ]},
 {"match": "(?i)fan out", "steps": [
  {"tool_calls": [
   {"name": "spawn_agent", "arguments": "{\"task\": \"Alpha: list the workspace and read the README\"}"},
   {"name": "spawn_agent", "arguments": "{\"task\": \"Beta: read the notes\", \"tools\": [\"read_file\"]}"}]},
  {"tool_calls": [
   {"name": "agent_status", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 0).Content)}}}"},
   {"name": "agent_result", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 0).Content)}}}"},
   {"name": "agent_result", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 1).Content)}}, \"wait\": true}"},
   {"name": "list_agents", "arguments": "{}"}]},
  {"text": "Alpha: {{(index .Results 3).Content}} / Beta: {{(index .Results 4).Content}}"}
 ]}
]}`

// subAgentPolicy is the default policy with the agent tools allowed and
// reads of the notes and the README asking a human: both sub-agents ask
// for approvals, in parallel.
var subAgentPolicy = strings.NewReplacer("allow:\n",
	"allow:\n  - name: agent-tools\n    tools: [spawn_agent, list_agents, agent_status, agent_result, agent_message, cancel_agent]\n",
	"verify:\n", "verify:\n  - name: ask-reads\n    tools: [read_file]\n    paths: [\"notes.txt\", \"README.md\"]\n    tier: 3\n").
	Replace(string(fixtures.DefaultPolicy))

func subAgentSpec() recordSpec {
	return recordSpec{transcript: subAgentTranscript, agents: true, policy: subAgentPolicy, approve: true,
		files:    map[string]string{"notes.txt": "the notes\n", "README.md": "# sub-agents\n"},
		messages: []string{"please fan out", "fan out again"}}
}

// TestRerun_SubAgents: a session whose agent ran two sub-agents in
// parallel, twice, reruns identically (twice): each thread's model calls
// are served in its own order, the agent tools run live (real sub-agents
// against the replay engine), agent_status and list_agents are answered
// from the record, and the sub-agents' approvals, asked in parallel, are
// answered as recorded for each.
func TestRerun_SubAgents(t *testing.T) {
	r := recordSession(t, subAgentSpec())
	rec := loadRecording(t, r)
	if len(rec.SubAgents) != 4 || len(rec.Approvals) != 4 {
		for _, en := range rec.Entries {
			t.Logf("%d %s %.300s", en.Seq, en.Type, en.Data)
		}
		t.Fatalf("%d sub-agents and %d approvals recorded, want 4 and 4", len(rec.SubAgents), len(rec.Approvals))
	}
	for i := 0; i < 2; i++ {
		rep := rerunSession(t, r.path, r.session)
		if !rep.Identical {
			d := rep.Divergence
			t.Fatalf("rerun %d diverged at seq %d (%s, %s, sub-agent %q): notes %v\n%s", i, d.Seq, d.Type, d.Kind, d.SubAgentID, rep.Notes, d.Diff)
		}
		if rep.SubAgents != 4 || rep.Events < 100 {
			t.Errorf("rerun %d compared %d events in %d sub-agent threads", i, rep.Events, rep.SubAgents)
		}
	}
}

// subAgentOf returns the id of the recorded sub-agent whose task starts
// with prefix.
func subAgentOf(t *testing.T, rec *rerun.Recording, prefix string) string {
	t.Helper()
	for _, s := range rec.SubAgents {
		if strings.HasPrefix(s.Task, prefix) {
			return s.SubAgentID
		}
	}
	t.Fatalf("no sub-agent with a task starting %q", prefix)
	return ""
}

// TestRerun_SubAgentDiverges: a sub-agent's model answer, or a tool
// result it was given, served other than recorded diverges in that
// sub-agent's thread, which the divergence names.
func TestRerun_SubAgentDiverges(t *testing.T) {
	r := recordSession(t, subAgentSpec())

	t.Run("model answer", func(t *testing.T) {
		rec := loadRecording(t, r)
		beta := subAgentOf(t, rec, "Beta:")
		var c *rerun.ModelCall
		for _, mc := range rec.Calls {
			if mc.SubAgentID == beta && bytes.Contains(mc.Response, []byte(`"content":"beta `)) {
				c = mc
				break
			}
		}
		if c == nil {
			t.Fatal("no answer of beta's recorded")
		}
		c.Response = bytes.Replace(c.Response, []byte(`"content":"beta `), []byte(`"content":"BETA_TAMPERED `), 1)
		rep := rerunRecording(t, rec)
		d := rep.Divergence
		if d == nil || d.SubAgentID != beta || d.Seq != c.ResponseSeq || d.Type != event.TypeLLMResponse || !strings.Contains(d.Diff, "BETA_TAMPERED") {
			t.Fatalf("divergence %+v, want beta's (%s) llm.response at seq %d", d, beta, c.ResponseSeq)
		}
	})

	t.Run("tool result", func(t *testing.T) {
		rec := loadRecording(t, r)
		alpha := subAgentOf(t, rec, "Alpha:")
		var p *rerun.Proposal
		for _, q := range rec.Proposals {
			if q.SubAgentID == alpha && q.Tool == "list_directory" {
				p = q
				break
			}
		}
		if p == nil || p.Result == nil {
			t.Fatal("no answered list_directory of alpha's recorded")
		}
		p.ResultContent = "ALPHA_TAMPERED\n" + p.ResultContent
		rep := rerunRecording(t, rec)
		d := rep.Divergence
		if d == nil || d.SubAgentID != alpha || d.Type != event.TypeToolResult || !strings.Contains(d.Diff, "ALPHA_TAMPERED") {
			t.Fatalf("divergence %+v, want alpha's (%s) engine.tool_result", d, alpha)
		}
		text := fmt.Sprint(rep.Notes)
		if !strings.Contains(text, "sub-agent "+alpha) {
			t.Errorf("notes %q do not name alpha's thread", rep.Notes)
		}
	})
}

// TestRerun_SubAgentLimitsRefused: a record naming sub-agent limits no
// configuration allows is not re-driven (a rerun starts a real process for
// each sub-agent its recorded answers spawn).
func TestRerun_SubAgentLimitsRefused(t *testing.T) {
	r := recordSession(t, subAgentSpec())
	for _, forge := range []func(*event.AgentLimits){
		func(a *event.AgentLimits) { a.MaxConcurrent = 100000 },
		func(a *event.AgentLimits) { a.MaxRounds = 0 },
		func(a *event.AgentLimits) { a.TimeoutMS = 365 * 24 * 3600 * 1000 },
	} {
		rec := loadRecording(t, r)
		limits := *rec.Messages[0].Engine.Started.Agents
		forge(&limits)
		rec.Messages[0].Engine.Started.Agents = &limits
		_, err := redrive.Rerun(context.Background(), redrive.RerunConfig{Recording: rec, SpawnAgent: inProcessAgent(t), TempDir: t.TempDir()})
		if !errors.Is(err, rerun.ErrNotReplayable) || !strings.Contains(err.Error(), "sub-agent limits") {
			t.Errorf("limits %+v: %v, want ErrNotReplayable", limits, err)
		}
	}
}

// TestRerun_SubAgentMaxRounds: a sub-agent the engine ended at its
// rounds limit (subagent.failed max_rounds, its model call over the limit
// refused by the gateway) reruns identically: the limit is the recorded
// one and the engine enforces it again at the same call.
func TestRerun_SubAgentMaxRounds(t *testing.T) {
	spec := subAgentSpec()
	spec.subRounds, spec.messages = 2, spec.messages[:1]
	r := recordSession(t, spec)
	rec := loadRecording(t, r)
	failed := 0
	for _, en := range rec.Entries {
		if en.Type == event.TypeSubAgentFailed && strings.Contains(string(en.Data), `"reason":"max_rounds"`) {
			failed++
		}
	}
	if failed != 1 { // alpha needs three model calls, beta two
		t.Fatalf("%d sub-agents failed at max_rounds, want 1", failed)
	}
	rep := rerunRecording(t, rec)
	if !rep.Identical {
		d := rep.Divergence
		t.Fatalf("diverged at seq %d (%s, %s, sub-agent %q): notes %v\n%s", d.Seq, d.Type, d.Kind, d.SubAgentID, rep.Notes, d.Diff)
	}
}

// TestRerun_SubAgentsTimedOut: two sub-agents that timed out in parallel
// while each waited for a human, their approvals then denied by the end,
// rerun identically: each is held where its record goes on past its end
// (the approval answered after it) and timed out there by its own timer,
// so its end, the denial and what the parent reads come out as recorded.
func TestRerun_SubAgentsTimedOut(t *testing.T) {
	spec := subAgentSpec()
	spec.unanswered, spec.subTimeout, spec.messages = true, 2*time.Second, spec.messages[:1]
	r := recordSession(t, spec)
	rec := loadRecording(t, r)
	timedOut := 0
	for _, sa := range rec.SubAgents {
		if _, ok := sa.End.(*event.SubAgentTimedOut); ok {
			timedOut++
		}
	}
	if timedOut != 2 {
		t.Fatalf("%d sub-agents timed out, want 2", timedOut)
	}
	for i := 0; i < 2; i++ {
		rep := rerunRecording(t, rec)
		if !rep.Identical {
			d := rep.Divergence
			t.Fatalf("rerun %d diverged at seq %d (%s, %s, sub-agent %q): notes %v\n%s", i, d.Seq, d.Type, d.Kind, d.SubAgentID, rep.Notes, d.Diff)
		}
	}
}

// cancelTranscript: the session's agent spawns a sub-agent that waits for
// a human, cancels it (the cancel is escalated too, and approved only once
// the sub-agent waits: the record is the same every time), and reads
// what became of it.
const cancelTranscript = `{"model": "replay-sub-1", "turns": [
 {"match": "^Gamma:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}]},
  {"text": "gamma read: {{(index .Results 0).Content}}"}
 ]},
 {"match": "(?i)cancel", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"Gamma: read the notes\", \"tools\": [\"read_file\"]}"}]},
  {"tool_calls": [{"name": "cancel_agent", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 0).Content)}}}"}]},
  {"tool_calls": [{"name": "agent_result", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 0).Content)}}}"}]},
  {"text": "{{(index .Results 1).Content}} / {{(index .Results 2).Content}}"}
 ]}
]}`

// TestRerun_SubAgentCancelled: a sub-agent its parent cancelled while it
// waited for a human reruns identically: the parent's live cancel_agent
// waits until the rerun's sub-agent waits at the same point, and the
// approval is denied by the end, as recorded.
func TestRerun_SubAgentCancelled(t *testing.T) {
	spec := recordSpec{transcript: cancelTranscript, agents: true, approve: true, subWaits: true,
		policy:   strings.Replace(subAgentPolicy, "verify:\n", "verify:\n  - name: ask-cancel\n    tools: [cancel_agent]\n    tier: 3\n", 1),
		files:    map[string]string{"notes.txt": "the notes\n"},
		messages: []string{"spawn and cancel"}}
	r := recordSession(t, spec)
	rec := loadRecording(t, r)
	if len(rec.SubAgents) != 1 || rec.SubAgents[0].End == nil || rec.SubAgents[0].End.Type() != event.TypeSubAgentCancelled {
		t.Fatalf("sub-agents %+v, want one cancelled", rec.SubAgents)
	}
	for i := 0; i < 2; i++ {
		rep := rerunRecording(t, rec)
		if !rep.Identical {
			d := rep.Divergence
			t.Fatalf("rerun %d diverged at seq %d (%s, %s, sub-agent %q): notes %v\n%s", i, d.Seq, d.Type, d.Kind, d.SubAgentID, rep.Notes, d.Diff)
		}
	}
}

// waitTranscript: the session's agent spawns a sub-agent that waits for
// a human and waits for its result.
const waitTranscript = `{"model": "replay-sub-1", "turns": [
 {"match": "^Gamma:", "steps": [
  {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}]},
  {"text": "gamma read: {{(index .Results 0).Content}}"}
 ]},
 {"match": "(?i)wait", "steps": [
  {"tool_calls": [{"name": "spawn_agent", "arguments": "{\"task\": \"Gamma: read the notes\", \"tools\": [\"read_file\"]}"}]},
  {"tool_calls": [{"name": "agent_result", "arguments": "{\"id\": {{json (find \"sub_[0-9a-f_]+\" (index .Results 0).Content)}}}"}]},
  {"text": "{{(index .Results 1).Content}}"}
 ]}
]}`

// TestRerun_SubAgentCrashed: a sub-agent whose process died while it
// waited for a human reruns identically: held there, its process is
// killed, and the crash, its end and the denial come out as recorded.
func TestRerun_SubAgentCrashed(t *testing.T) {
	spec := recordSpec{transcript: waitTranscript, agents: true, policy: subAgentPolicy, killWaiting: true,
		files: map[string]string{"notes.txt": "the notes\n"}, messages: []string{"spawn and wait"}}
	r := recordSession(t, spec)
	rec := loadRecording(t, r)
	if len(rec.SubAgents) != 1 {
		t.Fatalf("%d sub-agents, want 1", len(rec.SubAgents))
	}
	if f, ok := rec.SubAgents[0].End.(*event.SubAgentFailed); !ok || f.Reason != event.SubAgentCrashed {
		t.Fatalf("the sub-agent ended with %+v, want a crash", rec.SubAgents[0].End)
	}
	for i := 0; i < 2; i++ {
		rep := rerunRecording(t, rec)
		if !rep.Identical {
			d := rep.Divergence
			t.Fatalf("rerun %d diverged at seq %d (%s, %s, sub-agent %q): notes %v\n%s", i, d.Seq, d.Type, d.Kind, d.SubAgentID, rep.Notes, d.Diff)
		}
	}
}
