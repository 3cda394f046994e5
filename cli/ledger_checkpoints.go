package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/urfave/cli/v2"
)

// keyFlag is the --key flag of the commands that check a checkpoint.
func keyFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "key", Usage: usage}
}

// verifierFlag parses --key: a verifier key in the note format
// (<name>+<hash>+<key>, as `opx ledger key` prints it), or a file holding
// one. A key that does not parse is a usage error.
func verifierFlag(c *cli.Context) (tlog.Verifier, error) {
	s := c.String("key")
	v, err := tlog.ParseVerifierKey(s)
	if err == nil {
		return v, nil
	}
	b, ferr := regularfile.Read(s, tlog.MaxVerifierKeyBytes+64)
	if ferr == nil {
		if v, err = tlog.ParseVerifierKey(string(b)); err == nil {
			return v, nil
		}
	}
	if ferr != nil && !errors.Is(ferr, regularfile.ErrNotRegular) && !errors.Is(ferr, regularfile.ErrTooLarge) {
		ferr = nil // not a file: the key string's own error says it best
	}
	if ferr != nil {
		return tlog.Verifier{}, usage.Errorf(c, "--key %s: %v", s, ferr)
	}
	// %v, not %w: a bad key is the caller's mistake (exit 2), not an
	// integrity finding.
	return tlog.Verifier{}, usage.Errorf(c, "--key: %v", err)
}

// errNoKey is returned when a ledger records no checkpoint key.
var errNoKey = fmt.Errorf("%w: the ledger records no checkpoint key (ledger.key): no engine has signed a checkpoint of it", tlog.ErrNoKey)

// errNoCheckpoint is returned when a ledger holds no signed checkpoint.
var errNoCheckpoint = errors.New("the ledger holds no signed checkpoint yet (the engine signs one at start, every few seconds while it works, and at stop)")

// signedCheckpoint is a signed checkpoint, checked against a ledger.
type signedCheckpoint struct {
	Seq  uint64 // the ledger.checkpoint entry holding it; 0 for a note from a file
	Note string
	CP   tlog.Checkpoint
	Key  tlog.Verifier
}

// latestSigned returns the ledger's last ledger.checkpoint entry that
// holds a note, checked: signed by the key the ledger records before it,
// naming the tree size and root the entry records, which must be the
// ledger's tree at that size.
func latestSigned(l *ledger.Ledger) (signedCheckpoint, error) {
	suffix := []byte(`"type":"` + ledger.TypeCheckpoint + `"}`)
	var sc signedCheckpoint
	var pay ledger.CheckpointPayload
	found := false
	err := l.Backward(func(seq uint64, raw []byte) (bool, error) {
		if !bytes.HasSuffix(raw, suffix) {
			return true, nil
		}
		e, err := ledger.ParseEntry(append([]byte(nil), raw...))
		if err != nil || e.Type != ledger.TypeCheckpoint {
			return false, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse", seq, ledger.ErrIntegrity)
		}
		if err := json.Unmarshal(e.Data, &pay); err != nil {
			return false, fmt.Errorf("entry %d: %w: a ledger.checkpoint that does not parse: %v", seq, ledger.ErrIntegrity, err)
		}
		if pay.Note == "" {
			return true, nil // recorded before the engine had its key
		}
		sc.Seq, sc.Note, found = seq, pay.Note, true
		return false, nil
	})
	if err != nil {
		return sc, err
	}
	if !found {
		return sc, errNoCheckpoint
	}
	return checkSigned(l, sc.Seq, pay)
}

