package replay_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// scene is the hand-built ledger: one session, "ses_hand", that holds
// every kind of step a timeline knows, with another session and
// engine-wide entries around it. seq names the entries tests look for.
type scene struct {
	path string
	l    *ledger.Ledger
	seq  map[string]uint64
}

const (
	handSession  = "ses_hand"
	otherSession = "ses_other"
	policyHash   = "1111111111111111111111111111111111111111111111111111111111111111"
)

// Contents the scene's files go through.
const (
	aOld   = "alpha\nbeta\ngamma\n"
	aNew   = "alpha\nBETA\ngamma\n"
	madeC  = "made by the command\n"
	keepK  = "kept in the workspace snapshot\n"
	bigOut = "result line\n"
)

type recorder struct {
	t     *testing.T
	l     *ledger.Ledger
	seq   map[string]uint64
	clock time.Time
}

// add appends one entry and remembers its seq under name ("" to forget).
func (r *recorder) add(name, session string, p event.Payload, blobs ...[]byte) uint64 {
	r.t.Helper()
	rec, err := event.Record(session, p, blobs...)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	a, err := r.l.Append(context.Background(), ledger.Sync, rec)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	if name != "" {
		r.seq[name] = a[0].Seq
	}
	return a[0].Seq
}

func hashOf(s string) string { return ledger.Sum([]byte(s)).String() }

func actionOf(tool, args string) string { return ledger.Sum([]byte(tool + "\n" + args)).String() }

// call records a proposal of a tool call the model asked for: the agent's
// tool call and the engine's tool.proposed.
func (r *recorder) call(name, msg, id, tool, args string, mutating bool) string {
	r.add(name+".agent", handSession, &event.AgentToolCall{MessageID: msg, CallID: id, Tool: tool, Arguments: args})
	action := actionOf(tool, args)
	r.add(name+".proposed", handSession, &event.ToolProposed{MessageID: msg, CallID: id, Tool: tool, Arguments: args,
		ActionHash: action, Mutating: mutating})
	return action
}

func (r *recorder) verdict(name, id, action, decision string, tier int, rule, reason string) {
	r.add(name, handSession, &event.ShieldVerdict{CallID: id, Decision: decision, Tier: tier, Rule: rule, Reason: reason,
		ActionHash: action, PolicyHash: policyHash})
}

func (r *recorder) result(name, id, content string, isErr bool) {
	r.add(name, handSession, &event.ToolResult{CallID: id, Content: content, Size: int64(len(content)), IsError: isErr})
}

