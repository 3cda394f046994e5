package subagent

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/auth"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/internal/textclip"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Sub-agents (issue 15; docs/subagents.md): each its own sandboxed `opx
// internal-agent` process talking RunSubAgent, with the tools granted at
// spawn. Its entries are in its parent's session, each with its
// subagent_id; subagent.spawned opens it and exactly one of
// subagent.completed, failed, cancelled or timed_out ends it.
//
// # Invariants
//
//   - The end entry is recorded under the sub-agent's gate, which Admit
//     holds from its check until exec.started is durable: nothing of a
//     sub-agent starts executing after its end entry.
//   - A sub-agent's token opens RunSubAgent once, for it alone, and the
//     gateway only for its own message in flight; it dies with the end.
//   - The engine enforces the limits (concurrency, rounds, wall clock):
//     an agent is never trusted to stop itself.

// Sub-agent states as the agent tools report them.
const (
	subStarting  = "starting"  // spawned, its process not registered yet
	subRunning   = "running"   // working on its task or a follow-up
	subCompleted = "completed" // answered: the result is final
	subFailed    = "failed"
	subCancelled = "cancelled"
	subTimedOut  = "timed_out"
)

// subagents is the engine's set of sub-agents, live and ended, of this
// engine's life.
type subagents struct {
	mu      sync.Mutex
	byID    map[string]*subAgent
	byToken map[string]*subAgent // live sub-agents only
	order   []*subAgent          // in spawn order
	live    int
	stopped string // set once the engine stops: no more spawns
}

func newSubagents() *subagents {
	return &subagents{byID: map[string]*subAgent{}, byToken: map[string]*subAgent{}}
}

// subAgent is one sub-agent.
type subAgent struct {
	m           *Manager // the set it is in
	id, session string
	mode        string // the parent session's mode
	task, model string
	defs        []executor.ToolDef // granted, by name
	granted     map[string]bool
	maxRounds   int
	timeout     time.Duration
	token       string
	spawned     time.Time

	// gate orders executions against the end: Admit read-locks it from
	// its check until exec.started is recorded; end write-locks it to
	// record the end entry.
	gate  sync.RWMutex
	ended bool // under gate (written with the write lock)

	// stop ends with the sub-agent (endSubAgent): its executions still
	// running are killed (Pipeline.ExecScope). execs counts them; Add
	// only under gate while not ended, so the end can wait for them.
	stop     context.Context
	stopExec context.CancelCauseFunc
	execs    sync.WaitGroup

	mu         sync.Mutex // the fields below
	state      string
	registered bool
	conn       *engine.AgentConn
	cmd        *exec.Cmd
	turns      []subTurn // the task, then each follow-up sent
	pending    []string  // follow-ups not yet sent (sent one at a time)
	rounds     int
	toolCalls  int
	// protocolErrors counts what it sent that it should not have.
	protocolErrors int
	usage          event.Usage
	result         string // the answer, once completed
	why            string // why it ended, for the parent, once ended
	done           chan struct{}
	exited         chan struct{} // closed once its process was waited for
	timer          *time.Timer
}

// subTurn is one message the sub-agent was given and its answer.
type subTurn struct {
	messageID, content, answer string
	toolCalls                  int
}

// subagentID derives a sub-agent's id from the parent's session, message
// and call: the same calls in a rerun give the same ids. taken reports
// ids in use; a collision (a model reusing a call id in one message)
// takes the next suffix.
func subagentID(session, messageID, callID string, taken func(string) bool) string {
	sum := ledger.Sum([]byte(session + "\x00" + messageID + "\x00" + callID)).String()
	id := "sub_" + sum[:12]
	for n := 2; taken(id); n++ {
		id = fmt.Sprintf("sub_%s_%d", sum[:12], n)
	}
	return id
}

// get returns the sub-agent with id, or nil.
func (m *subagents) get(id string) *subAgent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

// byTok returns the live sub-agent whose token tok is, or nil.
func (m *subagents) byTok(tok string) *subAgent {
	if tok == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, s := range m.byToken {
		if auth.TokenEqual(tok, t) {
			return s
		}
	}
	return nil
}

// alive returns the sub-agents not ended, in spawn order.
func (m *subagents) alive() []*subAgent {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*subAgent
	for _, s := range m.order {
		if _, ok := m.byToken[s.token]; ok {
			out = append(out, s)
		}
	}
	return out
}

// subStatus is what the agent tools report of a sub-agent.
type subStatus struct {
	ID        string   `json:"id"`
	State     string   `json:"state"`
	Task      string   `json:"task"`
	Tools     []string `json:"tools"`
	Rounds    int      `json:"rounds"`
	ToolCalls int      `json:"tool_calls"`
	ElapsedMS int64    `json:"elapsed_ms"`
	Result    string   `json:"result,omitempty"`
	Why       string   `json:"why,omitempty"`
}

