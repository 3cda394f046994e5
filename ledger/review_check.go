package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	bolt "go.etcd.io/bbolt"
)

// reviewRun is one Review.Verify.
type reviewRun struct {
	r    *Review
	opts ReviewOptions
	rep  *Report
	how  *ReviewVerification
	head Head
	cp   tlog.Checkpoint
}

func (rv *reviewRun) fail(seq uint64, kind Kind, format string, args ...any) {
	rv.rep.add(&IntegrityError{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

func (rv *reviewRun) run(shown []uint64) error {
	r := rv.r
	sc := r.signed
	e, err := ParseEntry(sc.raw)
	var c CheckpointPayload
	if err == nil {
		err = json.Unmarshal(e.Data, &c)
	}
	if err != nil {
		rv.fail(sc.seq, KindCheckpoint, "signed checkpoint does not parse: %v", err)
		return nil
	}
	key, pinned, keySeq := rv.opts.Key, rv.opts.Key != "", uint64(0)
	if !pinned {
		for _, k := range r.keys {
			if k.seq < sc.seq {
				var kd struct {
					VKey string `json:"vkey"`
				}
				if ke, err := ParseEntry(k.raw); err == nil && json.Unmarshal(ke.Data, &kd) == nil {
					key, keySeq = kd.VKey, k.seq
				}
			}
		}
	}
	rv.how = &ReviewVerification{Mode: "checkpoint", CheckpointSeq: sc.seq, Key: key, KeyPinned: pinned,
		KeySeq: keySeq, KeysRecorded: len(r.keys)}
	v, err := tlog.ParseVerifierKey(key)
	if err != nil {
		rv.fail(sc.seq, KindCheckpoint, "no usable verifier key for the checkpoint at %d: %v", sc.seq, err)
		return nil
	}
	if rv.cp, err = tlog.Open([]byte(c.Note), v); err != nil {
		rv.fail(sc.seq, KindCheckpoint, "%v", err)
		return nil
	}
	cp := rv.cp
	rv.how.TreeSize, rv.how.Root = cp.Size, cp.RootString()
	if cp.Size != c.TreeSize || cp.Size != sc.seq || cp.RootString() != c.TreeRoot || !ownOrigin(r.l.ID(), cp.Origin) {
		rv.fail(sc.seq, KindCheckpoint, "checkpoint entry %d records tree %d %s, its note says %s tree %d %s",
			sc.seq, c.TreeSize, c.TreeRoot, cp.Origin, cp.Size, cp.RootString())
		return nil
	}
	// What must be proved: the shown entries, every entry of the span,
	// the noted ones (their rules are checked), and the entry before the
	// checkpoint, from which the entries after it are chained.
	want := slices.Clone(shown)
	for _, n := range r.rules {
		want = append(want, n.seq)
	}
	for _, n := range r.keys {
		want = append(want, n.seq)
	}
	lo, hi := rv.opts.Span[0], min(rv.opts.Span[1], cp.Size-1)
	for s := lo; s <= hi && lo <= hi && lo < cp.Size; s++ {
		want = append(want, s)
	}
	want = append(want, cp.Size-1)
	slices.Sort(want)
	want = slices.Compact(want)
	raws, err := rv.r.l.rawEntries(want)
	if err != nil {
		return err
	}
	rv.prove(want, raws, lo, hi)
	if err := rv.strict(want, shown, raws); err != nil {
		return err
	}
	return rv.after(raws[cp.Size-1])
}

// rawEntries returns the stored bytes of each seq (copies), nil for a seq
// with no entry.
func (l *Ledger) rawEntries(seqs []uint64) (map[uint64][]byte, error) {
	out := make(map[uint64][]byte, len(seqs))
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		for _, s := range seqs {
			if v := b.Get(seqKey(s)); v != nil {
				out[s] = append([]byte(nil), v...)
			} else {
				out[s] = nil
			}
		}
		return nil
	})
	return out, err
}

// prove checks every wanted entry below the checkpoint's size against
// its root: the span lo..hi by the chain down from its last entry, whose
// inclusion is proved, and every other one by its own inclusion proof.
func (rv *reviewRun) prove(want []uint64, raws map[uint64][]byte, lo, hi uint64) {
	cp := rv.cp
	inSpan := func(s uint64) bool { return lo <= hi && s >= lo && s <= hi }
	include := func(s uint64) bool {
		raw := raws[s]
		if raw == nil {
			rv.fail(s, KindGap, "entry %d is missing", s)
			return false
		}
		hs, err := rv.r.l.InclusionProof(s, cp.Size)
		if err == nil {
			leaf := LeafHash(raw)
			err = proof.VerifyInclusion(rfc6962.DefaultHasher, s, cp.Size, leaf[:], hs, cp.Root[:])
		}
		if err != nil {
			rv.fail(s, KindTreeMismatch, "entry %d is not in the signed tree %d %s: %s", s, cp.Size, cp.RootString(), tlog.MerkleReason(err))
			return false
		}
		rv.how.Proved++
		return true
	}
	if lo <= hi {
		include(hi)
		for s := hi; s > lo; s-- {
			a, b := raws[s-1], raws[s]
			if a == nil || b == nil {
				continue // include or the chain reports it
			}
			be, err := ParseEntry(b)
			if err != nil {
				rv.fail(s, KindUnreadable, "entry does not parse: %v", err)
				continue
			}
			if be.Prev != Sum(a) {
				rv.fail(s, KindHashMismatch, "prev is %s but entry %d hashes to %s", be.Prev, s-1, Sum(a))
				continue
			}
			rv.how.Proved++
		}
	}
	for _, s := range want {
		if s < cp.Size && !inSpan(s) {
			include(s)
		}
	}
}

// strict runs the strict checks on the wanted entries below the
// checkpoint (after checks the ones after it): canonical form and
// payloads, and the blobs they name; and the causality rules, in seq
// order, on the shown entries and the noted rule entries of the whole
// ledger: the rules about calls are keyed by session, so the session's
// own entries are all the context they need, and the rules about
// rollbacks read only the noted types. The other entries of the span
// are not given to them: their calls may have begun before it.
func (rv *reviewRun) strict(want, shown []uint64, raws map[uint64][]byte) error {
	o := rv.opts.Verify
	refs := map[Hash]uint64{}
	for _, s := range want {
		raw := raws[s]
		if raw == nil || s >= rv.cp.Size {
			continue
		}
		e, err := ParseEntry(raw)
		if err != nil {
			rv.fail(s, KindUnreadable, "entry does not parse: %v", err)
			continue
		}
		if o.Strict {
			if !IsCanonical(raw) {
				rv.fail(s, KindNotCanonical, "entry bytes are not in canonical (RFC 8785) form")
			}
			if err := checkPayload(&e, o.CheckPayload); err != nil {
				rv.fail(s, KindUnreadable, "payload: %v", err)
			}
		}
		hs, _ := BlobRefs(e.Data)
		for _, h := range hs {
			if _, ok := refs[h]; !ok {
				refs[h] = s
			}
		}
	}
	if o.Strict && o.CheckOrder != nil {
		feed := slices.Clone(shown)
		for _, n := range rv.r.rules {
			feed = append(feed, n.seq)
		}
		slices.Sort(feed)
		for _, s := range slices.Compact(feed) {
			if e, err := ParseEntry(raws[s]); err == nil {
				if err := o.CheckOrder(&e); err != nil {
					rv.fail(s, KindCausality, "%s", err.Error())
				}
			}
		}
	}
	return rv.r.l.view(func(tx *bolt.Tx) error {
		blobs := tx.Bucket(bucketBlobs)
		for _, f := range checkBlobs(o.Workers, refs, rv.r.prunedBlobs(), memBlobSource(func(h Hash) []byte {
			if blobs == nil {
				return nil
			}
			return blobs.Get(h[:])
		})) {
			rv.rep.add(f)
		}
		return nil
	})
}

// prunedBlobs are the blobs the noted chronicle.pruned entries list: those
// may be absent.
func (r *Review) prunedBlobs() map[Hash]bool {
	pruned := map[Hash]bool{}
	for _, n := range r.rules {
		if e, err := ParseEntry(n.raw); err == nil && e.Type == TypePruned {
			hs, _ := PrunedBlobs(e.Data)
			for _, h := range hs {
				pruned[h] = true
			}
		}
	}
	return pruned
}

// after checks every entry after the checkpoint in full, as Verify does
// (chain from the proved entry before it, head, strict checks but
// causality, whose context before the checkpoint is not read, blobs).
func (rv *reviewRun) after(before []byte) error {
	cp := rv.cp
	if before == nil {
		return nil // reported by prove
	}
	prev := Sum(before)
	o := rv.opts.Verify
	o.CheckOrder, o.CheckEnd = nil, nil
	// The tree after the checkpoint is recomputed from the signed tree,
	// whose compact range the stored tiles must give, and compared with
	// the stored tiles, as Verify does.
	hs, err := rv.r.l.RangeHashesAt(cp.Size)
	switch {
	case err == nil && rootOf(hs) != cp.Root:
		rv.fail(cp.Size-1, KindTreeMismatch, "the stored tree of %d entries has root %s, the signed checkpoint %s",
			cp.Size, EncodeTreeRoot(rootOf(hs)), cp.RootString())
	case err == nil:
		o.TreeRange = hs
	case !errors.Is(err, ErrTreeDamaged) && !errors.Is(err, ErrNoTree):
		return err
	default:
		rv.fail(cp.Size-1, KindTreeMismatch, "%v", err)
	}
	var r *Report
	var refs map[Hash]uint64
	var pruned map[Hash]bool
	var blobFailures []*IntegrityError
	var readFailure *IntegrityError
	err = rv.r.l.view(func(tx *bolt.Tx) error {
		c := newChecker(o, false, rv.head.Seq+1-cp.Size, cp.Size, &prev)
		if o.TreeRange != nil {
			c.useStoreTiles(tx)
		}
		readFailure = feedStoreFrom(tx, c, cp.Size)
		r, refs, pruned = c.finish()
		for h := range rv.r.prunedBlobs() {
			pruned[h] = true
		}
		blobs := tx.Bucket(bucketBlobs)
		blobFailures = checkBlobs(o.Workers, refs, pruned, memBlobSource(func(h Hash) []byte {
			if blobs == nil {
				return nil
			}
			return blobs.Get(h[:])
		}))
		return nil
	})
	if err != nil {
		return err
	}
	r.finish()
	for _, f := range r.Failures {
		rv.rep.add(f)
	}
	if readFailure != nil {
		rv.rep.add(readFailure)
	}
	for _, f := range blobFailures {
		rv.rep.add(f)
	}
	rv.how.After = r.Entries
	rv.rep.Entries = rv.how.Proved + r.Entries
	rv.rep.HeadSeq, rv.rep.HeadHash = r.HeadSeq, r.HeadHash
	if r.Entries == 0 {
		rv.rep.HeadSeq, rv.rep.HeadHash = cp.Size-1, prev.String()
	}
	if rv.head.Seq != rv.rep.HeadSeq || rv.head.Hash.String() != rv.rep.HeadHash {
		rv.fail(rv.rep.HeadSeq, KindHeadMismatch, "meta says head %d %s, last entry is %d %s", rv.head.Seq, rv.head.Hash, rv.rep.HeadSeq, rv.rep.HeadHash)
	}
	if end := rv.opts.Verify.CheckEnd; rv.opts.Verify.Strict && end != nil {
		for _, f := range end() {
			rv.rep.add(f)
		}
	}
	return nil
}

// ownOrigin reports whether a checkpoint of origin can be the ledger
// ledgerID's (tlog.KeyOrigin: its default origin, or one a team chose and
// the ledger's key, recorded in it, is named by).
func ownOrigin(ledgerID, origin string) bool {
	o, ok := tlog.KeyOrigin(ledgerID, origin)
	return ok && o == origin
}
