package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
)

// addSourceProofs adds to m, exported from src (a running engine's
// ledger), the same tree range and proof material Export adds from the
// file, computed here from the entries src hands over rather than from
// its tiles: one pass finds the latest signed checkpoint and the key
// recorded before it, a second hashes the leaves up to the checkpoint's
// tree, computing the compact range at the export's start, the nodes of
// the inclusion proofs and the root, which must be the signed one. It
// holds a few hashes per proof level, whatever the ledger's size.
func addSourceProofs(src Source, head Head, m *Manifest) error {
	sc, ok, err := sourceSignedCheckpoint(src, head.Seq)
	if err != nil {
		return err
	}
	size := uint64(0)
	var cp tlog.Checkpoint
	if ok && sc.data.TreeSize > m.FromSeq {
		if sc.key == "" {
			return &IntegrityError{Seq: sc.seq, Kind: KindCheckpoint, Detail: "signed checkpoint with no ledger.key entry before it"}
		}
		v, err := tlog.ParseVerifierKey(sc.key)
		if err != nil {
			return &IntegrityError{Seq: sc.seq, Kind: KindCheckpoint, Detail: "recorded verifier key: " + err.Error()}
		}
		if cp, err = tlog.Open([]byte(sc.data.Note), v); err != nil {
			return &IntegrityError{Seq: sc.seq, Kind: KindCheckpoint, Detail: err.Error()}
		}
		if cp.Size != sc.data.TreeSize || cp.Size > head.Seq+1 {
			return &IntegrityError{Seq: sc.seq, Kind: KindCheckpoint, Detail: fmt.Sprintf("signed checkpoint of tree %d recorded as tree %d", cp.Size, sc.data.TreeSize)}
		}
		m.Checkpoint, m.VerifierKey, size = sc.data.Note, v.String(), cp.Size
	}
	idxs := proofIndexes(m.FromSeq, m.ToSeq, size)
	var nodes []proof.Nodes
	for _, idx := range idxs {
		n, err := proof.Inclusion(idx, size)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
	}
	// One range per proof node, over the leaves under it, plus the range
	// at the export's start and the whole tree.
	type part struct {
		lo, hi uint64
		rng    *compact.Range
	}
	var parts []*part
	for _, n := range nodes {
		for _, id := range n.IDs {
			lo, hi := id.Coverage()
			parts = append(parts, &part{lo: lo, hi: hi, rng: treeFactory.NewEmptyRange(lo)})
		}
	}
	start, whole := treeFactory.NewEmptyRange(0), treeFactory.NewEmptyRange(0)
	end := max(size, m.FromSeq)
	if end == 0 {
		return nil
	}
	var lh leafHasher
	want := uint64(0)
	err = src.Entries(0, end-1, func(seq uint64, raw []byte) error {
		if seq != want {
			return &IntegrityError{Seq: want, Kind: KindGap, Detail: fmt.Sprintf("expected entry %d, got %d", want, seq)}
		}
		want++
		leaf := lh.sum(raw)
		if seq < m.FromSeq {
			if err := start.Append(leaf[:], nil); err != nil {
				return err
			}
		}
		if seq < size {
			if err := whole.Append(leaf[:], nil); err != nil {
				return err
			}
		}
		for _, p := range parts {
			if seq >= p.lo && seq < p.hi {
				if err := p.rng.Append(leaf[:], nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil && want != end {
		err = &IntegrityError{Seq: want, Kind: KindGap, Detail: "the ledger ends before the checkpoint's tree"}
	}
	if err != nil {
		return err
	}
	if m.FromSeq > 0 {
		m.TreeRange = EncodeTreeRange(start.Hashes())
	}
	if size == 0 {
		return nil
	}
	root, err := whole.GetRootHash(nil)
	if err != nil {
		return err
	}
	if !bytes.Equal(root, cp.Root[:]) {
		return &IntegrityError{Seq: sc.seq, Kind: KindCheckpoint, Detail: fmt.Sprintf("signed checkpoint says tree %d %s, the entries hash to %s",
			size, cp.RootString(), EncodeTreeRoot([32]byte(root)))}
	}
	k := 0
	for i, n := range nodes {
		hs := make([][]byte, len(n.IDs))
		for j := range n.IDs {
			// A node's leaves, all appended, are one perfect subtree:
			// its range holds exactly its hash.
			rh := parts[k].rng.Hashes()
			if len(rh) != 1 {
				return fmt.Errorf("proof node %d/%d: %d hashes", n.IDs[j].Level, n.IDs[j].Index, len(rh))
			}
			hs[j] = rh[0]
			k++
		}
		if hs, err = n.Rehash(hs, treeHasher.HashChildren); err != nil {
			return err
		}
		m.Proofs = append(m.Proofs, ManifestProof{Index: idxs[i], TreeSize: size, Hashes: tlog.EncodeHashes(hs)})
	}
	return nil
}

// sourceSignedCheckpoint is latestSignedCheckpoint over a Source, up to
// head: one forward pass, keeping the last signed checkpoint and the last
// key recorded before it.
func sourceSignedCheckpoint(src Source, head uint64) (sc signedCheckpoint, ok bool, err error) {
	var key string
	err = src.Entries(0, head, func(seq uint64, raw []byte) error {
		switch string(tailType(raw)) {
		case TypeCheckpoint:
			e, err := ParseEntry(raw)
			var c CheckpointPayload
			if err == nil && e.Type == TypeCheckpoint && json.Unmarshal(e.Data, &c) == nil && c.Note != "" {
				sc, ok = signedCheckpoint{seq: seq, data: c, key: key}, true
			}
		case typeKey:
			e, err := ParseEntry(raw)
			var k struct {
				VKey string `json:"vkey"`
			}
			if err == nil && e.Type == typeKey && json.Unmarshal(e.Data, &k) == nil && k.VKey != "" {
				key = k.VKey
			}
		}
		return nil
	})
	return sc, ok, err
}
