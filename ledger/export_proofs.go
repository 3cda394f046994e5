package ledger

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// typeKey is the entry type that records the checkpoint verifier key
// (event.TypeKey, which this package cannot import): {"vkey": ...}.
const typeKey = "ledger.key"

// Bounds on a manifest's proof material, which is outside input.
const (
	// maxManifestHashes bounds each proof's hashes: a tree of at most
	// 2^64 leaves needs at most 64.
	maxManifestHashes = 64
	// maxManifestProofs bounds proofs: the first exported entry and the
	// last one the checkpoint covers.
	maxManifestProofs = 2
)

// ManifestProof is an RFC 6962 inclusion proof, in a manifest, of the
// exported entry Index in the tree of the manifest's checkpoint (whose
// size TreeSize must be). Hashes are base64, from the leaf up.
type ManifestProof struct {
	Index    uint64   `json:"index"`
	TreeSize uint64   `json:"tree_size"`
	Hashes   []string `json:"hashes"`
}

// ExportProved says what an export's bundled checkpoint proved: the
// entries (by seq) shown by inclusion proofs to be in the signed tree of
// TreeSize entries with root Root (base64), signed by Key, and whether
// that key was given by the verifier (pinned) or taken from the bundle
// itself, which proves only that the export agrees with its own bundle.
type ExportProved struct {
	TreeSize  uint64   `json:"tree_size"`
	Root      string   `json:"root"`
	Key       string   `json:"key"`
	KeyPinned bool     `json:"key_pinned"`
	Entries   []uint64 `json:"entries"`
}

// signedCheckpoint is the latest ledger.checkpoint entry with a note, and
// the verifier key recorded last before it.
type signedCheckpoint struct {
	seq  uint64
	data CheckpointPayload
	key  string
}

// latestSignedCheckpoint walks the ledger back from its head to the
// latest signed checkpoint and the key recorded before it. ok is false
// when the ledger has none (older ledgers, ledgers without a key).
func (l *Ledger) latestSignedCheckpoint() (sc signedCheckpoint, ok bool, err error) {
	cpTail := []byte(`"type":"` + TypeCheckpoint + `"}`)
	keyTail := []byte(`"type":"` + typeKey + `"}`)
	err = l.Backward(func(seq uint64, raw []byte) (bool, error) {
		switch {
		case !ok && bytes.HasSuffix(raw, cpTail):
			e, err := ParseEntry(raw)
			if err != nil || e.Type != TypeCheckpoint {
				return true, nil
			}
			var c CheckpointPayload
			if json.Unmarshal(e.Data, &c) == nil && c.Note != "" {
				sc.seq, sc.data, ok = seq, c, true
			}
		case ok && bytes.HasSuffix(raw, keyTail):
			e, err := ParseEntry(raw)
			if err != nil || e.Type != typeKey {
				return true, nil
			}
			var k struct {
				VKey string `json:"vkey"`
			}
			if json.Unmarshal(e.Data, &k) == nil && k.VKey != "" {
				sc.key = k.VKey
				return false, nil
			}
		}
		return true, nil
	})
	return sc, ok, err
}

// addProofs adds to m the tree range and proof material of an export,
// computed from the entries' own bytes (addSourceProofs), as for an export
// through a running engine, not read from the stored tiles: tiles are
// derived data, and a damaged one must not put a wrong tree range or proof
// into every export of the ledger (verify reports the damage where it is,
// in the ledger). It reads the entries up to the latest signed checkpoint
// once, in short transactions.
func (l *Ledger) addProofs(m *Manifest) error {
	h, err := ParseHash(m.HeadHash)
	if err != nil {
		return fmt.Errorf("manifest head: %w", err)
	}
	head := Head{LedgerID: m.LedgerID, Seq: m.HeadSeq, Hash: h}
	return addSourceProofs(l.LocalSource(head), head, m)
}

// proofIndexes are the entries an export proves against a checkpoint of
// size entries: its first, and the last the checkpoint covers. Every
// entry between them is then proved by the chain from the last one.
func proofIndexes(from, to, size uint64) []uint64 {
	if size <= from {
		return nil
	}
	last := min(to, size-1)
	if last == from {
		return []uint64{from}
	}
	return []uint64{from, last}
}

// wantedEntries are the seqs whose stored bytes the stream verifier keeps
// for checkManifestProofs.
func (m *Manifest) wantedEntries() map[uint64][]byte {
	if m == nil || m.Checkpoint == "" {
		return nil
	}
	w := map[uint64][]byte{}
	for _, p := range m.Proofs {
		if len(w) < maxManifestProofs {
			w[p.Index] = nil
		}
	}
	return w
}

