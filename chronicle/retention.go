package chronicle

import (
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Retention bounds what snapshots keep. Zero fields mean no bound.
type Retention struct {
	// MaxSnapshots is how many snapshots keep their content.
	MaxSnapshots int
	// MaxBytes bounds the content the kept snapshots stored.
	MaxBytes int64
}

// PrunePlan is what retention removes: the oldest snapshots beyond the
// bounds, and the blobs only they use.
type PrunePlan struct {
	Snapshots []uint64
	Blobs     []ledger.Hash
	Reason    string
}

// Record returns the chronicle.pruned payload of the plan.
func (p *PrunePlan) Record() *event.Pruned {
	out := &event.Pruned{Blobs: []string{}, Snapshots: p.Snapshots, Reason: p.Reason}
	for _, h := range p.Blobs {
		out.Blobs = append(out.Blobs, h.String())
	}
	return out
}

// Prune works out what retention r removes now, or nil. Past a bound it
// prunes down to 90% of it; the newest snapshot is always kept. A blob is removed only if no kept snapshot
// (its files, its diff or its manifest's content) and no other entry
// (model bodies, tool output) names it, so every kept snapshot stays
// restorable. Manifests are read through src.
func (x *Index) Prune(r Retention, src Source) (*PrunePlan, error) {
	var live []*Snapshot
	var bytes int64
	for _, s := range x.snaps {
		if s.Pruned == 0 {
			live = append(live, s)
			bytes += s.storedBytes()
		}
	}
	over := func(count int, b int64, frac int64) bool {
		return (r.MaxSnapshots > 0 && int64(count)*10 > int64(r.MaxSnapshots)*frac) || (r.MaxBytes > 0 && b*10 > r.MaxBytes*frac)
	}
	if !over(len(live), bytes, 10) {
		return nil, nil
	}
	// Over a bound: prune down to 90% of it, so that the work of
	// planning (reading the kept manifests) is done once per tenth of
	// the bound, not at every snapshot.
	n := 0
	for len(live)-n > 1 && over(len(live)-n, bytes, 9) {
		bytes -= live[n].storedBytes()
		n++
	}
	drop, keep := live[:n], live[n:]
	kept := map[ledger.Hash]bool{}
	manifests := map[string]*Tree{}
	refs := func(s *Snapshot, into map[ledger.Hash]bool) error {
		for _, f := range s.ownStates() {
			if h, err := ledger.ParseHash(f.Blob); err == nil {
				into[h] = true
			}
		}
		if s.Kind != event.KindWorkspace {
			return nil
		}
		mh, err := ledger.ParseHash(s.ManifestBlob)
		if err != nil {
			return err
		}
		into[mh] = true
		t, ok := manifests[s.ManifestBlob]
		if !ok {
			b, err := src.GetBlob(mh)
			switch {
			case err == nil:
				if t, err = DecodeTree(b); err != nil {
					return fmt.Errorf("snapshot %d: %w", s.Seq, err)
				}
			case x.pruned[mh] != 0:
				t = &Tree{} // already gone: nothing more to keep or drop
			default:
				return fmt.Errorf("snapshot %d: manifest: %w", s.Seq, err)
			}
			manifests[s.ManifestBlob] = t
		}
		for _, f := range t.Items {
			if h, err := ledger.ParseHash(f.Blob); err == nil {
				into[h] = true
			}
		}
		return nil
	}
	for _, s := range keep {
		if err := refs(s, kept); err != nil {
			return nil, err
		}
	}
	dropped := map[ledger.Hash]bool{}
	plan := &PrunePlan{}
	for _, s := range drop {
		if err := refs(s, dropped); err != nil {
			return nil, err
		}
		plan.Snapshots = append(plan.Snapshots, s.Seq)
	}
	for h := range dropped {
		if !kept[h] && !x.foreign[h] && x.pruned[h] == 0 {
			plan.Blobs = append(plan.Blobs, h)
		}
	}
	sort.Slice(plan.Blobs, func(i, j int) bool { return plan.Blobs[i].String() < plan.Blobs[j].String() })
	plan.Reason = fmt.Sprintf("retention: max_snapshots %d, max_bytes %d; %d snapshot(s) kept", r.MaxSnapshots, r.MaxBytes, len(keep))
	return plan, nil
}

// ownStates are the states whose content s holds: its files, and for a
// workspace snapshot what its command changed.
func (s *Snapshot) ownStates() []event.FileState {
	out := s.Files
	if s.Kind == event.KindWorkspace && s.Exec != nil {
		out = append(append([]event.FileState(nil), out...), s.Exec.Pre...)
	}
	return out
}

// storedBytes is the content s stored when it was taken: new file
// content, and a new manifest.
func (s *Snapshot) storedBytes() int64 {
	n := s.ManifestSize
	for _, f := range s.Files {
		if f.Blob != "" {
			n += f.Size
		}
	}
	return n
}
