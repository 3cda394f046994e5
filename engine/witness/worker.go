package witness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	"golang.org/x/mod/sumdb/note"
)

// worker submits checkpoints to one witness.
type worker struct {
	s       *Submitter
	url     string
	v       note.Verifier
	keyHash string
	wake    chan struct{} // holds one token: a checkpoint is pending

	mu                              sync.Mutex
	pending                         *checkpoint
	cosigned                        uint64 // the largest size the witness cosigned (recorded)
	witnessAt                       uint64 // the size the witness stated in its last 409 (0: none since)
	submitted, nCosigned, conflicts uint64
	lastErr                         string
	lastErrAt                       time.Time
	alert                           string
	alertKind                       string
	alertAt                         time.Time
	// recordedAlert is the kind this run last recorded: the same kind is
	// not recorded again until the witness cosigns.
	recordedAlert string
}

// offer makes cp the pending checkpoint unless a larger one is pending;
// it wakes the goroutine.
func (w *worker) offer(cp *checkpoint) {
	w.mu.Lock()
	if w.pending == nil || cp.size >= w.pending.size {
		w.pending = cp
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Status{URL: w.url, Name: w.v.Name(), KeyHash: w.keyHash, CosignedSize: w.cosigned,
		Submitted: w.submitted, Cosigned: w.nCosigned, Conflicts: w.conflicts,
		LastError: w.lastErr, LastErrorAt: w.lastErrAt, Alert: w.alert, AlertKind: w.alertKind, AlertAt: w.alertAt}
	if w.pending != nil {
		st.PendingSize = w.pending.size
	}
	return st
}

// run submits the pending checkpoint whenever there is one, until ctx
// ends, backing off after failures that may pass.
func (w *worker) run(ctx context.Context, stop <-chan struct{}) {
	backoff := time.Duration(0)
	for {
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		} else {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-w.wake:
			}
		}
		w.mu.Lock()
		cp := w.pending
		w.mu.Unlock()
		if cp == nil {
			backoff = 0
			continue
		}
		retry := w.submit(ctx, cp)
		w.mu.Lock()
		if !retry && w.pending == cp {
			w.pending = nil
		}
		newer := w.pending != nil && w.pending != cp
		w.mu.Unlock()
		switch {
		case newer:
			backoff = 0
			select { // go round at once
			case w.wake <- struct{}{}:
			default:
			}
		case retry:
			backoff = min(max(2*backoff, w.s.opts.MinBackoff), w.s.opts.MaxBackoff)
		default:
			backoff = 0
		}
	}
}

// submit makes the add-checkpoint requests for cp (following the
// witness's 409s) and reports whether to retry it later.
func (w *worker) submit(ctx context.Context, cp *checkpoint) (retry bool) {
	for range maxConflicts {
		w.mu.Lock()
		cosigned, stated := w.cosigned, w.witnessAt
		w.mu.Unlock()
		if cp.size <= cosigned {
			return false // it cosigned this tree, or a larger one
		}
		old := max(cosigned, stated)
		if old > cp.size {
			w.raise(ctx, cp, event.WitnessAhead, 0, old, old, fmt.Sprintf(
				"the witness holds a tree of %d entries of this ledger, larger than the checkpoint of %d: the ledger was truncated or restored from an older copy", old, cp.size))
			return false
		}
		req := tlog.AddCheckpointRequest{OldSize: old, Checkpoint: cp.note}
		if old > 0 && old < cp.size {
			hs, err := w.s.opts.Ledger.ConsistencyProof(old, cp.size)
			if err != nil {
				w.fail(fmt.Sprintf("consistency proof from %d to %d: %v", old, cp.size, err))
				return true
			}
			if len(hs) > tlog.MaxProofLines {
				w.fail(fmt.Sprintf("consistency proof from %d to %d has %d lines (at most %d)", old, cp.size, len(hs), tlog.MaxProofLines))
				return false
			}
			for _, h := range hs {
				var a [32]byte
				copy(a[:], h)
				req.Proof = append(req.Proof, a)
			}
		}
		status, ctype, body, err := w.post(ctx, req.Marshal())
		w.mu.Lock()
		w.submitted++
		w.mu.Unlock()
		if err != nil {
			w.fail(err.Error())
			return ctx.Err() == nil
		}
		switch status {
		case http.StatusOK:
			return w.cosign(ctx, cp, old, body)
		case http.StatusConflict:
			n, err := tlog.ParseSize(body)
			if old == cp.size && (err != nil || n == old) {
				// The spec's 409 for a root other than the one the
				// witness cosigned at this size (omniwitness sends it
				// with no body).
				w.raise(ctx, cp, event.WitnessBadProof, status, old, old, fmt.Sprintf(
					"the witness cosigned another root for the tree of %d entries of this ledger: the ledger was rewritten, or restored from an older copy and grown again: %s", old, clip(body)))
				return false
			}
			if err != nil || !strings.HasPrefix(ctype, tlog.ContentTypeSize) {
				w.raise(ctx, cp, event.WitnessProtocol, status, old, 0, fmt.Sprintf(
					"409 whose body is not a %s size (content type %q): %s", tlog.ContentTypeSize, ctype, clip(body)))
				return false
			}
			w.mu.Lock()
			w.conflicts++
			w.mu.Unlock()
			switch {
			case n < cosigned:
				w.raise(ctx, cp, event.WitnessRewound, status, old, n, fmt.Sprintf(
					"the witness states it holds %d entries of this ledger, below the %d it cosigned (recorded): it lost its state, or is not the witness it was", n, cosigned))
				return false
			case n == old:
				w.raise(ctx, cp, event.WitnessProtocol, status, old, n, fmt.Sprintf("409 stating the old size sent, %d", n))
				return false
			case n > cp.size:
				w.raise(ctx, cp, event.WitnessAhead, status, old, n, fmt.Sprintf(
					"the witness holds a tree of %d entries of this ledger, larger than the checkpoint of %d: the ledger was truncated or restored from an older copy", n, cp.size))
				return false
			}
			w.s.opts.Logf("witness %s: 409, it holds %d entries of this ledger (old size sent %d): proving from there", w.v.Name(), n, old)
			w.mu.Lock()
			w.witnessAt = n
			w.mu.Unlock()
		case http.StatusNotFound:
			w.raise(ctx, cp, event.WitnessUnknownOrigin, status, old, 0, fmt.Sprintf(
				"the witness does not know the origin %q (list the log with it: its origin and verifier key): %s", w.s.opts.Origin, clip(body)))
			return false
		case http.StatusForbidden:
			w.raise(ctx, cp, event.WitnessBadSignature, status, old, 0, fmt.Sprintf(
				"the witness does not accept the ledger's signature on the checkpoint (it lists another verifier key for %q): %s", w.s.opts.Origin, clip(body)))
			return false
		case http.StatusUnprocessableEntity:
			w.raise(ctx, cp, event.WitnessBadProof, status, old, 0, fmt.Sprintf(
				"the witness rejected the consistency proof from %d to %d: the ledger does not extend the tree it saw (rewritten, or restored from an older copy): %s", old, cp.size, clip(body)))
			return false
		case http.StatusTooManyRequests:
			w.fail(fmt.Sprintf("429 (rate limited): %s", clip(body)))
			return true
		default:
			if status >= 500 {
				w.fail(fmt.Sprintf("%d: %s", status, clip(body)))
				return true
			}
			w.raise(ctx, cp, event.WitnessProtocol, status, old, 0, fmt.Sprintf("unexpected %d: %s", status, clip(body)))
			return false
		}
	}
	w.fail(fmt.Sprintf("the witness answered 409 %d times for the checkpoint of %d entries", maxConflicts, cp.size))
	return true
}

