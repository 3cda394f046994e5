package console

import (
	"html/template"
	"net/http"

	"github.com/opx-dev/opx/replay"
)

// sessionView is the session page: the timeline, how it verified, and a
// badge per entry.
type sessionView struct {
	*SessionView
	T        *replay.Timeline
	OTR      bool
	failures map[uint64]bool
	notes    map[uint64][]annotation
	Items    []replay.Item
	base     string
}

// Badge is how one entry shown was checked.
type Badge struct {
	Seq  uint64
	Hash string // BLAKE3 of its stored bytes, hex ("" when not read)
	// Chain: the verification covered it and found nothing wrong.
	Chain bool
	// Failed: the verification found something wrong with it.
	Failed bool
	// Signed: a signed checkpoint's tree holds it (a proof is one click
	// away); Cosigned: a witness cosigned such a tree.
	Signed   bool
	Cosigned bool
	// Session is the session shown (for the link that annotates the
	// entry); Notes are the annotations about the entry.
	Session string
	Notes   []annotation
	// Files: the session has snapshots, so the workspace as of this
	// entry can be rebuilt (a link to it).
	Files bool
}

func (v *sessionView) key() (any, string) { return v.SessionView, "" }

// B is the badge of entry seq.
func (v *sessionView) B(seq uint64) Badge {
	b := Badge{Seq: seq, Hash: v.Hashes[seq]}
	b.Failed = v.failures[seq]
	b.Chain = v.Report != nil && !b.Failed && (v.Report.OK || seq <= v.Report.HeadSeq)
	b.Signed = seq < v.SignedTree
	b.Cosigned = seq < v.Cosigned
	b.Notes = v.notes[seq]
	if v.T != nil {
		b.Session = v.T.Session
		b.Files = len(v.T.Snapshots) > 0
	}
	return b
}

// Badge is the badge of entry seq, rendered (Badge.HTML).
func (v *sessionView) Badge(seq uint64) template.HTML { return v.B(seq).HTML(v.base) }

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) (any, error) {
	sv, err := s.src.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	v := &sessionView{SessionView: sv, T: sv.Timeline, failures: map[uint64]bool{}, notes: annotations(sv.Timeline), base: s.base}
	if sv.Report != nil {
		for _, f := range sv.Report.Failures {
			v.failures[f.Seq] = true
		}
	}
	if v.T != nil {
		v.OTR = v.T.Mode == "otr"
		v.Items = v.T.Items()
	}
	return v, nil
}
