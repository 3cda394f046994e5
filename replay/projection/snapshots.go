package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// SnapshotInfo is one snapshot as `opx snapshots` lists it: the
// chronicle.snapshot entry and what later entries say of it (how its call
// ended, the rollbacks that restored it or took it, retention). It is
// what chronicle.Index knows of a snapshot, without the file states.
type SnapshotInfo struct {
	Seq     uint64 `json:"seq"`
	TS      string `json:"ts"`
	Session string `json:"session"`
	// SubAgentID is the sub-agent whose call it precedes ("" the
	// session's own agent).
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Kind       string `json:"kind"`
	// Paths are what a rollback restores, sorted: the recorded files, or
	// for a workspace snapshot what its command changed (known once the
	// command ended without a failure or a failed scan).
	Paths []string `json:"paths"`
	// ExecSeq is the exec.completed or exec.failed of its call (0: none
	// recorded); Outcome how it ended (event.ExecOutcome: completed,
	// exited or failed) and ExitCode its exit_code; Failed is
	// exec.failed's error, DiffError why the changes of a workspace-wide
	// call are unknown.
	ExecSeq   uint64 `json:"exec_seq,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	ExitCode  int64  `json:"exit_code,omitempty"`
	Failed    string `json:"failed,omitempty"`
	DiffError string `json:"diff_error,omitempty"`
	// Changed are the paths the call changed (chronicle.Snapshot.Changed),
	// sorted; nil while that is not on record (ChangesKnown false).
	Changed      []string `json:"changed,omitempty"`
	ChangesKnown bool     `json:"changes_known,omitempty"`
	// TakenBy is the rollback this snapshot recorded the overwritten state
	// for; RestoredBy the rollbacks that restored it (by id, or its whole
	// session); PrunedBy the chronicle.pruned entry that removed content.
	TakenBy    uint64   `json:"taken_by,omitempty"`
	RestoredBy []uint64 `json:"restored_by,omitempty"`
	PrunedBy   uint64   `json:"pruned_by,omitempty"`
}

// Status says in a word what became of the snapshot's call.
func (s *SnapshotInfo) Status() string {
	switch {
	case s.TakenBy != 0:
		return fmt.Sprintf("taken by rollback %d", s.TakenBy)
	case s.ExecSeq == 0:
		return "no result recorded"
	case s.Outcome == event.ExecError || s.Failed != "":
		return event.ExecError
	case s.DiffError != "":
		return "changes not worked out"
	case s.Outcome == event.ExecExited:
		return fmt.Sprintf("ran, exit %d", s.ExitCode)
	default:
		return event.ExecOK
	}
}

// Snapshots keeps every snapshot (key "n" NUL seq: its SnapshotInfo) and
// indexes them by session ("s" NUL session NUL seq) and by every path they
// record ("p" NUL path NUL seq). A snapshot whose call has not ended waits
// under "o" NUL session NUL sub-agent id ("" the session's agent) NUL call
// id, a files snapshot's pre-states (in
// post-state form, to tell what its call changed) under "f" NUL seq; the rollbacks of a whole session are
// listed under "r" NUL session (8-byte seqs) and merged into RestoredBy
// when read, as they restore every snapshot of the session before them.
type Snapshots struct{}

func (Snapshots) Name() string    { return "snapshots" }
func (Snapshots) Version() string { return "4" }

// openKey is where a snapshot waits for the end of its call: calls are
// keyed by session, sub-agent and call id.
func openKey(e *ledger.Entry) []byte {
	return key("o", e.Session, str(e, "subagent_id"), str(e, "call_id"))
}

func snapKey(seq uint64) []byte { return seqKey(seq, "n") }

func (Snapshots) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeSnapshot:
		f := ledger.Fields(e.Data, "call_id", "files", "kind", "tool")
		s := SnapshotInfo{Seq: e.Seq, TS: e.TS, Session: e.Session, SubAgentID: str(e, "subagent_id"), CallID: ledger.RawString(f[0]),
			Tool: ledger.RawString(f[3]), Kind: ledger.RawString(f[2])}
		if s.Kind == event.KindFiles {
			s.Paths = paths(f[1])
			if err := indexPaths(b, e.Seq, s.Paths); err != nil {
				return err
			}
			var files []event.FileState
			if json.Unmarshal(f[1], &files) == nil {
				pre := make([]event.PostState, 0, len(files))
				for _, fs := range files {
					pre = append(pre, chronicle.PostOf(fs))
				}
				if err := putJSON(b, seqKey(e.Seq, "f"), pre); err != nil {
					return err
				}
			}
		}
		if err := putJSON(b, snapKey(e.Seq), &s); err != nil {
			return err
		}
		if err := b.Put(seqKey(e.Seq, "s", e.Session), nil); err != nil {
			return err
		}
		return b.Put(openKey(e), binary.BigEndian.AppendUint64(nil, e.Seq))
	case event.TypeToolProposed:
		// A new call of the id: an earlier one still open never ended
		// (the engine died), and must not take the new call's end.
		if ok := openKey(e); b.Get(ok) != nil {
			return b.Delete(ok)
		}
	case event.TypeExecCompleted, event.TypeExecFailed:
		ok := openKey(e)
		v := b.Get(ok)
		if len(v) != 8 {
			return nil // not a snapshotted call (most are not)
		}
		seq := binary.BigEndian.Uint64(v)
		if err := b.Delete(ok); err != nil {
			return err
		}
		var s SnapshotInfo
		if !getJSON(b, snapKey(seq), &s) {
			return nil
		}
		s.ExecSeq = e.Seq
		var pre []event.PostState
		hasPre := getJSON(b, seqKey(seq, "f"), &pre)
		if err := b.Delete(seqKey(seq, "f")); err != nil {
			return err
		}
		if e.Type == event.TypeExecFailed {
			s.Outcome, s.Failed = event.ExecError, str(e, "error")
			return putJSON(b, snapKey(seq), &s)
		}
		f := ledger.Fields(e.Data, "diff_error", "exit_code", "failed", "post", "pre", "tool")
		s.DiffError, s.ExitCode = ledger.RawString(f[0]), ledger.RawInt(f[1])
		s.Outcome = event.ExecOutcome(ledger.RawString(f[5]), s.ExitCode, string(f[2]) == "true")
		switch {
		case s.DiffError != "":
		case s.Kind == event.KindWorkspace:
			s.Paths = paths(f[4])
			s.Changed, s.ChangesKnown = s.Paths, true
			if err := indexPaths(b, seq, s.Paths); err != nil {
				return err
			}
		default:
			var post []event.PostState
			if !hasPre || len(f[3]) > 0 && json.Unmarshal(f[3], &post) != nil {
				break // verify reports it; the changes stay unknown
			}
			s.Changed, s.ChangesKnown = chronicle.ChangedPaths(pre, post), true
		}
		return putJSON(b, snapKey(seq), &s)
	case event.TypeRollback:
		var p event.Rollback
		if !decode(e, &p) {
			return nil
		}
		if err := updateSnap(b, p.PreSnapshot, func(s *SnapshotInfo) { s.TakenBy = e.Seq }); err != nil {
			return err
		}
		if p.Snapshot != 0 {
			if err := updateSnap(b, p.Snapshot, func(s *SnapshotInfo) { s.RestoredBy = append(s.RestoredBy, e.Seq) }); err != nil {
				return err
			}
		}
		if p.Session != "" {
			k := key("r", p.Session)
			return b.Put(k, binary.BigEndian.AppendUint64(bytes.Clone(b.Get(k)), e.Seq))
		}
	case event.TypePruned:
		var p event.Pruned
		if !decode(e, &p) {
			return nil
		}
		for _, seq := range p.Snapshots {
			err := updateSnap(b, seq, func(s *SnapshotInfo) {
				if s.PrunedBy == 0 {
					s.PrunedBy = e.Seq
				}
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// paths returns the "path" member of each object of a JSON array (a
// snapshot's files, an execution's pre-states), sorted.
func paths(files []byte) []string {
	var out []string
	ledger.Elements(files, func(f []byte) bool {
		p, _ := ledger.FieldString(f, "path")
		out = append(out, p)
		return true
	})
	sort.Strings(out)
	return out
}

func indexPaths(b ledger.Bucket, seq uint64, paths []string) error {
	for _, p := range paths {
		if err := b.Put(seqKey(seq, "p", p), nil); err != nil {
			return err
		}
	}
	return nil
}

// updateSnap changes the snapshot recorded at seq, if there is one.
func updateSnap(b ledger.Bucket, seq uint64, f func(*SnapshotInfo)) error {
	var s SnapshotInfo
	if seq == 0 || !getJSON(b, snapKey(seq), &s) {
		return nil
	}
	f(&s)
	return putJSON(b, snapKey(seq), &s)
}

// ReadSnapshots returns the snapshots, oldest first: all of them, or
// those of a session, of a path, or both ("" selects any; a rollback's
// own snapshot outside sessions is listed only then).
func ReadSnapshots(b ledger.Bucket, session, path string) []SnapshotInfo {
	var seqs []uint64
	c := b.Cursor()
	collect := func(prefix []byte) {
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) == len(prefix)+8 {
				seqs = append(seqs, binary.BigEndian.Uint64(k[len(prefix):]))
			}
		}
	}
	switch {
	case path != "":
		collect(append(key("p", path), 0))
	case session != "":
		collect(append(key("s", session), 0))
	default:
		collect(append(key("n"), 0))
	}
	sessionRollbacks := map[string][]uint64{}
	out := []SnapshotInfo{}
	for _, seq := range seqs {
		var s SnapshotInfo
		if !getJSON(b, snapKey(seq), &s) || (session != "" && s.Session != session) {
			continue
		}
		rs, ok := sessionRollbacks[s.Session]
		if !ok {
			v := b.Get(key("r", s.Session))
			for i := 0; i+8 <= len(v); i += 8 {
				rs = append(rs, binary.BigEndian.Uint64(v[i:]))
			}
			sessionRollbacks[s.Session] = rs
		}
		for _, r := range rs {
			if r > s.Seq {
				s.RestoredBy = append(s.RestoredBy, r)
			}
		}
		slices.Sort(s.RestoredBy)
		out = append(out, s)
	}
	return out
}
