package engine_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// startOTRNamesRig is startSubRig with the parent answering an
// off-the-record message; sub-agent processes are stand-ins (sleep).
func startOTRNamesRig(t *testing.T) *subRig {
	t.Helper()
	launches := make(chan engine.AgentLaunch, 8)
	r := startEngine(t, func(o *engine.Options) {
		o.Agents = engine.AgentsConfig{Enabled: true}
		main := o.SpawnAgent
		o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			if l.SubAgentID == "" {
				return main(ctx, l)
			}
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			launches <- l
			return cmd, nil
		}
	})
	rig := &subRig{running: r, launches: launches}
	rig.parent = r.connectAgent(t, <-r.tokens)
	go func() {
		s, err := opxv1.NewClientServiceClient(r.conn).SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "work", Mode: otr.Mode})
		if err == nil {
			for {
				if _, err := s.Recv(); err != nil {
					return
				}
			}
		}
	}()
	for {
		d, err := rig.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if pr := d.GetProcessRequest(); pr != nil {
			rig.msgID = pr.MessageId
			return rig
		}
	}
}

// leakedIn returns the entries (type/session) whose data holds s.
func leakedIn(t *testing.T, r *subRig, s string) []string {
	t.Helper()
	var out []string
	for _, e := range r.entries(t) {
		if dataHas(e, s) {
			out = append(out, e.Type+"/session="+e.Session)
		}
	}
	return out
}

// TestOTR_SpawnModelWithheld: spawn_agent's model argument is the
// parent model's output; off the record it is withheld in
// subagent.spawned (and the sub-agent's llm.* entries), as it is in
// tool.proposed's arguments.
func TestOTR_SpawnModelWithheld(t *testing.T) {
	r := startOTRNamesRig(t)
	const marker = "secret-from-otr-file.hunter2"
	if res := r.call(t, "c1", "spawn_agent", `{"task":"x","model":"`+marker+`"}`); res.IsError {
		t.Fatal(res.Content)
	}
	l := <-r.launches
	if leaked := leakedIn(t, r, marker); len(leaked) > 0 {
		t.Errorf("spawn_agent's model argument in clear in %v", leaked)
	}
	var spawned event.SubAgentSpawned
	for _, e := range r.entries(t) {
		if e.Type == event.TypeSubAgentSpawned {
			if err := json.Unmarshal(e.Data, &spawned); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, ok := event.Withheld(spawned.Model); !ok || n != int64(len(marker)) {
		t.Errorf("subagent.spawned model %q, want withheld", spawned.Model)
	}
	if spawned.SubAgentID != l.SubAgentID || spawned.ParentCallID != "c1" {
		t.Errorf("envelope changed: %+v", spawned)
	}
}

// TestOTR_UnknownToolNameWithheld: a tool name a model made up is model
// output: off the record it is withheld wherever it is recorded, while a
// known tool's name stays in clear.
func TestOTR_UnknownToolNameWithheld(t *testing.T) {
	r := startOTRNamesRig(t)
	marker := "the_user_said_" + strings.Repeat("x", 2000)
	if res := r.call(t, "c1", marker, `{}`); !res.IsError {
		t.Fatalf("unknown tool ran: %s", res.Content)
	}
	if leaked := leakedIn(t, r, marker); len(leaked) > 0 {
		t.Errorf("a model-made tool name of an off-the-record session in clear in %v", leaked)
	}
	// A call id that is no plain id is withheld too, consistently: the
	// call's entries still name the same call.
	longID := "id_" + strings.Repeat("z", 100)
	if res := r.call(t, longID, "list_agents", `{}`); res.IsError {
		t.Fatal(res.Content)
	}
	if leaked := leakedIn(t, r, longID); len(leaked) > 0 {
		t.Errorf("an unbounded call id in clear in %v", leaked)
	}
	ids := map[string]bool{}
	known := false
	for _, e := range r.entries(t) {
		switch e.Type {
		case event.TypeToolProposed:
			var p event.ToolProposed
			if err := json.Unmarshal(e.Data, &p); err != nil {
				t.Fatal(err)
			}
			if p.Tool == "list_agents" {
				known = true
				ids[p.CallID] = true
			}
		case event.TypeExecStarted:
			var p event.ExecStarted
			if err := json.Unmarshal(e.Data, &p); err != nil {
				t.Fatal(err)
			}
			if p.Tool == "list_agents" {
				ids[p.CallID] = true
			}
		}
	}
	if !known {
		t.Error("the known tool list_agents is not in clear in tool.proposed")
	}
	if len(ids) != 1 {
		t.Errorf("the call's entries name %d different call ids, want 1: %v", len(ids), ids)
	}
	for id := range ids {
		if _, ok := event.Withheld(id); !ok {
			t.Errorf("call id %q not withheld", id)
		}
	}
}

// TestOTR_ToolDefsGroupsWithheld: the groups an agent asks load_tools
// for are recorded outside any session (the request names no message);
// while an off-the-record message is being answered, a group the engine
// does not know is withheld.
func TestOTR_ToolDefsGroupsWithheld(t *testing.T) {
	r := startOTRNamesRig(t)
	marker := "user_secret_" + strings.Repeat("y", 500)
	if err := r.parent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_ToolDefsRequest{ToolDefsRequest: &opxv1.ToolDefsRequest{
		CallId: "c1", Groups: []string{marker}}}}); err != nil {
		t.Fatal(err)
	}
	for {
		d, err := r.parent.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if d.GetToolDefs() != nil {
			break
		}
	}
	if err := r.l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if leaked := leakedIn(t, r, marker); len(leaked) > 0 {
		t.Errorf("model-made group names of an off-the-record message in clear in %v", leaked)
	}
	n := 0
	for _, e := range r.entries(t) {
		if e.Type == event.TypeToolDefsRequest || e.Type == event.TypeToolDefs {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d tool_defs entries, want the request and the answer", n)
	}
}

// TestOTR_CrashEndsActiveMessage: an off-the-record message whose agent
// crashes gets no answer and no agent.error of its own; it must not stay
// active, or every later memory flush outside any session (a normal
// session's) is withheld for the engine's life.
func TestOTR_CrashEndsActiveMessage(t *testing.T) {
	cmds := make(chan *exec.Cmd, 8)
	r := startEngine(t, func(o *engine.Options) {
		main := o.SpawnAgent
		o.SpawnAgent = func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			cmd, err := main(ctx, l)
			if err == nil {
				cmds <- cmd
			}
			return cmd, err
		}
	})
	rig := &subRig{running: r}
	agent := r.connectAgent(t, <-r.tokens)
	s, err := opxv1.NewClientServiceClient(r.conn).SendMessage(r.ctx, &opxv1.ClientMessageRequest{Content: "work", Mode: otr.Mode})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				return
			}
		}
	}()
	for {
		if d := mustRecv(t, agent); d.GetProcessRequest() != nil {
			break
		}
	}
	first := <-cmds
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	rig.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeAgentCrashed })
	agent = r.connectAgent(t, <-r.tokens)
	const marker = "MEMMARK-after-the-crash"
	if err := agent.Send(&opxv1.AgentEvent{Event: &opxv1.AgentEvent_MemoryFlush{MemoryFlush: &opxv1.MemoryFlush{Content: marker}}}); err != nil {
		t.Fatal(err)
	}
	e := rig.waitEntry(t, func(e ledger.Entry) bool { return e.Type == event.TypeMemoryFlush })
	if !dataHas(e, marker) {
		t.Errorf("a memory flush after the OTR message's agent crashed is withheld: %s", e.Data)
	}
}
