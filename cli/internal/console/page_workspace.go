package console

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger/event"
	"net/http"
	"strconv"

	"github.com/opx-dev/opx/replay"
)

// workspaceView is the workspace of a session as of one of its entries
// (replay.WorkspaceAt over its snapshots and changes), and one file of
// it when a path is asked for.
type workspaceView struct {
	Session string
	At      uint64
	Files   []replay.WorkspaceFile
	// File is the path asked for (nil: none); Content its content read
	// from the ledger (hash-checked), Missing why there is none.
	File    *replay.WorkspaceFile
	Content *Clip
	Missing string
	// More counts the paths past WorkspaceListLimit left out of the list.
	More int
	// Manifest is the workspace snapshot whose full manifest was read
	// (0: none).
	Manifest uint64
}

// WorkspaceListLimit is the most paths the workspace page lists (a
// workspace snapshot's manifest names every file of the workspace).
const WorkspaceListLimit = 5000

// ManifestLimit is the largest workspace manifest the page reads.
const ManifestLimit = 64 << 20

// manifestAt reads the full manifest of the workspace snapshot that
// describes the workspace at entry at: the latest at or before it, or
// else the first after it (the state before that command ran, shown as
// later). One manifest: it names every path, so an earlier one adds
// nothing an execution's pre and post-states do not. It is read from the
// ledger, hash-checked, and parsed as chronicle reads it (strictly);
// one that cannot be read is left out (the snapshot's own Files count).
func (s *Server) manifestAt(r *http.Request, t *replay.Timeline, at uint64) (map[uint64][]event.FileState, error) {
	var pick *replay.Snapshot
	for _, sn := range t.Snapshots {
		if sn.Kind != event.KindWorkspace || sn.ManifestBlob == "" {
			continue
		}
		if sn.Seq <= at || pick == nil {
			pick = sn
		}
		if sn.Seq > at {
			break
		}
	}
	if pick == nil {
		return nil, nil
	}
	b, err := s.src.Blob(r.Context(), pick.ManifestBlob)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil // pruned, or never kept: the snapshot's Files count
	case err != nil:
		return nil, err
	case len(b) > ManifestLimit:
		return nil, nil
	}
	tree, err := chronicle.DecodeTree(b)
	if err != nil {
		return nil, nil
	}
	return map[uint64][]event.FileState{pick.Seq: tree.Items}, nil
}

func (s *Server) workspacePage(w http.ResponseWriter, r *http.Request) (any, error) {
	sv, err := s.src.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	t := sv.Timeline
	if t == nil {
		return nil, fmt.Errorf("%w: no timeline", ErrNotFound)
	}
	v := &workspaceView{Session: t.Session, At: t.LastSeq}
	if q := r.URL.Query().Get("at"); q != "" {
		if v.At, err = strconv.ParseUint(q, 10, 64); err != nil {
			return nil, fmt.Errorf("%w: at is not a seq", ErrBadRequest)
		}
		if !holds(t, v.At) {
			return nil, fmt.Errorf("%w: entry %d is not of session %s", ErrNotFound, v.At, t.Session)
		}
	}
	manifests, err := s.manifestAt(r, t, v.At)
	if err != nil {
		return nil, err
	}
	for seq := range manifests {
		v.Manifest = seq
	}
	v.Files = replay.WorkspaceAt(t, sv.Changes, v.At, manifests)
	if len(v.Files) > WorkspaceListLimit && r.URL.Query().Get("path") == "" {
		v.More = len(v.Files) - WorkspaceListLimit
		v.Files = v.Files[:WorkspaceListLimit]
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		return v, nil
	}
	for i := range v.Files {
		if v.Files[i].Path == path {
			v.File = &v.Files[i]
		}
	}
	if v.File == nil {
		return nil, fmt.Errorf("%w: no record of that path", ErrNotFound)
	}
	switch {
	case v.File.Hash == "":
		v.Missing = "not a file: " + v.File.State
	case v.File.Omitted != "":
		v.Missing = "content not kept (" + v.File.Omitted + ")"
	default:
		b, err := s.src.Blob(r.Context(), v.File.Hash)
		switch {
		case errors.Is(err, ErrNotFound):
			v.Missing = "content not recorded in the ledger (or pruned)"
		case err != nil:
			return nil, err
		default:
			c := clip(string(b), ValueLimit)
			v.Content = &c
		}
	}
	return v, nil
}
