package cli

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/liveledger"
	"os"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func ledgerNoteCommand() *cli.Command {
	return &cli.Command{
		Name:      "note",
		Usage:     "append an investigator's note (a ledger.note entry)",
		ArgsUsage: "TEXT",
		Description: "Appends a ledger.note entry with the text and the author ($USER, else the uid), durable (fsynced)\n" +
			"before the command returns. Creates the ledger if there is none at the path yet, and says so.\n" +
			"Arguments are joined with spaces; put -- before text that starts with a dash.\n" +
			"While an engine holds the ledger, the engine appends the note (recording this client's name beside the\n" +
			"author) and answers once it is durable. --about SEQ makes it an annotation of that entry (opx replay,\n" +
			"opx report and opx serve show it with the step; strict verification checks the entry is before it).\n\n" +
			exitCodesHelp("integrity failure found: the stored head does not match the last entry, nothing appended"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.StringFlag{Name: "session", Usage: "attach the note to session `ID`"},
			&cli.Uint64Flag{Name: "about", Usage: "the note is about entry `SEQ` (an annotation of that step; it must be recorded)"},
			ui.JSONFlag(),
		),
		Action: runLedgerNote,
	}
}

// noteResult is the --json output of note.
type noteResult struct {
	Seq     uint64 `json:"seq"`
	Hash    string `json:"hash"`
	Ledger  string `json:"ledger"`
	Created bool   `json:"created"`
}

func runLedgerNote(c *cli.Context) error {
	args, err := wantArgs(c, 1, -1, "TEXT")
	if err != nil {
		return err
	}
	text := strings.Join(args, " ")
	if strings.TrimSpace(text) == "" {
		return usage.Errorf(c, "TEXT is empty")
	}
	about := c.Uint64("about")
	rec, err := event.Record(c.String("session"), &event.Note{Author: author(), Text: text, About: about})
	if err != nil {
		return usage.Errorf(c, "%v", err)
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return err
	}
	l, created, err := openOrCreate(path)
	if errors.Is(err, ledger.ErrLocked) {
		return noteByEngine(c, path, err, text)
	}
	if err != nil {
		return err
	}
	// Opened for writing: an interrupted rollback is recorded first, as
	// measured in the workspace the ledger's engine last worked on (or
	// --workspace); none known, it is left for opx rollback or the engine.
	ws, _ := rollbackWorkspace(c, l)
	if err := recoverRollbacks(c, l, engine.NewRecorder(l), ws); err != nil {
		l.Close()
		return err
	}
	if about != 0 {
		// Strict verification's rule (an annotation names an entry
		// before it), kept before anything is appended.
		if h, err := l.Head(); err != nil || about > h.Seq {
			l.Close()
			return usage.Errorf(c, "--about %d: the ledger has no such entry yet", about)
		}
	}
	if created && !c.Bool("json") {
		fmt.Fprintf(c.App.Writer, "created a new ledger at %s (ledger_id %s)\n", path, l.ID())
	}
	app, err := l.Append(c.Context, ledger.Sync, rec)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append note to %s: %w", path, err)
	}
	a := app[0]
	if c.Bool("json") {
		return ui.WriteJSON(c, noteResult{Seq: a.Seq, Hash: a.Hash.String(), Ledger: path, Created: created})
	}
	fmt.Fprintf(c.App.Writer, "noted: seq %d %s\n", a.Seq, a.Hash)
	return nil
}

// openOrCreate opens the ledger at path for appending, creating it when
// there is none yet.
func openOrCreate(path string) (*ledger.Ledger, bool, error) {
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return nil, false, err
	}
	l, err := ledger.Open(path, writeOptions())
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, writeOptions())
		if err != nil {
			return nil, false, err
		}
		return l, true, nil
	}
	if err != nil {
		return nil, false, ledgerloc.ExplainOpen(path, err)
	}
	return l, false, nil
}

// author names who wrote a note: $USER, else the numeric uid.
func author() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

// noteByEngine asks the engine that holds the ledger to append the note.
func noteByEngine(c *cli.Context, path string, locked error, text string) error {
	r, err := liveledger.Dial(c, path)
	if err != nil {
		return &usage.Explained{Err: locked, Msg: fmt.Sprintf("an engine holds %s, and no engine registered for it answers (%v)", path, err)}
	}
	defer r.Close()
	resp, err := r.Client().AppendNote(r.Ctx(), &opxv1.AppendNoteRequest{Session: c.String("session"), Author: author(), Text: text,
		About: c.Uint64("about")})
	if err != nil {
		return fmt.Errorf("append note to %s: %w", path, liveledger.EngineErr(err))
	}
	h, err := ledger.ParseHash(resp.Hash)
	if err != nil {
		return fmt.Errorf("append note to %s: the engine's answer: %w", path, err)
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, noteResult{Seq: resp.Seq, Hash: h.String(), Ledger: path})
	}
	fmt.Fprintf(c.App.Writer, "noted: seq %d %s\n", resp.Seq, h)
	return nil
}
