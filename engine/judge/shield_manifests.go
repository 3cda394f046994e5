package judge

import "github.com/opx-dev/opx/ledger/event"

// Manifests: placeholder until shield/manifest lands.
func (e ShieldEvaluator) Manifests(p Proposal) []event.ManifestChanges { return nil }
