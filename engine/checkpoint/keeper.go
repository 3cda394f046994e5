package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// Keeper holds a ledger's signing key. Its Sign is the ledger's
// Options.SignCheckpoint; Setup loads (or creates) the key once the
// ledger is open and records it.
type Keeper struct {
	dir    string
	origin string // ledger.origin; "" the default, tlog.Origin(id)

	mu sync.Mutex
	s  *tlog.Signer

	// pub orders Publish calls (the periodic checkpoint and the one at
	// stop may race); published is the seq of the last checkpoint whose
	// note was written, so an older one never replaces it.
	pub       sync.Mutex
	published uint64
}

// NewKeeper returns a keeper of the key in dir, the ledger's state
// directory (the directory of ledger.db). It reads nothing until Setup.
func NewKeeper(dir string) *Keeper { return &Keeper{dir: dir} }

// ForLedger returns the keeper of the ledger file at path: its key lives
// beside it.
func ForLedger(path string) *Keeper { return NewKeeper(filepath.Dir(path)) }

// SetOrigin makes Setup sign under origin (ledger.origin, checked by
// tlog.CheckOrigin) instead of the default tlog.Origin(ledger id). Call
// it before Setup.
func (k *Keeper) SetOrigin(origin string) { k.origin = origin }

// Origin is the origin the key signs for, after Setup ("" before).
func (k *Keeper) Origin() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.s == nil {
		return ""
	}
	return k.s.Origin()
}

// Dir is the directory holding the key and the note file.
func (k *Keeper) Dir() string { return k.dir }

// Sign signs the tree th as a checkpoint note. Before Setup (a ledger
// that builds its tree while it opens records that checkpoint unsigned)
// it returns no note and no error.
func (k *Keeper) Sign(th ledger.TreeHead) (string, error) {
	k.mu.Lock()
	s := k.s
	k.mu.Unlock()
	if s == nil {
		return "", nil
	}
	return s.Sign(th.Size, th.Root)
}

// Verifier is the verifier of the key, after Setup.
func (k *Keeper) Verifier() (tlog.Verifier, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.s == nil {
		return tlog.Verifier{}, false
	}
	return k.s.Verifier(), true
}

// Setup loads the signing key of l (opened for writing), creating it when
// the state directory holds none, and records its verifier key in l
// (ledger.key, durable) unless the last recorded key is that one. A key
// file that is not private, or that signs for another ledger, is an error
// that says what to do: it is never used, replaced or deleted. The key
// signs for SetOrigin's origin (tlog.Origin(id) by default); when the
// origin changed, the key recorded last is moved aside (KeyFile.retired-*)
// and a new one is created and recorded (ledger.key, replaced).
func (k *Keeper) Setup(ctx context.Context, l *ledger.Ledger) error {
	origin := k.origin
	if origin == "" {
		origin = tlog.Origin(l.ID())
	}
	s, err := tlog.LoadKey(k.dir)
	created := false
	if errors.Is(err, tlog.ErrNoKey) {
		s, err = tlog.CreateKey(k.dir, origin)
		created = err == nil
	}
	if err != nil {
		return err
	}
	h, err := l.Head()
	if err != nil {
		return err
	}
	last, ok, err := event.KeyAt(l, h.Seq+1)
	if err != nil {
		return fmt.Errorf("checkpoint key: the recorded key: %w", err)
	}
	retired := ""
	if s.Origin() != origin {
		// The key this ledger recorded last, for another origin:
		// ledger.origin changed. Its checkpoints stay verifiable with
		// the recorded key; the file is kept aside, a new key signs
		// for the new origin from here on.
		if !ok || last.Key.VKey != s.Verifier().String() {
			return fmt.Errorf("%s signs for %s, not for this ledger (%s): move it away and a new key is created and recorded",
				filepath.Join(k.dir, tlog.KeyFile), s.Origin(), origin)
		}
		if s, retired, err = retireKey(k.dir, origin); err != nil {
			return err
		}
	}
	vkey := s.Verifier().String()
	var rec *event.Key
	switch {
	case !ok:
		rec = &event.Key{VKey: vkey, Reason: event.KeyCreated}
	case last.Key.VKey != vkey:
		what := "holds another key"
		if created {
			what = "was missing"
		}
		detail := fmt.Sprintf("the key file %s %s; the key recorded at entry %d (%s) no longer signs", tlog.KeyFile, what, last.Seq, last.Key.VKey)
		if retired != "" {
			detail = fmt.Sprintf("ledger.origin: checkpoints are signed for %s from here on; the key recorded at entry %d (%s) signed for %s and no longer signs (kept as %s)",
				s.Origin(), last.Seq, last.Key.VKey, last.Verifier.Name(), retired)
		}
		rec = &event.Key{VKey: vkey, Reason: event.KeyReplaced, Detail: detail}
	}
	if rec != nil {
		r, err := event.Record("", rec)
		if err == nil {
			_, err = l.Append(ctx, ledger.Sync, r)
		}
		if err != nil {
			return fmt.Errorf("record the checkpoint key: %w", err)
		}
	}
	k.mu.Lock()
	k.s = s
	k.mu.Unlock()
	return nil
}

// Publish writes the note of the ledger.checkpoint entry seq to the note
// file, once that entry is durable (it syncs l first). A checkpoint
// without a note (recorded before Setup) publishes nothing. Calls are
// serialised, and a checkpoint at or below the last one this keeper
// published is not written: the note file only ever moves forward, even
// when a late caller publishes an older checkpoint.
func (k *Keeper) Publish(ctx context.Context, l *ledger.Ledger, seq uint64) error {
	k.pub.Lock()
	defer k.pub.Unlock()
	if k.published != 0 && seq <= k.published {
		return nil
	}
	if err := l.Sync(ctx); err != nil {
		return err
	}
	e, err := l.Get(seq)
	if err != nil {
		return err
	}
	var c ledger.CheckpointPayload
	if e.Type != ledger.TypeCheckpoint || json.Unmarshal(e.Data, &c) != nil {
		return fmt.Errorf("publish checkpoint: entry %d is not a ledger.checkpoint", seq)
	}
	if c.Note == "" {
		return nil
	}
	if err := tlog.WriteNote(k.dir, c.Note); err != nil {
		return err
	}
	k.published = seq
	return nil
}

// retireKey moves the key file aside (KeyFile.retired-<unix ns>, still
// 0600) and creates a new key for origin in its place.
func retireKey(dir, origin string) (*tlog.Signer, string, error) {
	name := fmt.Sprintf("%s.retired-%d", tlog.KeyFile, time.Now().UnixNano())
	if err := os.Rename(filepath.Join(dir, tlog.KeyFile), filepath.Join(dir, name)); err != nil {
		return nil, "", fmt.Errorf("checkpoint key: retire the key of the former origin: %w", err)
	}
	s, err := tlog.CreateKey(dir, origin)
	if err != nil {
		return nil, "", err
	}
	return s, name, nil
}
