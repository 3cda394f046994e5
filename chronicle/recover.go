package chronicle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// OpenPlan is a rollback plan (chronicle.rollback_started) with no
// outcome: a rollback whose process died before it recorded how it ended.
type OpenPlan struct {
	Seq uint64
	event.RollbackStarted
}

// Backwarder reads a ledger from its head back (ledger.Ledger).
type Backwarder interface {
	Backward(fn func(seq uint64, raw []byte) (bool, error)) error
}

// OpenPlans returns the rollback plans that have no outcome, oldest first.
// It reads from the head back to the last engine.started: an engine
// records the outcome of every earlier plan before it starts (strict
// verification checks that), so nothing before it can be open.
func OpenPlans(l Backwarder) ([]OpenPlan, error) {
	closed := map[uint64]bool{}
	var out []OpenPlan
	err := l.Backward(func(seq uint64, raw []byte) (bool, error) {
		switch {
		case hasType(raw, event.TypeEngineStarted):
			return false, nil
		case hasType(raw, event.TypeRollback):
			p, err := decodeRaw(seq, raw)
			if err != nil {
				return false, err
			}
			closed[p.(*event.Rollback).Plan] = true
		case hasType(raw, event.TypeRollbackStarted):
			if closed[seq] {
				return true, nil
			}
			p, err := decodeRaw(seq, raw)
			if err != nil {
				return false, err
			}
			out = append(out, OpenPlan{Seq: seq, RollbackStarted: *p.(*event.RollbackStarted)})
		}
		return true, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, err
}

// decodeRaw parses the stored entry seq and decodes its payload.
func decodeRaw(seq uint64, raw []byte) (event.Payload, error) {
	e, err := ledger.ParseEntry(raw)
	if err != nil {
		return nil, fmt.Errorf("entry %d: %w", seq, err)
	}
	return event.Decode(e)
}

// hasType reports whether a stored entry's type is typ: the entry is
// canonical JSON, so "type" is its last member.
func hasType(raw []byte, typ string) bool {
	return bytes.HasSuffix(raw, []byte(`"type":"`+typ+`"}`))
}

// Recover records how an interrupted rollback left the workspace: a
// chronicle.rollback naming the plan, marked interrupted, whose post-state
// for each planned path is what fsys holds there now (content hash and
// mode, or absent), measured from disk; Files lists the paths found in
// the state the plan would have written. fsys is nil when the plan's
// workspace could not be opened; notes say why, and anything else the
// caller did or found (temporary files it removed), in the outcome's
// error. It is recorded durably (Sync) and its seq returned.
func Recover(ctx context.Context, plan OpenPlan, fsys FS, notes []string, rec Recorder) (uint64, error) {
	r := &event.Rollback{Snapshot: plan.Snapshot, Session: plan.Session, Plan: plan.Seq, PreSnapshot: plan.PreSnapshot,
		Forced: plan.Forced, Files: []string{}, Post: []event.PostState{}, Interrupted: true}
	lead := "interrupted: the rollback ended before it recorded its outcome; each post-state was measured from the workspace afterwards"
	if fsys == nil {
		lead = "interrupted: the rollback ended before it recorded its outcome; what it left could not be measured"
	}
	problems := append([]string{lead}, notes...)
	for _, to := range plan.Files {
		if fsys == nil {
			break
		}
		now, _, err := capture(fsys, to.Path, MaxFileBytes, false)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", to.Path, errors.Unwrap(err)))
			continue
		}
		r.Post = append(r.Post, PostOf(now))
		if sameState(now, to) {
			r.Files = append(r.Files, to.Path)
		}
	}
	r.Error = strings.Join(problems, "; ")
	return rec.Record(ctx, ledger.Sync, "", r)
}
