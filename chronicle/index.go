package chronicle

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Source is the ledger as Chronicle reads it: the file itself, or a
// running engine's read-only ledger service.
type Source interface {
	Range(from, to uint64, fn func(ledger.Entry) error) error
	GetBlob(h ledger.Hash) ([]byte, error)
}

// Snapshot is a chronicle.snapshot entry with what later entries say of
// it: how its tool ended, whether a rollback restored it, whether
// retention pruned its content.
type Snapshot struct {
	Seq     uint64
	Session string
	TS      string
	event.Snapshot
	// Exec is how the snapshot's tool call ended; nil until an
	// exec.completed or exec.failed for its call is recorded.
	Exec *Execution
	// TakenBy is, for a snapshot a rollback took of what it overwrote,
	// that rollback; its Post is the state the rollback left.
	TakenBy *Rollback
	// RestoredBy lists the rollbacks that restored this snapshot.
	RestoredBy []uint64
	// Pruned is the chronicle.pruned entry that removed some of its
	// content, 0 if none did.
	Pruned uint64
}

// Execution is the end of a snapshotted call.
type Execution struct {
	Seq uint64
	// Outcome is event.ExecOK, ExecExited or ExecError: the ledger's one
	// definition of a failed call (event.ExecOutcome).
	Outcome   string
	Failed    string // exec.failed's error; "" for exec.completed
	ExitCode  int
	Pre       []event.FileState // workspace-wide tools: what changed, before
	Post      []event.PostState
	DiffError string // workspace-wide tools: why the changes are unknown
}

// Unknown reports whether the call's changes are not on record: it
// failed, or the scan after a workspace-wide call did.
func (ex *Execution) Unknown() bool { return ex == nil || ex.Failed != "" || ex.DiffError != "" }

// Rollback is a chronicle.rollback entry.
type Rollback struct {
	Seq uint64
	event.Rollback
}

// Prune is a chronicle.pruned entry.
type Prune struct {
	Seq uint64
	event.Pruned
}

// Index is every snapshot of a ledger and what became of it. It is a fold
// of entries in seq order (Apply), the same offline and in the engine.
type Index struct {
	snaps     []*Snapshot
	bySeq     map[uint64]*Snapshot
	open      map[callKey]*Snapshot // snapshots awaiting their call's end
	rollbacks []*Rollback
	prunes    map[uint64]*Prune
	pruned    map[ledger.Hash]uint64 // blob -> chronicle.pruned seq
	foreign   map[ledger.Hash]bool   // blobs other entries name (model bodies, tool output)
	next      uint64                 // the seq Apply expects next
}

type callKey struct{ session, subagent, callID string }

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{bySeq: map[uint64]*Snapshot{}, open: map[callKey]*Snapshot{}, prunes: map[uint64]*Prune{},
		pruned: map[ledger.Hash]uint64{}, foreign: map[ledger.Hash]bool{}}
}

// BuildIndex folds a whole ledger.
func BuildIndex(src Source) (*Index, error) {
	x := NewIndex()
	if err := src.Range(0, ^uint64(0), x.Apply); err != nil {
		return nil, err
	}
	return x, nil
}

// Apply folds one entry; entries must come in seq order. Entries that are
// not about snapshots are ignored except for the blobs they name.
func (x *Index) Apply(e ledger.Entry) error {
	if e.Seq < x.next {
		return fmt.Errorf("chronicle index: entry %d after %d", e.Seq, x.next-1)
	}
	x.next = e.Seq + 1
	switch e.Type {
	case event.TypeSnapshot:
		var p event.Snapshot
		if err := decodeInto(e, &p); err != nil {
			return err
		}
		s := &Snapshot{Seq: e.Seq, Session: e.Session, TS: e.TS, Snapshot: p}
		x.snaps = append(x.snaps, s)
		x.bySeq[e.Seq] = s
		x.open[callKey{e.Session, p.SubAgentID, p.CallID}] = s
		return nil
	case event.TypeToolProposed:
		// A new proposal of a call id supersedes any earlier call of it
		// still open (one whose end never came: the engine died), so
		// the new call's end is never taken for the old snapshot's.
		var p struct {
			SubAgentID string `json:"subagent_id"`
			CallID     string `json:"call_id"`
		}
		if json.Unmarshal(e.Data, &p) == nil {
			delete(x.open, callKey{e.Session, p.SubAgentID, p.CallID})
		}
		return nil
	case event.TypeExecCompleted, event.TypeExecFailed:
		pl, err := event.Decode(e)
		if err != nil {
			return err
		}
		var ex Execution
		var key callKey
		switch p := pl.(type) {
		case *event.ExecCompleted:
			ex = Execution{Seq: e.Seq, Outcome: p.Outcome(), ExitCode: p.ExitCode, Pre: p.Pre, Post: p.Post, DiffError: p.DiffError}
			key = callKey{e.Session, p.SubAgentID, p.CallID}
			x.noteForeign(p.ResultBlob)
		case *event.ExecFailed:
			ex = Execution{Seq: e.Seq, Outcome: event.ExecError, Failed: p.Error}
			key = callKey{e.Session, p.SubAgentID, p.CallID}
		}
		// Calls are keyed by sub-agent too: a sub-agent's call ids are
		// its own, and its snapshot names it (snapshots written before
		// sub-agents name none, as their calls did not).
		if s := x.open[key]; s != nil {
			s.Exec = &ex
			delete(x.open, key)
		}
		return nil
	case event.TypeRollback:
		var p event.Rollback
		if err := decodeInto(e, &p); err != nil {
			return err
		}
		r := &Rollback{Seq: e.Seq, Rollback: p}
		x.rollbacks = append(x.rollbacks, r)
		if s := x.bySeq[p.PreSnapshot]; s != nil {
			s.TakenBy = r
		}
		if s := x.bySeq[p.Snapshot]; s != nil {
			s.RestoredBy = append(s.RestoredBy, e.Seq)
		}
		if p.Session != "" {
			for _, s := range x.snaps {
				if s.Session == p.Session {
					s.RestoredBy = append(s.RestoredBy, e.Seq)
				}
			}
		}
		return nil
	case event.TypeRollbackStarted:
		// Its blobs are the content of the snapshots it restores, not
		// foreign to them: retention treats them as those snapshots'.
		return nil
	case event.TypePruned:
		var p event.Pruned
		if err := decodeInto(e, &p); err != nil {
			return err
		}
		x.prunes[e.Seq] = &Prune{Seq: e.Seq, Pruned: p}
		for _, b := range p.Blobs {
			if h, err := ledger.ParseHash(b); err == nil {
				x.pruned[h] = e.Seq
			}
		}
		for _, seq := range p.Snapshots {
			if s := x.bySeq[seq]; s != nil && s.Pruned == 0 {
				s.Pruned = e.Seq
			}
		}
		return nil
	default:
		refs, err := ledger.BlobRefs(e.Data)
		if err != nil {
			return nil // verify reports it; the index only needs what parses
		}
		for _, h := range refs {
			x.foreign[h] = true
		}
		return nil
	}
}

