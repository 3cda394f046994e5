package replaytest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The sub-agent scene's ids.
const (
	Session    = "ses_subagents"
	SubA       = "sub_0a1b2c3d4e5f" // summarises the README; completes
	SubB       = "sub_9f8e7d6c5b4a" // runs the tests; cancelled by the parent
	SubC       = "sub_c0c0c0c0c0c0" // lints; its process crashes
	SubD       = "sub_d0d0d0d0d0d0" // searches; times out
	PolicyHash = "1111111111111111111111111111111111111111111111111111111111111111"
	// ResultA is what SubA hands back to the parent.
	ResultA = "README: opx records every step of an agent in a verifiable ledger"
)

// Step is one entry of a scene: a name tests find it by, its session and
// payload, and the blobs it names.
type Step struct {
	Name    string
	Session string
	Payload event.Payload
	Blobs   [][]byte
}

// Action is the action hash the scenes give a call (any hash will do: the
// checks compare a call's hashes with each other).
func Action(tool, args string) string { return ledger.Sum([]byte(tool + "\n" + args)).String() }

// SubAgentScene is one session whose agent spawns two sub-agents in
// parallel (both calls named c1 by their models, as the parent's spawn
// call is: calls are keyed by sub-agent), their entries interleaved:
//
//   - SubA reads README.md (allowed) and completes with ResultA;
//   - SubB asks to run the tests (escalated, approved by a human, with a
//     snapshot), then proposes write_file, which it was not granted (tier
//     -1 block, rule subagent:not-granted), and is cancelled by the
//     parent's cancel_agent call c4;
//   - SubC's process crashes (subagent.failed, crashed); SubD runs into
//     its wall-clock limit (subagent.timed_out);
//   - the parent collects SubA's result with agent_result (c3), answers,
//     and the engine stops.
//
// It verifies strictly as it stands.
func SubAgentScene() []Step {
	var s scene
	s.engine("engine.started", &event.EngineStarted{Version: "test", PID: 100, Workspace: "/nonexistent/ws",
		ConfigHash: PolicyHash, Policy: "default", PolicyHash: PolicyHash, Provider: "scripted", Model: "m-1"})
	s.process("", "agent-1", 101)
	s.add("created", &event.SessionCreated{Mode: "normal", Title: "review with sub-agents"})
	s.add("m1", &event.ClientMessage{MessageID: "m1", Content: "summarise the README and run the tests, in parallel", Client: "opx send"})
	s.add("m1.process", &event.ProcessRequest{MessageID: "m1", Content: "summarise the README and run the tests, in parallel", Mode: "normal",
		Tools: []string{"read_file", "spawn_agent", "agent_result", "cancel_agent"}})
	spawnA := `{"task":"summarise README.md","tools":["read_file"]}`
	spawnB := `{"task":"run the tests","tools":["read_file","execute_command"]}`
	spawnC := `{"task":"lint","tools":["read_file"]}`
	spawnD := `{"task":"search for TODOs","tools":["read_file"]}`
	s.model("r1", "", "m1", "", 200, 40, event.ToolCall{CallID: "c1", Tool: "spawn_agent", Arguments: spawnA},
		event.ToolCall{CallID: "c2", Tool: "spawn_agent", Arguments: spawnB}, event.ToolCall{CallID: "c5", Tool: "spawn_agent", Arguments: spawnC},
		event.ToolCall{CallID: "c6", Tool: "spawn_agent", Arguments: spawnD})
	s.call("c1", "", "m1", "spawn_agent", spawnA, false)
	s.verdict("c1.verdict", "", "c1", "spawn_agent", spawnA, event.Allow, 0, "default:allow")
	s.exec("c1.exec", "", "c1", "spawn_agent", spawnA)
	s.add("a.spawned", &event.SubAgentSpawned{SubAgentID: SubA, ParentMessageID: "m1", ParentCallID: "c1", Task: "summarise README.md",
		TaskSize: 19, Tools: []string{"read_file"}, MaxRounds: 8, TimeoutMS: 60000})
	s.spawned(SubA, 102)
	s.done("c1.done", "", "c1", "spawn_agent", `{"agent_id":"`+SubA+`"}`)
	s.result("c1.result", "", "c1", `{"agent_id":"`+SubA+`"}`, false)
	s.call("c2", "", "m1", "spawn_agent", spawnB, false)
	s.verdict("c2.verdict", "", "c2", "spawn_agent", spawnB, event.Allow, 0, "default:allow")
	s.exec("c2.exec", "", "c2", "spawn_agent", spawnB)
	s.add("b.spawned", &event.SubAgentSpawned{SubAgentID: SubB, ParentMessageID: "m1", ParentCallID: "c2", Task: "run the tests",
		TaskSize: 13, Tools: []string{"read_file", "execute_command"}, MaxRounds: 8, TimeoutMS: 60000})
	s.spawned(SubB, 103)
	s.done("c2.done", "", "c2", "spawn_agent", `{"agent_id":"`+SubB+`"}`)
	s.result("c2.result", "", "c2", `{"agent_id":"`+SubB+`"}`, false)
	s.spawn("c5", SubC, "lint", spawnC, 104)
	s.spawn("c6", SubD, "search for TODOs", spawnD, 105)
	s.ready(SubA, SubA)
	s.ready(SubB, SubB)
	s.ready(SubC, SubC)
	s.ready(SubD, SubD)
	s.add("c.process", &event.ProcessRequest{SubAgentID: SubC, MessageID: "m1", Content: "lint", Mode: "normal", Tools: []string{"read_file"}})
	s.add("d.process", &event.ProcessRequest{SubAgentID: SubD, MessageID: "m1", Content: "search for TODOs", Mode: "normal", Tools: []string{"read_file"}})
	s.request("rd1", SubD, "m1")
	s.add("c.crashed", &event.AgentCrashed{AgentID: SubC, SubAgentID: SubC, PID: 104, ExitCode: -1, Signal: "killed", Detail: "killed by signal killed"})
	s.add("c.failed", &event.SubAgentFailed{SubAgentID: SubC, Reason: event.SubAgentCrashed, Detail: "its process was killed by signal killed", DurationMS: 800})

	// The two sub-agents, interleaved.
	s.add("a.process", &event.ProcessRequest{SubAgentID: SubA, MessageID: "m1", Content: "summarise README.md", Mode: "normal",
		Tools: []string{"read_file"}})
	s.add("b.process", &event.ProcessRequest{SubAgentID: SubB, MessageID: "m1", Content: "run the tests", Mode: "normal",
		Tools: []string{"read_file", "execute_command"}})
	readArgs, testArgs := `{"path":"README.md"}`, `{"command":"go test ./..."}`
	s.request("ra1", SubA, "m1")
	s.request("rb1", SubB, "m1")
	s.response("rb1", SubB, "", 120, 20, event.ToolCall{CallID: "c1", Tool: "execute_command", Arguments: testArgs})
	s.response("ra1", SubA, "", 100, 10, event.ToolCall{CallID: "c1", Tool: "read_file", Arguments: readArgs})
	s.call("a.c1", SubA, "m1", "read_file", readArgs, false)
	s.call("b.c1", SubB, "m1", "execute_command", testArgs, true)
	s.verdict("a.c1.verdict", SubA, "c1", "read_file", readArgs, event.Allow, 0, "default:read")
	s.verdict("b.c1.verdict", SubB, "c1", "execute_command", testArgs, event.Escalate, 3, "default:ask-exec")
	s.add("b.c1.asked", &event.ApprovalRequested{SubAgentID: SubB, ApprovalID: "ap_1", MessageID: "m1", CallID: "c1",
		Tool: "execute_command", Arguments: testArgs, Reason: "commands need a human", TimeoutMS: 300000})
	s.add("a.c1.exec", &event.ExecStarted{SubAgentID: SubA, CallID: "c1", Tool: "read_file", ActionHash: Action("read_file", readArgs)})
	readme := "# opx\nopx records every step of an agent.\n"
	s.add("a.c1.done", &event.ExecCompleted{SubAgentID: SubA, CallID: "c1", Tool: "read_file", Result: readme, Size: int64(len(readme)),
		DurationMS: 2, Post: []event.PostState{}})
	s.result("a.c1.result", SubA, "c1", readme, false)
	s.request("ra2", SubA, "m1")
	s.add("b.c1.approved", &event.ApprovalResolved{SubAgentID: SubB, ApprovalID: "ap_1", CallID: "c1", Approved: true, By: "opx approve"})
	s.add("b.c1.snapshot", &event.Snapshot{SubAgentID: SubB, CallID: "c1", Tool: "execute_command", Kind: event.KindFiles, Files: []event.FileState{}})
	s.add("b.c1.exec", &event.ExecStarted{SubAgentID: SubB, CallID: "c1", Tool: "execute_command", ActionHash: Action("execute_command", testArgs)})
	s.response("ra2", SubA, ResultA, 150, 30)
	s.add("a.answer", &event.ResponseComplete{SubAgentID: SubA, MessageID: "m1", Content: ResultA, Thoughts: []event.Thought{},
		Usage: usage(250, 40)})
	s.add("d.timed_out", &event.SubAgentTimedOut{SubAgentID: SubD, TimeoutMS: 2000, DurationMS: 2001})
	s.add("d.exited", &event.AgentExited{AgentID: SubD, SubAgentID: SubD, PID: 105, ExitCode: -1, Reason: "timed out"})
	s.add("a.completed", &event.SubAgentCompleted{SubAgentID: SubA, Result: ResultA, Size: int64(len(ResultA)), Rounds: 2, ToolCalls: 1,
		Usage: usage(250, 40), DurationMS: 3000})
	s.add("a.exited", &event.AgentExited{AgentID: SubA, SubAgentID: SubA, PID: 102, Reason: "completed"})
	testOut := "ok  \tgithub.com/x/y\t0.1s\n"
	s.add("b.c1.done", &event.ExecCompleted{SubAgentID: SubB, CallID: "c1", Tool: "execute_command", Result: testOut, Size: int64(len(testOut)),
		DurationMS: 900, Post: []event.PostState{}})
	s.result("b.c1.result", SubB, "c1", testOut, false)
	writeArgs := `{"content":"all pass","path":"TESTS.md"}`
	s.model("rb2", SubB, "m1", "", 160, 20, event.ToolCall{CallID: "c2", Tool: "write_file", Arguments: writeArgs})
	s.call("b.c2", SubB, "m1", "write_file", writeArgs, true)
	s.verdict("b.c2.verdict", SubB, "c2", "write_file", writeArgs, event.Block, -1, "subagent:not-granted")
	s.result("b.c2.result", SubB, "c2", "blocked: write_file was not granted to this sub-agent", true)

	// The parent collects one result and cancels the other.
	resultArgs, cancelArgs := `{"id":"`+SubA+`"}`, `{"id":"`+SubB+`"}`
	s.model("r2", "", "m1", "", 300, 30, event.ToolCall{CallID: "c3", Tool: "agent_result", Arguments: resultArgs},
		event.ToolCall{CallID: "c4", Tool: "cancel_agent", Arguments: cancelArgs})
	s.call("c3", "", "m1", "agent_result", resultArgs, false)
	s.verdict("c3.verdict", "", "c3", "agent_result", resultArgs, event.Allow, 0, "default:allow")
	s.exec("c3.exec", "", "c3", "agent_result", resultArgs)
	s.done("c3.done", "", "c3", "agent_result", ResultA)
	s.result("c3.result", "", "c3", ResultA, false)
	s.call("c4", "", "m1", "cancel_agent", cancelArgs, false)
	s.verdict("c4.verdict", "", "c4", "cancel_agent", cancelArgs, event.Allow, 0, "default:allow")
	s.exec("c4.exec", "", "c4", "cancel_agent", cancelArgs)
	s.add("b.cancelled", &event.SubAgentCancelled{SubAgentID: SubB, ByCallID: "c4", Reason: "cancelled by the parent", DurationMS: 4000})
	s.add("b.exited", &event.AgentExited{AgentID: SubB, SubAgentID: SubB, PID: 103, ExitCode: -1, Reason: "cancelled"})
	s.done("c4.done", "", "c4", "cancel_agent", "cancelled")
	s.result("c4.result", "", "c4", "cancelled", false)
	s.model("r3", "", "m1", "The README says opx records every step; the test run was cancelled.", 400, 25)
	s.add("answer", &event.ResponseComplete{MessageID: "m1", Content: "The README says opx records every step; the test run was cancelled.",
		Thoughts: []event.Thought{}, Usage: usage(900, 95)})
	s.engine("engine.stopped", &event.EngineStopped{Reason: "opx stop", Cause: event.StopShutdown, UptimeMS: 9000})
	return s.steps
}

