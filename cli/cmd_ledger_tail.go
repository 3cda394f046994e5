package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// tailSummaryWidth caps the data summary of a tail line, in characters.
const tailSummaryWidth = 80

func ledgerTailCommand() *cli.Command {
	return &cli.Command{
		Name:  "tail",
		Usage: "print the last entries, one line each",
		Description: "Prints seq, ts, type, session and the start of the data of the last N entries, oldest first.\n" +
			"Use show SEQ for a whole entry, follow to go on printing new ones. While an engine holds the ledger,\n" +
			"tail reads it through the engine, up to its durable head.\n\n" +
			exitCodesHelp("integrity failure found: an entry does not parse"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: 10, Usage: "print the last `N` entries"},
			ui.JSONFlag(),
		),
		Action: runLedgerTail,
	}
}

// tailEntry is one entry in tail's --json output; Entry is the stored
// entry object, verbatim.
type tailEntry struct {
	Seq   uint64          `json:"seq"`
	Hash  string          `json:"hash"`
	Entry json.RawMessage `json:"entry"`
}

func runLedgerTail(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	n := c.Int("lines")
	if n <= 0 {
		return usage.Errorf(c, "-n %d: want a positive number of entries", n)
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var entries []ledger.Entry
	if rv.local != nil {
		entries, err = rv.local.Tail(n)
	} else if entries, err = remoteTail(rv.remote, n); err != nil && !errors.As(err, new(*ledger.IntegrityError)) {
		return err // the engine went away, or sent what no ledger holds
	}
	if err != nil {
		// Tail fails only on an entry that does not parse or a page
		// bbolt cannot read: damage either way.
		return fmt.Errorf("tail %s: %w: %v; run opx ledger verify for the full report", rv.path, ledger.ErrIntegrity, err)
	}
	if c.Bool("json") {
		out := struct {
			Entries []tailEntry `json:"entries"`
		}{Entries: []tailEntry{}}
		for _, e := range entries {
			out.Entries = append(out.Entries, tailEntry{Seq: e.Seq, Hash: e.Hash().String(), Entry: e.Raw})
		}
		return ui.WriteJSON(c, out)
	}
	for _, e := range entries {
		fmt.Fprintln(c.App.Writer, tailLine(e))
	}
	return nil
}

// tailLine formats one entry as "seq  ts  type  session  data...".
func tailLine(e ledger.Entry) string {
	session := e.Session
	if session == "" {
		session = "-"
	}
	return fmt.Sprintf("%6d  %s  %-22s  %s  %s", e.Seq, e.TS, e.Type, session, ui.Clip(string(e.Data), tailSummaryWidth))
}

// remoteTail is Ledger.Tail through the engine: the last n entries up to
// its durable head, oldest first.
func remoteTail(r *liveledger.Ledger, n int) ([]ledger.Entry, error) {
	h, _ := r.Head()
	from := uint64(0)
	if h.Seq >= uint64(n) {
		from = h.Seq - uint64(n) + 1
	}
	var out []ledger.Entry
	err := r.Entries(from, h.Seq, func(seq uint64, raw []byte) error {
		e, err := ledger.ParseStored(seq, raw)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	return out, err
}
