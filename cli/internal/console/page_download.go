package console

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
)

// Downloads are attachments: a browser saves them, never renders them in
// the console's origin, whatever they hold.

var (
	sessionID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)
	hexHash   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func attachment(w http.ResponseWriter, name, ctype string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
}

func sessionParam(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !sessionID.MatchString(id) {
		return "", fmt.Errorf("%w: session id", ErrBadRequest)
	}
	return id, nil
}

func (s *Server) proofDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	seq, err := seqParam(r, "seq")
	if err != nil {
		return nil, err
	}
	b, err := s.src.Proof(r.Context(), seq)
	if err != nil {
		return nil, err
	}
	attachment(w, fmt.Sprintf("proof-%d.json", seq), "application/json")
	w.Write(b)
	return nil, nil
}

func (s *Server) entryDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	seq, err := seqParam(r, "seq")
	if err != nil {
		return nil, err
	}
	b, err := s.src.Entry(r.Context(), seq)
	if err != nil {
		return nil, err
	}
	attachment(w, fmt.Sprintf("entry-%d.json", seq), "application/octet-stream")
	w.Write(b)
	return nil, nil
}

func (s *Server) blobDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	h := r.PathValue("hash")
	if !hexHash.MatchString(h) {
		return nil, fmt.Errorf("%w: blob hash", ErrBadRequest)
	}
	b, err := s.src.Blob(r.Context(), h)
	if err != nil {
		return nil, err
	}
	attachment(w, "blob-"+h[:16]+".bin", "application/octet-stream")
	w.Write(b)
	return nil, nil
}

func (s *Server) reportDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := sessionParam(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := s.src.Report(r.Context(), id, &buf); err != nil {
		return nil, err
	}
	attachment(w, "report-"+id+".html", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
	return nil, nil
}

func (s *Server) exportDownload(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := sessionParam(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := s.src.Export(r.Context(), id, &buf); err != nil {
		return nil, err
	}
	attachment(w, "session-"+id+".tar", "application/x-tar")
	w.Write(buf.Bytes())
	return nil, nil
}
