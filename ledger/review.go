package ledger

import (
	"bytes"
	"encoding/json"
)

// Review is a ledger read for one review (opx replay, opx report) that
// proves what it shows instead of verifying every entry: it reads the
// ledger once, through its RangeRaw, for whoever builds the view (Range
// and GetBlob pass through), noting on the way the few entries the proof
// needs: the signed checkpoints, the verifier keys, and the entries the
// cross-entry rules read whatever their session (rollback plans and
// outcomes, engine starts, retention). Verify then checks the view's
// entries against the latest signed checkpoint.
type Review struct {
	l       *Ledger
	through uint64 // the noted entries are those up to here (exclusive)
	cp      *noted // the latest ledger.checkpoint (signed or not)
	signed  *noted // the latest signed one
	keys    []noted
	rules   []noted // rollback_started, rollback, engine.started, pruned
}

// noted is an entry Review kept: its seq and stored bytes.
type noted struct {
	seq uint64
	raw []byte
}

// Entry types the review notes besides checkpoints and keys: those that
// the cross-entry (causality) rules and retention read from every session.
const (
	typeRollbackStarted = "chronicle.rollback_started"
	typeRollback        = "chronicle.rollback"
	typeEngineStarted   = "engine.started"
)

// NewReview starts a review of l.
func (l *Ledger) NewReview() *Review { return &Review{l: l} }

// Range passes through to the ledger.
func (r *Review) Range(from, to uint64, fn func(Entry) error) error { return r.l.Range(from, to, fn) }

// GetBlob passes through to the ledger.
func (r *Review) GetBlob(h Hash) ([]byte, error) { return r.l.GetBlob(h) }

// RangeRaw is the ledger's RangeRaw, noting the entries Verify needs.
func (r *Review) RangeRaw(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	return r.l.RangeRaw(from, to, func(seq uint64, raw []byte) error {
		if seq >= r.through {
			r.note(seq, raw)
			r.through = seq + 1
		}
		return fn(seq, raw)
	})
}

// note keeps the entry if its type is one Verify needs. It reads the
// type from the canonical tail (`"type":"T"}`, the last member); an entry
// not in canonical form is not noted (it is not shown either, and the
// full check reports it). It runs for every entry of the ledger, so it
// looks at a few dozen bytes and allocates nothing for the others.
func (r *Review) note(seq uint64, raw []byte) {
	typ := tailType(raw)
	switch string(typ) {
	case TypeCheckpoint, typeKey, typeRollbackStarted, typeRollback, typeEngineStarted, TypePruned:
	default:
		return
	}
	n := noted{seq: seq, raw: append([]byte(nil), raw...)}
	switch string(typ) {
	case TypeCheckpoint:
		r.cp = &n
		if bytes.Contains(raw, []byte(`"note":"`)) {
			r.signed = &n
		}
	case typeKey:
		r.keys = append(r.keys, n)
	default:
		r.rules = append(r.rules, n)
	}
}

// tailType returns the value of a canonical entry's last member when it
// is "type" (`..."type":"T"}`), else nil.
func tailType(raw []byte) []byte {
	const member = `"type":"`
	n := len(raw)
	if n < len(member)+3 || raw[n-1] != '}' || raw[n-2] != '"' {
		return nil
	}
	for i := n - 3; i >= len(member); i-- {
		switch raw[i] {
		case '"':
			if string(raw[i-len(member)+1:i+1]) != member {
				return nil
			}
			return raw[i+1 : n-2]
		case '\\':
			return nil
		}
	}
	return nil
}

// RecordedKeys returns the ledger.key entries read so far: their seqs and
// verifier keys (as recorded; not checked here), in seq order.
func (r *Review) RecordedKeys() (seqs []uint64, vkeys []string) {
	for _, k := range r.keys {
		var kd struct {
			VKey string `json:"vkey"`
		}
		if e, err := ParseEntry(k.raw); err == nil && json.Unmarshal(e.Data, &kd) == nil {
			seqs, vkeys = append(seqs, k.seq), append(vkeys, kd.VKey)
		}
	}
	return seqs, vkeys
}

// ReviewVerification says how a review was verified: Mode "checkpoint"
// (the shown entries proved against the signed checkpoint, the entries
// after it checked in full) or "full" (every entry); Summary says it in
// one line.
type ReviewVerification struct {
	Mode          string `json:"mode"`
	CheckpointSeq uint64 `json:"checkpoint_seq,omitempty"`
	TreeSize      uint64 `json:"tree_size,omitempty"`
	Root          string `json:"root,omitempty"`
	Key           string `json:"key,omitempty"`
	KeyPinned     bool   `json:"key_pinned,omitempty"`
	// KeySeq is the ledger.key entry of the recorded key used (0 when
	// pinned); KeysRecorded counts the ledger's ledger.key entries: more
	// than one means the signing key was replaced.
	KeySeq       uint64 `json:"key_seq,omitempty"`
	KeysRecorded int    `json:"keys_recorded"`
	// Proved counts the entries proved against the checkpoint: by
	// inclusion proof, or by the chain from a proved entry.
	Proved uint64 `json:"proved,omitempty"`
	// After counts the entries after the checkpoint, checked in full.
	After   uint64 `json:"after_checkpoint,omitempty"`
	Summary string `json:"summary"`
}

// ReviewOptions tune Review.Verify.
type ReviewOptions struct {
	// Verify are the strict checks (canonical form, payloads, and
	// CheckOrder/CheckEnd, the causality rules) run on the shown entries
	// and on those after the checkpoint.
	Verify VerifyOptions
	// Span is the first and last seq of the session's own activity:
	// every entry between them, of any session, is proved, so none of
	// the session's can be hidden there.
	Span [2]uint64
	// Key, if set, is the verifier key to check the checkpoint with
	// (pinned); else the key the ledger recorded last before it.
	Key string
}

// Verify proves the entries shown (seqs, ascending, all at most the
// head) and the session's span against the latest signed checkpoint, and
// checks in full (chain, head, strict checks, blobs) every entry after
// it. It returns a nil ReviewVerification when the ledger has no signed
// checkpoint: the caller then verifies in full. The whole ledger must
// have been read through RangeRaw first (Verify reads what is missing).
func (r *Review) Verify(shown []uint64, opts ReviewOptions) (*Report, *ReviewVerification, error) {
	head, err := r.l.Head()
	if err != nil {
		return nil, nil, err
	}
	if r.through <= head.Seq {
		if err := r.RangeRaw(r.through, head.Seq, func(uint64, []byte) error { return nil }); err != nil {
			return nil, nil, err
		}
	}
	if r.signed == nil {
		return nil, nil, nil
	}
	rv := &reviewRun{r: r, opts: opts, rep: &Report{Failures: []*IntegrityError{}}, head: head}
	if err := rv.run(shown); err != nil {
		return nil, nil, err
	}
	rv.rep.finish()
	return rv.rep, rv.how, nil
}
