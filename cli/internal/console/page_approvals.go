package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// ReasonLimit is the longest reason an answer may carry.
const ReasonLimit = 4 << 10

var approvalID = regexp.MustCompile(`^apr_[A-Za-z0-9_-]{1,64}$`)

// approvalsView is the approvals inbox: what waits in the running engine
// and the answer just recorded, if any.
type approvalsView struct {
	Offline bool
	Pending []Pending
	// Done is the answer just recorded (after the POST's redirect).
	Done *doneView
}

type doneView struct {
	ID, Answer string
	Seq        uint64
}

func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request) (any, error) {
	v := &approvalsView{}
	q := r.URL.Query()
	var seen uint64
	if x := q.Get("seen"); x != "" {
		n, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: seen is not a seq", ErrBadRequest)
		}
		seen = n
	}
	ps, err := s.listed(r.Context(), seen)
	switch {
	case errors.Is(err, ErrOffline):
		v.Offline = true
	case err != nil:
		return nil, err
	}
	v.Pending = ps
	if id := q.Get("done"); approvalID.MatchString(id) {
		seq, _ := strconv.ParseUint(q.Get("seq"), 10, 64)
		answer := "denied"
		if q.Get("answer") == "approved" {
			answer = "approved"
		}
		v.Done = &doneView{ID: id, Answer: answer, Seq: seq}
	}
	return v, nil
}

// listedWait bounds how long the inbox waits for the engine to list an
// approval whose approval.requested the page has seen.
const listedWait = 2 * time.Second

// listed returns the approvals waiting. With seen (an approval.requested
// entry the page learnt of from the event stream), it first waits until
// the engine lists the approval asked at seen, at most listedWait: the
// engine records the request and then adds it to what it lists, so the
// entry can arrive a moment before the list has it. Once the wait is
// over (it is listed, it was answered meanwhile, or the engine is
// gone), what the engine lists is the answer.
func (s *Server) listed(ctx context.Context, seen uint64) ([]Pending, error) {
	deadline := time.Now().Add(listedWait)
	pause := 2 * time.Millisecond
	for {
		ps, err := s.src.Approvals(ctx)
		if err != nil || seen == 0 || time.Now().After(deadline) {
			return ps, err
		}
		for _, p := range ps {
			if p.Seq == seen {
				return ps, nil
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// approvalAnswer is the inbox's form: answer=approve|deny, reason. The
// guard has checked the token and the origin; the engine records the
// answer (approval.resolved, by this client) before anything runs.
func (s *Server) approvalAnswer(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if !approvalID.MatchString(id) {
		return nil, fmt.Errorf("%w: approval id", ErrBadRequest)
	}
	r.Body = http.MaxBytesReader(w, r.Body, 2*ReasonLimit)
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	var approve bool
	switch r.PostForm.Get("answer") {
	case "approve":
		approve = true
	case "deny":
	default:
		return nil, fmt.Errorf("%w: answer is approve or deny", ErrBadRequest)
	}
	reason := r.PostForm.Get("reason")
	if len(reason) > ReasonLimit {
		return nil, fmt.Errorf("%w: the reason is over %d bytes", ErrBadRequest, ReasonLimit)
	}
	res, err := s.src.Resolve(r.Context(), id, approve, reason)
	if err != nil {
		return nil, err
	}
	answer := "denied"
	if res.Approved {
		answer = "approved"
	}
	q := url.Values{"done": {id}, "answer": {answer}, "seq": {strconv.FormatUint(res.Seq, 10)}}
	http.Redirect(w, r, s.base+"/approvals?"+q.Encode(), http.StatusSeeOther)
	return nil, nil
}
