package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/urfave/cli/v2"
)

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:      "sessions",
		Usage:     "list the sessions in the ledger, most recent first",
		UsageText: "opx sessions [--include-otr] [--json]",
		Description: "Reads the sessions projection of the ledger file (folded from the entries when the file was written\n" +
			"without it), or asks the running engine while it holds the file. Off-the-record sessions are left\n" +
			"out unless --include-otr (or --all); their MODE is otr and their title, withheld, shows as\n" +
			"\"[off the record: N bytes]\" (docs/otr.md).\n\n" + exitCodesHelp("integrity failure found: an entry does not parse"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.BoolFlag{Name: "include-otr", Aliases: []string{"all"}, Usage: "include off-the-record sessions"},
			ui.JSONFlag(),
		),
		Action: runSessions,
	}
}

// sessionJSON is one session in `opx sessions --json`.
type sessionJSON struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Mode     string `json:"mode"`
	Created  string `json:"created"`
	Updated  string `json:"updated"`
	Messages int64  `json:"messages"`
	// SubAgents counts its sub-agents by how they ended (absent when the
	// engine was asked: its list does not carry them).
	SubAgents *projection.SubAgentCounts `json:"subagents,omitempty"`
}

func runSessions(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	list, err := listSessions(c)
	if err != nil {
		return err
	}
	list, hidden := hideOTR(list, c.Bool("include-otr"))
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Sessions []sessionJSON `json:"sessions"`

			OTRHidden int `json:"otr_hidden"`
		}{list, hidden})

	}
	w := c.App.Writer
	defer printOTRHidden(w, hidden)
	if len(list) == 0 {
		fmt.Fprintln(w, "no sessions")
		return nil
	}
	fmt.Fprintf(w, "%-22s  %-19s  %8s  %-*s  %-12s  %s\n", "SESSION", "UPDATED", "MESSAGES", modeWidth, "MODE", "SUB-AGENTS", "TITLE")
	for _, s := range list {
		fmt.Fprintf(w, "%-22s  %-19s  %8d  %-*s  %-12s  %s\n", s.ID, shortTime(s.Updated), s.Messages, modeWidth, modeColumn(s.Mode), subAgentsColumn(s.SubAgents), ui.Clip(event.Display(s.Title), 60))
	}
	return nil
}

// modeWidth is the MODE column's width: the longest mode a session can
// have (event.SessionCreated: normal, otr, mcp-proxy, and the agents
// audited through their hooks: claude-code, codex, gemini-cli).
const modeWidth = len(event.ModeClaudeCode)

// modeColumn is a recorded mode for the MODE column: shown safely, and
// clipped to the column (a mirror's entries are another machine's).
func modeColumn(mode string) string { return ui.Clip(printable(mode), modeWidth) }

// hideOTR leaves the off-the-record sessions out of list unless all, and
// says how many it left out: a listing that hides a session says so.
func hideOTR[S interface{ mode() string }](list []S, all bool) ([]S, int) {
	if all {
		return list, 0
	}
	shown := list[:0:0]
	for _, s := range list {
		if s.mode() != "otr" {
			shown = append(shown, s)
		}
	}
	return shown, len(list) - len(shown)
}

func (s sessionJSON) mode() string { return s.Mode }

// printOTRHidden is the footer of a listing that left off-the-record
// sessions out.
func printOTRHidden(w io.Writer, hidden int) {
	if hidden > 0 {
		fmt.Fprintf(w, "%s hidden: --include-otr lists %s\n", ui.Plural(uint64(hidden), "off-the-record session", "off-the-record sessions"),
			map[bool]string{true: "it", false: "them"}[hidden == 1])
	}
}

// listSessions reads every session, off-the-record ones included, most
// recently updated first: from the file, or from the engine that holds it.
func listSessions(c *cli.Context) ([]sessionJSON, error) {
	out := []sessionJSON{}
	l, err := openReview(c)
	if errors.Is(err, ledger.ErrLocked) {
		if !ledgerloc.Named(c) {
			if ec, derr := dialEngine(c); derr == nil {
				defer ec.Close()
				resp, err := ec.client.ListSessions(ec.ctx, &opxv1.ListSessionsRequest{IncludeOtr: true})
				if err != nil {
					return nil, fmt.Errorf("sessions: %w", err)
				}
				for _, s := range resp.Sessions {
					out = append(out, sessionJSON{ID: s.Id, Title: s.Title, Mode: s.Mode, Created: nanoTime(s.CreatedAt),
						Updated: nanoTime(s.UpdatedAt), Messages: s.MessageCount})
				}
				return out, nil
			}
		}
	}
	if errors.Is(err, ledger.ErrLocked) && ledgerloc.Named(c) {
		// A ledger named outright (--ledger, --source) that a server
		// holds: read through the one registered beside it.
		path, perr := ledgerloc.Path(c)
		if perr != nil {
			return nil, perr
		}
		return sessionsAt(c, path, true)
	}
	if err != nil {
		return nil, err
	}
	defer l.Close()
	err = l.ReadProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		out = appendSessions(out, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", l.Path(), err)
	}
	sortSessions(out)
	return out, nil
}

// sessionsAt reads the sessions of the ledger at path: the file, or
// through the server that holds it (openReviewSourceAt).
func sessionsAt(c *cli.Context, path string, named bool) ([]sessionJSON, error) {
	r, err := openReviewSourceAt(c, path, named)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := []sessionJSON{}
	err = r.readProjection(projection.Sessions{}, func(b ledger.Bucket) error {
		out = appendSessions(out, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", path, err)
	}
	sortSessions(out)
	return out, nil
}

// appendSessions appends the sessions of a sessions projection bucket.
func appendSessions(out []sessionJSON, b ledger.Bucket) []sessionJSON {
	for _, s := range projection.ReadSessions(b) {
		out = append(out, sessionJSON{ID: s.ID, Title: s.Title, Mode: s.Mode, Created: s.Created, Updated: s.Updated, Messages: int64(s.Messages),
			SubAgents: &s.SubAgents})
	}
	return out
}

// subAgentsColumn is "-" without sub-agents (or unknown), else how many
// of those spawned completed: "3 of 4 ok".
func subAgentsColumn(c *projection.SubAgentCounts) string {
	if c == nil || c.Spawned == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d ok", c.Completed, c.Spawned)
}

// sortSessions orders sessions most recently updated first (RFC 3339 UTC
// timestamps sort as strings), then by id.
func sortSessions(s []sessionJSON) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (s[j].Updated > s[j-1].Updated || (s[j].Updated == s[j-1].Updated && s[j].ID < s[j-1].ID)); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// nanoTime formats Unix nanoseconds as an entry timestamp.
func nanoTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}
