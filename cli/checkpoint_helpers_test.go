package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
)

// signed is a ledger as an engine leaves it: its key recorded, notes, and
// signed checkpoints, with the key and the latest note beside it.
type signed struct {
	Path  string
	Dir   string // the state directory: ledger.db, checkpoint.key, checkpoint
	Key   tlog.Verifier
	Notes map[uint64]string // the note of each checkpoint, by tree size
	// Text is the format of the notes' text ("note %d" when empty).
	Text string
}

// signedLedger creates a signed ledger: genesis, the key recorded
// (ledger.key), then n notes with a signed checkpoint (ledger.checkpoint)
// after the at[i]-th note, each published to the note file as the engine
// does. It is checked strictly (with the checkpoints) when the test ends.
func signedLedger(t *testing.T, n int, at ...int) signed {
	t.Helper()
	s := growLedger(t, signed{Dir: t.TempDir()}, n, at...)
	t.Cleanup(func() {
		if _, err := os.Stat(s.Path); err == nil {
			ledgertest.MustVerify(t, s.Path, event.StrictOptions())
		}
	})
	return s
}

// growLedger appends n more notes (and checkpoints after the at[i]-th of
// them) to the signed ledger s, creating it when s.Path is empty.
func growLedger(t *testing.T, s signed, n int, at ...int) signed {
	t.Helper()
	ctx := context.Background()
	k := checkpoint.NewKeeper(s.Dir)
	opts := ledger.Options{NoSync: true, SignCheckpoint: k.Sign}
	var l *ledger.Ledger
	var err error
	if s.Path == "" {
		s.Path = filepath.Join(s.Dir, "ledger.db")
		l, err = ledger.Create(s.Path, opts)
	} else {
		l, err = ledger.Open(s.Path, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := k.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	s.Key, _ = k.Verifier()
	if s.Notes == nil {
		s.Notes = map[uint64]string{}
	}
	next := 0
	for i := 1; i <= n; i++ {
		format := s.Text
		if format == "" {
			format = "note %d"
		}
		rec := event.MustRecord(ledgertest.Sessions[i%3], &event.Note{Author: "test", Text: fmt.Sprintf(format, i)})
		if _, err := l.Append(ctx, ledger.Async, rec); err != nil {
			t.Fatal(err)
		}
		if next < len(at) && at[next] == i {
			next++
			app, err := l.Checkpoint(ctx, ledger.Sync)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Publish(ctx, l, app.Seq); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(s.Dir, tlog.NoteFile))
			if err != nil {
				t.Fatal(err)
			}
			s.Notes[app.Seq] = string(b) // the tree covers the entries before the checkpoint
		}
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// saveNote writes a note to a file of its own and returns its path.
func saveNote(t *testing.T, note string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "saved.checkpoint")
	if err := os.WriteFile(p, []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func utoa(n uint64) string { return strconv.FormatUint(n, 10) }

// copyDir copies the regular files of dir (a ledger's state directory)
// into a new directory, keeping their modes.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fi, _ := e.Info()
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, e.Name()), b, fi.Mode().Perm())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fork returns a copy of the signed ledger s (key and note included),
// with its own path, checked strictly when the test ends.
func fork(t *testing.T, s signed) signed {
	t.Helper()
	f := s
	f.Dir = copyDir(t, s.Dir)
	f.Path = filepath.Join(f.Dir, "ledger.db")
	f.Notes = map[uint64]string{}
	for k, v := range s.Notes {
		f.Notes[k] = v
	}
	t.Cleanup(func() {
		if _, err := os.Stat(f.Path); err == nil {
			ledgertest.MustVerify(t, f.Path, event.StrictOptions())
		}
	})
	return f
}

// entries is how many entries the ledger holds.
func (s signed) entries(t *testing.T) int {
	t.Helper()
	l, err := ledger.OpenReadOnly(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	return int(h.Seq) + 1
}
