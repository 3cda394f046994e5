package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Limits of the agent tools' arguments.
const (
	// maxTaskBytes bounds a sub-agent's task and each follow-up message.
	maxTaskBytes = 64 << 10
	// maxAgentResult bounds the result handed back to the parent.
	maxAgentResult = 256 << 10
	// registerTimeout bounds the wait for a sub-agent's process to
	// register (RunSubAgent); one that does not fails refused.
	registerTimeout = 30 * time.Second
	// maxTurns bounds a sub-agent's messages, its task included (each is
	// history for the next).
	maxTurns = 16
)

// neverGranted are the tools no sub-agent gets, whatever it asks: no
// recursion, no memory writes, no widening of its own tools.
var neverGranted = map[string]string{
	"spawn_agent": "agent tools", "list_agents": "agent tools", "agent_status": "agent tools",
	"agent_result": "agent tools", "agent_message": "agent tools", "cancel_agent": "agent tools",
	"memory_append": "memory writes", "load_tools": "load_tools",
}

// agentTools is the executor of the agent tools: the session's agent
// starts, watches and stops its sub-agents with them. Each runs as an
// allowed call in the pipeline (agentToolsCall gives it the call's
// proposal); none changes the workspace.
type agentTools struct{ e *Manager }

func obj(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

const idProp = `"id":{"type":"string","description":"the sub-agent's id, as spawn_agent returned it"}`

// Tools implements executor.Executor.
func (t *agentTools) Tools() []executor.ToolDef {
	return []executor.ToolDef{
		{Name: "spawn_agent", Group: engine.GroupAgents, Description: "Start a sub-agent: a separate sandboxed agent that works on the task with " +
			"the tools you grant it (tool names or groups; by default the read-only tools) and answers with text. It runs in " +
			"parallel: this returns its id at once; agent_result waits for its answer.",
			InputSchema: obj(`"task":{"type":"string","description":"what the sub-agent should do; it sees nothing else"},`+
				`"tools":{"type":"array","items":{"type":"string"},"description":"tool names or groups it may use"},`+
				`"model":{"type":"string","description":"a model name for its calls (default: the engine's)"}`, "task")},
		{Name: "list_agents", Group: engine.GroupAgents, Description: "List the sub-agents of this session with their state.", InputSchema: obj(``)},
		{Name: "agent_status", Group: engine.GroupAgents, Description: "A sub-agent's state, rounds and tool calls so far.", InputSchema: obj(idProp, "id")},
		{Name: "agent_result", Group: engine.GroupAgents, Description: "A sub-agent's answer. With wait (the default) it waits until the " +
			"sub-agent ends (bounded by its timeout); the answer, or why it failed, was cancelled or timed out.",
			InputSchema: obj(idProp+`,"wait":{"type":"boolean"}`, "id")},
		{Name: "agent_message", Group: engine.GroupAgents, Description: "Send a running sub-agent a follow-up message; it answers it after " +
			"its current work, and its result is then the answer to the last message. A sub-agent that has ended takes none.",
			InputSchema: obj(idProp+`,"message":{"type":"string"}`, "id", "message")},
		{Name: "cancel_agent", Group: engine.GroupAgents, Description: "Stop a sub-agent: its process is killed and nothing of it runs after.",
			InputSchema: obj(idProp, "id")},
	}
}

// Execute implements executor.Executor.
func (t *agentTools) Execute(ctx context.Context, c executor.Call) executor.Result {
	p, ok := engine.ProposalOf(ctx)
	if !ok {
		return executor.Errorf("%s runs only through the engine's pipeline", c.Tool)
	}
	if p.SubAgentID != "" {
		// Restrict blocks these before; a second line all the same.
		return executor.Errorf("a sub-agent cannot use %s", c.Tool)
	}
	var a struct {
		ID      string   `json:"id"`
		Task    string   `json:"task"`
		Tools   []string `json:"tools"`
		Model   string   `json:"model"`
		Wait    *bool    `json:"wait"`
		Message string   `json:"message"`
	}
	dec := json.NewDecoder(strings.NewReader(string(c.Args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return executor.Errorf("invalid arguments: %v", err)
	}
	e := t.e
	switch c.Tool {
	case "spawn_agent":
		return e.spawnSubAgent(ctx, p, a.Task, a.Tools, a.Model)
	case "list_agents":
		var out []subStatus
		for _, s := range e.subs.all() {
			if s.session == p.Session {
				st := s.status()
				st.Result = "" // agent_result hands it over
				out = append(out, st)
			}
		}
		if len(out) == 0 {
			return executor.Result{Content: "no sub-agents in this session"}
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		return executor.Result{Content: string(b)}
	}
	s := e.subs.get(a.ID)
	if s == nil || s.session != p.Session {
		return executor.Errorf("no sub-agent %q in this session (list_agents lists them)", textclip.Cut(a.ID, 64))
	}
	switch c.Tool {
	case "agent_status":
		st := s.status()
		st.Result = ""
		b, _ := json.MarshalIndent(st, "", "  ")
		return executor.Result{Content: string(b)}
	case "agent_result":
		if a.Wait == nil || *a.Wait {
			select {
			case <-s.done:
			case <-ctx.Done():
				return executor.Errorf("gave up waiting for sub-agent %s: %v", s.id, ctx.Err())
			}
		}
		st := s.status()
		switch st.State {
		case subCompleted:
			return executor.Result{Content: textclip.Cut(st.Result, maxAgentResult)}
		case subStarting, subRunning:
			return executor.Result{Content: fmt.Sprintf("sub-agent %s is still %s (%d model calls, %d tool calls so far)", s.id, st.State, st.Rounds, st.ToolCalls)}
		default:
			return executor.Errorf("sub-agent %s %s", s.id, st.Why)
		}
	case "agent_message":
		return e.messageSubAgent(ctx, s, a.Message)
	case "cancel_agent":
		if !e.endSubAgent(ctx, s, &event.SubAgentCancelled{SubAgentID: s.id, ByCallID: p.CallID, Reason: "cancelled by the agent (cancel_agent)",
			DurationMS: s.elapsed()}, subCancelled, "was cancelled (cancel_agent "+p.CallID+")") {
			return executor.Errorf("sub-agent %s has already ended (%s)", s.id, s.status().State)
		}
		return executor.Result{Content: "sub-agent " + s.id + " cancelled: its process was killed and nothing of it runs any more"}
	}
	return executor.Errorf("unknown tool %q", c.Tool)
}

// grant resolves the tools asked for a sub-agent, of tools, (names or groups) into
// the tools it is granted. Nil asks for the default: every tool that
// does not change the workspace, but http_request and MCP tools. An unknown name, or a tool no sub-agent
// may have, is refused; a group grants its members a sub-agent may have.
func grant(tools *executor.Registry, asked []string) ([]executor.ToolDef, error) {
	byName := map[string]executor.ToolDef{}
	add := func(d executor.ToolDef) {
		if neverGranted[d.Name] == "" && d.Group != engine.GroupAgents {
			byName[d.Name] = d
		}
	}
	if asked == nil {
		defs, _ := tools.Group(tools.Groups()...)
		for _, d := range defs {
			// http_request reaches off the machine, and an MCP server's
			// tools do what its server does: granted only when asked
			// for by name (or group, mcp:<server>).
			if !d.Mutating && d.Name != "http_request" && !strings.HasPrefix(d.Group, mcp.GroupPrefix) {
				add(d)
			}
		}
	}
	for _, n := range asked {
		if kind := neverGranted[n]; kind != "" || n == engine.GroupAgents {
			return nil, fmt.Errorf("%q cannot be granted to a sub-agent (no %s for sub-agents)", textclip.Cut(n, 64), cmpOr(kind, "agent tools"))
		}
		if d, ok := tools.Def(n); ok {
			add(d)
			continue
		}
		defs, unknown := tools.Group(n)
		if len(unknown) > 0 {
			return nil, fmt.Errorf("no tool or group named %q (groups: %s)", textclip.Cut(n, 64), strings.Join(tools.Groups(), ", "))
		}
		for _, d := range defs {
			add(d)
		}
	}
	out := make([]executor.ToolDef, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// spawnSubAgent is spawn_agent: it records subagent.spawned (Sync),
// starts the sandboxed process with a fresh token and records
// agent.spawned, then returns the id at once; the sub-agent registers
// and works in parallel (RunSubAgent).
func (e *Manager) spawnSubAgent(ctx context.Context, p judge.Proposal, task string, tools []string, model string) executor.Result {
	switch {
	case strings.TrimSpace(task) == "":
		return executor.Errorf("spawn_agent needs a task")
	case len(task) > maxTaskBytes:
		return executor.Errorf("the task is %d bytes, over the %d a sub-agent takes", len(task), maxTaskBytes)
	case !validModel(model):
		return executor.Errorf("spawn_agent refused: %q is not a model name (letters, digits and . _ : / - only, at most 128)", textclip.Cut(model, 160))
	case e.opts.SpawnAgent == nil:
		return executor.Errorf("this engine starts no agent processes, so no sub-agents")
	}
	defs, err := grant(e.Tools(), tools)
	if err != nil {
		return executor.Errorf("spawn_agent refused: %v", err)
	}
	tok, err := auth.NewToken()
	if err != nil {
		return executor.Errorf("spawn_agent: %v", err)
	}
	mode := "normal"
	var recorded map[string]bool // ids the session's ledger holds already
	if sess, ok, err := e.ReadSession(ctx, p.Session); err == nil && ok {
		if sess.Mode != "" {
			mode = sess.Mode
		}
		if sess.SubAgents.Spawned > 0 {
			if recorded, err = e.spawnedIDs(p.Session, sess.FirstSeq); err != nil {
				return executor.Errorf("spawn_agent: %v", err)
			}
		}
	}
	cfg := e.opts.Agents
	s := &subAgent{m: e, session: p.Session, mode: mode, task: task, model: model, defs: defs,
		granted: map[string]bool{}, maxRounds: cfg.MaxRounds, timeout: cfg.Timeout, token: tok, spawned: time.Now(),
		state: subStarting, done: make(chan struct{}), exited: make(chan struct{})}
	s.stop, s.stopExec = context.WithCancelCause(context.Background())
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		s.granted[d.Name] = true
		names = append(names, d.Name)
	}
	m := e.subs
	m.mu.Lock()
	switch {
	case m.stopped != "":
		m.mu.Unlock()
		return executor.Errorf("spawn_agent refused: the engine is stopping")
	case m.live >= cfg.MaxConcurrent:
		m.mu.Unlock()
		return executor.Errorf("spawn_agent refused: %d sub-agents are running, the most agents.max_concurrent allows; wait for one (agent_result) or cancel one", m.live)
	}
	// Unique in the session: against this engine's sub-agents and those
	// its ledger records (an earlier engine's, or ones forgotten since;
	// a client may choose message ids and models reuse call ids).
	s.id = subagentID(p.Session, p.MessageID, p.CallID, func(id string) bool { return m.byID[id] != nil || recorded[id] })
	m.byID[s.id] = s
	m.byToken[tok] = s
	m.order = append(m.order, s)
	m.live++
	m.mu.Unlock()

	inline, h, blob := event.Inline(task)
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	// s.gate is held (written) until agent.spawned is recorded: an end
	// racing the spawn (the engine stopping, the timer) waits for it, so
	// subagent.spawned and agent.spawned come before any end entry and
	// the process it then kills is started. s.mu likewise: the
	// sub-agent's registration waits, so its entries follow.
	s.gate.Lock()
	s.mu.Lock()
	e.Record(ctx, ledger.Sync, p.Session, &event.SubAgentSpawned{SubAgentID: s.id, ParentMessageID: p.MessageID, ParentCallID: p.CallID,
		Task: inline, TaskBlob: h, TaskSize: int64(len(task)), Tools: names, Model: model, MaxRounds: s.maxRounds,
		TimeoutMS: s.timeout.Milliseconds()}, blobs...)
	cmd, err := e.opts.SpawnAgent(context.WithoutCancel(ctx), e.SubAgentLaunch(tok, s.id, p.Session, s.maxRounds))
	if err != nil {
		s.mu.Unlock()
		s.gate.Unlock()
		close(s.exited)
		e.failSub(ctx, s, event.SubAgentSpawnError, "its process could not be started: "+err.Error())
		return executor.Errorf("spawn_agent: sub-agent %s could not be started: %v", s.id, err)
	}
	s.cmd = cmd
	e.Record(ctx, ledger.Async, p.Session, &event.AgentSpawned{AgentID: s.id, SubAgentID: s.id, PID: cmd.Process.Pid,
		Sandbox: e.AgentSandbox()})
	s.timer = time.AfterFunc(s.timeout, func() {
		e.endSubAgent(context.Background(), s, &event.SubAgentTimedOut{SubAgentID: s.id, TimeoutMS: s.timeout.Milliseconds(), DurationMS: s.elapsed()},
			subTimedOut, fmt.Sprintf("timed out after %s (agents.timeout); its process was killed", s.timeout))
	})
	s.mu.Unlock()
	s.gate.Unlock()
	time.AfterFunc(registerTimeout, func() {
		s.mu.Lock()
		registered := s.registered
		s.mu.Unlock()
		if !registered {
			e.failSub(context.Background(), s, event.SubAgentRefused, fmt.Sprintf("it did not register within %s", registerTimeout))
		}
	})
	go e.watchSubAgent(context.Background(), s, cmd)
	// The id comes first, alone, so a script can take it (its first 16
	// bytes, without a collision suffix).
	return executor.Result{Content: fmt.Sprintf("%s is spawned with tools %s; it works in parallel: agent_result {\"id\": %q} waits for its answer",
		s.id, strings.Join(names, ", "), s.id)}
}

// messageSubAgent is agent_message: a follow-up for a sub-agent still
// running, sent once it has answered what it has.
func (e *Manager) messageSubAgent(ctx context.Context, s *subAgent, msg string) executor.Result {
	switch {
	case strings.TrimSpace(msg) == "":
		return executor.Errorf("agent_message needs a message")
	case len(msg) > maxTaskBytes:
		return executor.Errorf("the message is %d bytes, over the %d a sub-agent takes", len(msg), maxTaskBytes)
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.ended {
		st := s.status()
		return executor.Errorf("sub-agent %s has ended (%s) and takes no more messages; its answer is final (agent_result), spawn another for more", s.id, st.State)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.pending) >= 8:
		return executor.Errorf("sub-agent %s has 8 follow-ups waiting already", s.id)
	case len(s.turns)+len(s.pending) >= maxTurns:
		return executor.Errorf("sub-agent %s has had %d messages, the most one takes; spawn another", s.id, maxTurns)
	}
	s.pending = append(s.pending, msg)
	return executor.Result{Content: fmt.Sprintf("sub-agent %s will get the message once it has answered what it has (%d waiting)", s.id, len(s.pending))}
}

// validModel reports whether name ("" for the engine's) can be a model
// name: it goes into the provider's request as it is.
func validModel(name string) bool {
	if len(name) > 128 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:/-", c)) {
			return false
		}
	}
	return true
}

// signalName names the signal that ended a process.
func signalName(ps interface{ Sys() any }) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// spawnedIDs returns the ids of the sub-agents session's ledger entries
// (from its first entry, from) record as spawned.
func (e *Manager) spawnedIDs(session string, from uint64) (map[string]bool, error) {
	h, err := e.opts.Ledger.Head()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	err = e.opts.Ledger.RangeRaw(from, h.Seq, func(_ uint64, raw []byte) error {
		if !bytes.Contains(raw, []byte(`"type":"`+event.TypeSubAgentSpawned+`"`)) {
			return nil
		}
		en, err := ledger.ParseEntry(raw)
		if err != nil || en.Session != session || en.Type != event.TypeSubAgentSpawned {
			return nil
		}
		if id, _ := ledger.FieldString(en.Data, "subagent_id"); id != "" {
			ids[id] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the session's sub-agents: %w", err)
	}
	return ids, nil
}