func (s *subAgent) status() subStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.defs))
	for _, d := range s.defs {
		names = append(names, d.Name)
	}
	return subStatus{ID: s.id, State: s.state, Task: textclip.Cut(s.task, 200), Tools: names, Rounds: s.rounds, ToolCalls: s.toolCalls,
		ElapsedMS: time.Since(s.spawned).Milliseconds(), Result: s.result, Why: s.why}
}

// subagentRestrict blocks a sub-agent's call to a tool it was not granted
// (rule subagent:not-granted): the agent tools, memory writes and
// load_tools are never granted, so a sub-agent cannot spawn, remember or
// widen its own tools. nil lets the tiers judge.
func (e *Manager) subagentRestrict(p judge.Proposal) *judge.Verdict {
	if p.SubAgentID == "" {
		return nil
	}
	s := e.subs.get(p.SubAgentID)
	if s == nil {
		return &judge.Verdict{Decision: event.Block, Tier: -1, Rule: "subagent:not-granted", Reason: "no sub-agent " + p.SubAgentID + " is known to this engine"}
	}
	if !s.granted[p.Tool] {
		return &judge.Verdict{Decision: event.Block, Tier: -1, Rule: "subagent:not-granted", Reason: fmt.Sprintf("sub-agent %s was not granted %s (granted: %s)",
			s.id, textclip.Cut(p.Tool, 64), strings.Join(sortedKeys(s.granted), ", "))}
	}
	return nil
}

// subagentAdmit lets a sub-agent's allowed call start unless the
// sub-agent has ended (cancelled, timed out, failed); release must be
// called once exec.started is recorded.
func (e *Manager) subagentAdmit(p judge.Proposal) (release func(), refusal string) {
	if p.SubAgentID == "" {
		return func() {}, ""
	}
	s := e.subs.get(p.SubAgentID)
	if s == nil {
		return nil, "no sub-agent " + p.SubAgentID + " is known to this engine"
	}
	s.gate.RLock()
	if s.ended {
		s.gate.RUnlock()
		return nil, "sub-agent " + s.id + " has ended (" + s.status().State + "): nothing of it runs any more"
	}
	return s.gate.RUnlock, ""
}

// endSubAgent records p, the entry that ends s, unless s has ended
// already (false). It holds s's gate while recording, so no execution of
// s is admitted after it, then frees s's slot and token, denies its
// pending approvals and stops its process: kill at once, or, after a
// completion, ask it to shut down first.
func (e *Manager) endSubAgent(ctx context.Context, s *subAgent, p event.Payload, state, why string, blobs ...[]byte) bool {
	s.gate.Lock()
	if s.ended {
		s.gate.Unlock()
		return false
	}
	e.Record(ctx, ledger.Sync, s.session, p, blobs...)
	s.ended = true
	s.mu.Lock()
	s.state, s.why = state, why
	conn, cmd := s.conn, s.cmd
	if s.timer != nil {
		s.timer.Stop()
	}
	close(s.done)
	s.mu.Unlock()
	s.gate.Unlock()
	// Nothing of it runs any more: what it was executing is killed, and
	// the end waits (bounded) for those executions' end entries.
	s.stopExec(fmt.Errorf("sub-agent %s ended (%s)", s.id, state))
	waitExecs(e, s)

	e.subs.mu.Lock()
	if _, ok := e.subs.byToken[s.token]; ok {
		delete(e.subs.byToken, s.token)
		e.subs.live--
	}
	e.subs.forgetOld()
	e.subs.mu.Unlock()
	e.Approvals().DenySubAgent(s.session, s.id, "sub-agent "+s.id+" ended ("+state+") before anyone answered")
	switch {
	case state == subCompleted && conn != nil:
		// An orderly exit; killed if it does not come. The kill is
		// armed first: a sub-agent that leaves its stream unread blocks
		// the send (flow control) until the kill closes its connection.
		go func() {
			select {
			case <-s.exited:
			case <-time.After(5 * time.Second):
				killCmd(cmd)
			}
		}()
		_ = e.Send(ctx, conn, s.session, &event.Shutdown{SubAgentID: s.id, Reason: "completed"},
			&opxv1.EngineDirective{Directive: &opxv1.EngineDirective_Shutdown{Shutdown: &opxv1.ShutdownDirective{Reason: "completed"}}})
	default:
		killCmd(cmd)
	}
	return true
}

// execStopWait bounds how long the end of a sub-agent waits for its
// killed executions to be recorded.
const execStopWait = 30 * time.Second

