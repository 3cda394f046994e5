package undo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Chronicle is the engine's side of Chronicle: it snapshots before every
// mutating call, diffs the workspace after workspace-wide ones, applies
// retention and runs rollbacks. Mutations are serialised (Lock), so a
// workspace diff only ever holds one call's changes and a rollback never
// races a tool.
type Chronicle struct {
	fs        chronicle.Workspace
	dir       string // the workspace's path, recorded with each rollback plan
	rec       Recorder
	scanner   *chronicle.Scanner
	retention chronicle.Retention
	exclude   []string
	protected []string
	logf      func(string, ...any)

	// lock, one slot, is held across snapshot, execution and post-state
	// (a channel, so a waiter can give up: LockContext).
	lock   chan struct{}
	index  *chronicle.Index
	plansM sync.Mutex
	// plans are the rollback plans this Chronicle recorded: true while
	// running or once its outcome is recorded, false when recording the
	// outcome failed (OwnPlan).
	plans  map[uint64]bool
	knownM sync.Mutex
	known  map[ledger.Hash]bool // blobs known to be stored
}

// Recorder is what Chronicle records with: the engine's recorder
// (engine.Recorder), in the engine and in offline rollbacks alike.
type Recorder interface {
	chronicle.Recorder
	// Ledger is the ledger it records in.
	Ledger() *ledger.Ledger
	// Prune records a chronicle.pruned entry and removes its blobs, in
	// order with everything else recorded; blobs that entries from
	// keepFrom on name are kept.
	Prune(ctx context.Context, rec ledger.Record, keepFrom uint64) error
}

// DefaultExclude is what workspace snapshots leave out unless configured
// otherwise: git's object store, which git only ever adds to (objects are
// content-addressed and immutable), and which can be far larger than the
// workspace. Refs, the index, config and hooks are snapshotted.
var DefaultExclude = []string{".git/objects"}

// NewChronicle returns the engine's Chronicle over a workspace, recording
// with rec. Its index is built lazily from the ledger. Workspace
// snapshots leave out DefaultExclude; SetExclude changes that.
func NewChronicle(fsys chronicle.Workspace, rec Recorder, r chronicle.Retention) *Chronicle {
	c := &Chronicle{fs: fsys, rec: rec, scanner: chronicle.NewScanner(fsys), retention: r, index: chronicle.NewIndex(),
		known: map[ledger.Hash]bool{}, plans: map[uint64]bool{}, logf: func(string, ...any) {}, lock: make(chan struct{}, 1)}
	c.SetExclude(DefaultExclude)
	c.SetProtected([]string{".opx"})
	if d, ok := fsys.(interface{ Dir() string }); ok {
		c.dir = d.Dir()
	}
	return c
}

// SetDir names the workspace's directory, which each rollback's plan
// records (so that a rollback interrupted by a crash can be measured
// where it wrote); NewChronicle takes it from a WorkspaceFS.
func (c *Chronicle) SetDir(dir string) { c.dir = dir }

// SetLogf sets where retention reports a failure (the engine's
// operator); by default nowhere.
func (c *Chronicle) SetLogf(logf func(string, ...any)) { c.logf = logf }

// SetExclude sets the path patterns (path.Match syntax, matched against
// workspace-relative paths; a matching directory is left out whole) that
// workspace snapshots leave out. Each snapshot records them.
func (c *Chronicle) SetExclude(patterns []string) {
	c.exclude = append([]string(nil), patterns...)
	c.scanner.Skip = chronicle.Excluder(c.exclude)
}

// Lock serialises a mutating call (snapshot, execution, post-state) or a
// rollback against every other.
func (c *Chronicle) Lock() { c.lock <- struct{}{} }

// Unlock releases what Lock or LockContext took.
func (c *Chronicle) Unlock() { <-c.lock }