func usage(in, out int64) event.Usage {
	return event.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// buildScene writes the hand-built ledger and checks it verifies strictly.
func buildScene(t *testing.T) *scene {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, LedgerID: "0123456789abcdef0123456789abcdef", Now: func() time.Time {
		clock = clock.Add(250 * time.Millisecond)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{t: t, l: l, seq: map[string]uint64{}}
	ctx := context.Background()

	started := r.add("engine.started", "", &event.EngineStarted{Version: "test", PID: 100, Workspace: "/nonexistent/ws",
		ConfigHash: policyHash, Policy: "default", PolicyHash: policyHash, Provider: "scripted", Model: "m-1"})
	r.add("spawned.before", "", &event.AgentSpawned{AgentID: "agent-1", PID: 101, Sandbox: event.SandboxConfig{Mechanism: "landlock", LandlockABI: 6, Seccomp: true}})
	r.add("canary", "", &event.SandboxCanary{AgentID: "agent-1", Action: "accepted", Result: event.Canary{Verified: true, Status: event.CanarySandboxed,
		Platform: "linux", Mechanism: "landlock", Probes: []event.Probe{{Name: "open", Status: "blocked"}}, Summary: "ok", Timestamp: "2026-11-22T10:00:00Z"}})
	r.add("ready", "", &event.AgentReady{AgentID: "agent-1", TokenValid: true, CanaryStatus: event.CanarySandboxed})

	r.add("created", handSession, &event.SessionCreated{Mode: "normal", Title: "first title"})
	r.add("titled", handSession, &event.SessionTitled{Title: "Hand-built session"})
	r.add("other.created", otherSession, &event.SessionCreated{Mode: "normal", Title: "someone else"})

	// Turn 1: one model call asks for seven tool calls.
	r.add("m1", handSession, &event.ClientMessage{MessageID: "m1", Content: "fix a.txt and set up", Client: "opx send"})
	r.add("m1.process", handSession, &event.ProcessRequest{MessageID: "m1", Content: "fix a.txt and set up", Mode: "normal", History: 0,
		Tools: []string{"write_file", "read_file", "execute_command"}})
	req := `{"model":"m-1"}`
	r.add("r1.req", handSession, &event.LLMRequest{RequestID: "r1", MessageID: "m1", Provider: "scripted", Model: "m-1", Blob: hashOf(req), Size: int64(len(req))}, []byte(req))
	resp := "data: [DONE]\n"
	asked := []event.ToolCall{
		{CallID: "c1", Tool: "write_file", Arguments: `{"content":"...","path":"a.txt"}`},
		{CallID: "c2", Tool: "read_file", Arguments: `{"path":"~/.ssh/id_rsa"}`},
		{CallID: "c3", Tool: "execute_command", Arguments: `{"command":"make"}`},
		{CallID: "c4", Tool: "http_request", Arguments: `{"url":"https://example.org"}`},
		{CallID: "c5", Tool: "execute_command", Arguments: `{"command":"git push"}`},
		{CallID: "c6", Tool: "write_file", Arguments: `{not json`},
		{CallID: "c7", Tool: "write_file", Arguments: `{"path":"locked.txt"}`},
	}
	r.add("r1.resp", handSession, &event.LLMResponse{RequestID: "r1", Provider: "scripted", Model: "m-1", Blob: hashOf(resp), Size: int64(len(resp)),
		Status: 200, Attempts: 1, LatencyMS: 1200, ToolCalls: asked, FinishReason: "tool_calls", Usage: usage(100, 20)}, []byte(resp))
	r.add("m1.tokens", handSession, &event.AgentTokens{MessageID: "m1", Text: "Working", Count: 1})

	// c1: a write, allowed, snapshotted, completed.
	a1 := r.call("c1", "m1", "c1", "write_file", asked[0].Arguments, true)
	r.verdict("c1.verdict", "c1", a1, event.Allow, 0, "allow-workspace-writes", "writes inside the workspace")
	r.add("c1.snapshot", handSession, &event.Snapshot{CallID: "c1", Tool: "write_file", Kind: event.KindFiles,
		Files: []event.FileState{{Path: "a.txt", State: event.StateFile, Mode: 0o644, Size: int64(len(aOld)), Blob: hashOf(aOld)}}}, []byte(aOld))
	r.add("c1.started", handSession, &event.ExecStarted{CallID: "c1", Tool: "write_file", ActionHash: a1})
	r.add("c1.completed", handSession, &event.ExecCompleted{CallID: "c1", Tool: "write_file", Result: "wrote a.txt", Size: 11, DurationMS: 3,
		Post: []event.PostState{{Path: "a.txt", Hash: hashOf(aNew), Mode: 0o644}}})
	r.result("c1.result", "c1", "wrote a.txt", false)

	// c2: blocked at tier 1.
	a2 := r.call("c2", "m1", "c2", "read_file", asked[1].Arguments, false)
	r.verdict("c2.verdict0", "c2", a2, event.Allow, 0, "allow-read-only", "read-only tool")
	r.verdict("c2.verdict", "c2", a2, event.Block, 1, "credential-path", "~/.ssh/id_rsa holds credentials")
	r.result("c2.result", "c2", "blocked by Shield (credential-path)", true)

	// c3: a shell command with a workspace snapshot; the agent crashes
	// while it runs (an engine-wide entry inside the turn).
	a3 := r.call("c3", "m1", "c3", "execute_command", asked[2].Arguments, true)
	r.verdict("c3.verdict", "c3", a3, event.Allow, 0, "allow-dev-commands", "make is a dev tool")
	tree := &chronicle.Tree{Items: []event.FileState{
		{Path: "a.txt", State: event.StateFile, Mode: 0o644, Size: int64(len(aNew)), Hash: hashOf(aNew), Omitted: "test"},
		{Path: "keep.txt", State: event.StateFile, Mode: 0o644, Size: int64(len(keepK)), Blob: hashOf(keepK)},
	}}
	manifest := tree.Encode()
	r.add("c3.snapshot", handSession, &event.Snapshot{CallID: "c3", Tool: "execute_command", Kind: event.KindWorkspace,
		Files: []event.FileState{tree.Items[1]}, ManifestBlob: ledger.Sum(manifest).String(), Entries: 2, ManifestSize: int64(len(manifest))},
		[]byte(keepK), manifest)
	r.add("c3.started", handSession, &event.ExecStarted{CallID: "c3", Tool: "execute_command", ActionHash: a3})
	r.add("crash", "", &event.AgentCrashed{AgentID: "agent-1", PID: 101, ExitCode: -1, Signal: "killed", Detail: "agent died", Respawn: true})
	r.add("respawned", "", &event.AgentSpawned{AgentID: "agent-1", PID: 102, Restart: 1, Sandbox: event.SandboxConfig{Mechanism: "landlock"}})
	r.add("c3.completed", handSession, &event.ExecCompleted{CallID: "c3", Tool: "execute_command", Result: "ok", Size: 2, ExitCode: 0, DurationMS: 900,
		Pre: []event.FileState{{Path: "c.txt", State: event.StateAbsent}}, Post: []event.PostState{{Path: "c.txt", Hash: hashOf(madeC), Mode: 0o644}}})
	r.result("c3.result", "c3", "ok", false)

	// c4: escalated, approved, output kept as a blob.
	a4 := r.call("c4", "m1", "c4", "http_request", asked[3].Arguments, false)
	r.verdict("c4.verdict", "c4", a4, event.Escalate, 0, "verify-network", "network needs approval")
	r.add("c4.asked", handSession, &event.ApprovalRequested{ApprovalID: "ap1", CallID: "c4", Tool: "http_request", Reason: "network needs approval", TimeoutMS: 60000})
	r.add("c4.approved", handSession, &event.ApprovalResolved{ApprovalID: "ap1", CallID: "c4", Approved: true, By: "alice"})
	r.add("c4.started", handSession, &event.ExecStarted{CallID: "c4", Tool: "http_request", ActionHash: a4})
	r.add("c4.completed", handSession, &event.ExecCompleted{CallID: "c4", Tool: "http_request", ResultBlob: hashOf(bigOut), Size: int64(len(bigOut)),
		DurationMS: 40, Post: []event.PostState{}}, []byte(bigOut))
	r.add("c4.result", handSession, &event.ToolResult{CallID: "c4", Blob: hashOf(bigOut), Size: int64(len(bigOut))}, []byte(bigOut))

	// c5: escalated, then the Shield tier 2 evaluator is asked (and
	// fails), then a human does not answer in time.
	a5 := r.call("c5", "m1", "c5", "execute_command", asked[4].Arguments, true)
	r.verdict("c5.verdict", "c5", a5, event.Escalate, 0, "verify-git-push", "pushing needs approval")
	r.add("r2.req", handSession, &event.LLMRequest{RequestID: "tier2_ab", MessageID: "m1", Provider: "scripted", Model: "m-eval", Blob: hashOf(req), Size: int64(len(req))}, []byte(req))
	r.add("r2.resp", handSession, &event.LLMResponse{RequestID: "tier2_ab", Provider: "scripted", Model: "m-eval", Status: 500, Attempts: 2, LatencyMS: 300,
		Error: "500 from the evaluator", ToolCalls: []event.ToolCall{}, Usage: usage(50, 0)})
	r.add("c5.asked", handSession, &event.ApprovalRequested{ApprovalID: "ap2", CallID: "c5", Tool: "execute_command", Reason: "pushing needs approval", TimeoutMS: 1000})
	r.add("c5.denied", handSession, &event.ApprovalResolved{ApprovalID: "ap2", CallID: "c5", Approved: false, By: "timeout"})
	r.result("c5.result", "c5", "not approved", true)

	// c6: the agent's call never becomes a proposal (malformed).
	r.add("c6.agent", handSession, &event.AgentToolCall{MessageID: "m1", CallID: "c6", Tool: "write_file", Arguments: asked[5].Arguments})
	r.add("malformed", handSession, &event.AgentError{Code: "malformed_event", Message: "tool call c6 refused: arguments are not JSON"})

	// c7: a write whose executor fails after its snapshot.
	a7 := r.call("c7", "m1", "c7", "write_file", asked[6].Arguments, true)
	r.verdict("c7.verdict", "c7", a7, event.Allow, 0, "allow-workspace-writes", "writes inside the workspace")
	r.add("c7.snapshot", handSession, &event.Snapshot{CallID: "c7", Tool: "write_file", Kind: event.KindFiles,
		Files: []event.FileState{{Path: "locked.txt", State: event.StateAbsent}}})
	r.add("c7.started", handSession, &event.ExecStarted{CallID: "c7", Tool: "write_file", ActionHash: a7})
	r.add("c7.failed", handSession, &event.ExecFailed{CallID: "c7", Tool: "write_file", Error: "permission denied", DurationMS: 1})
	r.result("c7.result", "c7", "permission denied", true)

	r.add("r3.req", handSession, &event.LLMRequest{RequestID: "r3", MessageID: "m1", Provider: "scripted", Model: "m-1", Blob: hashOf(req), Size: int64(len(req))}, []byte(req))
	r.add("r3.resp", handSession, &event.LLMResponse{RequestID: "r3", Provider: "scripted", Model: "m-1", Blob: hashOf(resp), Size: int64(len(resp)),
		Status: 200, Attempts: 1, LatencyMS: 800, Text: "Done.", ToolCalls: []event.ToolCall{}, FinishReason: "stop", Usage: usage(300, 10)}, []byte(resp))
	r.add("m1.answer", handSession, &event.ResponseComplete{MessageID: "m1", Content: "Done; c2 was blocked.", Thoughts: []event.Thought{{Stage: "reasoning", Summary: "think"}},
		Usage: usage(9, 9)})

	// Between turns: tool definitions and memory.
	r.add("defs.req", handSession, &event.ToolDefsRequest{CallID: "d1", Groups: []string{"git"}})
	r.add("defs", handSession, &event.ToolDefs{CallID: "d1", Groups: []string{"git"}, Tools: []string{"git_status"}})
	r.add("memory", handSession, &event.MemoryFlush{Content: "likes tests", Size: 11})
	r.add("other.msg", otherSession, &event.ClientMessage{MessageID: "o1", Content: "not mine"})
	r.add("rejected", "", &event.ClientRejected{Method: "/x", Reason: "no client token", Peer: "127.0.0.1:1"})

	// Turn 2: the model call fails; the agent reports it.
	r.add("m2", handSession, &event.ClientMessage{MessageID: "m2", Content: "and now?", Client: "opx chat"})
	r.add("m2.process", handSession, &event.ProcessRequest{MessageID: "m2", Content: "and now?", Mode: "normal", History: 2, Tools: []string{}})
	r.add("r4.req", handSession, &event.LLMRequest{RequestID: "r4", MessageID: "m2", Provider: "scripted", Model: "m-1", Blob: hashOf(req), Size: int64(len(req))}, []byte(req))
	r.add("r4.resp", handSession, &event.LLMResponse{RequestID: "r4", Provider: "scripted", Model: "m-1", Status: 503, Attempts: 4, LatencyMS: 9000,
		Error: "503 Service Unavailable", ToolCalls: []event.ToolCall{}})
	r.add("m2.error", handSession, &event.AgentError{MessageID: "m2", Code: "llm_unavailable", Message: "model call failed"})

	// Turn 3: the agent streams, then the engine dies mid-turn.
	r.add("m3", handSession, &event.ClientMessage{MessageID: "m3", Content: "last one", Client: "opx send"})
	r.add("m3.process", handSession, &event.ProcessRequest{MessageID: "m3", Content: "last one", Mode: "normal", History: 3, Tools: []string{}})
	r.add("m3.tokens", handSession, &event.AgentTokens{MessageID: "m3", Text: "I was say", Count: 3})
	last := r.add("shutdown", "", &event.Shutdown{Reason: "engine dying"})
	r.add("engine.crashed", "", &event.EngineCrashed{StartedSeq: started, LastSeq: last, Detail: "previous engine ended without engine.stopped"})
	r.add("engine.restarted", "", &event.EngineStarted{Version: "test", PID: 200, Workspace: "/nonexistent/ws",
		ConfigHash: policyHash, Policy: "default", PolicyHash: policyHash, Provider: "scripted", Model: "m-1"})

	// Later: c1's write is rolled back from the command line; the
	// rollback's own snapshot holds a.txt as c1 left it, so c1's
	// post-state content is in the ledger.
	pre := r.add("rollback.pre", "", &event.Snapshot{CallID: "rollback-c1", Tool: "rollback", Kind: event.KindFiles,
		Files: []event.FileState{{Path: "a.txt", State: event.StateFile, Mode: 0o644, Size: int64(len(aNew)), Blob: hashOf(aNew)}}}, []byte(aNew))
	// Its plan (durable before a.txt changed) is not shown on its own:
	// the timeline shows a rollback by its outcome, which names the plan.
	plan := r.add("rollback.plan", "", &event.RollbackStarted{Snapshot: r.seq["c1.snapshot"], Workspace: "/nonexistent/ws", PreSnapshot: pre,
		Files: []event.FileState{{Path: "a.txt", State: event.StateFile, Mode: 0o644, Size: int64(len(aOld)), Blob: hashOf(aOld)}}})
	r.add("rollback", "", &event.Rollback{Snapshot: r.seq["c1.snapshot"], Plan: plan, Files: []string{"a.txt"}, PreSnapshot: pre,
		Post: []event.PostState{{Path: "a.txt", Hash: hashOf(aOld), Mode: 0o644}}})
	r.add("unrelated.rollback.pre", "", &event.Snapshot{CallID: "rollback-x", Tool: "rollback", Kind: event.KindFiles, Files: []event.FileState{}})
	if _, err := l.PruneBlobs(ctx, event.MustRecord("", &event.Pruned{Blobs: []string{hashOf(keepK)}, Snapshots: []uint64{r.seq["c3.snapshot"]},
		Reason: "retention"})); err != nil {
		t.Fatal(err)
	}
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	r.seq["pruned"] = h.Seq
	r.add("note", handSession, &event.Note{Author: "ir", Text: "looked at it"})
	r.add("stopped", "", &event.EngineStopped{Reason: "opx stop", UptimeMS: 5})
	r.add("exited", "", &event.AgentExited{AgentID: "agent-1", PID: 102, Reason: "shutdown directive"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
	ro, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return &scene{path: path, l: ro, seq: r.seq}
}

// importSample imports the committed sample ledger into a temporary file.
func importSample(t *testing.T) *ledger.Ledger {
	t.Helper()
	db := filepath.Join(t.TempDir(), "sample.db")
	if _, err := ledger.Import(filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), db,
		ledger.ImportOptions{Verify: event.StrictOptions()}); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