// waitExecs waits until s's executions, stopped, have recorded their end.
func waitExecs(e *Manager, s *subAgent) {
	done := make(chan struct{})
	go func() { s.execs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(execStopWait):
		e.opts.Logf("engine: sub-agent %s: an execution did not stop within %s", s.id, execStopWait)
	}
}

// subagentExecScope is the pipeline's ExecScope: a sub-agent's
// execution stops when the sub-agent ends, and its end waits for it.
func (e *Manager) subagentExecScope(p judge.Proposal) (context.Context, func()) {
	if p.SubAgentID == "" {
		return nil, func() {}
	}
	s := e.subs.get(p.SubAgentID)
	if s == nil {
		return nil, func() {}
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.ended {
		return s.stop, func() {} // stopped already: it does not run
	}
	s.execs.Add(1)
	return s.stop, s.execs.Done
}

func killCmd(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// elapsed is the milliseconds since s was spawned.
func (s *subAgent) elapsed() int64 { return time.Since(s.spawned).Milliseconds() }

// failSub ends s as failed for reason.
func (e *Manager) failSub(ctx context.Context, s *subAgent, reason, detail string) bool {
	detail = textclip.Cut(detail, 4096)
	return e.endSubAgent(ctx, s, &event.SubAgentFailed{SubAgentID: s.id, Reason: reason, Detail: detail, DurationMS: s.elapsed()},
		subFailed, reason+": "+detail)
}

// watchSubAgent waits for s's process: an exit before s ended is a crash
// (agent.crashed, subagent.failed crashed); after, an orderly or killed
// exit (agent.exited).
func (e *Manager) watchSubAgent(ctx context.Context, s *subAgent, cmd *exec.Cmd) {
	err := cmd.Wait()
	close(s.exited)
	code, sig := -1, ""
	if cmd.ProcessState != nil {
		code, sig = cmd.ProcessState.ExitCode(), signalName(cmd.ProcessState)
	}
	s.gate.RLock()
	ended := s.ended
	s.gate.RUnlock()
	pid := cmd.Process.Pid
	if ended {
		reason := "exited after " + s.status().State
		if sig != "" {
			reason = "killed after " + s.status().State
		}
		e.Record(ctx, ledger.Async, s.session, &event.AgentExited{AgentID: s.id, SubAgentID: s.id, PID: pid, ExitCode: code, Reason: reason})
		return
	}
	detail := fmt.Sprintf("sub-agent exited with status %d before it answered", code)
	if sig != "" {
		detail = "sub-agent killed by signal " + sig + " before it answered"
	} else if err != nil && code == -1 {
		detail = "sub-agent process: " + err.Error()
	}
	e.Record(ctx, ledger.Sync, s.session, &event.AgentCrashed{AgentID: s.id, SubAgentID: s.id, PID: pid, ExitCode: code, Signal: sig,
		Detail: detail, Respawn: false})
	e.failSub(ctx, s, event.SubAgentCrashed, detail)
}

// stopSubAgents ends every live sub-agent as failed engine_stopped (the
// engine is going: no one will read an answer) and waits for their
// processes, before engine.stopped is recorded.
func (e *Manager) stopSubAgents(reason string) {
	e.subs.mu.Lock()
	e.subs.stopped = reason
	e.subs.mu.Unlock()
	ctx := context.Background()
	all := e.subs.all()
	for _, s := range e.subs.alive() {
		e.failSub(ctx, s, event.SubAgentEngineStopped, "the engine stopped: "+reason)
	}
	deadline := time.After(10 * time.Second)
	for _, s := range all {
		s.mu.Lock()
		started := s.cmd != nil
		s.mu.Unlock()
		if !started {
			continue
		}
		select {
		case <-s.exited:
		case <-deadline:
			e.opts.Logf("engine: sub-agent %s did not exit", s.id)
		}
	}
}

// maxRemembered bounds the ended sub-agents the engine keeps in memory
// (their state and result, for the agent tools); older ones are
// forgotten, their record stays in the ledger.
const maxRemembered = 256

// forgetOld drops the oldest ended sub-agents beyond maxRemembered whose
// processes are gone; m.mu is held.
func (m *subagents) forgetOld() {
	ended := len(m.order) - m.live
	if ended <= maxRemembered {
		return
	}
	kept := m.order[:0]
	for _, s := range m.order {
		if _, live := m.byToken[s.token]; !live && ended > maxRemembered && exited(s) {
			delete(m.byID, s.id)
			ended--
			continue
		}
		kept = append(kept, s)
	}
	clear(m.order[len(kept):])
	m.order = kept
}

// exited reports whether s's process has been waited for (or never
// started): stopSubAgents need not wait for it.
func exited(s *subAgent) bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// all returns every sub-agent of this engine, in spawn order.
func (m *subagents) all() []*subAgent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*subAgent(nil), m.order...)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
