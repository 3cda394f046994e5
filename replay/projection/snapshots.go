package projection

import (
	"bytes"
	"encoding/binary"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// SnapshotRef is one snapshot as the snapshots projection lists it.
type SnapshotRef struct {
	Seq     uint64 `json:"seq"`
	Session string `json:"session"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Kind    string `json:"kind"`
}

// Snapshots indexes chronicle.snapshot entries by session ("s" NUL
// session NUL seq) and by every path they record ("p" NUL path NUL seq).
// A workspace snapshot's paths are what its command changed, known at
// its exec.completed: until then it waits under "o" NUL session NUL
// call id.
type Snapshots struct{}

func (Snapshots) Name() string    { return "snapshots" }
func (Snapshots) Version() string { return "1" }

func (Snapshots) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeSnapshot:
		var p event.Snapshot
		if !decode(e, &p) {
			return nil
		}
		ref := SnapshotRef{Seq: e.Seq, Session: e.Session, CallID: p.CallID, Tool: p.Tool, Kind: p.Kind}
		if err := putJSON(b, seqKey(e.Seq, "s", e.Session), &ref); err != nil {
			return err
		}
		if p.Kind == event.KindWorkspace {
			return b.Put(key("o", e.Session, p.CallID), binary.BigEndian.AppendUint64(nil, e.Seq))
		}
		for _, f := range p.Files {
			if err := putJSON(b, seqKey(e.Seq, "p", f.Path), &ref); err != nil {
				return err
			}
		}
	case event.TypeToolProposed, event.TypeExecFailed:
		// A new call of the id, or a call that changed nothing on record.
		if ok := key("o", e.Session, str(e, "call_id")); b.Get(ok) != nil {
			return b.Delete(ok)
		}
	case event.TypeExecCompleted:
		ok := key("o", e.Session, str(e, "call_id"))
		v := b.Get(ok)
		if v == nil {
			return nil // not a workspace snapshot's call (most are not)
		}
		var p event.ExecCompleted
		if !decode(e, &p) {
			return nil
		}
		seq := binary.BigEndian.Uint64(v)
		if err := b.Delete(ok); err != nil {
			return err
		}
		var ref SnapshotRef
		if !getJSON(b, seqKey(seq, "s", e.Session), &ref) {
			return nil
		}
		for _, f := range p.Pre {
			if err := putJSON(b, seqKey(seq, "p", f.Path), &ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadSnapshots returns the snapshots of a session, or of a path, oldest
// first (by is "session" or "path").
func ReadSnapshots(b ledger.Bucket, by, value string) []SnapshotRef {
	tag := "s"
	if by == "path" {
		tag = "p"
	}
	prefix := append(key(tag, value), 0)
	var out []SnapshotRef
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 {
			continue
		}
		var r SnapshotRef
		if jsonUnmarshal(v, &r) == nil {
			out = append(out, r)
		}
	}
	return out
}
