package ledger

import (
	"bytes"
	"context"
	"fmt"
)

// Verified is an entry CheckVerified accepted for a mirror: it parsed,
// carried its seq and chained by its prev. A mirror takes it with
// AppendVerified without parsing it again (the fleet collector checks
// each entry once, when it arrives, and writes it to the mirror later);
// the mirror still refuses one that does not carry its next seq or
// chain onto its head. Only CheckVerified makes one: the zero Verified
// is refused.
type Verified struct {
	raw  []byte
	seq  uint64
	prev Hash
	hash Hash
	ok   bool
}

// CheckVerified is CheckVerbatim, returning what it checked for
// AppendVerified. raw must not change after.
func CheckVerified(seq uint64, prev Hash, raw []byte) (Verified, error) {
	if _, err := checkVerbatim(seq, prev, raw); err != nil {
		return Verified{}, err
	}
	return Verified{raw: raw, seq: seq, prev: prev, hash: Sum(raw), ok: true}, nil
}

// Seq is the entry's seq.
func (v Verified) Seq() uint64 { return v.seq }

// Hash is the entry's hash (the next entry's prev).
func (v Verified) Hash() Hash { return v.hash }

// Raw is the entry's bytes.
func (v Verified) Raw() []byte { return v.raw }

// AppendVerified appends entries CheckVerified accepted, in order, as
// AppendVerbatim does, without parsing them again: each must carry the
// mirror's next seq and chain onto the entry before it (the first that
// does not fails the whole call with an *IntegrityError of kind
// seq-mismatch, gap or hash-mismatch, and nothing is queued).
func (l *Ledger) AppendVerified(ctx context.Context, d Durability, vs ...Verified) ([]Appended, error) {
	if l.readOnly {
		return nil, ErrReadOnly
	}
	if !l.mirror {
		return nil, ErrMirror
	}
	w := l.w
	w.mu.Lock()
	if err := w.refusal(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	seq, prev := w.seq, w.prev
	out := make([]Appended, len(vs))
	own := make([][]byte, len(vs))
	for i, v := range vs {
		seq++
		var err error
		switch {
		case !v.ok:
			err = &IntegrityError{Seq: seq, Kind: KindUnreadable, Detail: "an entry not checked by CheckVerified"}
		case v.seq != seq:
			kind := KindSeqMismatch
			if v.seq > seq {
				kind = KindGap
			}
			err = &IntegrityError{Seq: seq, Kind: kind, Detail: fmt.Sprintf("entry %d where %d comes next", v.seq, seq),
				Expected: fmt.Sprint(seq), Found: fmt.Sprint(v.seq)}
		case v.prev != prev:
			err = &IntegrityError{Seq: seq, Kind: KindHashMismatch, Detail: "prev is not the hash of the entry before",
				Expected: prev.String(), Found: v.prev.String()}
		}
		if err != nil {
			w.mu.Unlock()
			return nil, err
		}
		own[i] = bytes.Clone(v.raw)
		prev = v.hash
		out[i] = Appended{Seq: seq, Hash: prev}
	}
	if w.cur == nil {
		w.cur = &batch{firstSeq: w.seq + 1, done: make(chan struct{})}
	}
	b := w.cur
	b.entries = append(b.entries, own...)
	w.seq, w.prev = seq, prev
	if d == Sync {
		b.hasSync = true
	}
	w.mu.Unlock()
	return out, w.wait(ctx, d, b)
}
