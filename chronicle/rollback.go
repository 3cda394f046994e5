package chronicle

import (
	"context"
	"encoding/json"
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

// NowFunc scans the workspace as it is now, leaving out the paths the
// excluded patterns match (a snapshot's own exclusions, so that what it
// did not record does not look created).
type NowFunc func(excluded []string) (*Tree, error)

// Targets returns what rolling back snapshot s restores. A workspace
// snapshot whose changes are not on record (the command failed to be
// diffed, or the engine died under it) is compared with the workspace
// now instead: every difference, with no expected state.
func (x *Index) Targets(s *Snapshot, src Source, now NowFunc) ([]Target, error) {
	var out []Target
	switch {
	case s.Kind == event.KindWorkspace && !s.Exec.Unknown():
		post := postByPath(s.Exec.Post)
		for _, f := range s.Exec.Pre {
			out = append(out, Target{Pre: f, Expect: post[f.Path]})
		}
	case s.Kind == event.KindWorkspace:
		before, err := x.Manifest(s, src)
		if err != nil {
			return nil, err
		}
		after, err := now(s.Excluded)
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
		case !s.Exec.Unknown():
			post = postByPath(s.Exec.Post)
		}
		for _, f := range s.Files {
			out = append(out, Target{Pre: f, Expect: post[f.Path]})
		}
	}
	return out, nil
}

// Manifest returns a workspace snapshot's tree, hash-checked.
func (x *Index) Manifest(s *Snapshot, src Source) (*Tree, error) {
	h, err := ledger.ParseHash(s.ManifestBlob)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: manifest: %w", s.Seq, err)
	}
	b, err := x.Blob(src, h, fmt.Sprintf("snapshot %d manifest", s.Seq))
	if err != nil {
		return nil, err
	}
	t, err := DecodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", s.Seq, err)
	}
	return t, nil
}

