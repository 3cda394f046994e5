package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

// followBacklog is how many entries follow prints first without --from,
// as tail does.
const followBacklog = 10

// followPoll is how often follow looks for an engine (and at the file)
// while none serves the ledger.
const followPoll = 100 * time.Millisecond

// followFileBatch bounds what follow reads from the file in one open:
// it prints with the file closed, and lets a starting engine in between.
const followFileBatch = 4 << 20

func ledgerFollowCommand() *cli.Command {
	return &cli.Command{
		Name:  "follow",
		Usage: "print entries as they become durable, each checked against the one before it",
		Description: "Prints the last 10 entries (or from --from SEQ), then each new entry once the engine has made it durable,\n" +
			"one line each as tail prints them (--json: one object per line). Every entry is checked before it is\n" +
			"printed: its seq is the next one and its prev is the hash of the entry before it, so what follow prints\n" +
			"is one unbroken chain from the anchor: no entry missing, repeated or out of order. An entry's content is\n" +
			"confirmed by the next one (whose prev must be its hash), or on a reconnect (the ledger must still hold\n" +
			"it): the last entry printed is not confirmed yet, so an engine could still show it altered, and follow\n" +
			"would then stop at its successor (exit 4). The first entry is anchored to entry SEQ-1 as the ledger holds\n" +
			"it when follow starts (entry 0 to the genesis rule, prev all zeros); follow does not check the chain\n" +
			"below it (use verify). When a signed checkpoint arrives through the engine and the state directory beside\n" +
			"the ledger holds the key, follow checks it with that key and the engine's proof of the entry before it,\n" +
			"and says on stderr \"confirmed through N\": every entry printed up to N is the one the key signed.\n" +
			"Follow survives an engine restart: it reconnects when the engine is back and goes on from the next entry,\n" +
			"after checking that the ledger still holds the last entry it printed. Without an engine it prints what\n" +
			"the file holds (opening it only for a moment each time) and waits for one.\n" +
			"--type filters what is printed; every entry is still checked. Stop it with Ctrl-C.\n\n" +
			exitCodesHelp("the chain followed does not continue: an entry does not follow the last one printed, or the ledger was replaced"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.Uint64Flag{Name: "from", Usage: "start at entry `SEQ` (default: the last 10 entries)"},
			&cli.StringSliceFlag{Name: "type", Usage: "print only entries of type `T` (repeatable)"},
			ui.JSONFlag(),
		),
		Action: runLedgerFollow,
	}
}

// follower is the state of a follow: the last entry printed (or the
// anchor) and the ledger it belongs to.
type follower struct {
	c        *cli.Context
	path     string
	w        io.Writer
	json     bool
	types    map[string]bool
	fromSet  bool
	from     uint64
	anchored bool        // next and prev are set
	next     uint64      // the seq of the next entry to accept
	prev     ledger.Hash // the hash of entry next-1 (zeros when next is 0)
	id       string      // the ledger id, once seen
	fileSeen time.Time   // the file's mtime when last read offline
	// emit, when set, receives each entry accepted in place of printing
	// it (the console's event stream).
	emit func(e ledger.Entry) error
}

func runLedgerFollow(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return err
	}
	// Ctrl-C (or SIGTERM) ends follow: exit 0, as after any stop.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c.Context = ctx
	f := &follower{c: c, path: path, w: c.App.Writer, json: c.Bool("json"), fromSet: c.IsSet("from"), from: c.Uint64("from")}
	if ts := c.StringSlice("type"); len(ts) > 0 {
		f.types = map[string]bool{}
		for _, t := range ts {
			f.types[t] = true
		}
	}
	err = f.run()
	if c.Context.Err() != nil && !errors.Is(err, ledger.ErrIntegrity) {
		return nil // stopped (Ctrl-C)
	}
	return err
}

// run alternates between the engine and the file until the context ends
// or the chain breaks.
func (f *follower) run() error {
	for f.c.Context.Err() == nil {
		r, err := liveledger.Dial(f.c, f.path)
		if err == nil {
			err = f.fromEngine(r)
			r.Close()
			if !errors.Is(err, liveledger.ErrEngineGone) && f.c.Context.Err() == nil {
				return err // the chain broke, or the engine sent what no ledger holds
			}
			// The engine went away: the next one, or the file. The pause
			// keeps an engine that ends every stream at once from making
			// follow spin.
			f.pause()
			continue
		}
		switch err := f.fromFile(); {
		case err == nil, errors.Is(err, ledger.ErrLocked):
		default:
			return err
		}
		f.pause()
	}
	return nil
}

