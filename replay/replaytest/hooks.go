package replaytest

import (
	"strconv"

	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
)

// The hook scene's ids and texts.
const (
	HookSession = "ses_hook_claude"
	// HookWorkspace and HookHome are the recorded engine's workspace and
	// the home Shield resolved ~ against.
	HookWorkspace = "/nonexistent/ws"
	HookHome      = "/nonexistent/home"
	// HookTranscriptPath is where Claude Code kept the session's
	// transcript; HookTranscript what opx stored of it.
	HookTranscriptPath = HookHome + "/.claude/projects/ws/s1.jsonl"
	HookTranscript     = `{"type":"user","message":{"role":"user","content":"make two files, then fix the README"}}` + "\n" +
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash"}]}}` + "\n"
	// HookStopText is the model's last message at the end of turn 1.
	HookStopText = "Created one.txt and two.txt; I did not read your SSH key."
)

// HookPolicyHash is the hash of the policy the hook scene's engine ran:
// Shield's default policy, recorded as its blob.
var HookPolicyHash = ledger.Sum(fixtures.DefaultPolicy).String()

// HookScene is a Claude Code session audited through its hooks (mode
// claude-code), as engine/hooks records it, under Shield's default policy
// (its text in engine.started's policy_blob; the verdicts are those Shield
// gives under it):
//
//   - session.created and hook.session (the agent, its version, model, cwd
//     and transcript path), the user's prompt p1 as client.message;
//   - "bash": Bash writing two files, one opx call (execute_command),
//     allowed, a workspace snapshot first, completed by the agent's report
//     with what changed (one.txt, two.txt);
//   - "key": Bash reading ~/.ssh/id_rsa, blocked at tier 1
//     (credential-path): nothing started;
//   - "read": Read of README.md (read_file), allowed, no snapshot;
//   - "multi": MultiEdit of README.md with two edits, two opx calls
//     (edit_file), each allowed with a files snapshot, both started, the
//     result recorded with the first;
//   - "stop": the model's last message (hook.event stop) ends turn 1;
//   - p2, then "edit": Edit of notes.md, allowed, snapshotted, started,
//     and never reported: closed as interrupted at the session's end;
//   - "orphan": a post-tool report for a call opx never saw;
//   - "end": the session's end (hook.event session-end), and the
//     transcript (hook.transcript, a blob);
//   - the engine stops and another starts, which records a call the
//     agent's hook let through unjudged meanwhile ("unrecorded",
//     hook.unrecorded, engine-wide, naming the agent's session s1).
//
// Each agent call's step is named as above; its opx calls' entries are
// "<name>.<i>.proposed", ".t0", ".t1", ".snapshot", ".exec", ".done".
// The opx call ids are HookCallID(seq of the agent call's step): they
// hold as long as no step is inserted or removed before it (plant a
// violation with Replace). It verifies strictly as it stands.
func HookScene() []Step {
	s := scene{session: HookSession}
	s.engine("engine.started", &event.EngineStarted{Version: "test", PID: 100, Workspace: HookWorkspace,
		ConfigHash: HookPolicyHash, Policy: "default", PolicyHash: HookPolicyHash, PolicyBlob: HookPolicyHash,
		Shield:   &event.ShieldEnv{Home: HookHome, Protected: []string{}, ReadOnly: []string{}},
		Provider: "scripted", Model: "m-1"})
	s.steps[len(s.steps)-1].Blobs = [][]byte{fixtures.DefaultPolicy}
	s.add("created", &event.SessionCreated{Mode: event.ModeClaudeCode, Title: "Claude Code in ws"})
	s.add("agent", &event.HookSession{Agent: "claude", AgentVersion: "2.0.14", AgentSessionID: "s1", Model: "claude-sonnet-4-5",
		Cwd: HookWorkspace, TranscriptPath: HookTranscriptPath, PermissionMode: "default", Source: "startup"})
	s.add("p1", &event.ClientMessage{MessageID: "p1", Content: "make two files, then fix the README", Client: "opx hook claude"})
	s.add("titled", &event.SessionTitled{Title: "Claude Code: make two files, then fix the README"})

	// Bash that writes two files: judged, snapshotted, started, reported.
	bash := `{"command":"echo one > one.txt && echo two > two.txt","description":"make two files"}`
	ids := s.hookCall("bash", "Bash", "toolu_1", bash, "shell", 1)
	shell := `{"command":"echo one > one.txt && echo two > two.txt"}`
	s.hookOpx("bash", 0, ids[0], "execute_command", shell, true, "policy:text-and-inspection", nil)
	s.workspaceSnapshot("bash.0.snapshot", ids[0], "execute_command")
	s.exec("bash.0.exec", "", ids[0], "execute_command", shell)
	out := `{"interrupted":false,"stderr":"","stdout":""}`
	s.add("bash.0.done", &event.ExecCompleted{CallID: ids[0], Tool: "execute_command", Result: out, Size: int64(len(out)), DurationMS: 12,
		Pre:  []event.FileState{{Path: "one.txt", State: "absent"}, {Path: "two.txt", State: "absent"}},
		Post: []event.PostState{{Path: "one.txt", Hash: ledger.Sum([]byte("one\n")).String(), Mode: 0o644}, {Path: "two.txt", Hash: ledger.Sum([]byte("two\n")).String(), Mode: 0o644}}})

	// A credential read: blocked at tier 1, nothing started.
	key := `{"command":"cat ~/.ssh/id_rsa"}`
	ids = s.hookCall("key", "Bash", "toolu_2", key, "shell", 1)
	s.hookOpx("key", 0, ids[0], "execute_command", key, true, "policy:text-and-inspection",
		&event.ShieldVerdict{Decision: event.Block, Tier: 1, Rule: "credential-path", Reason: "cat reads " + HookHome + "/.ssh/id_rsa, which holds credentials (~/.ssh/**)"})

	// A read: allowed, no snapshot.
	ids = s.hookCall("read", "Read", "toolu_3", `{"file_path":"`+HookWorkspace+`/README.md"}`, "read", 1)
	readArgs := `{"path":"README.md"}`
	s.hookOpx("read", 0, ids[0], "read_file", readArgs, false, "policy:workspace-reads", nil)
	s.exec("read.0.exec", "", ids[0], "read_file", readArgs)
	s.done("read.0.done", "", ids[0], "read_file", "# readme\n")

	// A multi-edit: two opx calls, both judged before either starts.
	multi := `{"edits":[{"new_string":"README","old_string":"readme"},{"new_string":"opx","old_string":"tool"}],"file_path":"` + HookWorkspace + `/README.md"}`
	ids = s.hookCall("multi", "MultiEdit", "toolu_4", multi, "write", 2)
	edits := []string{`{"new":"README","old":"readme","path":"README.md"}`, `{"new":"opx","old":"tool","path":"README.md"}`}
	for i, id := range ids {
		s.hookOpx("multi", i, id, "edit_file", edits[i], true, "policy:workspace-edits", nil)
	}
	readme := event.FileState{Path: "README.md", State: "file", Mode: 0o644, Size: 9, Blob: ledger.Sum([]byte("# readme\n")).String()}
	for i, id := range ids {
		s.add("multi."+strconv.Itoa(i)+".snapshot", &event.Snapshot{CallID: id, Tool: "edit_file", Kind: event.KindFiles, Files: []event.FileState{readme}},
			[]byte("# readme\n"))
	}
	for i, id := range ids {
		s.exec("multi."+strconv.Itoa(i)+".exec", "", id, "edit_file", edits[i])
	}
	after := ledger.Sum([]byte("# README\n")).String()
	s.add("multi.0.done", &event.ExecCompleted{CallID: ids[0], Tool: "edit_file", Result: "ok", Size: 2, DurationMS: 3,
		Post: []event.PostState{{Path: "README.md", Hash: after, Mode: 0o644}}})
	part := "(opx: part of the agent's call whose result is recorded with " + ids[0] + ")"
	s.add("multi.1.done", &event.ExecCompleted{CallID: ids[1], Tool: "edit_file", Result: part, Size: int64(len(part)), DurationMS: 3,
		Post: []event.PostState{{Path: "README.md", Hash: after, Mode: 0o644}}})

	s.add("stop", &event.HookEvent{Name: "Stop", Kind: "stop", Text: HookStopText, Size: int64(len(HookStopText))})

	// Turn 2: an edit the agent never reports.
	s.add("p2", &event.ClientMessage{MessageID: "p2", Content: "now fix the typo in notes.md", Client: "opx hook claude"})
	notes := event.FileState{Path: "notes.md", State: "file", Mode: 0o644, Size: 6, Blob: ledger.Sum([]byte("teh x\n")).String()}
	ids = s.hookCall("edit", "Edit", "toolu_5", `{"file_path":"`+HookWorkspace+`/notes.md","new_string":"the","old_string":"teh"}`, "write", 1)
	editArgs := `{"new":"the","old":"teh","path":"notes.md"}`
	s.hookOpx("edit", 0, ids[0], "edit_file", editArgs, true, "policy:workspace-edits", nil)
	s.add("edit.0.snapshot", &event.Snapshot{CallID: ids[0], Tool: "edit_file", Kind: event.KindFiles, Files: []event.FileState{notes}}, []byte("teh x\n"))
	s.exec("edit.0.exec", "", ids[0], "edit_file", editArgs)
	s.add("orphan", &event.HookEvent{Name: "PostToolUse", Kind: "post-tool", ToolUseID: "toolu_77", AgentTool: "Bash", Text: "hi", Size: 2,
		Detail: "the agent reported the end of a tool call opx has no open record of (not allowed by opx, closed already, or never asked about)"})
	closed := "(opx: the agent's session ended before it reported the end of this call; what the workspace holds now is recorded as its outcome)"
	s.add("edit.0.done", &event.ExecCompleted{CallID: ids[0], Tool: "edit_file", Result: closed, Size: int64(len(closed)), DurationMS: 3007,
		Interrupted: true, Post: []event.PostState{{Path: "notes.md", Hash: ledger.Sum([]byte("the x\n")).String(), Mode: 0o644}}})
	s.add("end", &event.HookEvent{Name: "SessionEnd", Kind: "session-end", Reason: "other", Detail: "the Claude Code session ended"})
	s.add("transcript", &event.HookTranscript{Path: HookTranscriptPath, Blob: ledger.Sum([]byte(HookTranscript)).String(),
		Size: int64(len(HookTranscript)), Stored: int64(len(HookTranscript))}, []byte(HookTranscript))

	// The engine stops; the agent goes on with none (hooks.on_engine_down:
	// allow), and the next engine records what its hook let through.
	s.engine("engine.stopped", &event.EngineStopped{Reason: "opx stop", Cause: event.StopShutdown, UptimeMS: 13000})
	s.engine("engine.restarted", &event.EngineStarted{Version: "test", PID: 101, Workspace: HookWorkspace,
		ConfigHash: HookPolicyHash, Policy: "default", PolicyHash: HookPolicyHash, PolicyBlob: HookPolicyHash,
		Shield: &event.ShieldEnv{Home: HookHome, Protected: []string{}, ReadOnly: []string{}, Rules: shield.RulesVersion}, Provider: "scripted", Model: "m-1"})
	s.engine("unrecorded", &event.HookUnrecorded{Agent: "claude", AgentSessionID: "s1", Name: "PreToolUse", AgentTool: "Bash",
		Input: `{"command":"rm -rf build"}`, Cwd: HookWorkspace, At: "2026-11-22T10:00:14Z", Decision: "allow",
		Reason: "no engine ran (hooks.on_engine_down: allow)"})
	return s.steps
}

