package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
	"github.com/opx-dev/opx/shield/manifest"
)

// Manifests are the changes a file tool's write or edit makes to a file
// a toolchain reads to fetch or run code (shield/manifest): the file as
// it is before the call, read through FS as the executor would open it,
// and as the call would leave it, both parsed. Nil without FS, for a tool
// that writes no manifest, and for a call with no change (an edit whose
// text does not occur is refused by the executor anyway). A file over
// manifest.MaxBytes, or one that does not parse, is a change with an
// Error, which Shield asks about.
func (e ShieldEvaluator) Manifests(p Proposal) []event.ManifestChanges {
	if e.FS == nil || (p.Tool != "write_file" && p.Tool != "edit_file") {
		return nil
	}
	var args struct {
		Path, Content, Old, New string
		ReplaceAll              bool `json:"replace_all"`
	}
	if json.Unmarshal(p.Args, &args) != nil || args.Path == "" {
		return nil
	}
	rel, ok := e.workspaceRel(p, args.Path)
	if !ok {
		return nil // outside the workspace: the policy and tier 1 judge that
	}
	format := manifest.Format(rel)
	if format == "" {
		return nil
	}
	before, err := e.readManifest(rel)
	if err != nil {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: err.Error()}}
	}
	var after []byte
	switch p.Tool {
	case "write_file":
		after = []byte(args.Content)
	case "edit_file":
		n := strings.Count(string(before), args.Old)
		if before == nil || args.Old == "" || n == 0 || (n > 1 && !args.ReplaceAll) {
			return nil // the executor refuses the edit: nothing changes
		}
		if !args.ReplaceAll {
			n = 1
		}
		after = []byte(strings.Replace(string(before), args.Old, args.New, n))
	}
	changes, err := manifest.Diff(rel, before, after)
	if err != nil {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: err.Error()}}
	}
	changes = e.withinWorkspace(rel, changes)
	if len(changes) == 0 {
		return nil
	}
	out := event.ManifestChanges{Path: rel, Format: format, Changes: make([]event.ManifestChange, len(changes))}
	for i, c := range changes {
		out.Changes[i] = event.ManifestChange{Kind: c.Kind, Key: c.Key, Detail: c.Detail}
	}
	return []event.ManifestChanges{out}
}

// workspaceRel is the workspace-relative path a tool's path argument
// names, where it leads through symlinks (p.Links) when it does; false
// when that is outside the workspace.
func (e ShieldEvaluator) workspaceRel(p Proposal, raw string) (string, bool) {
	ws := e.S.ResolvePath(".")
	abs := e.S.ResolvePath(raw)
	if to, ok := p.Links[raw]; ok {
		if path.IsAbs(to) {
			abs = to
		} else {
			abs = path.Join(ws, to)
		}
	}
	rel, ok := strings.CutPrefix(abs, ws+"/")
	return rel, ok && rel != ""
}

// readManifest reads a workspace file of at most manifest.MaxBytes: nil
// when it does not exist. It opens without blocking and reads only a
// regular file (a FIFO named go.mod must not hang the engine's verdict).
func (e ShieldEvaluator) readManifest(rel string) ([]byte, error) {
	f, err := e.FS.Open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		var pe *executor.PathError
		if errors.Is(err, fs.ErrNotExist) || errors.As(err, &pe) && pe.Errno == unix.ENOENT {
			return nil, nil
		}
		return nil, fmt.Errorf("%s could not be read before the change to judge it: %v", rel, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: its change cannot be judged", rel)
	}
	if st.Size() > manifest.MaxBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d Shield parses", rel, st.Size(), manifest.MaxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, manifest.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > manifest.MaxBytes {
		return nil, fmt.Errorf("%s grew over the %d bytes Shield parses", rel, manifest.MaxBytes)
	}
	return b, nil
}

// withinWorkspace drops the changes that point at a directory inside
// the workspace (a go.mod replace or go.work use of a sibling module, a
// path dependency on a crate of the same repository): the workspace's
// own code is judged where it is written, not where it is used.
func (e ShieldEvaluator) withinWorkspace(rel string, cs []manifest.Change) []manifest.Change {
	ws := e.S.ResolvePath(".")
	out := cs[:0]
	for _, c := range cs {
		if dir := c.Local; dir != "" && !strings.HasPrefix(dir, "~") {
			target := path.Join(ws, path.Dir(rel), dir)
			if path.IsAbs(dir) {
				target = path.Clean(dir)
			}
			if target == ws || strings.HasPrefix(target, ws+"/") {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// supplyOf is what p changes in manifests (p.Manifests, as observed and
// recorded) as Shield's facts.
func supplyOf(ws string, p Proposal) []shield.Supply {
	var out []shield.Supply
	for _, m := range p.Manifests {
		at := path.Join(ws, m.Path)
		if m.Error != "" {
			out = append(out, shield.Supply{Path: at, By: p.Tool, Error: m.Error})
			continue
		}
		for _, c := range m.Changes {
			out = append(out, shield.Supply{Path: at, Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: p.Tool})
		}
	}
	return out
}
