package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ocsf"
	"github.com/urfave/cli/v2"
)

// `opx ledger export --format ocsf`: the ledger (or one session) as OCSF
// events, one per line, to a file or stdout, once or following the
// ledger as it grows (docs/ocsf.md).

// ocsfExportFlags are the flags only --format ocsf reads.
func ocsfExportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "follow", Usage: "with --format ocsf: keep writing events as entries become durable (Ctrl-C stops)"},
		&cli.StringFlag{Name: "cursor", Usage: "with --format ocsf --follow: keep the resume point in `PATH` (default FILE.cursor with -o FILE)", TakesFile: true},
		&cli.StringFlag{Name: "host", Usage: "with --format ocsf: the engine's host `NAME` for device.hostname (default this machine's)"},
	}
}

const ocsfExportHelp = "With --format ocsf, writes OCSF 1.9 events instead (docs/ocsf.md), one JSON object per line, to -o FILE\n" +
	"(created; refused if it exists, unless --follow resumes it) or to stdout: API Activity for tool and MCP\n" +
	"calls, Process Activity for shell commands, File System Activity for the files an execution changed,\n" +
	"Detection Finding for Shield's blocks, escalations and flagged results, Authorize Session for approvals.\n" +
	"Each event carries its entry's hash, the previous entry's hash and the ledger id, and the latest signed\n" +
	"checkpoint covering it. The chain is checked as it is read (exit 4 where it breaks). With --follow, it\n" +
	"goes on as entries become durable, through engine restarts, and resumes where it stopped: the cursor\n" +
	"(FILE.cursor beside -o FILE, or --cursor) holds the next entry, the hash of the one before it and the\n" +
	"length of FILE that is complete; on resume FILE is cut back to that length, so no event is written twice.\n"

// runLedgerExportOCSF is `opx ledger export --format ocsf`.
func runLedgerExportOCSF(c *cli.Context) error {
	if c.IsSet("tiles") {
		return usage.Errorf(c, "--tiles is a tree, not events; give it without --format ocsf")
	}
	if c.Bool("json") {
		return usage.Errorf(c, "--format ocsf writes events, one JSON object per line; --json is for the JSONL export's summary")
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return err
	}
	opts := ocsf.Options{Host: c.String("host"), Version: Version, Session: c.String("session")}
	if !c.IsSet("host") {
		opts.Host, _ = os.Hostname()
	}
	if c.Bool("follow") {
		ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
		defer stop()
		c.Context = ctx
		out := &ocsfOutput{path: c.String("output"), cursorPath: c.String("cursor")}
		if err := out.open(c); err != nil {
			return err
		}
		defer out.close()
		err := followOCSF(c, path, opts, out, "")
		if ctx.Err() != nil && !errors.Is(err, ledger.ErrIntegrity) {
			err = nil // stopped (Ctrl-C)
		}
		if serr := out.save(); err == nil {
			err = serr
		}
		return err
	}
	if c.IsSet("cursor") {
		return usage.Errorf(c, "--cursor is the resume point of --follow")
	}
	w := c.App.Writer
	var f *os.File
	if out := c.String("output"); out != "" {
		if f, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	_, err = exportOCSFOnce(c, path, opts, bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name()) // no partial export left behind
		}
	}
	return err
}

// exportOCSFOnce writes the events of the ledger at path up to its head
// (through its engine when one holds it), checking the chain, and
// returns how many it wrote.
func exportOCSFOnce(c *cli.Context, path string, opts ocsf.Options, w io.Writer) (int, error) {
	l, r, err := liveledger.OpenEngineOrFile(c, path)
	if err != nil {
		return 0, err
	}
	var src ledger.Source
	var head ledger.Head
	if l != nil {
		defer l.Close()
		if head, err = l.Head(); err != nil {
			return 0, err
		}
		src = l.LocalSource(head)
	} else {
		defer r.Close()
		src, head = r, r.FixedHead()
	}
	opts.LedgerID = head.LedgerID
	m := ocsf.NewMapper(opts)
	if cp, ok, err := latestSignedCheckpoint(src, head.Seq); err != nil {
		return 0, err
	} else if ok {
		m.SetCheckpoint(cp)
	}
	var prev ledger.Hash
	var buf []byte
	n := 0
	err = src.Entries(0, head.Seq, func(seq uint64, raw []byte) error {
		e, err := ledger.ParseStored(seq, raw)
		if err != nil {
			return fmt.Errorf("%w: entry %d: %v", ledger.ErrIntegrity, seq, err)
		}
		if e.Prev != prev {
			return fmt.Errorf("%w: entry %d does not follow entry %d (prev %s, want %s)", ledger.ErrIntegrity, seq, seq-1, e.Prev, prev)
		}
		prev = e.Hash()
		var k int
		if buf, k, err = m.Map(buf[:0], &e); err != nil {
			return err
		}
		n += k
		_, err = w.Write(buf)
		return err
	})
	return n, err
}

// latestSignedCheckpoint finds the last ledger.checkpoint at or below
// head that carries a signed note, reading backward a window at a time
// (a signing ledger has one every few thousand entries).
func latestSignedCheckpoint(src ledger.Source, head uint64) (ocsf.Checkpoint, bool, error) {
	const window = 4096
	to := head
	for {
		from := uint64(0)
		if to >= window {
			from = to - window + 1
		}
		var found ocsf.Checkpoint
		ok := false
		err := src.Entries(from, to, func(seq uint64, raw []byte) error {
			if !hasTypeTail(raw, ledger.TypeCheckpoint) {
				return nil
			}
			e, err := ledger.ParseStored(seq, raw)
			if err != nil {
				return nil // the chain check says so, in order
			}
			if cp, isCP := ocsf.ParseCheckpoint(&e); isCP {
				found, ok = cp, true
			}
			return nil
		})
		if err != nil || ok || from == 0 {
			return found, ok, err
		}
		to = from - 1
	}
}

// hasTypeTail reports whether a stored entry's type is typ: it is the
// last member of a canonical entry.
func hasTypeTail(raw []byte, typ string) bool {
	tail := `"type":"` + typ + `"}`
	return len(raw) >= len(tail) && string(raw[len(raw)-len(tail):]) == tail
}
