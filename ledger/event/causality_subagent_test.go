package event_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// TestCausality_SubAgent_ReviewLeavesOutEngineRule: a review fed one
// session's entries up to a point (opx replay --at) may not hold the end
// of a sub-agent an engine later stopped over; ReviewStrictOptions leaves
// that rule out, StrictOptions keeps it.
func TestCausality_SubAgent_ReviewLeavesOutEngineRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, replaytest.SubAgentScene())
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Shown: everything before SubB's cancel, then the engine's stop.
	var shown []ledger.Entry
	l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Seq < seqs["b.cancelled"] || e.Seq == seqs["engine.stopped"] {
			shown = append(shown, e)
		}
		return nil
	})
	for _, tt := range []struct {
		name string
		opts ledger.VerifyOptions
		want string
	}{
		{"strict", event.StrictOptions(), "engine.stopped while sub-agent " + replaytest.SubB},
		{"review", event.ReviewStrictOptions(), ""},
	} {
		var got []string
		for i := range shown {
			if err := tt.opts.CheckOrder(&shown[i]); err != nil {
				got = append(got, err.Error())
			}
		}
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: %v", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: %v, want one failure saying %q", tt.name, got, tt.want)
		}
	}
}

// orderFailures feeds entries (seq from 1; each a session, type and
// payload) to the strict order check and returns the failures.
func orderFailures(entries [][3]string) []string {
	opts := event.StrictOptions()
	var out []string
	for i, x := range entries {
		e := ledger.Entry{Seq: uint64(i + 1), Session: x[0], Type: x[1], Data: []byte(x[2])}
		if err := opts.CheckOrder(&e); err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

const (
	hashA = "1111111111111111111111111111111111111111111111111111111111111111"
	hashB = "2222222222222222222222222222222222222222222222222222222222222222"
)

// spawnPrefix is an allowed spawn_agent call c1 of the session's agent,
// executing, that spawns sub_x (granted read_file).
var spawnPrefix = [][3]string{
	{"s", event.TypeToolProposed, `{"call_id":"c1","message_id":"m1","tool":"spawn_agent","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`},
	{"s", event.TypeShieldVerdict, `{"call_id":"c1","decision":"allow","tier":0,"rule":"agent-tools","action_hash":"` + hashA + `"}`},
	{"s", event.TypeExecStarted, `{"call_id":"c1","tool":"spawn_agent","action_hash":"` + hashA + `"}`},
	{"s", event.TypeSubAgentSpawned, `{"subagent_id":"sub_x","parent_message_id":"m1","parent_call_id":"c1","task":"t","task_size":1,"tools":["read_file"],"max_rounds":5,"timeout_ms":60000}`},
	{"s", event.TypeAgentSpawned, `{"agent_id":"sub_x","subagent_id":"sub_x","pid":7,"sandbox":{"mechanism":"landlock"}}`},
}

func withPrefix(more ...[3]string) [][3]string {
	return append(append([][3]string{}, spawnPrefix...), more...)
}

// wantFailure reports unless got holds exactly one failure containing want
// ("" wants none).
func wantFailure(t *testing.T, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) != 0:
		t.Errorf("failures %q, want none", got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
		t.Errorf("failures %q, want one saying %q", got, want)
	}
}

func TestCausality_SubAgent_PrefixVerifies(t *testing.T) {
	wantFailure(t, orderFailures(withPrefix(
		[3]string{"s", event.TypeSubAgentCompleted, `{"subagent_id":"sub_x","result":"r"}`},
		[3]string{"s", event.TypeExecCompleted, `{"call_id":"c1","tool":"spawn_agent","result":"ok"}`},
	)), "")
}

// A sub-agent is spawned by an executing spawn_agent call only: not by
// another allowed call, nor before or after the call's execution.
func TestCausality_SubAgent_SpawnNeedsExecutingSpawnCall(t *testing.T) {
	spawned := spawnPrefix[3]
	t.Run("by a read_file call", func(t *testing.T) {
		wantFailure(t, orderFailures([][3]string{
			{"s", event.TypeToolProposed, `{"call_id":"c1","message_id":"m1","tool":"read_file","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`},
			{"s", event.TypeShieldVerdict, `{"call_id":"c1","decision":"allow","tier":0,"rule":"default:read","action_hash":"` + hashA + `"}`},
			{"s", event.TypeExecStarted, `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`},
			spawned,
		}), "sub-agent sub_x spawned for call c1, a read_file call, not spawn_agent")
	})
	t.Run("before the call executes", func(t *testing.T) {
		wantFailure(t, orderFailures([][3]string{spawnPrefix[0], spawnPrefix[1], spawned}),
			"sub-agent sub_x spawned for call c1, which had not started executing")
	})
	t.Run("after the call completed", func(t *testing.T) {
		wantFailure(t, orderFailures([][3]string{spawnPrefix[0], spawnPrefix[1], spawnPrefix[2],
			{"s", event.TypeExecCompleted, `{"call_id":"c1","tool":"spawn_agent","result":"ok"}`}, spawned}),
			"sub-agent sub_x spawned for call c1 after its execution ended")
	})
}

// What runs is what was proposed, for every call: exec.started naming
// another tool than the proposal is a failure, and a sub-agent's
// proposal of a tool it was not granted gets only the engine's block.
func TestCausality_ExecNamesProposedTool(t *testing.T) {
	t.Run("the session's agent", func(t *testing.T) {
		wantFailure(t, orderFailures([][3]string{
			{"s", event.TypeToolProposed, `{"call_id":"c1","message_id":"m1","tool":"write_file","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`},
			{"s", event.TypeShieldVerdict, `{"call_id":"c1","decision":"allow","tier":0,"rule":"default:allow","action_hash":"` + hashA + `"}`},
			{"s", event.TypeExecStarted, `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`},
		}), `call c1 executed "read_file", but the proposal at seq 1 is "write_file"`)
	})
	t.Run("completion names another tool", func(t *testing.T) {
		wantFailure(t, orderFailures([][3]string{
			{"s", event.TypeToolProposed, `{"call_id":"c1","message_id":"m1","tool":"read_file","arguments":"{}","action_hash":"` + hashA + `","mutating":false}`},
			{"s", event.TypeShieldVerdict, `{"call_id":"c1","decision":"allow","tier":0,"rule":"default:read","action_hash":"` + hashA + `"}`},
			{"s", event.TypeExecStarted, `{"call_id":"c1","tool":"read_file","action_hash":"` + hashA + `"}`},
			{"s", event.TypeExecCompleted, `{"call_id":"c1","tool":"write_file","result":"ok"}`},
		}), `exec.completed for call c1 names "write_file"`)
	})
	t.Run("a sub-agent's relabelled execution", func(t *testing.T) {
		got := orderFailures(withPrefix(
			[3]string{"s", event.TypeToolProposed, `{"subagent_id":"sub_x","call_id":"k1","message_id":"sub_x_m1","tool":"write_file","arguments":"{}","action_hash":"` + hashB + `","mutating":false}`},
			[3]string{"s", event.TypeShieldVerdict, `{"subagent_id":"sub_x","call_id":"k1","decision":"allow","tier":0,"rule":"default:allow","action_hash":"` + hashB + `"}`},
			[3]string{"s", event.TypeExecStarted, `{"subagent_id":"sub_x","call_id":"k1","tool":"read_file","action_hash":"` + hashB + `"}`},
		))
		want := []string{"sub-agent sub_x's call k1 of write_file, a tool it was not granted at spawn (seq 4), has verdict allow",
			"sub-agent sub_x executed write_file (call k1), a tool it was not granted"}
		if len(got) != len(want) {
			t.Fatalf("failures %q, want %d", got, len(want))
		}
		for i := range want {
			if !strings.Contains(got[i], want[i]) {
				t.Errorf("failure %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
	t.Run("a sub-agent's not granted tool blocked", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(
			[3]string{"s", event.TypeToolProposed, `{"subagent_id":"sub_x","call_id":"k1","message_id":"sub_x_m1","tool":"write_file","arguments":"{}","action_hash":"` + hashB + `","mutating":false}`},
			[3]string{"s", event.TypeShieldVerdict, `{"subagent_id":"sub_x","call_id":"k1","decision":"block","tier":-1,"rule":"subagent:not-granted","action_hash":"` + hashB + `"}`},
		)), "")
	})
}

// After a sub-agent's end, a tier 2 request is Shield's only for a call
// it escalated before the end, once per call.
func TestCausality_SubAgent_Tier2AfterEnd(t *testing.T) {
	escalated := [][3]string{
		{"s", event.TypeToolProposed, `{"subagent_id":"sub_x","call_id":"k1","message_id":"sub_x_m1","tool":"read_file","arguments":"{}","action_hash":"` + hashB + `","mutating":false}`},
		{"s", event.TypeShieldVerdict, `{"subagent_id":"sub_x","call_id":"k1","decision":"escalate","tier":1,"rule":"ask","action_hash":"` + hashB + `"}`},
	}
	ended := [3]string{"s", event.TypeSubAgentTimedOut, `{"subagent_id":"sub_x","timeout_ms":1000,"duration_ms":1000}`}
	tier2 := [3]string{"s", event.TypeLLMRequest, `{"subagent_id":"sub_x","request_id":"tier2_9","message_id":"sub_x_m1","provider":"p","model":"m","blob":"` + hashB + `","size":1}`}
	t.Run("by name only", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(ended, tier2)), "sub-agent sub_x called a model (request tier2_9) after its end")
	})
	t.Run("for an escalated call", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(append(escalated, ended, tier2)...)), "")
	})
	t.Run("twice for one call", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(append(escalated, ended, tier2, tier2)...)), "called a model (request tier2_9) after its end")
	})
	t.Run("for another message", func(t *testing.T) {
		other := tier2
		other[2] = strings.Replace(other[2], "sub_x_m1", "m1", 1)
		wantFailure(t, orderFailures(withPrefix(append(escalated, ended, other)...)), "called a model (request tier2_9) after its end")
	})
}

