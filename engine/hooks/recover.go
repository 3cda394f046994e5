package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Recover closes the calls of hook sessions that the crashed run left
// open (exec.started without an end) as interrupted, measured from disk,
// and records the calls hooks let through while no engine ran
// (engine.Hooks).
func (h *sessions) Recover(ctx context.Context) error {
	if since, head, ok := h.e.CrashedRun(); ok {
		if err := h.closeCrashed(ctx, since, head); err != nil {
			return err
		}
	}
	return h.recordUnrecorded(ctx)
}

// closeCrashed records exec.completed, interrupted, for each hook call
// started in entries since..head with no end.
func (h *sessions) closeCrashed(ctx context.Context, since, head uint64) error {
	type key struct{ session, call string }
	type open struct {
		tool  string
		paths []string
		wide  bool
	}
	started := map[key]*open{}
	snaps := map[key]*event.Snapshot{}
	var order []key
	err := h.e.Ledger().RangeRaw(since, head, func(seq uint64, raw []byte) error {
		if !bytes.Contains(raw, []byte(`"call_id":"hk`)) {
			return nil
		}
		en, err := ledger.ParseEntry(raw)
		if err != nil {
			return nil
		}
		switch en.Type {
		case event.TypeSnapshot, event.TypeExecStarted, event.TypeExecCompleted, event.TypeExecFailed:
		default:
			return nil
		}
		p, err := event.Decode(en)
		if err != nil {
			return nil
		}
		switch x := p.(type) {
		case *event.Snapshot:
			snaps[key{en.Session, x.CallID}] = x
		case *event.ExecStarted:
			if event.IsHookCallID(x.CallID) {
				k := key{en.Session, x.CallID}
				started[k] = &open{tool: x.Tool}
				order = append(order, k)
			}
		case *event.ExecCompleted:
			delete(started, key{en.Session, x.CallID})
		case *event.ExecFailed:
			delete(started, key{en.Session, x.CallID})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hooks: read the crashed run's calls: %w", err)
	}
	fs := h.e.Chronicle().FS()
	for _, k := range order {
		o, ok := started[k]
		if !ok {
			continue
		}
		x := &event.ExecCompleted{CallID: k.call, Tool: o.tool, Interrupted: true, Post: []event.PostState{}}
		x.Result = fmt.Sprintf("(opx: the engine that allowed this call ended without recording its end (crashed, entry %d); the engine started at entry %d closed it with what the workspace holds now)", since, h.e.StartedSeq())
		if snap := snaps[k]; snap != nil {
			if snap.Kind == event.KindFiles {
				paths := make([]string, 0, len(snap.Files))
				for _, f := range snap.Files {
					paths = append(paths, f.Path)
				}
				if post, err := chronicle.Post(fs, paths); err == nil {
					x.Post = post
				} else {
					x.DiffError = "post-state not measured: " + err.Error()
				}
			} else {
				// What a command changed is the difference from its
				// workspace snapshot, which this engine does not hold:
				// a rollback compares the snapshot's manifest with the
				// workspace instead.
				x.DiffError = "the engine that took the snapshot crashed before the call ended: what the call changed was not worked out"
			}
		}
		x.Size = int64(len(x.Result))
		if _, err := h.e.Recorder().Record(ctx, ledger.Async, k.session, x); err != nil {
			return err
		}
		h.e.Logf("engine: hooks: call %s of session %s was left open by the crashed engine; recorded as interrupted", k.call, k.session)
	}
	return nil
}

// recordUnrecorded records each call the unrecorded file (a hook's,
// agents/unrecorded) holds as hook.unrecorded, durably, then removes it.
// The file is renamed aside first, so a hook writing meanwhile starts a
// new one; one left aside by an engine that died while recording it is
// recorded first (its lines may then be recorded twice: never lost).
func (h *sessions) recordUnrecorded(ctx context.Context) error {
	dir, err := ledger.StateDir(h.e.Options().Workspace)
	if err != nil {
		return nil // no state directory: nothing was written down
	}
	path := filepath.Join(dir, unrecorded.File)
	aside := path + ".recording"
	if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(path, aside); errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			h.e.Logf("engine: hooks: %s: %v (the calls it lists are not recorded)", path, err)
			return nil
		}
	}
	lines, bad, err := unrecorded.Read(aside, unrecorded.MaxFileBytes+unrecorded.MaxLineBytes)
	if err != nil && !errors.Is(err, unrecorded.ErrTooLarge) {
		h.e.Logf("engine: hooks: %s: %v (the calls it lists are not recorded)", aside, err)
		return nil
	}
	if err != nil {
		h.e.Logf("engine: hooks: %s: %v; the lines before the bound are recorded", aside, err)
	}
	recs := make([]*event.HookUnrecorded, 0, len(lines))
	for _, l := range lines {
		u := event.HookUnrecorded(l)
		if u.Validate() != nil {
			bad++
			continue
		}
		recs = append(recs, &u)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].At < recs[j].At })
	for i, u := range recs {
		d := ledger.Async
		if i == len(recs)-1 {
			d = ledger.Sync
		}
		if _, err := h.e.Recorder().Record(ctx, d, "", u); err != nil {
			return err
		}
	}
	if bad > 0 {
		h.e.Logf("engine: hooks: %s: %d lines were not calls a hook wrote down; left out", aside, bad)
	}
	if len(recs) > 0 {
		h.e.Logf("engine: hooks: recorded %d calls hooks let through while no engine ran (hooks.on_engine_down: allow)", len(recs))
	}
	return os.Remove(aside)
}
