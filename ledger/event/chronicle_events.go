package event

import (
	"errors"
	"fmt"

	"github.com/opx-dev/opx/ledger"
)

// Types of the chronicle area.
const (
	TypeSnapshot = "chronicle.snapshot"
	TypeRollback = "chronicle.rollback"
	// TypeRollbackStarted is a rollback's plan (an extension of DESIGN's
	// taxonomy: the write-ahead rule applied to rollbacks).
	TypeRollbackStarted = "chronicle.rollback_started"
	TypePruned          = ledger.TypePruned // chronicle.pruned
)

func init() {
	register(func() Payload { return &Snapshot{} })
	register(func() Payload { return &Rollback{} })
	register(func() Payload { return &RollbackStarted{} })
	register(func() Payload { return &Pruned{} })
}

// File states in a snapshot.
const (
	StateFile    = "file"
	StateDir     = "dir"
	StateSymlink = "symlink"
	StateAbsent  = "absent"
)

// FileState is one path's state: a file's content blob and mode, a
// directory, a symlink's target, or absent. A file whose content was not
// kept (larger than the snapshot limit) has Hash and Omitted instead of a
// blob: its state is known, but a rollback cannot restore it.
type FileState struct {
	Path    string `json:"path"` // relative to the workspace, slash-separated
	State   string `json:"state"`
	Mode    uint32 `json:"mode,omitempty"` // permission bits
	Size    int64  `json:"size,omitempty"`
	Blob    string `json:"blob,omitempty"`
	Hash    string `json:"hash,omitempty"`    // content hash when the blob was omitted
	Omitted string `json:"omitted,omitempty"` // why the content was not kept
	Target  string `json:"target,omitempty"`  // symlinks
}

// ContentHash is the BLAKE3 of a file's content, whether kept or not.
func (f FileState) ContentHash() string {
	if f.Blob != "" {
		return f.Blob
	}
	return f.Hash
}

func (f FileState) validate() error {
	if err := firstErr(need("path", f.Path), oneOf("state", f.State, StateFile, StateDir, StateSymlink, StateAbsent)); err != nil {
		return err
	}
	isFile := f.State == StateFile
	switch {
	case isFile && f.Blob == "" && (f.Omitted == "" || f.Hash == ""):
		return fmt.Errorf("%s: a file has a blob, or a hash and the reason its content was omitted", f.Path)
	case isFile && f.Blob != "" && (f.Omitted != "" || f.Hash != ""):
		return fmt.Errorf("%s: a file with a blob has no omitted content", f.Path)
	case !isFile && (f.Blob != "" || f.Hash != "" || f.Omitted != ""):
		return fmt.Errorf("%s: only a file has content", f.Path)
	}
	return firstErr(needBlob("blob", f.Blob, true), needHash("hash", f.Hash, true))
}

// Snapshot kinds.
const (
	// KindFiles snapshots the paths a tool names: Files holds each one's
	// pre-state.
	KindFiles = "files"
	// KindWorkspace snapshots the whole workspace before a tool that may
	// change any of it (a shell command): ManifestBlob holds every path's
	// state (one canonical JSON FileState per line, sorted by path), and
	// Files the entries whose content this snapshot stored because the
	// ledger did not hold it yet, so every content blob is named by an
	// entry. What the tool changed is recorded after it, in
	// exec.completed's pre and post.
	KindWorkspace = "workspace"
)

// Snapshot records the pre-state of every path an action will change,
// before it runs. Its seq is the snapshot id users type.
type Snapshot struct {
	// SubAgentID names the sub-agent whose call this snapshot precedes
	// ("" the session's own agent, or a rollback's own snapshot).
	SubAgentID   string      `json:"subagent_id,omitempty"`
	CallID       string      `json:"call_id"`
	Tool         string      `json:"tool"`
	Kind         string      `json:"kind"`
	Files        []FileState `json:"files"`
	ManifestBlob string      `json:"manifest_blob,omitempty"` // workspace snapshots
	Entries      int64       `json:"entries,omitempty"`       // workspace snapshots: paths in the manifest
	// ManifestSize is the manifest's size when this snapshot stored it
	// (0 when an earlier snapshot had: the same tree), for retention's
	// byte count.
	ManifestSize int64 `json:"manifest_size,omitempty"`
	// Unrecorded names paths a workspace snapshot could not record
	// (names that are not UTF-8, sockets, fifos, devices), quoted.
	Unrecorded []string `json:"unrecorded,omitempty"`
	// Excluded lists the path patterns a workspace snapshot leaves out
	// by configuration (by default .git/objects, which git never changes
	// in place).
	Excluded []string `json:"excluded,omitempty"`
}

func (*Snapshot) Type() string { return TypeSnapshot }

func (s *Snapshot) Validate() error {
	if err := firstErr(need("call_id", s.CallID, "tool", s.Tool), oneOf("kind", s.Kind, KindFiles, KindWorkspace)); err != nil {
		return err
	}
	if s.Files == nil {
		return errors.New("files is required")
	}
	if (s.Kind == KindWorkspace) != (s.ManifestBlob != "") {
		return errors.New("a workspace snapshot, and only one, has a manifest_blob")
	}
	if err := needBlob("manifest_blob", s.ManifestBlob, true); err != nil {
		return err
	}
	for _, f := range s.Files {
		if err := f.validate(); err != nil {
			return err
		}
	}
	return nil
}

