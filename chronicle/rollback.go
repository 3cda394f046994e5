package chronicle

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Target is one path a rollback restores: to Pre, expecting to find the
// state Expect recorded after the last change opx made to it (nil when no
// post-state was recorded, e.g. the tool failed or the engine died).
type Target struct {
	Pre    event.FileState
	Expect *event.PostState
}

// Targets returns what rolling back snapshot s restores. A workspace
// snapshot whose command never finished has no recorded diff: Targets
// then compares its manifest with the workspace now (every difference,
// with no expected state).
func (x *Index) Targets(s *Snapshot, src Source, now func() (*Tree, error)) ([]Target, error) {
	var out []Target
	switch {
	case s.Kind == event.KindWorkspace && s.Exec != nil && s.Exec.Failed == "":
		post := postByPath(s.Exec.Post)
		for _, f := range s.Exec.Pre {
			out = append(out, Target{Pre: f, Expect: post[f.Path]})
		}
	case s.Kind == event.KindWorkspace:
		h, err := ledger.ParseHash(s.ManifestBlob)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: manifest: %w", s.Seq, err)
		}
		b, err := x.Blob(src, h, fmt.Sprintf("snapshot %d manifest", s.Seq))
		if err != nil {
			return nil, err
		}
		before, err := DecodeTree(b)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", s.Seq, err)
		}
		after, err := now()
		if err != nil {
			return nil, err
		}
		pre, _ := Diff(before, after)
		for _, f := range pre {
			out = append(out, Target{Pre: f})
		}
	default:
		var post map[string]*event.PostState
		switch {
		case s.TakenBy != nil:
			post = postByPath(s.TakenBy.Post)
		case s.Exec != nil && s.Exec.Failed == "":
			post = postByPath(s.Exec.Post)
		}
		for _, f := range s.Files {
			out = append(out, Target{Pre: f, Expect: post[f.Path]})
		}
	}
	return out, nil
}

// SessionTargets returns what rolling back everything a session changed
// restores: for each path, its state before the session first changed it,
// expecting the state after the session last changed it.
func (x *Index) SessionTargets(session string, src Source, now func() (*Tree, error)) ([]Target, error) {
	snaps := x.Session(session)
	if len(snaps) == 0 {
		return nil, fmt.Errorf("%w: session %q has no snapshots", ErrNothingToRestore, session)
	}
	byPath := map[string]*Target{}
	var order []string
	for _, s := range snaps {
		ts, err := x.Targets(s, src, now)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if cur, ok := byPath[t.Pre.Path]; ok {
				cur.Expect = t.Expect // the last change governs what we expect
				continue
			}
			tt := t
			byPath[t.Pre.Path] = &tt
			order = append(order, t.Pre.Path)
		}
	}
	out := make([]Target, 0, len(order))
	for _, p := range order {
		out = append(out, *byPath[p])
	}
	return out, nil
}

func postByPath(post []event.PostState) map[string]*event.PostState {
	m := make(map[string]*event.PostState, len(post))
	for i := range post {
		m[post[i].Path] = &post[i]
	}
	return m
}

// Step is one path a rollback changes.
type Step struct {
	Path string
	To   event.FileState // the recorded pre-state it returns to
	Now  event.FileState // its state now
	// Conflict says why the path is not in the state opx left it in; ""
	// when it is. Conflicting steps run only with Force.
	Conflict string
}

// Plan is a rollback worked out against the workspace, before anything
// changes: the steps to take and their conflicts.
type Plan struct {
	Snapshot  uint64 // or
	Session   string
	Steps     []Step
	Unchanged []string // paths already in their recorded pre-state
}

// Conflicts returns the conflicting steps.
func (p *Plan) Conflicts() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Conflict != "" {
			out = append(out, s)
		}
	}
	return out
}

