package judge

import (
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
)

// Observe implements Observer: the proposal's links (Links), the changes
// it makes to manifests (Manifests: read before, computed after, both
// parsed; only with FS), and what it reads that is sensitive (Shield's
// Sensitive, judged with the links found), and which of the programs
// it runs the workspace declares (Toolchain).
func (e ShieldEvaluator) Observe(p Proposal) Observed {
	var o Observed
	o.Links = e.Links(p)
	p.Links = o.Links
	o.Manifests = e.Manifests(p)
	p.Manifests = o.Manifests // what a change makes run (Sensitive names it)
	a := e.Action(p)          // judged by Sensitive, read by Declared
	o.Sensitive = e.S.Sensitive(a)
	o.Toolchain = e.Toolchain(p)
	e.Declared.changed(e, p, a)
	return o
}

// taintOf is the session's taint as Shield takes it.
func taintOf(ts []event.Taint) []shield.Taint {
	if len(ts) == 0 {
		return nil
	}
	out := make([]shield.Taint, len(ts))
	for i, t := range ts {
		call := t.CallID
		if t.SubAgentID != "" {
			call = t.SubAgentID + "/" + call
		}
		out[i] = shield.Taint{Call: call, What: t.What}
	}
	return out
}