// RollbackStarted is a rollback's plan, recorded durably (Sync) before
// the first path changes, after the snapshot of what the rollback will
// overwrite (PreSnapshot): every path it will change and the state it
// will write there (a file's content blob and mode, a directory and its
// mode, a symlink's target, or absent). Its chronicle.rollback names it
// (Plan) and says how it ended. A plan with no outcome is a rollback that
// was interrupted: whoever next opens the ledger for writing (the engine
// at start, or opx rollback) records what the workspace holds at each
// path (chronicle.rollback with Interrupted), and strict verification
// reports a plan still without an outcome.
//
// The plan is its own entry rather than a member of the pre-snapshot so
// that a chronicle.snapshot keeps one meaning (what a change overwrites)
// and the plan and its outcome pair up by seq as exec.started and
// exec.completed do; both are made durable by one fsync.
type RollbackStarted struct {
	Snapshot    uint64 `json:"snapshot,omitempty"` // snapshot seq restored
	Session     string `json:"session,omitempty"`  // or: everything a session changed
	Workspace   string `json:"workspace"`          // the directory it writes into
	PreSnapshot uint64 `json:"pre_snapshot"`       // chronicle.snapshot of what it overwrites
	Forced      bool   `json:"forced"`
	// Files is each path the rollback changes and the state it writes,
	// sorted by path.
	Files []FileState `json:"files"`
}

func (*RollbackStarted) Type() string { return TypeRollbackStarted }

func (r *RollbackStarted) Validate() error {
	if (r.Snapshot == 0) == (r.Session == "") {
		return errors.New("exactly one of snapshot and session")
	}
	if r.PreSnapshot == 0 {
		return errors.New("pre_snapshot is required")
	}
	if err := need("workspace", r.Workspace); err != nil {
		return err
	}
	if len(r.Files) == 0 {
		return errors.New("files is required: a plan changes at least one path")
	}
	for i, f := range r.Files {
		if err := f.validate(); err != nil {
			return err
		}
		if f.State == StateFile && f.Blob == "" {
			return fmt.Errorf("%s: a rollback writes only content it holds (a blob)", f.Path)
		}
		if i > 0 && f.Path <= r.Files[i-1].Path {
			return fmt.Errorf("files are not sorted by path without duplicates at %q", f.Path)
		}
	}
	return nil
}

// Rollback records how a rollback ended: which snapshot (or session) was
// restored, which paths, the state it left, and the snapshot taken of
// what it overwrote, so the rollback can itself be undone. Plan names its
// chronicle.rollback_started.
type Rollback struct {
	Snapshot    uint64   `json:"snapshot,omitempty"` // snapshot seq restored
	Session     string   `json:"session,omitempty"`  // or: everything a session changed
	Plan        uint64   `json:"plan,omitempty"`     // its chronicle.rollback_started
	Files       []string `json:"files"`
	PreSnapshot uint64   `json:"pre_snapshot"` // chronicle.snapshot of the state overwritten
	Forced      bool     `json:"forced"`
	// Post is each planned path's state after the rollback, so that the
	// rollback can itself be rolled back with conflict detection.
	Post []PostState `json:"post,omitempty"`
	// Error says why the rollback stopped part way; Files then lists
	// only what it restored.
	Error string `json:"error,omitempty"`
	// Interrupted says the process carrying the rollback out died before
	// recording how it ended: this entry was recorded later, by recovery,
	// and Post is what the workspace held at each planned path then
	// (measured from disk; Files lists the paths found in their planned
	// state).
	Interrupted bool `json:"interrupted,omitempty"`
}

func (*Rollback) Type() string { return TypeRollback }

func (r *Rollback) Validate() error {
	if (r.Snapshot == 0) == (r.Session == "") {
		return errors.New("exactly one of snapshot and session")
	}
	if r.PreSnapshot == 0 {
		return errors.New("pre_snapshot is required")
	}
	if r.Interrupted && r.Plan == 0 {
		return errors.New("an interrupted rollback names its plan")
	}
	return validatePost(r.Post)
}

// Pruned records blobs removed by retention. Verify accepts exactly these
// blobs as missing after this entry. Snapshots lists the snapshots
// retired; Blobs may be empty when everything they hold is shared with
// snapshots that are kept (nothing is removed, they only stop counting).
type Pruned struct {
	Blobs     []string `json:"blobs"`
	Snapshots []uint64 `json:"snapshots"` // snapshots whose content is gone
	Reason    string   `json:"reason"`
}

func (*Pruned) Type() string { return TypePruned }

func (p *Pruned) Validate() error {
	if len(p.Blobs) == 0 && len(p.Snapshots) == 0 {
		return errors.New("blobs or snapshots is required")
	}
	if p.Blobs == nil {
		return errors.New("blobs is required (empty when the retired snapshots' content is all shared)")
	}
	for _, b := range p.Blobs {
		if err := needHash("blobs[]", b, false); err != nil {
			return err
		}
	}
	return need("reason", p.Reason)
}