// PlanRollback compares each target with the workspace now.
func PlanRollback(fsys FS, targets []Target) (*Plan, error) {
	p := &Plan{}
	for _, t := range targets {
		now, _, err := capture(fsys, t.Pre.Path, MaxFileBytes, false)
		if errors.Is(err, ErrNotSnapshottable) {
			now = event.FileState{Path: t.Pre.Path, State: "other"}
		} else if err != nil {
			return nil, err
		}
		if sameState(now, t.Pre) {
			p.Unchanged = append(p.Unchanged, t.Pre.Path)
			continue
		}
		st := Step{Path: t.Pre.Path, To: t.Pre, Now: now}
		cur := PostOf(now)
		switch {
		case now.State == "other":
			st.Conflict = "is now a special file (socket, fifo or device)"
		case t.Expect == nil:
			st.Conflict = "no post-state was recorded (the tool failed or did not finish), so later changes cannot be told apart"
		case t.Expect.Absent && !cur.Absent:
			st.Conflict = "was absent after opx changed it, and exists now"
		case !t.Expect.Absent && cur.Absent:
			st.Conflict = "was deleted since opx changed it"
		case !t.Expect.Absent && cur.Hash != t.Expect.Hash:
			st.Conflict = fmt.Sprintf("changed since opx changed it: recorded %s, now %s", short(t.Expect.Hash), short(cur.Hash))
		case !t.Expect.Absent && cur.Mode != t.Expect.Mode:
			st.Conflict = fmt.Sprintf("mode changed since opx changed it: recorded %#o, now %#o", t.Expect.Mode, cur.Mode)
		}
		p.Steps = append(p.Steps, st)
	}
	sort.Slice(p.Steps, func(i, j int) bool { return p.Steps[i].Path < p.Steps[j].Path })
	sort.Strings(p.Unchanged)
	return p, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// ConflictError is a rollback refused because paths changed since opx
// last changed them. It matches ErrConflict.
type ConflictError struct {
	Conflicts []Step
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d path(s) changed since the snapshot's changes were recorded (use --force to overwrite them):", len(e.Conflicts))
	for i, s := range e.Conflicts {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Conflicts)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s", s.Path, s.Conflict)
	}
	return b.String()
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Recorder appends payloads to the ledger (the engine's Recorder, or
// LedgerRecorder offline).
type Recorder interface {
	Record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) (uint64, error)
}

// LedgerRecorder records straight into a ledger opened for writing, for
// rollbacks made while no engine runs.
type LedgerRecorder struct{ L *ledger.Ledger }

// Record implements Recorder.
func (r LedgerRecorder) Record(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) (uint64, error) {
	rec, err := event.Record(session, p, blobs...)
	if err != nil {
		return 0, err
	}
	app, err := r.L.Append(ctx, d, rec)
	if err != nil {
		return 0, err
	}
	return app[0].Seq, nil
}

// Outcome is a rollback that ran.
type Outcome struct {
	Rollback    uint64 // seq of its chronicle.rollback entry
	PreSnapshot uint64 // seq of the snapshot of what it overwrote
	Restored    []string
}

// Restore carries out a plan: it checks every blob it needs against its
// hash first (a mismatch refuses the whole rollback, matching
// ledger.ErrIntegrity), snapshots what it will overwrite (durably, so the
// rollback can be undone), restores each path atomically, and records a
// chronicle.rollback entry with the state it left. Conflicts refuse the
// rollback unless force.
func (x *Index) Restore(ctx context.Context, p *Plan, src Source, wfs WriteFS, rec Recorder, force bool) (*Outcome, error) {
	if c := p.Conflicts(); len(c) > 0 && !force {
		return nil, &ConflictError{Conflicts: c}
	}
	if len(p.Steps) == 0 {
		return nil, fmt.Errorf("%w: every path is already in its recorded state", ErrNothingToRestore)
	}
	contents := map[string][]byte{}
	for _, s := range p.Steps {
		if s.To.State != event.StateFile {
			continue
		}
		if s.To.Blob == "" {
			return nil, fmt.Errorf("%s: %w (%s)", s.Path, ErrOmitted, s.To.Omitted)
		}
		h, err := ledger.ParseHash(s.To.Blob)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path, err)
		}
		b, err := x.Blob(src, h, s.Path)
		if err != nil {
			return nil, err
		}
		contents[s.Path] = b
	}

	paths := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		paths[i] = s.Path
	}
	// What the rollback overwrites, durable before it does.
	states, blobs, err := Capture(wfs, paths)
	if err != nil {
		return nil, fmt.Errorf("snapshot what the rollback overwrites: %w", err)
	}
	callID := "rollback-session-" + p.Session
	if p.Session == "" {
		callID = fmt.Sprintf("rollback-%d", p.Snapshot)
	}
	pre, err := rec.Record(ctx, ledger.Sync, "", &event.Snapshot{CallID: callID, Tool: "rollback", Kind: event.KindFiles, Files: states}, blobs...)
	if err != nil {
		return nil, err
	}

	restored, applyErr := restore(wfs, p.Steps, contents)
	post, perr := Post(wfs, paths)
	if perr != nil && applyErr == nil {
		applyErr = perr
	}
	r := &event.Rollback{Snapshot: p.Snapshot, Session: p.Session, Files: restored, PreSnapshot: pre, Forced: force && len(p.Conflicts()) > 0, Post: post}
	if r.Files == nil {
		r.Files = []string{}
	}
	if applyErr != nil {
		r.Error = applyErr.Error()
	}
	seq, err := rec.Record(ctx, ledger.Sync, "", r)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Rollback: seq, PreSnapshot: pre, Restored: restored}
	if applyErr != nil {
		return out, fmt.Errorf("rollback stopped after %d of %d path(s) (recorded at %d; undo it with opx rollback %d): %w",
			len(restored), len(p.Steps), seq, pre, applyErr)
	}
	return out, nil
}

