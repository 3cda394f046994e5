package console

import (
	"fmt"
	"io"
	"net/http"

	"github.com/opx-dev/opx/engine/redrive"
)

// PolicyLimit is the largest policy file the what-if form takes (Shield's
// own limit on a policy).
const PolicyLimit = 1 << 20

// whatIfView is every verdict of a session another policy would change.
type whatIfView struct {
	Session, Name string
	*redrive.WhatIfReport
}

// whatIfPost re-judges a session under the uploaded policy (a multipart
// "policy" file, or a "text" field). It changes nothing, but posts a
// file, so it passes the guard as every form does.
func (s *Server) whatIfPost(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := sessionParam(r)
	if err != nil {
		return nil, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, PolicyLimit+64<<10)
	if err := r.ParseMultipartForm(PolicyLimit + 64<<10); err != nil {
		return nil, fmt.Errorf("%w: the policy is over %d bytes or not a form: %w", ErrBadRequest, PolicyLimit, err)
	}
	v := &whatIfView{Session: id}
	var policy []byte
	if f, h, err := r.FormFile("policy"); err == nil {
		defer f.Close()
		v.Name = h.Filename
		if policy, err = io.ReadAll(io.LimitReader(f, PolicyLimit+1)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
	} else {
		policy = []byte(r.PostFormValue("text"))
	}
	if len(policy) == 0 || len(policy) > PolicyLimit {
		return nil, fmt.Errorf("%w: the policy is empty or over %d bytes", ErrBadRequest, PolicyLimit)
	}
	if v.WhatIfReport, err = s.src.WhatIf(r.Context(), id, policy); err != nil {
		return nil, err
	}
	return v, nil
}
