package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Recovery of sub-agents after a crash is the core's: it reads only the
// ledger, and runs whether or not this engine has sub-agents of its own.

// failCrashedSubAgents records subagent.failed engine_crashed for each
// sub-agent spawned since the crashed engine's start (entry since) that
// no entry ended: their processes died with that engine (parent-death
// signal), so nothing of them can follow.
func (e *Engine) failCrashedSubAgents(ctx context.Context, since, head uint64) error {
	type open struct{ session, id string }
	var spawned []open
	ended := map[open]bool{}
	err := e.opts.Ledger.RangeRaw(since, head, func(seq uint64, raw []byte) error {
		if !bytes.Contains(raw, []byte(`"type":"subagent.`)) {
			return nil
		}
		en, err := ledger.ParseEntry(raw)
		if err != nil {
			return nil
		}
		id, _ := ledger.FieldString(en.Data, "subagent_id")
		k := open{en.Session, id}
		switch {
		case en.Type == event.TypeSubAgentSpawned:
			spawned = append(spawned, k)
		case event.SubAgentEnded(en.Type):
			ended[k] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load sub-agents: %w", err)
	}
	for _, k := range spawned {
		if ended[k] {
			continue
		}
		if _, err := e.rec.Record(ctx, ledger.Async, k.session, &event.SubAgentFailed{SubAgentID: k.id, Reason: event.SubAgentEngineCrashed,
			Detail: fmt.Sprintf("the engine started at entry %d crashed while it ran; its process died with it", since)}); err != nil {
			return err
		}
	}
	return nil
}
