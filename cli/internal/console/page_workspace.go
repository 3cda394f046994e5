package console

import (
	"errors"
	"fmt"
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
	v.Files = replay.WorkspaceAt(t, sv.Changes, v.At)
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