// Blob fetches content a snapshot recorded, hash-checked (a mismatch
// matches ledger.ErrIntegrity), and says exactly why it cannot when
// retention pruned it (ErrPruned).
func (x *Index) Blob(src Source, h ledger.Hash, what string) ([]byte, error) {
	b, err := src.GetBlob(h)
	if err == nil {
		return b, nil
	}
	if errors.Is(err, ledger.ErrNotFound) {
		if pr, ok := x.PrunedBy(h); ok {
			return nil, fmt.Errorf("%s: %w: entry %d removed its content (%s)", what, ErrPruned, pr.Seq, pr.Reason)
		}
		return nil, fmt.Errorf("%s: blob %s: %w", what, h, err)
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// restore applies steps in an order that works: deletions deepest first,
// then directories shallowest first, then files and symlinks. It stops at
// the first failure and returns what it restored.
func restore(w WriteFS, steps []Step, contents map[string][]byte) ([]string, error) {
	var done []string
	byDepthDesc := append([]Step(nil), steps...)
	sort.SliceStable(byDepthDesc, func(i, j int) bool { return depth(byDepthDesc[i].Path) > depth(byDepthDesc[j].Path) })
	// 1. Remove what was absent, and what is in the way of a change of
	// kind (a directory where a file was, or the reverse).
	for _, s := range byDepthDesc {
		kindChange := (s.Now.State == event.StateDir) != (s.To.State == event.StateDir)
		if s.Now.State == event.StateAbsent || (s.To.State != event.StateAbsent && !kindChange) {
			continue
		}
		if err := w.Remove(s.Path, s.Now.State == event.StateDir); err != nil {
			return done, fmt.Errorf("remove %s: %w", s.Path, err)
		}
		if s.To.State == event.StateAbsent {
			done = append(done, s.Path)
		}
	}
	byDepth := append([]Step(nil), steps...)
	sort.SliceStable(byDepth, func(i, j int) bool { return depth(byDepth[i].Path) < depth(byDepth[j].Path) })
	// 2. Directories.
	for _, s := range byDepth {
		if s.To.State != event.StateDir {
			continue
		}
		if s.Now.State != event.StateDir {
			if err := w.Mkdir(s.Path, s.To.Mode); err != nil {
				return done, fmt.Errorf("create %s: %w", s.Path, err)
			}
		}
		if err := w.Chmod(s.Path, s.To.Mode); err != nil {
			return done, fmt.Errorf("chmod %s: %w", s.Path, err)
		}
		done = append(done, s.Path)
	}
	// 3. Files and symlinks, each atomically, parents created if a
	// directory they were in is gone. Files go in one batch when the
	// workspace can flush a batch at once.
	var batch []FileWrite
	for _, s := range byDepth {
		if s.To.State != event.StateFile && s.To.State != event.StateSymlink {
			continue
		}
		if dir := path.Dir(s.Path); dir != "." {
			if _, err := w.Lstat(dir); err != nil {
				if err := w.Mkdir(dir, 0o755); err != nil {
					return done, fmt.Errorf("create %s for %s: %w", dir, s.Path, err)
				}
			}
		}
		var err error
		switch {
		case s.To.State == event.StateSymlink:
			err = w.Symlink(s.To.Target, s.Path)
		case isBatch(w):
			batch = append(batch, FileWrite{Path: s.Path, Data: contents[s.Path], Mode: s.To.Mode})
			continue
		default:
			err = w.WriteFile(s.Path, contents[s.Path], s.To.Mode)
		}
		if err != nil {
			return done, fmt.Errorf("restore %s: %w", s.Path, err)
		}
		done = append(done, s.Path)
	}
	if len(batch) > 0 {
		n, err := w.(BatchWriter).WriteFiles(batch)
		for _, f := range batch[:n] {
			done = append(done, f.Path)
		}
		if err != nil {
			return done, fmt.Errorf("restore %s: %w", batch[n].Path, err)
		}
	}
	sort.Strings(done)
	return done, nil
}

func depth(p string) int { return strings.Count(p, "/") }

func isBatch(w WriteFS) bool {
	_, ok := w.(BatchWriter)
	return ok
}
