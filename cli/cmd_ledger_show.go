package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"io"
	"strconv"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

func ledgerShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print one entry, with a summary of the blobs it names",
		ArgsUsage: "SEQ",
		Description: "Prints the entry's header (seq, type, session, ts, prev, hash) and its data as indented JSON.\n" +
			"For each blob the data names, prints its size, or that it is missing; never its content.\n" +
			"The hash is computed from the stored bytes; show does not verify the chain (use verify).\n" +
			"While an engine holds the ledger, show reads the entry and the blob frames through the engine.\n\n" +
			exitCodesHelp("integrity failure found: the stored entry does not parse"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runLedgerShow,
	}
}

// blobSummary describes one blob an entry names. Size is the uncompressed
// size (null when missing, or when the stored frame does not record it);
// StoredSize is the compressed size on disk.
type blobSummary struct {
	Hash       string `json:"hash"`
	Size       *int64 `json:"size"`
	StoredSize int    `json:"stored_size"`
	Present    bool   `json:"present"`
}

// showResult is the --json output of show; Entry is the stored entry
// object, verbatim.
type showResult struct {
	Seq   uint64          `json:"seq"`
	Hash  string          `json:"hash"`
	Entry json.RawMessage `json:"entry"`
	Blobs []blobSummary   `json:"blobs"`
}

func runLedgerShow(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "SEQ")
	if err != nil {
		return err
	}
	seq, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return usage.Errorf(c, "SEQ %q is not a non-negative integer", args[0])
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var e ledger.Entry
	var st blobStater
	if rv.local != nil {
		e, err = rv.local.Get(seq)
		st = localStater{rv.local}
	} else {
		e, err = liveledger.Get(rv.remote, seq)
		st = liveledger.Stater{R: rv.remote}
	}
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		var h ledger.Head
		var herr error
		if rv.local != nil {
			h, herr = rv.local.Head()
		} else {
			h, herr = rv.remote.Head()
		}
		if herr == nil {
			return fmt.Errorf("no entry %d in %s (head is %d)", seq, rv.path, h.Seq)
		}
		return err
	case rv.remote != nil && err != nil && !errors.As(err, new(*ledger.IntegrityError)):
		return err // the engine went away, or sent what no ledger holds
	case err != nil:
		return &ledger.IntegrityError{Seq: seq, Kind: ledger.KindUnreadable, Detail: err.Error()}
	}
	blobs, err := summariseBlobs(st, e.Data)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, showResult{Seq: e.Seq, Hash: e.Hash().String(), Entry: e.Raw, Blobs: blobs})
	}
	printEntry(c.App.Writer, e, blobs)
	return nil
}

// blobStater is what show needs of a ledger: a *ledger.Ledger, or the
// engine's ledger (liveledger.Stater).
type blobStater interface {
	StatBlob(h ledger.Hash) (ledger.BlobInfo, error)
	// ContentSize decompresses the blob to count its bytes, checking
	// its hash on the way.
	ContentSize(h ledger.Hash) (int64, error)
}

// localStater is a ledger file's blobStater.
type localStater struct{ l *ledger.Ledger }

func (s localStater) StatBlob(h ledger.Hash) (ledger.BlobInfo, error) { return s.l.StatBlob(h) }

func (s localStater) ContentSize(h ledger.Hash) (int64, error) {
	content, err := s.l.GetBlob(h)
	return int64(len(content)), err
}

// summariseBlobs stats every blob the entry's data names.
func summariseBlobs(l blobStater, data []byte) ([]blobSummary, error) {
	refs, err := ledger.BlobRefs(data)
	if err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	out := []blobSummary{}
	for _, h := range refs {
		s := blobSummary{Hash: h.String()}
		info, err := l.StatBlob(h)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			s.Present, s.StoredSize = true, info.CompressedSize
			size := info.Size
			if size < 0 {
				// The frame header does not record the size (zstd leaves
				// it out of small frames): decompress to count, which
				// also checks the hash. A blob that fails keeps size null.
				if n, err := l.ContentSize(h); err == nil {
					size = n
				}
			}
			if size >= 0 {
				s.Size = &size
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func printEntry(w io.Writer, e ledger.Entry, blobs []blobSummary) {
	session := e.Session
	if session == "" {
		session = "-"
	}
	fmt.Fprintf(w, "seq      %d\ntype     %s\nsession  %s\nts       %s\nprev     %s\nhash     %s\n",
		e.Seq, e.Type, session, e.TS, e.Prev, e.Hash())
	var data bytes.Buffer
	if err := json.Indent(&data, e.Data, "  ", "  "); err != nil {
		data.Reset()
		data.Write(e.Data)
	}
	fmt.Fprintf(w, "data\n  %s\n", data.Bytes())
	if len(blobs) == 0 {
		return
	}
	fmt.Fprintf(w, "blobs\n")
	for _, b := range blobs {
		switch {
		case !b.Present:
			fmt.Fprintf(w, "  %s  missing (not stored, or pruned)\n", b.Hash)
		case b.Size == nil:
			fmt.Fprintf(w, "  %s  size unknown (does not decompress to its hash; run verify), %d bytes stored\n", b.Hash, b.StoredSize)
		default:
			fmt.Fprintf(w, "  %s  %d bytes, %d stored\n", b.Hash, *b.Size, b.StoredSize)
		}
	}
}
