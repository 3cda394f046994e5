package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/opx-dev/opx/cli/internal/liveledger"
	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ocsf"
	"github.com/urfave/cli/v2"
)

// The OCSF export's --follow: a follower (cmd_ledger_follow.go) per
// ledger, each entry it accepts mapped and written, and the cursor that
// lets a later run resume without writing an event twice.

// ocsfCursorEvery is how often a follow saves its cursor.
const ocsfCursorEvery = 200 * time.Millisecond

// ocsfCursorFormat names the cursor file's format.
const ocsfCursorFormat = "opx-ocsf-cursor/1"

// ocsfWarmUp is how many entries before the resume point a resumed
// follow maps without writing, so the calls in flight there (their
// proposals, snapshots, approvals) are known again.
const ocsfWarmUp = 16384

// ocsfCursor is the cursor file: for each ledger (by id) the next entry
// to map and the hash of the one before it, and the length of the output
// file that those positions account for.
type ocsfCursor struct {
	Format     string                     `json:"format"`
	OutputSize int64                      `json:"output_size"`
	Ledgers    map[string]ocsfCursorEntry `json:"ledgers"`
}

type ocsfCursorEntry struct {
	Next uint64 `json:"next"`
	Prev string `json:"prev"` // hash of entry Next-1 ("" when Next is 0)
}

// ocsfOutput is where followed events go: a file (resumable exactly) or
// the command's writer, and the cursor. Safe for concurrent followers.
type ocsfOutput struct {
	path, cursorPath string

	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	cur   ocsfCursor
	saved time.Time
	dirty bool
}

// maxCursorSize bounds the cursor file read (a collector's sources).
const maxCursorSize = 64 << 20

// open reads the cursor and opens the output, cut back to what the
// cursor accounts for.
func (o *ocsfOutput) open(c *cli.Context) error {
	if o.cursorPath == "" && o.path != "" {
		o.cursorPath = o.path + ".cursor"
	}
	o.cur = ocsfCursor{Format: ocsfCursorFormat, Ledgers: map[string]ocsfCursorEntry{}}
	haveCursor := false
	if o.cursorPath != "" {
		b, err := regularfile.Read(o.cursorPath, maxCursorSize)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("ocsf cursor: %w", err)
		default:
			if err := json.Unmarshal(b, &o.cur); err != nil || o.cur.Format != ocsfCursorFormat || o.cur.OutputSize < 0 {
				return fmt.Errorf("ocsf cursor %s: not a cursor of this format", o.cursorPath)
			}
			if o.cur.Ledgers == nil {
				o.cur.Ledgers = map[string]ocsfCursorEntry{}
			}
			haveCursor = true
		}
	}
	if o.path == "" {
		o.w = bufio.NewWriterSize(c.App.Writer, 64<<10)
		return nil
	}
	fi, err := os.Lstat(o.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if haveCursor && o.cur.OutputSize > 0 {
			return fmt.Errorf("export: the cursor %s accounts for %d bytes of %s, which does not exist", o.cursorPath, o.cur.OutputSize, o.path)
		}
		o.cur.OutputSize = 0
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("export: %s is not a regular file", o.path)
	case !haveCursor:
		return fmt.Errorf("export: %s exists without its cursor %s: remove it, or name the cursor with --cursor", o.path, o.cursorPath)
	case fi.Size() < o.cur.OutputSize:
		return fmt.Errorf("export: %s holds %d bytes, its cursor accounts for %d: not the file the cursor was written with", o.path, fi.Size(), o.cur.OutputSize)
	}
	f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	// Events written after the cursor was last saved are cut: their
	// entries are mapped again.
	if err := f.Truncate(o.cur.OutputSize); err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	if _, err := f.Seek(o.cur.OutputSize, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	o.f, o.w = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

// position is where a ledger resumes (ok false: from its start).
func (o *ocsfOutput) position(id string) (ocsfCursorEntry, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p, ok := o.cur.Ledgers[id]
	return p, ok
}

// ledgers lists the ledgers the cursor knows.
func (o *ocsfOutput) ledgers() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ids []string
	for id := range o.cur.Ledgers {
		ids = append(ids, id)
	}
	return ids
}