// A sub-agent's process registers once, after its agent.spawned, and
// gets no second process.
func TestCausality_SubAgent_ProcessEntries(t *testing.T) {
	ended := [3]string{"s", event.TypeSubAgentTimedOut, `{"subagent_id":"sub_x","timeout_ms":1000,"duration_ms":1000}`}
	ready := [3]string{"s", event.TypeAgentReady, `{"agent_id":"sub_x","subagent_id":"sub_x","token_valid":true,"canary_status":"sandboxed"}`}
	refused := [3]string{"s", event.TypeAgentReady, `{"agent_id":"sub_x","subagent_id":"sub_x","token_valid":false,"canary_status":"sandboxed"}`}
	t.Run("accepted without a process", func(t *testing.T) {
		wantFailure(t, orderFailures(append(append([][3]string{}, spawnPrefix[:4]...), ended, ready)),
			"agent.ready accepts sub-agent sub_x, which has no process")
	})
	t.Run("accepted without a process, outside any session", func(t *testing.T) {
		engineWide := ready
		engineWide[0] = ""
		wantFailure(t, orderFailures(append(append([][3]string{}, spawnPrefix[:4]...), ended, engineWide)),
			"agent.ready accepts sub-agent sub_x, which has no process")
	})
	t.Run("accepted twice", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(ready, ended, ready)), "agent.ready accepts sub-agent sub_x a second time")
	})
	t.Run("refusals after the end", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(ended, refused, refused)), "")
	})
	t.Run("accepted after the end", func(t *testing.T) {
		// The engine records a registration under the lock its end takes.
		wantFailure(t, orderFailures(withPrefix(ended, ready)), "agent.ready accepts sub-agent sub_x after its end")
	})
	t.Run("a process after the end", func(t *testing.T) {
		wantFailure(t, orderFailures(append(append([][3]string{}, spawnPrefix[:4]...), ended, spawnPrefix[4])),
			"agent.spawned: a process for sub-agent sub_x after its end")
	})
}

