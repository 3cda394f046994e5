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
	TypePruned   = ledger.TypePruned // chronicle.pruned
)

func init() {
	register(func() Payload { return &Snapshot{} })
	register(func() Payload { return &Rollback{} })
	register(func() Payload { return &Pruned{} })
}

// File states in a snapshot.
const (
	StateFile    = "file"
	StateDir     = "dir"
	StateSymlink = "symlink"
	StateAbsent  = "absent"
)

// FileState is one path's pre-state: a file's content blob and mode, a
// directory, a symlink's target, or absent.
type FileState struct {
	Path   string `json:"path"` // relative to the workspace, slash-separated
	State  string `json:"state"`
	Mode   uint32 `json:"mode,omitempty"` // permission bits
	Size   int64  `json:"size,omitempty"`
	Blob   string `json:"blob,omitempty"`
	Target string `json:"target,omitempty"` // symlinks
}

func (f FileState) validate() error {
	if err := firstErr(need("path", f.Path), oneOf("state", f.State, StateFile, StateDir, StateSymlink, StateAbsent)); err != nil {
		return err
	}
	if (f.State == StateFile) != (f.Blob != "") {
		return fmt.Errorf("%s: a file, and only a file, has a blob", f.Path)
	}
	return needHash("blob", f.Blob, true)
}

// Snapshot records the pre-state of every path an action will change,
// before it runs. Its seq is the snapshot id users type.
type Snapshot struct {
	CallID string      `json:"call_id"`
	Tool   string      `json:"tool"`
	Kind   string      `json:"kind"` // "files" (named paths) or "workspace" (before a shell command)
	Files  []FileState `json:"files"`
}

func (*Snapshot) Type() string { return TypeSnapshot }

func (s *Snapshot) Validate() error {
	if err := firstErr(need("call_id", s.CallID, "tool", s.Tool), oneOf("kind", s.Kind, "files", "workspace")); err != nil {
		return err
	}
	if s.Files == nil {
		return errors.New("files is required")
	}
	for _, f := range s.Files {
		if err := f.validate(); err != nil {
			return err
		}
	}
	return nil
}

// Rollback records a rollback: which snapshot (or session) was restored,
// which paths, and the snapshot taken of what it overwrote, so the rollback
// can itself be undone.
type Rollback struct {
	Snapshot    uint64   `json:"snapshot,omitempty"` // snapshot seq restored
	Session     string   `json:"session,omitempty"`  // or: everything a session changed
	Files       []string `json:"files"`
	PreSnapshot uint64   `json:"pre_snapshot"` // chronicle.snapshot of the state overwritten
	Forced      bool     `json:"forced"`
}

func (*Rollback) Type() string { return TypeRollback }

func (r *Rollback) Validate() error {
	if (r.Snapshot == 0) == (r.Session == "") {
		return errors.New("exactly one of snapshot and session")
	}
	if r.PreSnapshot == 0 {
		return errors.New("pre_snapshot is required")
	}
	return nil
}

// Pruned records blobs removed by retention. Verify accepts exactly these
// blobs as missing after this entry.
type Pruned struct {
	Blobs     []string `json:"blobs"`
	Snapshots []uint64 `json:"snapshots"` // snapshots whose content is gone
	Reason    string   `json:"reason"`
}

func (*Pruned) Type() string { return TypePruned }

func (p *Pruned) Validate() error {
	if len(p.Blobs) == 0 {
		return errors.New("blobs is required")
	}
	for _, b := range p.Blobs {
		if err := needHash("blobs[]", b, false); err != nil {
			return err
		}
	}
	return need("reason", p.Reason)
}
