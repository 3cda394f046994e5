package replay

import (
	"errors"
	"fmt"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/textdiff"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// What a FileChange's diff compares.
const (
	// BasisRecorded: the pre-state and the post-state content both come
	// from the ledger (blobs are content-addressed, so a post-state whose
	// content some entry stored can be read by its hash).
	BasisRecorded = "recorded"
	// BasisWorkspaceMatch: the post-state content was not recorded, but
	// the workspace file now hashes to the recorded post-state: the diff
	// is exact.
	BasisWorkspaceMatch = "workspace-matches-post"
	// BasisWorkspaceNow: the post-state content was not recorded and the
	// workspace has changed since: the diff is of the pre-state against
	// the workspace now, not what the tool left.
	BasisWorkspaceNow = "workspace-now"
	// BasisNone: no diff could be made; Note says why.
	BasisNone = "none"
)

// FileChange is one path a snapshotted tool call changed: its pre-state
// as the snapshot recorded it and the post-state its execution recorded,
// with a unified diff when both contents are known.
type FileChange struct {
	Snapshot uint64 `json:"snapshot"`
	CallID   string `json:"call_id"`
	Tool     string `json:"tool"`
	// ExecSeq is the exec.completed that recorded Post, 0 if none did.
	ExecSeq uint64          `json:"exec_seq,omitempty"`
	Path    string          `json:"path"`
	Pre     event.FileState `json:"pre"`
	// Post is nil when no post-state was recorded (the tool failed, the
	// engine died, or the changes of a command could not be worked out).
	Post    *event.PostState `json:"post,omitempty"`
	Basis   string           `json:"basis"`
	Unified string           `json:"unified,omitempty"`
	// Notes say what is known when content is missing, and how a
	// workspace-now diff differs from the post-state.
	Notes []string `json:"notes"`
}

// WorkspaceReader reads a workspace path's state now and, for a regular
// file small enough, its content (chronicle.Read bound to a workspace).
type WorkspaceReader func(path string) (event.FileState, []byte, error)

// Changes reconstructs the file changes of every snapshot of t, oldest
// first: for a tool that names its paths, each snapshotted path; for a
// workspace-wide tool, the paths exec.completed's pre and post list. now,
// if not nil, is used only for post-state content the ledger does not
// hold. Content read from src is hash-checked; content that cannot be read
// (pruned, missing, corrupt) becomes a note, not an error, so a report can
// still be made of a damaged ledger. An error means src itself failed.
func Changes(src Source, t *Timeline, now WorkspaceReader) ([]FileChange, error) {
	calls := map[uint64]*ToolCall{}
	for _, tc := range t.ToolCalls() {
		if tc.Snapshot != nil {
			calls[tc.Snapshot.Seq] = tc
		}
	}
	out := []FileChange{}
	for _, s := range t.Snapshots {
		tc := calls[s.Seq]
		var x *Execution
		if tc != nil {
			x = tc.Exec
		}
		base := FileChange{Snapshot: s.Seq, CallID: s.CallID, Tool: s.Tool, Notes: []string{}}
		completed := x != nil && x.EndSeq != 0 && x.Error == "" // an exec.completed (exec.failed has an error)
		if completed {
			base.ExecSeq = x.EndSeq
		}
		switch {
		case x == nil || x.Status == "running":
			out = append(out, unknown(base, s, "no result recorded for the call: what it changed is not known")...)
		case !completed:
			out = append(out, unknown(base, s, "the tool failed ("+x.Error+"): no post-state recorded")...)
		case s.Kind == event.KindWorkspace && x.DiffError != "":
			out = append(out, unknown(base, s, "the command's changes were not worked out: "+x.DiffError)...)
		case len(x.Changed) == 0:
			fc := base
			fc.Basis, fc.Notes = BasisNone, []string{nothingChanged(s, x)}
			out = append(out, fc)
		case s.Kind == event.KindWorkspace:
			post := postByPath(x.Post)
			for _, f := range x.Pre {
				out = append(out, change(src, t, now, base, f, post[f.Path]))
			}
		default:
			post := postByPath(x.Post)
			changed := map[string]bool{}
			for _, p := range x.Changed {
				changed[p] = true
			}
			for _, f := range s.Files {
				if changed[f.Path] {
					out = append(out, change(src, t, now, base, f, post[f.Path]))
				}
			}
		}
	}
	return out, nil
}

// nothingChanged says why a call whose changes are on record shows none.
func nothingChanged(s *Snapshot, x *Execution) string {
	what := "the call changed nothing"
	if s.Kind == event.KindWorkspace {
		what = "the command changed no file"
	}
	switch x.Status {
	case event.ExecError:
		return "the tool failed; " + what
	case event.ExecExited:
		return fmt.Sprintf("exit %d; %s", x.ExitCode, what)
	}
	return what
}

// unknown is a snapshot with no diff to show: one FileChange per path it
// names (one without a path for a workspace snapshot), saying why.
func unknown(base FileChange, s *Snapshot, why string) []FileChange {
	if s.Kind != event.KindFiles || len(s.Files) == 0 {
		fc := base
		fc.Basis, fc.Notes = BasisNone, []string{why}
		return []FileChange{fc}
	}
	var out []FileChange
	for _, f := range s.Files {
		fc := base
		fc.Path, fc.Pre, fc.Basis, fc.Notes = f.Path, f, BasisNone, []string{why}
		out = append(out, fc)
	}
	return out
}

func postByPath(post []event.PostState) map[string]*event.PostState {
	m := map[string]*event.PostState{}
	for i := range post {
		m[post[i].Path] = &post[i]
	}
	return m
}

// dirHash is the post-state hash of a directory (chronicle.StateHash).
var dirHash = ledger.Sum([]byte("dir")).String()

// change reconstructs one path.
func change(src Source, t *Timeline, now WorkspaceReader, base FileChange, pre event.FileState, post *event.PostState) FileChange {
	fc := base
	fc.Notes = []string{}
	fc.Path, fc.Pre, fc.Post, fc.Basis = pre.Path, pre, post, BasisNone
	if post == nil {
		fc.Notes = append(fc.Notes, "no post-state recorded for this path")
		return fc
	}
	if pre.State != event.StateFile && pre.State != event.StateAbsent {
		fc.Notes = append(fc.Notes, fmt.Sprintf("was a %s; %s", describePre(pre), describePost(post)))
		return fc
	}
	if !post.Absent && post.Hash == dirHash {
		fc.Notes = append(fc.Notes, fmt.Sprintf("was %s; now a directory", describePre(pre)))
		return fc
	}
	var old []byte
	if pre.State == event.StateFile {
		b, note := content(src, t, pre.ContentHash(), "pre-state")
		if note != "" {
			if pre.Omitted != "" {
				note = fmt.Sprintf("pre-state content not kept (%s), hash %s", pre.Omitted, pre.Hash)
			}
			fc.Notes = append(fc.Notes, note)
			return fc
		}
		old = b
	}
	var cur []byte
	basis := BasisRecorded
	if !post.Absent {
		b, note := content(src, t, post.Hash, "post-state")
		if note != "" {
			b, basis, note = fromWorkspace(now, pre.Path, post.Hash, note)
			fc.Notes = append(fc.Notes, note)
			if b == nil {
				return fc
			}
		}
		cur = b
	}
	oldName, newName := "a/"+pre.Path, "b/"+pre.Path
	if pre.State == event.StateAbsent {
		oldName = "/dev/null"
	}
	if post.Absent {
		newName = "/dev/null"
	}
	fc.Basis = basis
	fc.Unified = textdiff.Unified(oldName, newName, old, cur, diffContext)
	if fc.Unified == "" && pre.Mode != post.Mode && post.Mode != 0 {
		fc.Notes = append(fc.Notes, fmt.Sprintf("content unchanged; mode %#o, then %#o", pre.Mode, post.Mode))
	}
	return fc
}

// content reads a blob by its hex hash, hash-checked; on failure it says
// why in a note instead.
func content(src Source, t *Timeline, hex, what string) ([]byte, string) {
	h, err := ledger.ParseHash(hex)
	if err != nil {
		return nil, fmt.Sprintf("%s content: %v", what, err)
	}
	b, err := src.GetBlob(h)
	switch {
	case err == nil:
		return b, ""
	case errors.Is(err, ledger.ErrNotFound):
		if seq, ok := t.PrunedBy(hex); ok {
			return nil, fmt.Sprintf("%s content pruned by retention (entry %d), hash %s", what, seq, hex)
		}
		return nil, fmt.Sprintf("%s content not recorded, hash %s", what, hex)
	default:
		return nil, fmt.Sprintf("%s content unreadable (%v), hash %s", what, err, hex)
	}
}

// fromWorkspace stands in for post-state content the ledger does not
// hold: the workspace file now, exact when it still hashes to the
// recorded post-state, else labelled as the workspace now.
func fromWorkspace(now WorkspaceReader, path, postHash, missing string) ([]byte, string, string) {
	if now == nil {
		return nil, BasisNone, missing
	}
	st, b, err := now(path)
	switch {
	case err != nil:
		return nil, BasisNone, missing + "; the workspace file cannot be read: " + err.Error()
	case st.State != event.StateFile || b == nil:
		return nil, BasisNone, missing + "; the workspace now has " + describePre(st)
	case chronicle.StateHash(st) == postHash:
		return b, BasisWorkspaceMatch, missing + "; the workspace file still hashes to it, so its content is the post-state"
	default:
		return b, BasisWorkspaceNow, missing + "; diff against the workspace now (hash " + chronicle.StateHash(st) +
			"), which changed since: not the state the tool left"
	}
}

func describePre(f event.FileState) string {
	switch f.State {
	case event.StateFile:
		return fmt.Sprintf("file (%d bytes, mode %#o)", f.Size, f.Mode)
	case event.StateSymlink:
		return "symlink to " + f.Target
	case event.StateDir:
		return fmt.Sprintf("directory (mode %#o)", f.Mode)
	default:
		return f.State
	}
}

func describePost(p *event.PostState) string {
	switch {
	case p.Absent:
		return "then absent"
	case p.Hash == dirHash:
		return "then a directory"
	default:
		return "then hash " + p.Hash
	}
}