// A cancel is recorded inside the execution of the session's agent's
// cancel_agent call it names.
func TestCausality_SubAgent_CancelByCancelCall(t *testing.T) {
	call := func(tool string) [][3]string {
		return [][3]string{
			{"s", event.TypeToolProposed, `{"call_id":"c2","message_id":"m1","tool":"` + tool + `","arguments":"{}","action_hash":"` + hashB + `","mutating":false}`},
			{"s", event.TypeShieldVerdict, `{"call_id":"c2","decision":"allow","tier":0,"rule":"agent-tools","action_hash":"` + hashB + `"}`},
			{"s", event.TypeExecStarted, `{"call_id":"c2","tool":"` + tool + `","action_hash":"` + hashB + `"}`},
		}
	}
	cancelled := [3]string{"s", event.TypeSubAgentCancelled, `{"subagent_id":"sub_x","by_call_id":"c2","reason":"r","duration_ms":1}`}
	completed := [3]string{"s", event.TypeExecCompleted, `{"call_id":"c2","tool":"cancel_agent","result":"ok"}`}
	t.Run("inside cancel_agent", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(append(call("cancel_agent"), cancelled, completed)...)), "")
	})
	t.Run("by no call", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(cancelled)), `sub-agent sub_x cancelled by call "c2", which the session's agent never proposed`)
	})
	t.Run("by another tool", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(append(call("agent_status"), cancelled)...)), "sub-agent sub_x cancelled by call c2, a agent_status call, not cancel_agent")
	})
	t.Run("after the call", func(t *testing.T) {
		wantFailure(t, orderFailures(withPrefix(append(call("cancel_agent"), completed, cancelled)...)), "sub-agent sub_x cancelled by call c2 outside its execution")
	})
}
