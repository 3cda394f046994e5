// Package otr is the engine's memory of off-the-record sessions (issue 15;
// docs/otr.md): read-only sessions recorded as envelopes whose content
// members are keyed commitments (event.Withhold).
//
// # What it owns
//
//   - State: each off-the-record session's commitment key and, for those
//     this engine started, its conversation and its pending approvals'
//     arguments; which entry belongs to which session (ForEntry) and what
//     of it is withheld (Withhold).
//   - The read-only rule (Restrict, Mutates; rule otr:read-only) the
//     pipeline applies before any tier judges.
//   - The names kept in clear (Known): the engine's tools, groups and
//     models; every other name is model output and withheld.
//
// # Imports
//
// otr imports ledger, its events and projections, the protocol, and the
// engine's leaf packages (executor, judge, mcp), never the engine: the
// engine's recorder holds a State, so otr sits below the core, as judge
// does.
//
// # Invariants
//
//   - Nothing of State is ever logged or written: the keys and the
//     conversations are gone when the engine exits.
//   - A session whose mode cannot be read is taken as off the record:
//     restricted, and recording then fails rather than write content.
package otr
