package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay"
)

// NoteLimit is the longest annotation the console appends.
const NoteLimit = 16 << 10

// annotation is a ledger.note about one entry, shown beside it.
type annotation struct {
	Seq          uint64
	Author, Text string
	Client       string
}

// annotations are the session's notes that name an entry, by that entry.
func annotations(t *replay.Timeline) map[uint64][]annotation {
	out := map[uint64][]annotation{}
	if t == nil {
		return out
	}
	for _, ev := range t.Events {
		if ev.Type != event.TypeNote {
			continue
		}
		var n event.Note
		if json.Unmarshal(ev.Data, &n) != nil || n.About == 0 {
			continue
		}
		out[n.About] = append(out[n.About], annotation{Seq: ev.Seq, Author: n.Author, Text: n.Text, Client: n.Client})
	}
	return out
}

// annotateView is the form that annotates one entry of a session.
type annotateView struct {
	Session string
	About   uint64
	Hash    string
	Notes   []annotation
}

// holds says whether the timeline was built from entry seq (an entry of
// the session: only those are annotated from its page).
func holds(t *replay.Timeline, seq uint64) bool {
	if t == nil {
		return false
	}
	read := t.Read()
	i := sort.Search(len(read), func(i int) bool { return read[i] >= seq })
	return i < len(read) && read[i] == seq
}

func (s *Server) annotatePage(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := sessionParam(r)
	if err != nil {
		return nil, err
	}
	about, err := strconv.ParseUint(r.URL.Query().Get("about"), 10, 64)
	if err != nil || about == 0 {
		return nil, fmt.Errorf("%w: about is the seq of an entry", ErrBadRequest)
	}
	sv, err := s.src.Session(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if !holds(sv.Timeline, about) {
		return nil, fmt.Errorf("%w: entry %d is not one of session %s's", ErrNotFound, about, id)
	}
	return &annotateView{Session: id, About: about, Hash: sv.Hashes[about], Notes: annotations(sv.Timeline)[about]}, nil
}

// annotationPost appends the note (the guard has checked the token and
// the origin) and goes back to the step.
func (s *Server) annotationPost(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := sessionParam(r)
	if err != nil {
		return nil, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, 2*NoteLimit)
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	about, err := strconv.ParseUint(r.PostForm.Get("about"), 10, 64)
	if err != nil || about == 0 {
		return nil, fmt.Errorf("%w: about is the seq of an entry", ErrBadRequest)
	}
	text := r.PostForm.Get("text")
	if strings.TrimSpace(text) == "" || len(text) > NoteLimit {
		return nil, fmt.Errorf("%w: the note is empty or over %d bytes", ErrBadRequest, NoteLimit)
	}
	sv, err := s.src.Session(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if !holds(sv.Timeline, about) {
		return nil, fmt.Errorf("%w: entry %d is not one of session %s's", ErrNotFound, about, id)
	}
	if _, err := s.src.Annotate(r.Context(), id, about, text); err != nil {
		return nil, err
	}
	http.Redirect(w, r, fmt.Sprintf("%s/sessions/%s#seq-%d", s.base, id, about), http.StatusSeeOther)
	return nil, nil
}