// pause waits followPoll, or until the context ends.
func (f *follower) pause() {
	select {
	case <-f.c.Context.Done():
	case <-time.After(followPoll):
	}
}

// broken is follow's integrity failure: the chain it followed does not
// continue.
func broken(format string, args ...any) error {
	return fmt.Errorf("%w: the chain followed does not continue: %s", ledger.ErrIntegrity, fmt.Sprintf(format, args...))
}

// attach checks a source (the engine, or the file) against what follow
// has printed: the same ledger, and still holding the last entry printed.
// Before the first entry it sets the anchor. get returns the stored bytes
// of an entry, nil when the source does not hold it.
func (f *follower) attach(h ledger.Head, get func(seq uint64) ([]byte, error)) error {
	if f.id == "" {
		f.id = h.LedgerID
	} else if h.LedgerID != f.id {
		return broken("the ledger is now %s, it was %s", h.LedgerID, f.id)
	}
	if !f.anchored {
		if !f.fromSet {
			f.from = 0
			if h.Seq >= followBacklog {
				f.from = h.Seq - followBacklog + 1
			}
		}
		if f.from == 0 {
			f.anchored = true // entry 0's prev is all zeros
			return nil
		}
		raw, err := get(f.from - 1)
		if err != nil || raw == nil {
			return err // not there yet: anchor later
		}
		f.anchored, f.next, f.prev = true, f.from, ledger.Sum(raw)
		return nil
	}
	if f.next == 0 {
		return nil
	}
	if h.Seq+1 < f.next {
		return broken("the ledger's head is %d, behind entry %d printed", h.Seq, f.next-1)
	}
	raw, err := get(f.next - 1)
	if err != nil {
		return err
	}
	if raw == nil || ledger.Sum(raw) != f.prev {
		return broken("entry %d is no longer the one printed (hash %s)", f.next-1, f.prev)
	}
	return nil
}