// checkSigned checks the ledger.checkpoint entry seq, whose payload is
// pay (with a note): signed by the key the ledger records before it,
// naming the tree size and root the entry records, which must be the
// ledger's tree at that size.
func checkSigned(l *ledger.Ledger, seq uint64, pay ledger.CheckpointPayload) (signedCheckpoint, error) {
	sc := signedCheckpoint{Seq: seq, Note: pay.Note}
	k, ok, err := event.KeyAt(l, sc.Seq)
	if err != nil {
		return sc, err
	}
	if !ok {
		return sc, fmt.Errorf("checkpoint at entry %d: %w: no ledger.key is recorded before it", sc.Seq, tlog.ErrUnsigned)
	}
	sc.Key = k.Verifier
	if sc.CP, err = tlog.Open([]byte(sc.Note), sc.Key); err != nil {
		return sc, fmt.Errorf("checkpoint at entry %d (key of entry %d): %w", sc.Seq, k.Seq, err)
	}
	if sc.CP.Size != pay.TreeSize || sc.CP.RootString() != pay.TreeRoot {
		return sc, fmt.Errorf("checkpoint at entry %d: %w: its note says tree %d %s, the entry %d %s",
			sc.Seq, ledger.ErrIntegrity, sc.CP.Size, sc.CP.RootString(), pay.TreeSize, pay.TreeRoot)
	}
	if err := matchTree(l, sc.CP); err != nil {
		return sc, fmt.Errorf("checkpoint at entry %d: %w", sc.Seq, err)
	}
	return sc, nil
}

// matchTree checks that the ledger holds the checkpoint's tree: its
// origin is the ledger's and its root is the stored tree's at that size.
func matchTree(l *ledger.Ledger, cp tlog.Checkpoint) error {
	if o, ok := tlog.KeyOrigin(l.ID(), cp.Origin); !ok || o != cp.Origin {
		return fmt.Errorf("%w: the checkpoint is of %s, this ledger is %s", ledger.ErrIntegrity, cp.Origin, o)
	}
	th, err := l.TreeHeadAt(cp.Size)
	if errors.Is(err, ledger.ErrTreeSize) {
		return fmt.Errorf("%w: the checkpoint covers %d entries, more than the ledger holds (%v): truncated since?", ledger.ErrIntegrity, cp.Size, err)
	}
	if err != nil {
		return fmt.Errorf("the ledger's tree at size %d: %w", cp.Size, err)
	}
	if th.Root != cp.Root {
		return fmt.Errorf("%w: the ledger's tree of %d entries has root %s, the checkpoint says %s",
			ledger.ErrIntegrity, cp.Size, tlog.Checkpoint{Root: th.Root}.RootString(), cp.RootString())
	}
	return nil
}

// openNoteFile reads a checkpoint saved earlier and checks its signature:
// with --key when given, else with the keys the ledger records (any of
// them: the checkpoint may predate a key change).
func openNoteFile(c *cli.Context, l *ledger.Ledger, path string) (signedCheckpoint, error) {
	note, err := tlog.ReadNote(path)
	if err != nil {
		return signedCheckpoint{}, err
	}
	var given *tlog.Verifier
	if c.String("key") != "" {
		v, err := verifierFlag(c)
		if err != nil {
			return signedCheckpoint{}, err
		}
		given = &v
	}
	var recorded []event.RecordedKey
	if given == nil {
		if recorded, err = event.Keys(l); err != nil {
			return signedCheckpoint{}, err
		}
	}
	return openNote(path, note, given, recorded)
}

// openNote checks a note's signature with the given key, else with any of
// the recorded keys.
func openNote(path string, note []byte, given *tlog.Verifier, recorded []event.RecordedKey) (signedCheckpoint, error) {
	var keys []tlog.Verifier
	if given != nil {
		keys = []tlog.Verifier{*given}
	} else {
		if len(recorded) == 0 {
			return signedCheckpoint{}, fmt.Errorf("%s: %w; give the key with --key", path, errNoKey)
		}
		for _, k := range recorded {
			keys = append(keys, k.Verifier)
		}
	}
	var first error
	for _, v := range keys {
		cp, err := tlog.Open(note, v)
		if err == nil {
			return signedCheckpoint{Note: string(note), CP: cp, Key: v}, nil
		}
		if first == nil {
			first = err
		}
	}
	return signedCheckpoint{}, fmt.Errorf("%s: %w", path, first)
}
