package ocsf

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opx-dev/opx/ledger"
)

// attestation is the record integrity profile's proof of the entry an
// event was built from: the entry's BLAKE3-256 (over its stored bytes,
// which are RFC 8785 JCS), the previous entry's hash as the chain link,
// the ledger id as the chain, and, when the latest signed checkpoint
// covers the entry, that checkpoint as its signature.
func (m *Mapper) attestation(e *ledger.Entry) Attestation {
	a := Attestation{
		UID:         fmt.Sprintf("%s:%d", m.o.LedgerID, e.Seq),
		ChainUID:    m.o.LedgerID,
		Fingerprint: entryFingerprint(e.Hash()),
	}
	if e.Seq > 0 {
		a.PrevEvent = &PrevEvent{UID: fmt.Sprintf("%s:%d", m.o.LedgerID, e.Seq-1), Fingerprint: entryFingerprint(e.Prev)}
	}
	if cp := m.cp; cp != nil && e.Seq < cp.TreeSize {
		a.AuthorityUID = cp.Signer
		a.Signatures = []DigitalSignature{{
			AlgorithmID: 99, Algorithm: "Ed25519 (C2SP signed note)",
			SerializationID: 99, Serialization: "C2SP tlog checkpoint over the RFC 6962 SHA-256 tree of the ledger's entries",
			CreatedTime: cp.Time,
			Digest:      &Fingerprint{AlgorithmID: 3, Algorithm: "SHA-256", EncodingID: 2, Value: cp.Root},
		}}
	}
	return a
}

// withCheckpoint adds the covering checkpoint's note to an event's opx
// facts.
func (m *Mapper) withCheckpoint(ev *Event, seq uint64) {
	if cp := m.cp; cp != nil && seq < cp.TreeSize && ev.Unmapped != nil {
		ev.Unmapped.OPX.Checkpoint = &CheckpointFact{Seq: cp.Seq, TreeSize: cp.TreeSize, Note: cp.Note}
	}
}

// entryFingerprint is an entry hash as OCSF writes a fingerprint.
func entryFingerprint(h ledger.Hash) Fingerprint {
	return Fingerprint{AlgorithmID: 99, Algorithm: "BLAKE3-256", EncodingID: 1, SerializationID: 2, Value: h.String()}
}

// maxNote bounds the signed note an event carries (a note with its
// signatures and a few witnesses' cosignatures is well under 1 KiB);
// a checkpoint with a larger one is not used.
const maxNote = 8 << 10

// ParseCheckpoint reads a ledger.checkpoint entry: ok is false when it
// is not one, or carries no signed note.
func ParseCheckpoint(e *ledger.Entry) (Checkpoint, bool) {
	if e.Type != ledger.TypeCheckpoint {
		return Checkpoint{}, false
	}
	var p ledger.CheckpointPayload
	if err := json.Unmarshal(e.Data, &p); err != nil || p.Note == "" || len(p.Note) > maxNote || p.TreeSize != e.Seq {
		return Checkpoint{}, false
	}
	cp := Checkpoint{Seq: e.Seq, TreeSize: p.TreeSize, Root: p.TreeRoot, Note: p.Note}
	cp.Root, _ = clip(cp.Root, 128)
	// The signer is the key name of the note's first signature line:
	// "— <name> <base64>".
	if _, sigs, ok := strings.Cut(p.Note, "\n\n"); ok {
		line, _, _ := strings.Cut(sigs, "\n")
		if rest, ok := strings.CutPrefix(line, "\u2014 "); ok {
			name, _, _ := strings.Cut(rest, " ")
			cp.Signer, _ = clip(name, MaxName)
		}
	}
	if t, err := e.Time(); err == nil {
		cp.Time = t.UnixMilli()
	}
	return cp, true
}