// accept checks that raw is entry f.next and follows f.prev, then prints it.
func (f *follower) accept(seq uint64, raw []byte) error {
	if seq != f.next {
		return broken("entry %d came where entry %d was due", seq, f.next)
	}
	if len(raw) > ledger.MaxLineSize {
		return broken("entry %d is %d bytes, over the maximum entry size", seq, len(raw))
	}
	e, err := ledger.ParseStored(seq, raw)
	if err != nil {
		return broken("entry %d: %v", seq, err)
	}
	if e.Prev != f.prev {
		return broken("entry %d has prev %s, but entry %d hashes to %s", seq, e.Prev, seq-1, f.prev)
	}
	f.next, f.prev = seq+1, e.Hash()
	if f.types != nil && !f.types[e.Type] {
		return nil
	}
	if f.emit != nil {
		return f.emit(e)
	}
	if f.json {
		b, err := json.Marshal(tailEntry{Seq: e.Seq, Hash: e.Hash().String(), Entry: e.Raw})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f.w, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintln(f.w, tailLine(e))
	return err
}

// fromEngine follows the engine's Follow stream until it ends.
func (f *follower) fromEngine(r *liveledger.Ledger) error {
	get := func(seq uint64) ([]byte, error) {
		var out []byte
		if seq > r.FixedHead().Seq {
			return nil, nil
		}
		err := r.Entries(seq, seq, func(_ uint64, raw []byte) error { out = raw; return nil })
		return out, err
	}
	if err := f.attach(r.FixedHead(), get); err != nil {
		return err
	}
	start := f.next
	if !f.anchored {
		start = f.from - 1 // the anchor comes first
	}
	s, err := r.Client().Follow(r.Ctx(), &opxv1.FollowRequest{FromSeq: start})
	if err != nil {
		return liveledger.EngineErr(err)
	}
	for {
		en, err := s.Recv()
		if errors.Is(err, io.EOF) {
			// A stream the engine ends cleanly is treated as a restart:
			// reconnect, and check again that the ledger holds the last
			// entry printed, before going on.
			return fmt.Errorf("%w (it ended the follow stream)", liveledger.ErrEngineGone)
		}
		if err != nil {
			return liveledger.EngineErr(err)
		}
		if !f.anchored {
			if en.Seq != f.from-1 || len(en.Raw) > ledger.MaxLineSize {
				return broken("the anchor, entry %d, came as entry %d", f.from-1, en.Seq)
			}
			f.anchored, f.next, f.prev = true, f.from, ledger.Sum(en.Raw)
			continue
		}
		prev := f.prev
		if err := f.accept(en.Seq, en.Raw); err != nil {
			return err
		}
		if err := f.confirm(r, en.Seq, en.Raw, prev); err != nil {
			return err
		}
	}
}

// confirm checks a signed checkpoint follow just printed (entry seq,
// whose prev is prev) with the key in the state directory beside the
// ledger, read here, not asked of the engine: the engine's proof that
// entry seq-1 is in the signed tree of seq entries confirms the content
// of every entry printed up to it, through the chain. Without a key
// there, or for a checkpoint of another tree, it says nothing.
func (f *follower) confirm(r *liveledger.Ledger, seq uint64, raw []byte, prev ledger.Hash) error {
	if seq == 0 || !bytes.HasSuffix(raw, []byte(`"type":"`+ledger.TypeCheckpoint+`"}`)) {
		return nil
	}
	e, err := ledger.ParseStored(seq, raw)
	var c ledger.CheckpointPayload
	if err != nil || json.Unmarshal(e.Data, &c) != nil || c.Note == "" {
		return nil
	}
	dir := filepath.Dir(f.path)
	s, err := tlog.LoadKey(dir)
	if err != nil {
		return nil
	}
	v := s.Verifier()
	if cp, err := tlog.Open([]byte(c.Note), v); err != nil {
		fmt.Fprintf(f.c.App.ErrWriter, "checkpoint %d: not confirmed: %v\n", seq, err)
		return nil
	} else if cp.Size != seq {
		return nil
	}
	p, _, err := remoteProve(r, f.path, seq-1, []byte(c.Note), &v)
	if err != nil {
		return err
	}
	if ledger.Sum([]byte(p.Entry)) != prev {
		return broken("the signed checkpoint %d holds another entry %d than the one printed", seq, seq-1)
	}
	fmt.Fprintf(f.c.App.ErrWriter, "confirmed through %d: checkpoint %d is signed by the key in %s\n", seq-1, seq, dir)
	return nil
}

// fromFile prints what the file holds beyond the last entry printed, when
// it changed since follow last looked. The file is open only while a
// batch is read, never while printing or waiting, so an engine that
// starts meanwhile gets it (it waits a few seconds for readers).
func (f *follower) fromFile() error {
	fi, err := os.Stat(f.path)
	if err == nil && f.anchored && fi.ModTime().Equal(f.fileSeen) {
		return nil
	}
	for {
		l, err := ledger.OpenReadOnly(f.path)
		if err != nil {
			if errors.Is(err, ledger.ErrLocked) {
				return err
			}
			return ledgerloc.ExplainOpen(f.path, err)
		}
		if fi != nil {
			f.fileSeen = fi.ModTime()
		}
		var batch []stored
		h, err := l.Head()
		if err == nil {
			err = f.attach(h, func(seq uint64) ([]byte, error) {
				var out []byte
				err := l.RangeRaw(seq, seq, func(_ uint64, raw []byte) error { out = append([]byte(nil), raw...); return nil })
				return out, err
			})
		}
		if err == nil && f.anchored && f.next <= h.Seq {
			size := 0
			err = l.RangeRaw(f.next, h.Seq, func(seq uint64, raw []byte) error {
				batch = append(batch, stored{seq, append([]byte(nil), raw...)})
				if size += len(raw); size >= followFileBatch {
					return errFollowBatch
				}
				return nil
			})
			if errors.Is(err, errFollowBatch) {
				err = nil
			}
		}
		l.Close()
		if err != nil {
			return err
		}
		for _, en := range batch {
			if err := f.accept(en.seq, en.raw); err != nil {
				return err
			}
		}
		if len(batch) == 0 || f.next > h.Seq || f.c.Context.Err() != nil {
			return nil
		}
	}
}

var errFollowBatch = errors.New("batch full")

// stored is an entry's seq and stored bytes.
type stored struct {
	seq uint64
	raw []byte
}