func decodeManifestHashes(ss []string) ([][]byte, error) {
	if len(ss) > maxManifestHashes {
		return nil, fmt.Errorf("%d hashes (at most %d)", len(ss), maxManifestHashes)
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("hash %d is not the base64 of 32 bytes", i)
		}
		out[i] = b
	}
	return out, nil
}

// checkManifestProofs checks an export's bundled checkpoint: the note is
// signed by key (the pinned one, else the bundled one) for the export's
// ledger, and each proof shows its entry (the stored bytes in entries, as
// read from the stream) in that tree; the proofs must cover the first
// exported entry and the last one the checkpoint covers. It returns what
// was proved (nil when nothing was) and the failures.
func checkManifestProofs(m *Manifest, entries map[uint64][]byte, pinned string) (*ExportProved, []*IntegrityError) {
	var fails []*IntegrityError
	fail := func(seq uint64, kind Kind, format string, args ...any) {
		fails = append(fails, &IntegrityError{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	if m == nil || (m.Checkpoint == "" && m.VerifierKey == "" && len(m.Proofs) == 0) {
		if pinned != "" {
			// Stripping the proof material must not pass for an older
			// export when the verifier asked for a signed checkpoint.
			fail(0, KindCheckpoint, "a verifier key was given, but the export carries no signed checkpoint")
		}
		return nil, fails
	}
	key := m.VerifierKey
	if pinned != "" {
		key = pinned
	}
	v, err := tlog.ParseVerifierKey(key)
	if err != nil {
		fail(m.FromSeq, KindCheckpoint, "manifest verifier_key: %v", err)
		return nil, fails
	}
	if !ownOrigin(m.LedgerID, v.Name()) {
		fail(m.FromSeq, KindCheckpoint, "key %s is not a key of ledger %s (its name is %q, want %q or an origin of the team's)", v, m.LedgerID, v.Name(), tlog.Origin(m.LedgerID))
		return nil, fails
	}
	if len(m.Checkpoint) > tlog.MaxNoteBytes {
		fail(m.FromSeq, KindCheckpoint, "manifest checkpoint of %d bytes (at most %d)", len(m.Checkpoint), tlog.MaxNoteBytes)
		return nil, fails
	}
	cp, err := tlog.Open([]byte(m.Checkpoint), v)
	if err != nil {
		fail(m.FromSeq, KindCheckpoint, "manifest checkpoint: %v", err)
		return nil, fails
	}
	proved := &ExportProved{TreeSize: cp.Size, Root: cp.RootString(), Key: v.String(), KeyPinned: pinned != "", Entries: []uint64{}}
	if len(m.Proofs) > maxManifestProofs {
		fail(m.FromSeq, KindCheckpoint, "manifest has %d proofs (at most %d)", len(m.Proofs), maxManifestProofs)
		return proved, fails
	}
	have := map[uint64]bool{}
	for _, p := range m.Proofs {
		hs, err := decodeManifestHashes(p.Hashes)
		switch {
		case p.TreeSize != cp.Size:
			fail(p.Index, KindCheckpoint, "manifest proof of entry %d claims tree %d, the checkpoint is of tree %d", p.Index, p.TreeSize, cp.Size)
			continue
		case p.Index < m.FromSeq || p.Index > m.ToSeq:
			fail(p.Index, KindCheckpoint, "manifest proof of entry %d, which is outside the export (%d..%d)", p.Index, m.FromSeq, m.ToSeq)
			continue
		case err != nil:
			fail(p.Index, KindCheckpoint, "manifest proof of entry %d: %v", p.Index, err)
			continue
		case entries[p.Index] == nil:
			fail(p.Index, KindCheckpoint, "manifest proof of entry %d, which the stream does not hold", p.Index)
			continue
		}
		leaf := LeafHash(entries[p.Index])
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.Index, cp.Size, leaf[:], hs, cp.Root[:]); err != nil {
			fail(p.Index, KindTreeMismatch, "entry %d (leaf %x) is not in the signed tree %d %s: %s", p.Index, leaf, cp.Size, cp.RootString(), tlog.MerkleReason(err))
			continue
		}
		have[p.Index] = true
		proved.Entries = append(proved.Entries, p.Index)
	}
	for _, idx := range proofIndexes(m.FromSeq, m.ToSeq, cp.Size) {
		if !have[idx] && !hasProof(m.Proofs, idx) {
			fail(idx, KindCheckpoint, "manifest has no inclusion proof of entry %d in the checkpoint's tree %d", idx, cp.Size)
		}
	}
	return proved, fails
}

func hasProof(ps []ManifestProof, idx uint64) bool {
	for _, p := range ps {
		if p.Index == idx {
			return true
		}
	}
	return false
}
