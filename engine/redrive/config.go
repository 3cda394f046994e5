package redrive

import (
	"fmt"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// How a rerun rebuilds an engine run's configuration from its
// engine.started (what the engine records there: engine/session.go, completeStarted).

// agentsConfig is the sub-agent configuration an engine run recorded:
// off when it offered no agent tools. A rerun starts real processes for
// the sub-agents the record's model answers spawn, so limits no
// configuration allows (config.Agents: 1..64 at once, 1..1000 rounds,
// 100 ms..24 h) are refused rather than obeyed.
func agentsConfig(en *rerun.Engine) (engine.AgentsConfig, error) {
	a := en.Started.Agents
	if a == nil {
		return engine.AgentsConfig{}, nil
	}
	timeout := time.Duration(a.TimeoutMS) * time.Millisecond
	if a.MaxConcurrent < 1 || a.MaxConcurrent > 64 || a.MaxRounds < 1 || a.MaxRounds > 1000 || timeout < 100*time.Millisecond || timeout > 24*time.Hour {
		return engine.AgentsConfig{}, fmt.Errorf("%w: the engine started at entry %d names sub-agent limits no configuration allows (%d at once, %d rounds, timeout %s)",
			rerun.ErrNotReplayable, en.Seq, a.MaxConcurrent, a.MaxRounds, timeout)
	}
	return engine.AgentsConfig{Enabled: true, MaxConcurrent: a.MaxConcurrent, MaxRounds: a.MaxRounds, Timeout: timeout}, nil
}

// policyText returns the text of the policy an engine run recorded. For
// ledgers written before engine.started held it, the built-in policies
// are recognised by their hash.
func policyText(en *rerun.Engine) ([]byte, error) {
	if en.PolicyText != nil {
		return en.PolicyText, nil
	}
	switch en.Started.PolicyHash {
	case ledger.Sum([]byte(engine.ReadOnlyPolicyText)).String():
		return []byte(engine.ReadOnlyPolicyText), nil
	case ledger.Sum(fixtures.DefaultPolicy).String():
		return fixtures.DefaultPolicy, nil
	}
	return nil, fmt.Errorf("%w: the engine started at entry %d ran policy %q (%s) but did not record its text",
		rerun.ErrNotReplayable, en.Seq, en.Started.Policy, en.Started.PolicyHash)
}

// NewRecordedShield returns Shield as an engine run had it: its workspace,
// home, protected and read-only paths as recorded, judging by policy
// (the recorded one for a rerun, another for a what-if), with now as its
// clock for the rate limit.
func NewRecordedShield(en *rerun.Engine, policy *shield.Policy, now func() time.Time) judge.Evaluator {
	env := event.ShieldEnv{}
	if en.Started.Shield != nil {
		env = *en.Started.Shield
	}
	return judge.ShieldEvaluator{S: shield.New(shield.Config{Workspace: en.Started.Workspace, Home: env.Home,
		Protected: env.Protected, ReadOnly: env.ReadOnly, Policy: policy, Now: now})}
}

// evaluatorFor returns (building once) the evaluator of an engine run:
// Shield under its recorded policy, or the read-only policy.
func (s *replayState) evaluatorFor(en *rerun.Engine) (judge.Evaluator, error) {
	s.mu.Lock()
	ev := s.evaluators[en]
	s.mu.Unlock()
	if ev != nil {
		return ev, nil
	}
	text, err := policyText(en)
	if err != nil {
		return nil, err
	}
	if string(text) == engine.ReadOnlyPolicyText {
		ev = engine.ReadOnlyPolicy{}
	} else {
		p, err := shield.ParsePolicy(text)
		if err != nil {
			return nil, fmt.Errorf("%w: the policy recorded at entry %d: %v", rerun.ErrNotReplayable, en.Seq, err)
		}
		ev = NewRecordedShield(en, p, s.now)
	}
	s.mu.Lock()
	s.evaluators[en] = ev
	s.mu.Unlock()
	return ev, nil
}

// now is the replay's clock for Shield's rate limit: the recorded time of
// the proposal being judged.
func (s *replayState) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock
}
