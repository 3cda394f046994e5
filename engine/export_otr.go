package engine

import (
	"github.com/opx-dev/opx/engine/otr"
	"github.com/opx-dev/opx/ledger/event"
)

// otrKnown is what the engine knows of the names it records (otr.Known):
// its registered tools and their groups, and the models engine.started
// names (its provider's and the tier 2 evaluator's).
func (e *Engine) otrKnown() event.Known {
	models := []string{e.opts.Provider.Model()}
	if t2 := e.opts.Tier2Provider; t2 != nil {
		models = append(models, t2.Model())
	}
	return otr.Known(e.tools, models...)
}