// spawn is a spawn call of the session's agent, allowed, that spawns
// sub (its process pid) inside its execution, as the engine does.
func (s *scene) spawn(call, sub, task, args string, pid int) {
	s.call(call, "", "m1", "spawn_agent", args, false)
	s.verdict(call+".verdict", "", call, "spawn_agent", args, event.Allow, 0, "default:allow")
	s.exec(call+".exec", "", call, "spawn_agent", args)
	s.add(sub+".spawned", &event.SubAgentSpawned{SubAgentID: sub, ParentMessageID: "m1", ParentCallID: call, Task: task,
		TaskSize: int64(len(task)), Tools: []string{"read_file"}, MaxRounds: 8, TimeoutMS: 2000})
	s.spawned(sub, pid)
	s.done(call+".done", "", call, "spawn_agent", `{"agent_id":"`+sub+`"}`)
	s.result(call+".result", "", call, `{"agent_id":"`+sub+`"}`, false)
}

// Insert returns steps with more inserted after the step named after.
func Insert(steps []Step, after string, more ...Step) []Step {
	i := index(steps, after)
	return slices.Insert(slices.Clone(steps), i+1, more...)
}

// Remove returns steps without the steps named.
func Remove(steps []Step, names ...string) []Step {
	return slices.DeleteFunc(slices.Clone(steps), func(s Step) bool { return slices.Contains(names, s.Name) })
}

