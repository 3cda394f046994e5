package cli

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// openRemoteNote checks a note read through the engine (or given by
// the user) with --key when given; else with the engine's signing key as
// the state directory beside the ledger holds it (read here, not asked of
// the engine), and for a note saved earlier also with every key the ledger
// records; else with the keys the ledger records: for the latest
// checkpoint the key recorded last, for one saved earlier any of them.
// Recorded keys are read through the engine over a chain checked here
// from genesis to its head (walkTree). The engine is only a pipe: a key it
// makes up in an entry it forges is never used while the key file is
// there, and can only be used otherwise by forging the whole chain, as
// rewriting the file offline would.
func openRemoteNote(r *liveledger.Ledger, path string, note []byte, given *tlog.Verifier, latest bool) (tlog.Checkpoint, tlog.Verifier, error) {
	if given != nil {
		return openWith(note, []tlog.Verifier{*given})
	}
	var keys []tlog.Verifier
	if s, err := tlog.LoadKey(filepath.Dir(path)); err == nil {
		keys = append(keys, s.Verifier())
	}
	if !latest || len(keys) == 0 {
		w, err := walkTree(r, 0)
		if err != nil {
			return tlog.Checkpoint{}, tlog.Verifier{}, err
		}
		for i := len(w.keys) - 1; i >= 0; i-- {
			keys = append(keys, w.keys[i].Verifier)
			if latest {
				// The latest checkpoint is signed by the key recorded
				// last (the engine records its key, then signs at once).
				break
			}
		}
	}
	if len(keys) == 0 {
		return tlog.Checkpoint{}, tlog.Verifier{}, errNoKey
	}
	return openWith(note, keys)
}

// openWith opens a note with the first of keys that signed it.
func openWith(note []byte, keys []tlog.Verifier) (tlog.Checkpoint, tlog.Verifier, error) {
	var first error
	for _, v := range keys {
		cp, err := tlog.Open(note, v)
		if err == nil {
			return cp, v, nil
		}
		if first == nil {
			first = err
		}
	}
	return tlog.Checkpoint{}, tlog.Verifier{}, first
}

// remoteProve asks the engine for the proof of entry seq against the
// note (the latest signed checkpoint when note is nil) and checks all of
// it here: the note's signature, its tree against the proof, the entry's
// bytes against the leaf.
func remoteProve(r *liveledger.Ledger, path string, seq uint64, note []byte, given *tlog.Verifier) (*tlog.Proof, signedCheckpoint, error) {
	var sc signedCheckpoint
	req := &opxv1.ProveRequest{Seq: seq}
	keyOf := func(note []byte, latest bool) (err error) {
		sc.CP, sc.Key, err = openRemoteNote(r, path, note, given, latest)
		sc.Note = string(note)
		return err
	}
	if note != nil {
		if err := keyOf(note, false); err != nil {
			return nil, sc, err
		}
		if o, ok := tlog.KeyOrigin(r.FixedHead().LedgerID, sc.CP.Origin); !ok || o != sc.CP.Origin {
			return nil, sc, fmt.Errorf("%w: the checkpoint is of %s, this ledger is %s", tlog.ErrProof, sc.CP.Origin, o)
		}
		if seq >= sc.CP.Size {
			return nil, sc, fmt.Errorf("entry %d is not in the checkpoint's tree of %s", seq, ui.Plural(sc.CP.Size, "entry", "entries"))
		}
		req.TreeSize = sc.CP.Size
	}
	resp, err := r.Client().Prove(r.Ctx(), req)
	if err != nil {
		return nil, sc, liveledger.EngineErr(err)
	}
	if note == nil {
		if len(resp.Note) > tlog.MaxNoteBytes {
			return nil, sc, fmt.Errorf("the engine's checkpoint: %w: %d bytes", tlog.ErrMalformed, len(resp.Note))
		}
		if err := keyOf([]byte(resp.Note), true); err != nil {
			return nil, sc, fmt.Errorf("the engine's latest checkpoint: %w", err)
		}
		if o, ok := tlog.KeyOrigin(r.FixedHead().LedgerID, sc.CP.Origin); !ok || o != sc.CP.Origin {
			return nil, sc, fmt.Errorf("the engine's latest checkpoint: %w: it is of %s, this ledger is %s", tlog.ErrProof, sc.CP.Origin, o)
		}
		// A checkpoint of tree n is recorded by entry n (the entry just
		// after the tree it covers), as offline.
		sc.Seq = sc.CP.Size
	}
	if resp.TreeSize != sc.CP.Size || len(resp.Hashes) > tlog.MaxProofHashes || len(resp.Entry) > tlog.MaxEntryBytes {
		return nil, sc, fmt.Errorf("%w: the engine answered for tree %d with %d hashes, the checkpoint is of tree %d",
			tlog.ErrProof, resp.TreeSize, len(resp.Hashes), sc.CP.Size)
	}
	p := tlog.NewProof(seq, resp.Entry, sc.CP, sc.Note, resp.Hashes)
	if _, err := p.Verify(sc.Key); err != nil {
		if errors.Is(err, tlog.ErrMalformed) {
			err = fmt.Errorf("%w: %v", tlog.ErrProof, err)
		}
		return nil, sc, fmt.Errorf("the engine's proof of entry %d: %w", seq, err)
	}
	return p, sc, nil
}
