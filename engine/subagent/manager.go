package subagent

import (
	"context"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/judge"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

func init() {
	engine.UseSubAgents(func() engine.SubAgents { return New() })
}

// Manager is one engine's set of sub-agents (engine.SubAgents): the
// agent tools that spawn and steer them, their gRPC service, and the
// pipeline's hooks that hold them to what they were granted.
type Manager struct {
	*engine.Engine // set by Bind
	opts           engine.Options
	subs           *subagents
}

// New returns an empty set, for an engine to Bind.
func New() *Manager { return &Manager{subs: newSubagents()} }

// Bind implements engine.SubAgents.
func (e *Manager) Bind(en *engine.Engine) { e.Engine, e.opts = en, en.Options() }

// Restrict implements engine.SubAgents.
func (e *Manager) Restrict(p judge.Proposal) *judge.Verdict { return e.subagentRestrict(p) }

// Admit implements engine.SubAgents.
func (e *Manager) Admit(p judge.Proposal) (func(), string) { return e.subagentAdmit(p) }

// ExecScope implements engine.SubAgents.
func (e *Manager) ExecScope(p judge.Proposal) (context.Context, func()) {
	return e.subagentExecScope(p)
}

// ByToken implements engine.SubAgents.
func (e *Manager) ByToken(tok string) engine.SubAgent {
	if s := e.subs.byTok(tok); s != nil {
		return s
	}
	return nil
}

// Get implements engine.SubAgents.
func (e *Manager) Get(id string) engine.SubAgent {
	if s := e.subs.get(id); s != nil {
		return s
	}
	return nil
}

// Stop implements engine.SubAgents.
func (e *Manager) Stop(reason string) { e.stopSubAgents(reason) }

// AgentTools implements engine.SubAgents.
func (e *Manager) AgentTools() executor.Executor { return &agentTools{e: e} }

// Service implements engine.SubAgents.
func (e *Manager) Service() opxv1.SubAgentServiceServer { return &subAgentService{e: e} }

// ID implements engine.SubAgent.
func (s *subAgent) ID() string { return s.id }

// Session implements engine.SubAgent.
func (s *subAgent) Session() string { return s.session }

// Model implements engine.SubAgent.
func (s *subAgent) Model() string { return s.model }

// Hold implements engine.SubAgent: it read-locks s's gate.
func (s *subAgent) Hold() (func(), bool) {
	s.gate.RLock()
	if s.ended {
		s.gate.RUnlock()
		return nil, false
	}
	return s.gate.RUnlock, true
}

// Stopped implements engine.SubAgent.
func (s *subAgent) Stopped() context.Context { return s.stop }

// Done implements engine.SubAgent.
func (s *subAgent) Done() <-chan struct{} { return s.done }

// Expire implements engine.SubAgent: its timer fires at once.
func (s *subAgent) Expire() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Reset(0)
	}
	s.mu.Unlock()
}

// Kill implements engine.SubAgent.
func (s *subAgent) Kill() {
	s.mu.Lock()
	killCmd(s.cmd)
	s.mu.Unlock()
}
