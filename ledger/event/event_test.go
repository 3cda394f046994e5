package event_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// taxonomy is DESIGN.md's entry type table, copied by hand so that a type
// added to or dropped from the package without the design shows up here.
var taxonomy = []string{
	"fleet.alert", "fleet.pinned", "fleet.cosigned", "fleet.witnessed",
	"ledger.genesis", "ledger.note",
	"engine.started", "engine.stopped", "engine.crashed",
	"agent.spawned", "agent.exited", "agent.crashed", "sandbox.canary",
	"agent.ready", "agent.tokens", "agent.tool_call", "agent.tool_defs_request", "agent.memory_flush",
	"agent.response_complete", "agent.error",
	"engine.process_request", "engine.tool_result", "engine.tool_defs", "engine.shutdown",
	"llm.request", "llm.response",
	"session.created", "session.titled", "client.message",
	"tool.proposed", "shield.verdict", "approval.requested", "approval.resolved",
	"chronicle.snapshot", "chronicle.rollback", "chronicle.pruned",
	"exec.started", "exec.completed", "exec.failed",
	"subagent.spawned", "subagent.completed", "subagent.failed", "subagent.cancelled", "subagent.timed_out",
	"mcp.server_started", "mcp.server_exited", "mcp.server_failed", "mcp.tools_listed", "mcp.protocol_error",
	"mcp.client", "mcp.request", "mcp.response", "shield.result_flagged",
	// Extensions of the DESIGN table, each documented where it is defined.
	"client.rejected", "ledger.checkpoint", "chronicle.rollback_started", "ledger.tree_built", "ledger.key", "ledger.cosigned",
	"ledger.witness_alert",
	// The agents audited through their hooks (hook_events.go).
	"hook.session", "hook.tool_call", "hook.event", "hook.transcript", "hook.unrecorded",
}

var (
	h1 = strings.Repeat("a1", 32)
	h2 = strings.Repeat("b2", 32)
)