// hookCall is an agent's tool call (hook.tool_call) of n opx calls, named
// name; it returns their call ids, from the seq Write gives the step.
func (s *scene) hookCall(name, tool, toolUseID, input, kind string, n int) []string {
	seq := uint64(len(s.steps) + 1) // Write appends after the genesis, one entry a step
	s.add(name, &event.HookToolCall{ToolUseID: toolUseID, AgentTool: tool, Input: input, InputSize: int64(len(input)), Kind: kind,
		Calls: n, Model: "claude-sonnet-4-5"})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = event.HookCallID(seq, i)
	}
	return ids
}

// hookOpx is the i-th opx call of agent call name: proposed, allowed at
// tier 0 by rule, then at tier 1 (no heuristic matched) unless t1 says
// otherwise.
func (s *scene) hookOpx(name string, i int, id, tool, args string, mutating bool, rule string, t1 *event.ShieldVerdict) {
	p := name + "." + strconv.Itoa(i)
	s.add(p+".proposed", &event.ToolProposed{CallID: id, Tool: tool, Arguments: args, ActionHash: Action(tool, args), Mutating: mutating})
	s.add(p+".t0", &event.ShieldVerdict{CallID: id, Decision: event.Allow, Tier: 0, Rule: rule, Reason: "allowed by policy rule " + rule[len("policy:"):],
		ActionHash: Action(tool, args), PolicyHash: HookPolicyHash})
	v := &event.ShieldVerdict{Decision: event.Allow, Tier: 1, Rule: "heuristics:none", Reason: "no heuristic matched"}
	if t1 != nil {
		v = t1
	}
	v.CallID, v.ActionHash, v.PolicyHash = id, Action(tool, args), HookPolicyHash
	s.add(p+".t1", v)
}

// SeqOf is the seq Write gives the step named name of steps: one entry a
// step, after the genesis.
func SeqOf(steps []Step, name string) uint64 { return uint64(index(steps, name) + 1) }