// SessionTargets returns what rolling back everything a session changed
// restores: for each path, its state before the session first changed it,
// expecting the state opx last left it in — after the session's last
// change to it, or after a later rollback that restored it.
func (x *Index) SessionTargets(session string, src Source, now NowFunc) ([]Target, error) {
	snaps := x.Session(session)
	if len(snaps) == 0 {
		if known, err := sessionKnown(src, session); err == nil && !known {
			// Not "has no snapshots", which reads as if it existed.
			return nil, fmt.Errorf("%w: unknown session %q: no entry of the ledger belongs to it (opx sessions lists them)", ErrNothingToRestore, session)
		}
		return nil, fmt.Errorf("%w: session %q has no snapshots", ErrNothingToRestore, session)
	}
	// Every rollback after the session's first snapshot may have left a
	// path the session changed in another state (a rollback of one of
	// its snapshots, or of such a rollback): opx left it so.
	var rbs []*Rollback
	for _, r := range x.rollbacks {
		if r.Seq > snaps[0].Seq {
			rbs = append(rbs, r)
		}
	}
	byPath := map[string]*Target{}
	var order []string
	// Snapshots and rollbacks in seq order: the last one to touch a path
	// says what opx left there.
	for len(snaps) > 0 || len(rbs) > 0 {
		if len(rbs) > 0 && (len(snaps) == 0 || rbs[0].Seq < snaps[0].Seq) {
			post := rbs[0].Post
			for i := range post {
				if t := byPath[post[i].Path]; t != nil {
					t.Expect = &post[i]
				}
			}
			rbs = rbs[1:]
			continue
		}
		ts, err := x.Targets(snaps[0], src, now)
		if err != nil {
			return nil, err
		}
		snaps = snaps[1:]
		for _, t := range ts {
			if cur, ok := byPath[t.Pre.Path]; ok {
				cur.Expect = t.Expect
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
	Workspace string // the directory the rollback writes into, recorded with its plan
	// Planned, if set, is called with the seq of the plan's
	// chronicle.rollback_started once it is durable, before any path
	// changes.
	Planned   func(seq uint64)
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
	Plan        uint64 // seq of its chronicle.rollback_started entry
	PreSnapshot uint64 // seq of the snapshot of what it overwrote
	Restored    []string
}

// Restore carries out a plan: it checks every blob it needs against its
// hash first (a mismatch refuses the whole rollback, matching
// ledger.ErrIntegrity), records what it will overwrite (a
// chronicle.snapshot, so the rollback can be undone) and its plan (a
// chronicle.rollback_started naming every path and the state it will
// write), both durable before the first path changes; then it restores
// each path atomically and records a chronicle.rollback naming the plan,
// with the state it left. A process that dies in between leaves a plan
// with no outcome, which Recover completes. Conflicts refuse the rollback
// unless force.
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
	to := make([]event.FileState, len(p.Steps))
	for i, s := range p.Steps {
		paths[i] = s.Path
		to[i] = s.To
		to[i].Path = s.Path
	}
	sort.Slice(to, func(i, j int) bool { return to[i].Path < to[j].Path })
	// The plan, the snapshot of what it overwrites and the outcome each
	// name every path; one entry holds at most ledger.MaxLineSize.
	if n := planSize(to); n > maxPlanBytes {
		return nil, fmt.Errorf("%w: it changes %d paths (%d bytes of plan, at most %d in one entry); roll back its snapshots one by one",
			ErrRollbackTooLarge, len(to), n, maxPlanBytes)
	}
	// What the rollback overwrites, durable before it does. A file too
	// large to keep is recorded by hash: the rollback still runs (it may
	// be what removes that file), and undoing it says why that file
	// cannot come back.
	states, blobs, err := CaptureOmitting(wfs, paths)
	if err != nil {
		return nil, fmt.Errorf("snapshot what the rollback overwrites: %w", err)
	}
	callID := "rollback-session-" + p.Session
	if p.Session == "" {
		callID = fmt.Sprintf("rollback-%d", p.Snapshot)
	}
	forced := force && len(p.Conflicts()) > 0
	// The snapshot is queued and the plan appended after it with Sync:
	// one fsync makes both durable, in order, before anything changes.
	pre, err := rec.Record(ctx, ledger.Async, "", &event.Snapshot{CallID: callID, Tool: "rollback", Kind: event.KindFiles, Files: states}, blobs...)
	if err != nil {
		return nil, err
	}
	planSeq, err := rec.Record(ctx, ledger.Sync, "", &event.RollbackStarted{Snapshot: p.Snapshot, Session: p.Session,
		Workspace: p.Workspace, PreSnapshot: pre, Forced: forced, Files: to})
	if err != nil {
		return nil, err
	}
	if p.Planned != nil {
		p.Planned(planSeq)
	}

	restored, applyErr := restore(wfs, p.Steps, contents)
	post, perr := Post(wfs, paths)
	if perr != nil && applyErr == nil {
		applyErr = perr
	}
	r := &event.Rollback{Snapshot: p.Snapshot, Session: p.Session, Plan: planSeq, Files: restored, PreSnapshot: pre, Forced: forced, Post: post}
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
	out := &Outcome{Rollback: seq, Plan: planSeq, PreSnapshot: pre, Restored: restored}
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

// restore applies steps in an order that works: deletions deepest first;
// then directories shallowest first, created writable; then files and
// symlinks; then the directories' recorded modes, deepest first (a
// read-only directory is made read-only only once its content is back).
// It stops at the first failure and returns what it restored.
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
	// 2. Directories, writable by their owner until step 4.
	for _, s := range byDepth {
		if s.To.State != event.StateDir {
			continue
		}
		var err error
		if s.Now.State != event.StateDir {
			err = w.Mkdir(s.Path, s.To.Mode|0o700)
		}
		if err == nil {
			err = w.Chmod(s.Path, s.To.Mode|0o700)
		}
		if err != nil {
			return done, fmt.Errorf("restore directory %s: %w", s.Path, err)
		}
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
			failed := "the batch"
			if n < len(batch) {
				failed = batch[n].Path
			}
			return done, fmt.Errorf("restore %s: %w", failed, err)
		}
	}
	// 4. The directories' own modes.
	for _, s := range byDepthDesc {
		if s.To.State != event.StateDir {
			continue
		}
		if err := w.Chmod(s.Path, s.To.Mode); err != nil {
			return done, fmt.Errorf("chmod %s: %w", s.Path, err)
		}
		done = append(done, s.Path)
	}
	sort.Strings(done)
	return done, nil
}

func depth(p string) int { return strings.Count(p, "/") }

func isBatch(w WriteFS) bool {
	_, ok := w.(BatchWriter)
	return ok
}

// maxPlanBytes bounds a rollback plan's list of paths: a third of the
// maximum entry size, as the pre-snapshot and the outcome list the same
// paths again (each in its own entry, with a little more per path).
const maxPlanBytes = ledger.MaxLineSize / 3

// planSize is the size of a plan's files as JSON.
func planSize(to []event.FileState) int {
	b, _ := json.Marshal(to)
	return len(b)
}

// errFound stops a Range once an entry was found.
var errFound = errors.New("found")

// sessionKnown reports whether any entry of src belongs to session; it
// stops at the first.
func sessionKnown(src Source, session string) (bool, error) {
	err := src.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Session == session {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}
