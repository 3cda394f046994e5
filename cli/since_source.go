package cli

import (
	"bytes"
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
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

// ConsistencyProof asks the engine for the proof; the caller checks it
// against roots it trusts.
func (r *remoteLedger) ConsistencyProof(size1, size2 uint64) ([][]byte, error) {
	resp, err := r.client.ConsistencyProof(r.ctx, &opxv1.ConsistencyProofRequest{Size1: size1, Size2: size2})
	if err != nil {
		return nil, engineErr(err)
	}
	if len(resp.Hashes) > tlog.MaxProofHashes {
		return nil, fmt.Errorf("the engine's consistency proof: %d hashes (at most %d)", len(resp.Hashes), tlog.MaxProofHashes)
	}
	return resp.Hashes, nil
}

// treeWalk is what one pass over the entries gives --since: the tree
// recomputed from them, its root at one size, and the keys recorded.
type treeWalk struct {
	tree   *tlog.RootBuilder
	rootAt [32]byte // the root at size at
	at     uint64
	keys   []event.RecordedKey
}

// walkTree reads every entry up to the head once, hashing each into the
// tree and collecting the ledger.key entries.
func walkTree(src sinceSource, at uint64) (*treeWalk, error) {
	h, err := src.Head()
	if err != nil {
		return nil, err
	}
	w := &treeWalk{tree: tlog.NewRootBuilder(), at: at}
	if at == 0 {
		w.rootAt = w.tree.Root()
	}
	suffix := []byte(`"type":"` + event.TypeKey + `"}`)
	err = src.Entries(0, h.Seq, func(seq uint64, raw []byte) error {
		if seq != w.tree.Size() {
			return fmt.Errorf("entry %d after %d entries: %w", seq, w.tree.Size(), ledger.ErrIntegrity)
		}
		w.tree.Append(raw)
		if w.tree.Size() == at {
			w.rootAt = w.tree.Root()
		}
		if bytes.HasSuffix(raw, suffix) {
			if k, err := event.ParseKeyEntry(seq, raw); err == nil {
				w.keys = append(w.keys, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if w.tree.Size() != h.Seq+1 {
		return nil, fmt.Errorf("%w: %d entries read, the head is %d", ledger.ErrIntegrity, w.tree.Size(), h.Seq)
	}
	return w, nil
}