// Replace returns steps with the step named name replaced by with.
func Replace(steps []Step, name string, with Step) []Step {
	out := slices.Clone(steps)
	out[index(out, name)] = with
	return out
}

// Find returns the step named name.
func Find(steps []Step, name string) Step { return steps[index(steps, name)] }

func index(steps []Step, name string) int {
	for i, s := range steps {
		if s.Name == name {
			return i
		}
	}
	panic("replaytest: no step " + name)
}

// Write records steps in a new ledger file at path (a fixed id, a clock
// that ticks 250 ms an entry from 2026-11-22 10:00 UTC, so the file is the
// same every time) and returns each named step's seq. The ledger is
// closed.
func Write(t testing.TB, path string, steps []Step) map[string]uint64 {
	t.Helper()
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, LedgerID: "5ab5ab5ab5ab5ab5ab5ab5ab5ab5ab5a", Now: func() time.Time {
		clock = clock.Add(250 * time.Millisecond)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seqs := map[string]uint64{}
	for _, s := range steps {
		rec, err := event.Record(s.Session, s.Payload, s.Blobs...)
		if err != nil {
			t.Fatalf("step %s: %v", s.Name, err)
		}
		a, err := l.Append(context.Background(), ledger.Sync, rec)
		if err != nil {
			t.Fatalf("step %s: %v", s.Name, err)
		}
		seqs[s.Name] = a[0].Seq
	}
	return seqs
}

// scene builds a scene's steps, in session (Session when "").
type scene struct {
	steps   []Step
	session string
}

// add is a step of the scene's session.
func (s *scene) add(name string, p event.Payload, blobs ...[]byte) {
	session := s.session
	if session == "" {
		session = Session
	}
	s.steps = append(s.steps, Step{Name: name, Session: session, Payload: p, Blobs: blobs})
}

// engine is an engine-wide step (no session).
func (s *scene) engine(name string, p event.Payload) {
	s.steps = append(s.steps, Step{Name: name, Payload: p})
}

// process starts the main agent's process: spawned, canary, ready,
// engine-wide (no session), as the engine records them, named "agent".
func (s *scene) process(sub, agentID string, pid int) {
	s.steps = append(s.steps, Step{Name: "agent.process", Payload: agentSpawned(sub, agentID, pid)},
		Step{Name: "agent.canary", Payload: canary(sub, agentID)}, Step{Name: "agent.ready", Payload: agentReady(sub, agentID)})
}

// spawned records a sub-agent's process (agent.spawned, named
// "<sub>.process"), in the parent's session, as the engine does inside
// the spawn call's execution.
func (s *scene) spawned(sub string, pid int) {
	s.add(sub+".process", agentSpawned(sub, sub, pid))
}

// ready is a sub-agent's registration (sandbox.canary, agent.ready, named
// "<sub>.canary" and "<sub>.ready"), in the parent's session.
func (s *scene) ready(sub, agentID string) {
	s.add(sub+".canary", canary(sub, agentID))
	s.add(sub+".ready", agentReady(sub, agentID))
}

func agentSpawned(sub, agentID string, pid int) *event.AgentSpawned {
	return &event.AgentSpawned{AgentID: agentID, SubAgentID: sub, PID: pid,
		Sandbox: event.SandboxConfig{Mechanism: "landlock", LandlockABI: 7, Seccomp: true}}
}

func canary(sub, agentID string) *event.SandboxCanary {
	return &event.SandboxCanary{AgentID: agentID, SubAgentID: sub, Action: "accepted", Result: event.Canary{Verified: true,
		Status: event.CanarySandboxed, Platform: "linux", Mechanism: "landlock", Probes: []event.Probe{{Name: "open", Status: "blocked"}},
		Summary: "ok", Timestamp: "2026-11-22T10:00:00Z"}}
}

func agentReady(sub, agentID string) *event.AgentReady {
	return &event.AgentReady{AgentID: agentID, SubAgentID: sub, TokenValid: true, CanaryStatus: event.CanarySandboxed}
}

// model is a model call: its request and response.
func (s *scene) model(id, sub, msg, text string, in, out int64, calls ...event.ToolCall) {
	s.request(id, sub, msg)
	s.response(id, sub, text, in, out, calls...)
}

func (s *scene) request(id, sub, msg string) {
	body := []byte(fmt.Sprintf(`{"model":"m-1","request":%q}`, id))
	s.add(id+".request", &event.LLMRequest{SubAgentID: sub, RequestID: sub + id, MessageID: msg, Provider: "scripted", Model: "m-1",
		Blob: ledger.Sum(body).String(), Size: int64(len(body))}, body)
}

func (s *scene) response(id, sub, text string, in, out int64, calls ...event.ToolCall) {
	body := []byte(fmt.Sprintf(`{"response":%q}`, id))
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	s.add(id+".response", &event.LLMResponse{SubAgentID: sub, RequestID: sub + id, Provider: "scripted", Model: "m-1",
		Blob: ledger.Sum(body).String(), Size: int64(len(body)), Status: 200, Attempts: 1, LatencyMS: 40 + in/10, Text: text,
		ToolCalls: append([]event.ToolCall{}, calls...), FinishReason: finish, Usage: usage(in, out)}, body)
}

// call is a tool call the model asked for: the agent's tool call and the
// engine's proposal.
func (s *scene) call(name, sub, msg, tool, args string, mutating bool) {
	s.add(name+".agent", &event.AgentToolCall{SubAgentID: sub, MessageID: msg, CallID: callID(name), Tool: tool, Arguments: args})
	s.add(name+".proposed", &event.ToolProposed{SubAgentID: sub, MessageID: msg, CallID: callID(name), Tool: tool, Arguments: args,
		ActionHash: Action(tool, args), Mutating: mutating})
}

func (s *scene) verdict(name, sub, id, tool, args, decision string, tier int, rule string) {
	s.add(name, &event.ShieldVerdict{SubAgentID: sub, CallID: id, Decision: decision, Tier: tier, Rule: rule,
		Reason: "rule " + rule, ActionHash: Action(tool, args), PolicyHash: PolicyHash})
}

// exec is an allowed call's exec.started; done its exec.completed.
func (s *scene) exec(name, sub, id, tool, args string) {
	s.add(name, &event.ExecStarted{SubAgentID: sub, CallID: id, Tool: tool, ActionHash: Action(tool, args)})
}

func (s *scene) done(name, sub, id, tool, result string) {
	s.add(name, &event.ExecCompleted{SubAgentID: sub, CallID: id, Tool: tool, Result: result, Size: int64(len(result)),
		DurationMS: 1, Post: []event.PostState{}})
}

func (s *scene) result(name, sub, id, content string, isErr bool) {
	s.add(name, &event.ToolResult{SubAgentID: sub, CallID: id, Content: content, Size: int64(len(content)), IsError: isErr})
}

// callID is the call id in a step name: "c1" of "a.c1".
func callID(name string) string {
	if i := len(name) - 2; i > 0 && name[i-1] == '.' {
		return name[i:]
	}
	return name
}

func usage(in, out int64) event.Usage {
	return event.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}