// write writes an entry's events and moves the ledger's position past
// it; the cursor is saved every so often (ocsfCursorEvery) and at the
// end. A file is cut back to the saved cursor on resume, so a run killed
// in between writes nothing twice; stdout cannot be cut back, so there
// the events written since the last save are written again.
func (o *ocsfOutput) write(id string, seq uint64, hash ledger.Hash, lines []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(lines) > 0 {
		if _, err := o.w.Write(lines); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := o.w.Flush(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		o.cur.OutputSize += int64(len(lines))
	}
	o.cur.Ledgers[id] = ocsfCursorEntry{Next: seq + 1, Prev: hash.String()}
	o.dirty = true
	if time.Since(o.saved) > ocsfCursorEvery {
		return o.saveLocked()
	}
	return nil
}

// save writes the cursor if it moved.
func (o *ocsfOutput) save() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.saveLocked()
}

func (o *ocsfOutput) saveLocked() error {
	o.saved = time.Now()
	if !o.dirty || o.cursorPath == "" {
		return nil
	}
	if err := o.w.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if o.f != nil {
		// The events the cursor accounts for are on disk before it is.
		if err := o.f.Sync(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	b, err := json.Marshal(o.cur)
	if err != nil {
		return err
	}
	if err := regularfile.WriteAtomic(o.cursorPath, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("ocsf cursor: %w", err)
	}
	o.dirty = false
	return nil
}

func (o *ocsfOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Flush()
	if o.f != nil {
		o.f.Close()
	}
}

// followOCSF follows the ledger at path, writing the events of each
// entry as it becomes durable, from the cursor's position for the ledger
// (id, when known beforehand: a collector's source) or from its start,
// until the context ends or the chain breaks.
func followOCSF(c *cli.Context, path string, opts ocsf.Options, out *ocsfOutput, id string) error {
	if id == "" {
		if ids := out.ledgers(); len(ids) > 1 {
			return fmt.Errorf("export: the cursor %s holds %d ledgers; this export follows one", out.cursorPath, len(ids))
		} else if len(ids) == 1 {
			id = ids[0]
		}
	}
	resume := uint64(0)
	var want ledger.Hash
	f := &follower{c: c, path: path, w: io.Discard, fromSet: true}
	if pos, ok := out.position(id); ok && id != "" {
		h, err := ledger.ParseHash(pos.Prev)
		if pos.Next > 0 && err != nil {
			return fmt.Errorf("ocsf cursor: ledger %s: %w", id, err)
		}
		resume, want, f.id = pos.Next, h, id
		if resume > ocsfWarmUp {
			f.from = resume - ocsfWarmUp
		}
	}
	key := id // the cursor's key: the source's id, else the ledger's
	cp, haveCP := followCheckpoint(c, path)
	var m *ocsf.Mapper
	var buf []byte
	f.emit = func(e ledger.Entry) error {
		if m == nil {
			opts.LedgerID = f.id
			m = ocsf.NewMapper(opts)
			if haveCP {
				m.SetCheckpoint(cp)
			}
		}
		var err error
		if buf, _, err = m.Map(buf[:0], &e); err != nil {
			return err
		}
		if e.Seq < resume {
			if e.Seq == resume-1 && e.Hash() != want {
				return broken("entry %d is not the one the cursor names (hash %s)", e.Seq, want)
			}
			return nil // mapped again for its state, written before
		}
		if key == "" {
			key = f.id
		}
		return out.write(key, e.Seq, e.Hash(), buf)
	}
	// run ends only when the context does or the chain breaks. (A ledger
	// shorter than the cursor is waited for: it holds no entry to map.)
	return f.run()
}

// followCheckpoint finds the latest signed checkpoint of the ledger at
// path when follow starts (the entries it covers carry it); none when
// the ledger cannot be read now.
func followCheckpoint(c *cli.Context, path string) (ocsf.Checkpoint, bool) {
	l, r, err := liveledger.OpenEngineOrFile(c, path)
	if err != nil {
		return ocsf.Checkpoint{}, false
	}
	var src ledger.Source
	var head ledger.Head
	if l != nil {
		defer l.Close()
		if head, err = l.Head(); err != nil {
			return ocsf.Checkpoint{}, false
		}
		src = l.LocalSource(head)
	} else {
		defer r.Close()
		src, head = r, r.FixedHead()
	}
	cp, ok, err := latestSignedCheckpoint(src, head.Seq)
	return cp, ok && err == nil
}
