package cli

import (
	"bytes"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"slices"
	"sync"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// sinceSource is what verify --since and prove read: the file, or the
// engine's ledger (whose every byte is checked here).
type sinceSource interface {
	Head() (ledger.Head, error)
	// Entries calls fn with the stored bytes of entries from..to.
	Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error
	// ConsistencyProof is the ledger's stored proof from size1 to size2.
	ConsistencyProof(size1, size2 uint64) ([][]byte, error)
}

// localSince is a ledger file as a sinceSource.
type localSince struct{ *ledger.Ledger }

func (l localSince) Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	return l.RangeRaw(from, to, fn)
}

// sinceSourceOf is the review's ledger as a sinceSource.
func sinceSourceOf(rv *ledgerReview) sinceSource {
	if rv.local != nil {
		return localSince{rv.local}
	}
	return rv.remote
}

// treeWalk is what one pass over the entries gives --since, prove and
// key: the tree recomputed from them, its roots at the sizes asked, and the keys
// recorded, over a chain checked link by link from genesis to the head
// the source names. Through an engine it is folded in the verify pass
// itself (teeSource), so that nothing a command concludes comes from a
// second read the engine could answer differently.
type treeWalk struct {
	tree *tlog.RootBuilder
	// roots holds the root at each size asked for (want), once the walk
	// passed it: one walk serves every --witness's reference and
	// --since's.
	want  map[uint64]bool
	roots map[uint64][32]byte
	keys  []event.RecordedKey
	prev  ledger.Hash // the hash of the last entry folded
	head  ledger.Head // the head to reach
	err   error       // the first break: the walk stops there
}

func newTreeWalk(head ledger.Head, at ...uint64) *treeWalk {
	w := &treeWalk{tree: tlog.NewRootBuilder(), head: head, want: map[uint64]bool{}, roots: map[uint64][32]byte{}}
	w.wantRoots(at...)
	return w
}

// wantRoots asks for the roots at sizes too (before the walk reaches
// them; the empty tree's is known at once).
func (w *treeWalk) wantRoots(sizes ...uint64) {
	for _, n := range sizes {
		w.want[n] = true
		if n == 0 {
			w.roots[0] = tlog.NewRootBuilder().Root()
		}
	}
}

// rootAt is the root of the first size entries, when the walk was asked
// for it and passed it.
func (w *treeWalk) rootAt(size uint64) ([32]byte, bool) {
	r, ok := w.roots[size]
	return r, ok
}

var keySuffix = []byte(`"type":"` + event.TypeKey + `"}`)

// add folds entry seq; entries past the head are not part of the walk.
// A break in the chain stops the walk for good (w.err).
func (w *treeWalk) add(seq uint64, raw []byte) {
	if w.err != nil || seq > w.head.Seq {
		return
	}
	if seq != w.tree.Size() {
		w.err = fmt.Errorf("entry %d after %d entries: %w", seq, w.tree.Size(), ledger.ErrIntegrity)
		return
	}
	e, err := ledger.ParseStored(seq, raw)
	switch {
	case err != nil:
		w.err = fmt.Errorf("entry %d: %w: %v", seq, ledger.ErrIntegrity, err)
		return
	case e.Prev != w.prev:
		w.err = fmt.Errorf("entry %d: %w: its prev is not the hash of entry %d", seq, ledger.ErrIntegrity, int64(seq)-1)
		return
	}
	w.prev = ledger.Sum(raw)
	w.tree.Append(raw)
	if n := w.tree.Size(); w.want[n] {
		w.roots[n] = w.tree.Root()
	}
	if bytes.HasSuffix(raw, keySuffix) {
		if k, err := event.ParseKeyEntry(seq, raw); err == nil {
			w.keys = append(w.keys, k)
		}
	}
}

// done says whether the walk reached the head it was given, chained.
func (w *treeWalk) done() error {
	switch {
	case w.err != nil:
		return w.err
	case w.tree.Size() != w.head.Seq+1:
		return fmt.Errorf("%w: %d entries read, the head is %d", ledger.ErrIntegrity, w.tree.Size(), w.head.Seq)
	case w.prev != w.head.Hash:
		return fmt.Errorf("%w: the last entry hashes to %s, the head is %s", ledger.ErrIntegrity, w.prev, w.head.Hash)
	}
	return nil
}

// walkTree reads every entry up to the head once, checking the chain,
// hashing each into the tree and collecting the ledger.key entries.
func walkTree(src sinceSource, at ...uint64) (*treeWalk, error) {
	h, err := src.Head()
	if err != nil {
		return nil, err
	}
	w := newTreeWalk(h, at...)
	err = src.Entries(0, h.Seq, func(seq uint64, raw []byte) error {
		w.add(seq, raw)
		return w.err
	})
	if err != nil {
		return nil, err
	}
	return w, w.done()
}

// teeSource is the engine's ledger as a Source whose entries, as they
// pass to the checker, are also folded into a treeWalk and, with
// keepHashes, hashed one by one: what a command needs besides the verify
// pass (the tree and its roots for --since, the recorded keys for the
// signed checkpoints, the entries a timeline is built from) is then tied
// to the bytes that pass checked.
type teeSource struct {
	*liveledger.Ledger
	mu         sync.Mutex
	walk       *treeWalk
	keepHashes bool
	hashes     []ledger.Hash // hashes[seq], when keepHashes
}

func newTeeSource(r *liveledger.Ledger, at uint64, keepHashes bool) *teeSource {
	return &teeSource{Ledger: r, walk: newTreeWalk(r.FixedHead(), at), keepHashes: keepHashes}
}

func (t *teeSource) Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	return t.Ledger.Entries(from, to, func(seq uint64, raw []byte) error {
		t.mu.Lock()
		before := t.walk.tree.Size()
		t.walk.add(seq, raw)
		if t.keepHashes && t.walk.tree.Size() > before {
			t.hashes = append(t.hashes, t.walk.prev)
		}
		t.mu.Unlock()
		return fn(seq, raw)
	})
}

// keys returns the keys recorded in the entries folded so far.
func (t *teeSource) keys() []event.RecordedKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.walk.keys)
}

// checkCheckpoint checks a signed checkpoint against the keys recorded
// before it, as read in this same pass: the checker calls it only once
// the entries up to the checkpoint have passed through Entries.
func (t *teeSource) checkCheckpoint() func(seq uint64, th ledger.TreeHead, note string) error {
	return func(seq uint64, th ledger.TreeHead, note string) error {
		return event.CheckCheckpoints(t.FixedHead().LedgerID, t.keys())(seq, th, note)
	}
}