// samples holds one valid payload of every type.
var samples = []event.Payload{
	&event.Genesis{Format: ledger.Format, LedgerID: strings.Repeat("0f", 16), Created: "2026-11-22T10:00:00.000000000Z"},
	&event.Note{Author: "ir", Text: "looked at this", Attachment: "notes.txt", Blob: h1},
	&event.EngineStarted{Version: "0.1.0", PID: 42, Workspace: "/w", ConfigHash: h1, Policy: "default", PolicyHash: h2, Provider: "scripted", Model: "m"},
	&event.EngineStopped{Reason: "opx stop", UptimeMS: 5},
	&event.EngineStopped{Reason: "manager gone (pid 7)", Cause: event.StopManagerGone, UptimeMS: 5},
	&event.EngineCrashed{StartedSeq: 3, LastSeq: 9, Detail: "no engine.stopped"},
	&event.AgentSpawned{AgentID: "a1", PID: 7, Sandbox: event.SandboxConfig{Mechanism: "landlock", LandlockABI: 7, Seccomp: true, ConnectPort: 4000}},
	&event.AgentExited{AgentID: "a1", PID: 7, Reason: "shutdown"},
	&event.AgentCrashed{AgentID: "a1", PID: 7, ExitCode: -1, Signal: "killed", Detail: "killed by signal", Respawn: true},
	&event.SandboxCanary{AgentID: "a1", Action: "accepted", Result: event.Canary{Verified: true, Status: "sandboxed", Platform: "linux", Mechanism: "landlock",
		Probes: []event.Probe{{Name: "file_read", Status: "blocked", Target: "/x", Error: "EACCES"}}, Summary: "ok", Timestamp: "2026-11-22T10:00:00Z"}},
	&event.AgentReady{AgentID: "a1", TokenValid: true, CanaryStatus: "sandboxed"},
	&event.AgentTokens{MessageID: "m1", Text: "Hello", Count: 2},
	&event.AgentToolCall{MessageID: "m1", CallID: "c1", Tool: "read_file", Arguments: `{"path":"a"}`},
	&event.ToolDefsRequest{CallID: "c2", Groups: []string{"git"}},
	&event.MemoryFlush{Content: "remember", Size: 8},
	&event.ResponseComplete{MessageID: "m1", Content: "done", Usage: event.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}},
	&event.AgentError{Code: "llm", Message: "timeout"},
	&event.ProcessRequest{MessageID: "m1", Content: "hi", Mode: "normal", History: 2, Tools: []string{"read_file"}},
	&event.ToolResult{CallID: "c1", Content: "abc", Size: 3},
	&event.ToolDefs{CallID: "c2", Groups: []string{"git"}, Tools: []string{"git_status"}},
	&event.Shutdown{Reason: "engine stopping"},
	&event.LLMRequest{RequestID: "r1", Provider: "scripted", Model: "m", Blob: h1, Size: 10},
	&event.LLMResponse{RequestID: "r1", Provider: "scripted", Model: "m", Blob: h2, Size: 10, Status: 200, Attempts: 1, LatencyMS: 3,
		ToolCalls: []event.ToolCall{{CallID: "c1", Tool: "read_file", Arguments: "{}"}}},
	&event.SessionCreated{Mode: "normal"},
	&event.SessionTitled{Title: "t"},
	&event.ClientMessage{MessageID: "m1", Content: "hi", Client: "opx send"},
	&event.ClientRejected{Method: "/opx.v1.ClientService/GetStatus", Reason: "wrong client token", Peer: "127.0.0.1:5000"},
	&event.ToolProposed{CallID: "c1", Tool: "read_file", Arguments: `{"path":"a"}`, ActionHash: h1},
	&event.ShieldVerdict{CallID: "c1", Decision: "allow", Tier: 0, Rule: "allow-read", Reason: "read-only", ActionHash: h1, PolicyHash: h2},
	&event.ApprovalRequested{ApprovalID: "ap1", CallID: "c1", Tool: "write_file", Reason: "policy says verify", TimeoutMS: 60000},
	&event.ApprovalResolved{ApprovalID: "ap1", CallID: "c1", Approved: true, By: "alice"},
	&event.Snapshot{CallID: "c1", Tool: "write_file", Kind: "files", Files: []event.FileState{{Path: "a", State: "file", Mode: 0o644, Size: 3, Blob: h1}, {Path: "b", State: "absent"}}},
	&event.RollbackStarted{Snapshot: 12, Workspace: "/w", PreSnapshot: 40, Files: []event.FileState{{Path: "a", State: "file", Mode: 0o644, Blob: h1}, {Path: "b", State: "absent"}}},
	&event.Rollback{Snapshot: 12, Plan: 41, Files: []string{"a"}, PreSnapshot: 40},
	&event.Pruned{Blobs: []string{h1}, Snapshots: []uint64{12}, Reason: "retention: max_bytes"},
	&event.ExecStarted{CallID: "c1", Tool: "read_file", ActionHash: h1},
	&event.ExecCompleted{CallID: "c1", Tool: "write_file", Result: "ok", Size: 2, DurationMS: 1, Post: []event.PostState{{Path: "a", Hash: h2}, {Path: "b", Absent: true}}},
	&event.ExecFailed{CallID: "c1", Tool: "read_file", Error: "no such file", DurationMS: 1},
	&event.Checkpoint{Projections: []ledger.CheckpointRoot{{Name: "sessions", Version: "1", Through: 9, Root: h1}}},
	&event.Checkpoint{TreeSize: 10, TreeRoot: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", Note: "opx.local/ledger/x\n10\n...\n"},
	&event.TreeBuilt{TreeSize: 10, TreeRoot: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
	&event.Key{VKey: vkey, Reason: event.KeyCreated},
	&event.Cosigned{Witness: "witness.example", KeyHash: "0a1b2c3d", TreeSize: 10, TreeRoot: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
		Note: "opx.local/ledger/x\n10\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— x sig\n"},
	&event.WitnessAlert{Witness: "witness.example", KeyHash: "0a1b2c3d", URL: "http://127.0.0.1:8080", Kind: event.WitnessBadProof,
		TreeSize: 12, OldSize: 10, Status: 422, Detail: "the witness rejected the consistency proof"},
	&event.SubAgentSpawned{SubAgentID: "sub_1", ParentMessageID: "m1", ParentCallID: "c1", Task: "read a", TaskSize: 6, Tools: []string{"read_file"}, MaxRounds: 10, TimeoutMS: 60000},
	&event.SubAgentCompleted{SubAgentID: "sub_1", Result: "done", Size: 4, Rounds: 2, ToolCalls: 1, DurationMS: 5},
	&event.SubAgentFailed{SubAgentID: "sub_1", Reason: event.SubAgentCrashed, Detail: "killed by signal killed"},
	&event.SubAgentCancelled{SubAgentID: "sub_1", ByCallID: "c9", Reason: "cancelled by the parent"},
	&event.SubAgentTimedOut{SubAgentID: "sub_1", TimeoutMS: 1000, DurationMS: 1001},
	&event.MCPServerStarted{Server: "fs", Instance: 1, Command: []string{"mcp-server-filesystem", "/w"}, PID: 42, ProtocolVersion: "2025-06-18",
		Sandbox: event.MCPSandbox{ReadOnly: []string{"/opt/mcp"}}},
	&event.MCPToolsListed{Server: "fs", Instance: 1, Tools: []event.MCPTool{{Name: "mcp__fs__read_file", Tool: "read_file", SchemaHash: h1}}, Listing: "{}", Size: 2},
	&event.MCPServerExited{Server: "fs", Instance: 1, PID: 42, ExitCode: -1, Signal: "killed", Reason: "crashed", RestartInMS: 500},
	&event.MCPServerFailed{Server: "fs", Attempt: 1, Error: "exec: not found", RetryInMS: 1000},
	&event.MCPProtocolError{Server: "fs", Instance: 1, Kind: "oversize", Size: 100 << 20, Detail: "line over the cap"},
	&event.MCPClient{ClientName: "inspector", Upstream: "fs", Command: []string{"mcp-server-filesystem"}},
	&event.MCPRequest{RequestID: "1", Method: "tools/list", Params: "{}", Size: 2},
	&event.MCPResponse{RequestID: "1", Method: "tools/list", Result: "{}", Size: 2, DurationMS: 1},
	&event.HookSession{Agent: "claude", AgentVersion: "2.1.332", AgentSessionID: "a1b2", Model: "claude-x", Cwd: "/w", TranscriptPath: "/h/t.jsonl", Source: "startup"},
	&event.HookToolCall{ToolUseID: "toolu_1", AgentTool: "Bash", Input: `{"command":"ls"}`, InputSize: 16, Kind: "shell", Calls: 1},
	&event.HookEvent{Name: "Stop", Kind: "stop", Text: "done", Size: 4},
	&event.HookTranscript{Path: "/h/t.jsonl", Blob: h1, Size: 10, Stored: 10},
	&event.HookUnrecorded{Agent: "codex", Name: "PreToolUse", AgentTool: "Bash", At: "2026-12-02T10:00:00Z", Decision: "allow", Reason: "hooks.on_engine_down: allow"},
	&event.FleetAlert{Source: "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f", Kind: event.AlertGap, Seq: 7, Detail: "entries 7..9 missing"},
	&event.FleetPinned{Source: "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f", VKey: vkey, From: "ledger.key", Seq: 2},
	&event.FleetCosigned{Source: "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f", TreeSize: 10, TreeRoot: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
		Note: "opx.local/ledger/x\n10\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— x sig\n— w sig\n"},
	&event.FleetWitnessed{Origin: "example.com/behind-the-sofa", TreeSize: 10, TreeRoot: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
		Note: "example.com/behind-the-sofa\n10\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— example.com/behind-the-sofa sig\n— w sig\n"},
	&event.ResultFlagged{CallID: "c1", Tool: "mcp__fs__read_file", Rule: "prompt-injection", Reason: "instructions to the model", Action: "annotated"},
}

// vkey is a verifier key of an opx ledger (tlog.GenerateKey).
const vkey = "opx.local/ledger/0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f+e1277b64+ARHRJJIaz4QTagtSjguOBYNDK6oMECQlJ37K1+UPdbOG"

func TestTypes_MatchTaxonomy(t *testing.T) {
	want := slices.Clone(taxonomy)
	slices.Sort(want)
	if got := event.Types(); !slices.Equal(got, want) {
		t.Errorf("Types() = %v\nwant the DESIGN taxonomy %v", got, want)
	}
}

func TestCheck_EverySample(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range samples {
		seen[p.Type()] = true
		data, err := ledger.MarshalCanonical(p)
		if err != nil {
			t.Fatalf("%s: %v", p.Type(), err)
		}
		if err := event.Check(p.Type(), data); err != nil {
			t.Errorf("Check(%s, %s) = %v", p.Type(), data, err)
		}
	}
	for _, typ := range taxonomy {
		if !seen[typ] {
			t.Errorf("no sample payload of %s", typ)
		}
	}
}

func TestCheck_Rejects(t *testing.T) {
	tests := []struct {
		name, typ, data string
		want            error
	}{
		{"unknown type", "test.event", `{}`, event.ErrUnknownType},
		{"unknown member", "session.titled", `{"title":"t","extra":1}`, event.ErrInvalidPayload},
		{"missing member", "session.titled", `{}`, event.ErrInvalidPayload},
		{"wrong json type", "agent.tokens", `{"message_id":"m","text":"x","count":"2"}`, event.ErrInvalidPayload},
		{"verdict without decision", "shield.verdict", `{"call_id":"c","tier":0,"rule":"r","reason":"","action_hash":"` + h1 + `","policy_hash":"` + h2 + `"}`, event.ErrInvalidPayload},
		{"verdict bad decision", "shield.verdict", `{"call_id":"c","decision":"maybe","tier":0,"rule":"r","reason":"","action_hash":"` + h1 + `","policy_hash":"` + h2 + `"}`, event.ErrInvalidPayload},
		{"uppercase hash", "llm.request", `{"request_id":"r","provider":"p","model":"m","blob":"` + strings.ToUpper(h1) + `","size":1}`, event.ErrInvalidPayload},
		{"canary accepted though partial", "sandbox.canary", `{"agent_id":"a","action":"accepted","result":{"verified":false,"status":"partial","platform":"linux","mechanism":"landlock","probes":[],"summary":"","timestamp":""}}`, event.ErrInvalidPayload},
		{"snapshot file without blob", "chronicle.snapshot", `{"call_id":"c","tool":"t","kind":"files","files":[{"path":"a","state":"file"}]}`, event.ErrInvalidPayload},
		{"timeout approves", "approval.resolved", `{"approval_id":"a","call_id":"c","approved":true,"by":"timeout"}`, event.ErrInvalidPayload},
		{"inline and blob", "engine.tool_result", `{"call_id":"c","content":"x","blob":"` + h1 + `","size":1,"is_error":false}`, event.ErrInvalidPayload},
		{"not an object", "session.titled", `["t"]`, event.ErrInvalidPayload},
		{"unknown stop cause", "engine.stopped", `{"reason":"r","cause":"bored","uptime_ms":1}`, event.ErrInvalidPayload},
		{"trailing data", "session.titled", `{"title":"t"}{}`, event.ErrInvalidPayload},
		{"checkpoint empty", "ledger.checkpoint", `{}`, event.ErrInvalidPayload},
		{"checkpoint tree root hex", "ledger.checkpoint", `{"tree_size":3,"tree_root":"` + h1 + `"}`, event.ErrInvalidPayload},
		{"checkpoint tree size 0", "ledger.checkpoint", `{"tree_size":0,"tree_root":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}`, event.ErrInvalidPayload},
		{"checkpoint note without tree", "ledger.checkpoint", `{"projections":[{"name":"s","version":"1","through":1,"root":"` + h1 + `"}],"note":"x"}`, event.ErrInvalidPayload},
		{"tree built short root", "ledger.tree_built", `{"tree_size":3,"tree_root":"AAAA"}`, event.ErrInvalidPayload},
		{"tree built unpadded root", "ledger.tree_built", `{"tree_size":3,"tree_root":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"}`, event.ErrInvalidPayload},
		{"key not a verifier key", "ledger.key", `{"vkey":"k","reason":"created"}`, event.ErrInvalidPayload},
		{"key of no opx ledger", "ledger.key", `{"vkey":"` + strings.Replace(vkey, "opx.local/ledger/", "x/", 1) + `","reason":"created"}`, event.ErrInvalidPayload},
		{"cosigned note of another size", "ledger.cosigned", `{"key_hash":"0a1b2c3d","note":"o\\n11\\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\\n\\n","tree_root":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","tree_size":10,"witness":"w"}`, event.ErrInvalidPayload},
		{"cosigned bad key hash", "ledger.cosigned", `{"key_hash":"0A1B","note":"o\\n10\\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\\n\\n","tree_root":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","tree_size":10,"witness":"w"}`, event.ErrInvalidPayload},
		{"witness alert unknown kind", "ledger.witness_alert", `{"detail":"d","key_hash":"0a1b2c3d","kind":"oops","old_size":0,"status":422,"tree_size":3,"url":"http://127.0.0.1:1","witness":"w"}`, event.ErrInvalidPayload},
		{"witness alert not a url", "ledger.witness_alert", `{"detail":"d","key_hash":"0a1b2c3d","kind":"bad-proof","old_size":0,"status":422,"tree_size":3,"url":"ftp://x","witness":"w"}`, event.ErrInvalidPayload},
		{"key without reason", "ledger.key", `{"vkey":"` + vkey + `","reason":""}`, event.ErrInvalidPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := event.Check(tt.typ, []byte(tt.data)); !errors.Is(err, tt.want) {
				t.Errorf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRecord_RefusesInvalid(t *testing.T) {
	if _, err := event.Record("s", &event.SessionTitled{}); !errors.Is(err, event.ErrInvalidPayload) {
		t.Errorf("Record(empty title) = %v, want ErrInvalidPayload", err)
	}
}

func TestInline(t *testing.T) {
	if c, h, b := event.Inline("short"); c != "short" || h != "" || b != nil {
		t.Errorf("Inline(short) = %q %q %v", c, h, b)
	}
	long := strings.Repeat("x", event.InlineLimit+1)
	c, h, b := event.Inline(long)
	if c != "" || string(b) != long || h != ledger.Sum([]byte(long)).String() {
		t.Errorf("Inline(long) = %q %q, %d bytes", c, h, len(b))
	}
}

// call builds the entries of one tool call: proposal, verdicts, and what
// follows, as (type, payload) steps.
type step struct {
	session string
	p       event.Payload
}

func proposed(id string, mutating bool) event.Payload {
	return &event.ToolProposed{CallID: id, Tool: "write_file", Arguments: "{}", ActionHash: h1, Mutating: mutating}
}
func verdict(id, decision string) event.Payload {
	return &event.ShieldVerdict{CallID: id, Decision: decision, Rule: "r", ActionHash: h1, PolicyHash: h2}
}
func resolved(id string, ok bool) event.Payload {
	return &event.ApprovalResolved{ApprovalID: "ap-" + id, CallID: id, Approved: ok, By: "alice"}
}
func snapshot(id string) event.Payload {
	return &event.Snapshot{CallID: id, Tool: "write_file", Kind: "files", Files: []event.FileState{{Path: "a", State: "absent"}}}
}
func started(id string) event.Payload {
	return &event.ExecStarted{CallID: id, Tool: "write_file", ActionHash: h1}
}
func completed(id string) event.Payload {
	return &event.ExecCompleted{CallID: id, Tool: "write_file", Post: []event.PostState{}}
}

func TestCausality(t *testing.T) {
	tests := []struct {
		name    string
		steps   []step
		failAt  int // index of the step that breaks a rule; -1 for none
		message string
	}{
		{"allowed read", []step{{"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}, {"s", completed("c")}}, -1, ""},
		{"mutating with snapshot", []step{{"s", proposed("c", true)}, {"s", verdict("c", "allow")}, {"s", snapshot("c")}, {"s", started("c")}, {"s", completed("c")}}, -1, ""},
		{"approved escalation", []step{{"s", proposed("c", false)}, {"s", verdict("c", "escalate")}, {"s", resolved("c", true)}, {"s", started("c")}}, -1, ""},
		{"blocked stays unexecuted", []step{{"s", proposed("c", false)}, {"s", verdict("c", "block")}}, -1, ""},
		{"same id in two sessions", []step{{"s", proposed("c", false)}, {"t", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}}, -1, ""},
		{"id reused after a block", []step{{"s", proposed("c", false)}, {"s", verdict("c", "block")}, {"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}}, -1, ""},
		{"id reused after execution", []step{{"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}, {"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}}, -1, ""},
		{"executed without proposal", []step{{"s", started("c")}}, 0, "never proposed"},
		{"executed without verdict", []step{{"s", proposed("c", false)}, {"s", started("c")}}, 1, "without a verdict"},
		{"executed though blocked", []step{{"s", proposed("c", false)}, {"s", verdict("c", "block")}, {"s", started("c")}}, 2, "blocked"},
		{"block then allow is still blocked", []step{{"s", proposed("c", false)}, {"s", verdict("c", "block")}, {"s", verdict("c", "allow")}, {"s", started("c")}}, 3, "blocked"},
		{"escalation unresolved", []step{{"s", proposed("c", false)}, {"s", verdict("c", "escalate")}, {"s", started("c")}}, 2, "unresolved"},
		{"escalation denied", []step{{"s", proposed("c", false)}, {"s", verdict("c", "escalate")}, {"s", resolved("c", false)}, {"s", started("c")}}, 3, "blocked"},
		{"mutating without snapshot", []step{{"s", proposed("c", true)}, {"s", verdict("c", "allow")}, {"s", started("c")}}, 2, "without a snapshot"},
		{"snapshot after start", []step{{"s", proposed("c", true)}, {"s", verdict("c", "allow")}, {"s", started("c")}, {"s", snapshot("c")}}, 2, "without a snapshot"},
		{"verdict from another session", []step{{"s", proposed("c", false)}, {"t", verdict("c", "allow")}}, 1, "never proposed"},
		{"completed without start", []step{{"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", completed("c")}}, 2, "never started"},
		{"verdict on another action", []step{{"s", proposed("c", false)}, {"s", &event.ShieldVerdict{CallID: "c", Decision: "allow", Rule: "r", ActionHash: h2, PolicyHash: h2}}}, 1, "judged action"},
		{"executed another action", []step{{"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", &event.ExecStarted{CallID: "c", Tool: "write_file", ActionHash: h2}}}, 2, "executed action"},
		{"executed twice", []step{{"s", proposed("c", false)}, {"s", verdict("c", "allow")}, {"s", started("c")}, {"s", started("c")}}, 3, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := event.NewCausality()
			for i, s := range tt.steps {
				data, err := ledger.MarshalCanonical(s.p)
				if err != nil {
					t.Fatal(err)
				}
				e := ledger.Entry{Seq: uint64(i + 1), Session: s.session, Type: s.p.Type(), Data: data}
				err = c.Check(&e)
				switch {
				case i == tt.failAt && (err == nil || !strings.Contains(err.Error(), tt.message)):
					t.Errorf("step %d (%s): err = %v, want one saying %q", i, s.p.Type(), err, tt.message)
				case i != tt.failAt && err != nil:
					t.Errorf("step %d (%s): unexpected %v", i, s.p.Type(), err)
				}
			}
		})
	}
}

// TestStrictOptions_Ledger checks that strict verification of a real ledger
// reports a payload failure and a causality failure at their seqs, and
// nothing for a well-formed ledger.
func TestStrictOptions_Ledger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	app := func(p event.Payload) uint64 {
		t.Helper()
		a, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("s", p))
		if err != nil {
			t.Fatal(err)
		}
		return a[0].Seq
	}
	app(proposed("ok", false))
	app(verdict("ok", "allow"))
	app(started("ok"))
	rep, err := l.Verify(event.StrictOptions())
	if err != nil || !rep.OK {
		t.Fatalf("clean ledger: %v %+v", err, rep)
	}
	app(proposed("bad", false))
	app(verdict("bad", "block"))
	badExec := app(started("bad"))
	a, err := l.Append(context.Background(), ledger.Sync, ledger.Record{Session: "s", Type: "session.titled", Data: map[string]any{"name": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = l.Verify(event.StrictOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 2 ||
		rep.Failures[0].Seq != badExec || rep.Failures[0].Kind != ledger.KindCausality ||
		rep.Failures[1].Seq != a[0].Seq || rep.Failures[1].Kind != ledger.KindUnreadable {
		t.Errorf("failures = %v, want causality at %d and a payload failure at %d", rep.Failures, badExec, a[0].Seq)
	}
	// Without Strict, neither is looked at.
	if rep, err := l.Verify(ledger.VerifyOptions{}); err != nil || !rep.OK {
		t.Errorf("non-strict verify: %v %v", err, rep.Failures)
	}
}