// LockContext is Lock, given up when ctx ends first (a coding agent's
// hook that stopped waiting for its answer): then it holds nothing and
// returns ctx's error.
func (c *Chronicle) LockContext(ctx context.Context) error {
	select {
	case c.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// FS returns the workspace as Chronicle sees it.
func (c *Chronicle) FS() chronicle.Workspace { return c.fs }

// SnapshotFiles records the pre-state of the paths a call names. The
// error result is for the agent (the call does not run); err is a ledger
// failure.
func (c *Chronicle) SnapshotFiles(ctx context.Context, session, subagent, callID, tool string, paths []string) (refusal string, err error) {
	states, blobs, cerr := chronicle.Capture(c.fs, paths)
	if cerr != nil {
		return cerr.Error(), nil // nothing runs that could not be undone
	}
	_, err = c.rec.Record(ctx, ledger.Async, session, &event.Snapshot{SubAgentID: subagent, CallID: callID, Tool: tool, Kind: event.KindFiles, Files: states}, blobs...)
	return "", err
}

// WorkspaceSnapshot is a snapshot of the whole workspace taken before a
// workspace-wide call: its entry's seq and the tree to diff against.
type WorkspaceSnapshot struct {
	Seq  uint64
	Tree *chronicle.Tree
}

// SnapshotWorkspace records an incremental snapshot of the whole
// workspace before a workspace-wide call: a manifest of every path, and
// the content of every file the ledger does not hold yet (stored ahead,
// named by the entry).
func (c *Chronicle) SnapshotWorkspace(ctx context.Context, session, subagent, callID, tool string) (snap *WorkspaceSnapshot, refusal string, err error) {
	st := &blobStore{c: c, ctx: ctx, stored: map[ledger.Hash]bool{}}
	res, serr := c.scanner.Scan(st)
	if st.err != nil {
		return nil, "", st.err
	}
	if serr != nil {
		return nil, serr.Error(), nil
	}
	files := []event.FileState{}
	for i := 0; i < len(res.Tree.Items) && len(st.stored) > 0; i++ {
		f := res.Tree.Items[i]
		if h, err := ledger.ParseHash(f.Blob); err == nil && st.stored[h] {
			files = append(files, f)
			delete(st.stored, h) // name each new blob once
		}
	}
	manifest, mh := res.Tree.Encode(), res.Tree.Hash()
	entry := &event.Snapshot{SubAgentID: subagent, CallID: callID, Tool: tool, Kind: event.KindWorkspace, Files: files,
		ManifestBlob: mh.String(), Entries: int64(len(res.Tree.Items)), Unrecorded: clipList(res.Unrecorded, 20), Excluded: c.exclude}
	var blobs [][]byte
	if c.missing(mh) {
		blobs = append(blobs, manifest)
		entry.ManifestSize = int64(len(manifest))
	}
	seq, err := c.rec.Record(ctx, ledger.Async, session, entry, blobs...)
	if err != nil {
		return nil, "", err
	}
	c.markKnown(mh)
	return &WorkspaceSnapshot{Seq: seq, Tree: res.Tree}, "", nil
}

// SetProtected names workspace paths no tool may change (opx's own
// configuration, the policy file); a path protects everything beneath it.
// File tools are refused them by Shield; a shell command that changes one
// anyway (the command sandbox can only grant the workspace whole) has the
// change undone by RestoreProtected.
func (c *Chronicle) SetProtected(paths []string) { c.protected = append([]string(nil), paths...) }

func (c *Chronicle) isProtected(p string) bool {
	for _, q := range c.protected {
		if p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// RestoreProtected undoes, at once, what a workspace-wide call changed
// among the protected paths: each returns to its state in the snapshot,
// recorded as a chronicle.rollback of it (so it is on record, and itself
// undoable). pre is the call's diff; when the diff failed (unknown), the
// protected paths are compared with the snapshot's tree directly. It
// returns a note for the agent, "" when nothing protected changed. The
// caller holds the lock.
func (c *Chronicle) RestoreProtected(ctx context.Context, snap *WorkspaceSnapshot, pre []event.FileState, unknown bool) (string, error) {
	if unknown {
		var err error
		if pre, err = c.protectedDiff(snap.Tree); err != nil {
			return "", err
		}
	}
	var steps []chronicle.Step
	var paths []string
	for _, f := range pre {
		if !c.isProtected(f.Path) {
			continue
		}
		now, _, err := chronicle.Read(c.fs, f.Path)
		if err != nil {
			return "", err
		}
		steps = append(steps, chronicle.Step{Path: f.Path, To: f, Now: now})
		paths = append(paths, f.Path)
	}
	if len(steps) == 0 {
		return "", nil
	}
	out, err := c.restore(ctx, &chronicle.Plan{Snapshot: snap.Seq, Workspace: c.dir, Steps: steps}, true)
	if err != nil {
		return "", fmt.Errorf("restore opx's protected files %s: %w", strings.Join(paths, ", "), err)
	}
	return fmt.Sprintf("opx restored what the command changed in its own configuration (%s): tools may not change it; recorded as entry %d",
		strings.Join(out.Restored, ", "), out.Rollback), nil
}

// protectedDiff compares the protected paths with their state in before,
// scanning only them (when a scan of the whole workspace failed).
func (c *Chronicle) protectedDiff(before *chronicle.Tree) ([]event.FileState, error) {
	was := &chronicle.Tree{}
	for _, f := range before.Items {
		if c.isProtected(f.Path) {
			was.Items = append(was.Items, f)
		}
	}
	now := &chronicle.Tree{}
	for _, root := range c.protected {
		sub, err := chronicle.ScanSubtree(c.fs, root)
		if err != nil {
			return nil, err
		}
		now.Items = append(now.Items, sub.Items...)
	}
	sort.Slice(now.Items, func(i, j int) bool { return now.Items[i].Path < now.Items[j].Path })
	pre, _ := chronicle.Diff(was, now)
	return pre, nil
}

// Diff scans the workspace after a workspace-wide call and returns what
// it changed: each path's state before (from the snapshot's tree) and
// after.
func (c *Chronicle) Diff(before *WorkspaceSnapshot) ([]event.FileState, []event.PostState, error) {
	res, err := c.scanner.Scan(nil)
	if err != nil {
		return nil, nil, err
	}
	pre, post := chronicle.Diff(before.Tree, res.Tree)
	return pre, post, nil
}

// blobStore stores content a scan finds missing, asynchronously: the
// snapshot entry appended after it is what makes it durable.
type blobStore struct {
	c      *Chronicle
	ctx    context.Context
	mu     sync.Mutex
	stored map[ledger.Hash]bool // stored by this scan
	err    error                // a ledger failure
}

func (s *blobStore) Missing(h ledger.Hash) bool {
	s.mu.Lock()
	done := s.stored[h]
	s.mu.Unlock()
	return !done && s.c.missing(h)
}

func (s *blobStore) Put(h ledger.Hash, content []byte) error {
	s.mu.Lock()
	if s.stored[h] {
		s.mu.Unlock()
		return nil
	}
	s.stored[h] = true
	s.mu.Unlock()
	if _, err := s.c.rec.Ledger().PutBlobs(s.ctx, ledger.Async, content); err != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		return err
	}
	s.c.markKnown(h)
	return nil
}

// missing reports whether the ledger lacks blob h.
func (c *Chronicle) missing(h ledger.Hash) bool {
	c.knownM.Lock()
	k := c.known[h]
	c.knownM.Unlock()
	if k {
		return false
	}
	if _, err := c.rec.Ledger().StatBlob(h); err == nil {
		c.markKnown(h)
		return false
	}
	return true
}

func (c *Chronicle) markKnown(h ledger.Hash) {
	c.knownM.Lock()
	c.known[h] = true
	c.knownM.Unlock()
}

// catchUp folds the entries recorded since the index last looked. The
// caller holds the lock; everything it waits on is committed (Sync).
func (c *Chronicle) catchUp(ctx context.Context) error {
	l := c.rec.Ledger()
	if !l.ReadOnly() {
		if err := l.Sync(ctx); err != nil {
			return err
		}
	}
	return l.Range(c.index.Next(), ^uint64(0), c.index.Apply)
}

// Retain applies retention after a snapshot: the oldest snapshots beyond
// the bounds lose the content no kept snapshot shares, recorded as
// chronicle.pruned. The caller holds the lock. A failure is reported and
// retried after the next snapshot: retention never blocks a tool.
func (c *Chronicle) Retain(ctx context.Context) {
	if c.retention == (chronicle.Retention{}) {
		return
	}
	if err := c.retain(ctx); err != nil {
		c.logf("engine: retention: %v", err)
	}
}

func (c *Chronicle) retain(ctx context.Context) error {
	if err := c.catchUp(ctx); err != nil {
		return err
	}
	plan, err := c.index.Prune(c.retention, c.rec.Ledger())
	if err != nil || plan == nil {
		return err
	}
	if len(plan.Blobs) == 0 {
		// Everything the oldest snapshots hold is shared with kept ones:
		// record that they are retired, so they stop counting.
		_, err = c.rec.Record(ctx, ledger.Sync, "", plan.Record())
		return err
	}
	rec, err := event.Record("", plan.Record())
	if err != nil {
		return err
	}
	// Entries recorded since the index last looked (another session's,
	// say) may name a planned blob: the ledger keeps those.
	if err := c.rec.Prune(ctx, rec, c.index.Next()); err != nil {
		return err
	}
	c.knownM.Lock()
	for _, h := range plan.Blobs {
		delete(c.known, h)
	}
	c.knownM.Unlock()
	// The scanner's cache may vouch for content that is gone now.
	c.scanner.Forget()
	return nil
}

func clipList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("... and %d more", len(s)-n))
}
