package replay

import (
	"sort"

	"github.com/opx-dev/opx/ledger/event"
)

// WorkspaceFile is one path of a session's workspace as the ledger knew
// it at some entry: the state its snapshots and executions recorded.
type WorkspaceFile struct {
	Path  string `json:"path"`
	State string `json:"state"` // an event.State*
	// Hash is the content's BLAKE3 (hex) of a file, "" otherwise; Blob
	// says the ledger may hold it (a snapshot kept it, or a post-state
	// whose content some entry stored: blobs are content-addressed).
	Hash string `json:"hash,omitempty"`
	Size int64  `json:"size,omitempty"`
	Mode uint32 `json:"mode,omitempty"`
	// Seq is the entry that recorded this state: a snapshot (the state
	// before its call ran), an exec.completed (what the call left) or a
	// rollback (the snapshot's state restored).
	Seq uint64 `json:"seq"`
	// Later: no entry up to the step recorded the path; this is the
	// state the first snapshot of it found later (what the ledger knows
	// of it before then, if nothing outside the session changed it).
	Later bool `json:"later,omitempty"`
	// Omitted says why a snapshot did not keep the content.
	Omitted string `json:"omitted,omitempty"`
}

// WorkspaceAt is the workspace of t as of entry at, rebuilt from what the
// ledger recorded: each path any snapshot or change of t names, in the
// state of the latest record of it up to at (a snapshot's pre-state, an
// execution's post-state from changes, a rollback restoring a
// snapshot), or, when none is that early, the first record of it. Paths
// no entry named are not known and not listed. Sorted by path.
//
// manifests holds the full manifest (every path's state, as
// chronicle.DecodeTree reads it) of workspace snapshots by seq, for those
// the caller read: such a snapshot names every path of the workspace, not
// only the few whose content it stored (its Files). A workspace snapshot
// without one counts with its Files.
func WorkspaceAt(t *Timeline, changes []FileChange, at uint64, manifests map[uint64][]event.FileState) []WorkspaceFile {
	type record struct {
		seq uint64
		f   WorkspaceFile
	}
	var recs []record
	pre := func(seq uint64, f event.FileState) record {
		return record{seq, WorkspaceFile{Path: f.Path, State: f.State, Hash: f.ContentHash(), Size: f.Size, Mode: f.Mode, Seq: seq, Omitted: f.Omitted}}
	}
	pres := map[uint64][]event.FileState{} // per snapshot
	for _, s := range t.Snapshots {
		if m, ok := manifests[s.Seq]; ok {
			pres[s.Seq] = append(pres[s.Seq], m...)
			continue
		}
		pres[s.Seq] = append(pres[s.Seq], s.Files...)
	}
	for _, fc := range changes {
		if fc.Path != "" && fc.Pre.Path != "" && !hasPath(pres[fc.Snapshot], fc.Path) {
			pres[fc.Snapshot] = append(pres[fc.Snapshot], fc.Pre)
		}
		if fc.Post != nil && fc.ExecSeq != 0 {
			p := fc.Post
			f := WorkspaceFile{Path: p.Path, State: event.StateFile, Hash: p.Hash, Mode: p.Mode, Seq: fc.ExecSeq}
			switch {
			case p.Absent:
				f.State, f.Hash = event.StateAbsent, ""
			case p.Hash == dirHash:
				f.State, f.Hash = event.StateDir, ""
			}
			recs = append(recs, record{fc.ExecSeq, f})
		}
	}
	for _, s := range t.Snapshots {
		for _, f := range pres[s.Seq] {
			recs = append(recs, pre(s.Seq, f))
			for _, r := range s.RestoredBy {
				recs = append(recs, pre(r, f))
			}
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].seq < recs[j].seq })
	state := map[string]WorkspaceFile{}
	for _, r := range recs {
		if r.seq <= at {
			state[r.f.Path] = r.f
		} else if _, seen := state[r.f.Path]; !seen {
			f := r.f
			f.Later = true
			state[r.f.Path] = f
		}
	}
	out := make([]WorkspaceFile, 0, len(state))
	for _, f := range state {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func hasPath(fs []event.FileState, path string) bool {
	for _, f := range fs {
		if f.Path == path {
			return true
		}
	}
	return false
}