// post makes one add-checkpoint request.
func (w *worker) post(ctx context.Context, body []byte) (status int, ctype string, answer []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url+tlog.AddCheckpointPath, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	resp, err := w.s.opts.Client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return 0, "", nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(answer) > MaxAnswerBytes {
		return 0, "", nil, fmt.Errorf("the answer is larger than %d bytes", MaxAnswerBytes)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), answer, nil
}

// cosign checks a 200's cosignature lines and records the cosigned
// checkpoint.
func (w *worker) cosign(ctx context.Context, cp *checkpoint, old uint64, lines []byte) (retry bool) {
	merged := append(bytes.Clone(cp.note), lines...)
	if len(lines) == 0 || lines[len(lines)-1] != '\n' || !cosignedBy(merged, w.v) {
		w.raise(ctx, cp, event.WitnessBadCosignature, http.StatusOK, old, 0, fmt.Sprintf(
			"200 without a cosignature line that verifies under %s+%s: %s", w.v.Name(), w.keyHash, clip(lines)))
		return false
	}
	c := &event.Cosigned{Witness: w.v.Name(), KeyHash: w.keyHash, TreeSize: cp.size, TreeRoot: cp.root, Note: string(merged)}
	if err := w.s.opts.Record(ctx, c); err != nil {
		w.fail(fmt.Sprintf("recording the cosignature: %v", err))
		return ctx.Err() == nil && !errors.Is(err, context.Canceled)
	}
	w.mu.Lock()
	w.cosigned = max(w.cosigned, cp.size)
	w.witnessAt = 0
	w.nCosigned++
	w.lastErr, w.lastErrAt = "", time.Time{}
	w.alert, w.alertKind, w.alertAt, w.recordedAlert = "", "", time.Time{}, ""
	w.mu.Unlock()
	return false
}

// fail notes an error that may pass (shown by Status, not recorded).
func (w *worker) fail(msg string) {
	w.mu.Lock()
	w.lastErr, w.lastErrAt = msg, time.Now()
	w.mu.Unlock()
	w.s.opts.Logf("witness %s (%s): %s", w.v.Name(), w.url, msg)
}

// raise records an alert (once per kind until the witness cosigns again)
// and shows it.
func (w *worker) raise(ctx context.Context, cp *checkpoint, kind string, status int, old, stated uint64, detail string) {
	if len(detail) > event.MaxAlertDetail {
		detail = detail[:event.MaxAlertDetail]
	}
	w.mu.Lock()
	w.alert, w.alertKind, w.alertAt = detail, kind, time.Now()
	again := w.recordedAlert == kind
	w.recordedAlert = kind
	w.mu.Unlock()
	w.s.opts.Logf("witness %s (%s): alert %s: %s", w.v.Name(), w.url, kind, detail)
	if again {
		return
	}
	a := &event.WitnessAlert{Witness: w.v.Name(), KeyHash: w.keyHash, URL: w.url, Kind: kind, TreeSize: cp.size,
		OldSize: old, Status: status, WitnessSize: stated, Detail: detail}
	if err := w.s.opts.Record(ctx, a); err != nil {
		w.mu.Lock()
		w.recordedAlert = ""
		w.mu.Unlock()
		w.fail(fmt.Sprintf("recording the alert: %v", err))
	}
}

// clip shortens a witness's answer for a message.
func clip(b []byte) string {
	s := strings.ToValidUTF8(strings.TrimSpace(string(b)), "?")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
