package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/urfave/cli/v2"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "print a session's conversation: the user's messages and the agent's answers",
		ArgsUsage: "SESSION",
		Description: "Reads the history projection (the file, or the running engine while it holds the file). For what\n" +
			"happened between the messages — model calls, tool calls, verdicts, snapshots — use opx replay SESSION.\n" +
			"The texts of an off-the-record session were not recorded: each shows as \"[off the record: N bytes]\"\n" +
			"(with --json: content holds the commitment, withheld_bytes the size; docs/otr.md).\n\n" +
			exitCodesHelp("integrity failure found: an entry does not parse"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runHistory,
	}
}

// messageJSON is one message in `opx history --json`.
type messageJSON struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Content      string `json:"content"`
	TS           string `json:"ts"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	Thoughts     int    `json:"thoughts,omitempty"`
	// Withheld is the size of the text an off-the-record session did
	// not record (Content is then its commitment).
	Withheld *int64 `json:"withheld_bytes,omitempty"`
}

func runHistory(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "SESSION")
	if err != nil {
		return err
	}
	msgs, err := readSessionHistory(c, args[0])
	if err != nil {
		return err
	}
	for i := range msgs {
		if n, ok := event.Withheld(msgs[i].Content); ok {
			msgs[i].Withheld = &n
		}
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Session  string        `json:"session"`
			Messages []messageJSON `json:"messages"`
		}{args[0], msgs})

	}
	w := c.App.Writer
	for _, m := range msgs {
		who := ui.Paint(w, "1", "you")
		if m.Role == "assistant" {
			who = ui.Paint(w, "36", "agent")
		}
		fmt.Fprintf(w, "%s  %s", shortTime(m.TS), who)
		if m.Role == "assistant" && m.InputTokens+m.OutputTokens > 0 {
			fmt.Fprintf(w, "  (%d in, %d out tokens)", m.InputTokens, m.OutputTokens)
		}
		fmt.Fprintf(w, "\n%s\n\n", indent(strings.TrimRight(cleanLines(m.Content), "\n"), "  "))
	}
	return nil
}

// errNoSession is returned for a session the ledger does not hold.
var errNoSession = errors.New("no such session")

// readSessionHistory reads a session's messages from the file or the
// engine that holds it.
func readSessionHistory(c *cli.Context, session string) ([]messageJSON, error) {
	out := []messageJSON{}
	l, err := openReview(c)
	if errors.Is(err, ledger.ErrLocked) {
		if !ledgerloc.Named(c) {
			if ec, derr := dialEngine(c); derr == nil {
				defer ec.Close()
				resp, err := ec.client.GetHistory(ec.ctx, &opxv1.GetHistoryRequest{SessionId: session})
				if err != nil {
					return nil, fmt.Errorf("history of %s: %w (opx sessions lists them)", session, err)
				}
				for _, m := range resp.Messages {
					mj := messageJSON{ID: m.Id, Role: m.Role, Content: m.Content, TS: nanoTime(m.Timestamp), Thoughts: len(m.Thoughts)}
					if u := m.TokenUsage; u != nil {
						mj.InputTokens, mj.OutputTokens = u.InputTokens, u.OutputTokens
					}
					out = append(out, mj)
				}
				return out, nil
			}
		}
	}
	read, where := (*ledger.Ledger).ReadProjection, ""
	if errors.Is(err, ledger.ErrLocked) && ledgerloc.Named(c) {
		// A ledger named outright that a server holds (an engine, a
		// collector's mirror): through the one registered beside it.
		path, perr := ledgerloc.Path(c)
		if perr != nil {
			return nil, perr
		}
		r, rerr := openReviewSourceAt(c, path, true)
		if rerr != nil {
			return nil, rerr
		}
		defer r.Close()
		err, where = nil, path
		read = func(_ *ledger.Ledger, p ledger.Projection, fn func(ledger.Bucket) error) error {
			return r.readProjection(p, fn)
		}
	}
	if err != nil {
		return nil, err
	}
	if l != nil {
		defer l.Close()
		where = l.Path()
	}
	found := false
	if err := read(l, projection.Sessions{}, func(b ledger.Bucket) error {
		_, found = projection.ReadSession(b, session)
		return nil
	}); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w %q in %s (opx sessions lists them)", errNoSession, session, where)
	}
	err = read(l, projection.History{}, func(b ledger.Bucket) error {
		for _, m := range projection.ReadHistory(b, session, 0, 0) {
			out = append(out, messageJSON{ID: m.ID, Role: m.Role, Content: m.Content, TS: m.TS,
				InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens, Thoughts: len(m.Thoughts)})
		}
		return nil
	})
	return out, err
}

// cleanLines is clean for text shown on lines of its own: newlines and
// tabs kept, every other control character and bidirectional override
// escaped (a message may carry escape sequences meant for the reader's
// terminal), nothing clipped.
func cleanLines(s string) string {
	s = event.Display(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func indent(s, by string) string { return by + strings.ReplaceAll(s, "\n", "\n"+by) }