func (x *Index) noteForeign(hex string) {
	if h, err := ledger.ParseHash(hex); err == nil {
		x.foreign[h] = true
	}
}

func decodeInto[T any, P interface {
	*T
	event.Payload
}](e ledger.Entry, p P) error {
	pl, err := event.Decode(e)
	if err != nil {
		return err
	}
	q, ok := pl.(P)
	if !ok {
		return fmt.Errorf("entry %d: %s payload has an unexpected type", e.Seq, e.Type)
	}
	*p = *q
	return nil
}

// Next is the seq Apply expects next: everything before it is folded.
func (x *Index) Next() uint64 { return x.next }

// Snapshots returns every snapshot, oldest first.
func (x *Index) Snapshots() []*Snapshot { return x.snaps }

// Get returns the snapshot recorded at seq.
func (x *Index) Get(seq uint64) (*Snapshot, error) {
	s := x.bySeq[seq]
	if s == nil {
		return nil, fmt.Errorf("%w %d (a snapshot id is the seq of its chronicle.snapshot entry; opx snapshots lists them)", ErrNoSnapshot, seq)
	}
	return s, nil
}

// Session returns a session's snapshots, oldest first.
func (x *Index) Session(id string) []*Snapshot {
	var out []*Snapshot
	for _, s := range x.snaps {
		if s.Session == id {
			out = append(out, s)
		}
	}
	return out
}

// Rollbacks returns every rollback, oldest first.
func (x *Index) Rollbacks() []*Rollback { return x.rollbacks }

// PrunedBy returns the chronicle.pruned entry that removed blob h.
func (x *Index) PrunedBy(h ledger.Hash) (*Prune, bool) {
	seq, ok := x.pruned[h]
	if !ok {
		return nil, false
	}
	return x.prunes[seq], true
}

// Paths returns the paths a rollback of s restores, sorted. For a
// workspace snapshot they are known only once its tool finished.
func (s *Snapshot) Paths() []string {
	var out []string
	switch {
	case s.Kind == event.KindWorkspace && !s.Exec.Unknown():
		for _, f := range s.Exec.Pre {
			out = append(out, f.Path)
		}
	case s.Kind == event.KindFiles:
		for _, f := range s.Files {
			out = append(out, f.Path)
		}
	}
	sort.Strings(out)
	return out
}

// Changed returns the paths s's call changed, sorted, and whether that is
// on record: for a files snapshot, the recorded paths whose post-state
// differs from the pre-state (a path with no post-state recorded counts
// as changed); for a workspace snapshot, what the command's diff found.
// It is not known while the call has not ended, after an exec.failed (no
// post-states), or when the diff failed.
func (s *Snapshot) Changed() ([]string, bool) {
	switch {
	case s.Exec.Unknown():
		return nil, false
	case s.Kind == event.KindWorkspace:
		return s.Paths(), true
	}
	pre := make([]event.PostState, 0, len(s.Files))
	for _, f := range s.Files {
		pre = append(pre, PostOf(f))
	}
	return ChangedPaths(pre, s.Exec.Post), true
}

// ChangedPaths returns the paths of before (pre-states in post-state form,
// PostOf) whose state in after differs or is not recorded, sorted; nil
// when none does.
func ChangedPaths(before, after []event.PostState) []string {
	byPath := postByPath(after)
	var out []string
	for _, b := range before {
		a := byPath[b.Path]
		if a == nil || a.Absent != b.Absent || a.Hash != b.Hash || a.Mode != b.Mode {
			out = append(out, b.Path)
		}
	}
	sort.Strings(out)
	return out
}

// Touches reports whether s records the pre-state of path.
func (s *Snapshot) Touches(path string) bool {
	for _, p := range s.Paths() {
		if p == path {
			return true
		}
	}
	return false
}
