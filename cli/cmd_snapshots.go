package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/urfave/cli/v2"
)

func snapshotsCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshots",
		Usage:     "list the snapshots Chronicle took before the agent changed files",
		UsageText: "opx snapshots [--session ID] [--path P] [--json]",
		Description: "Each snapshot is the recorded pre-state of what one tool call was about to change, taken before it ran;\n" +
			"its ID is the seq of its chronicle.snapshot entry. `opx snapshot show ID` shows one, `opx diff ID`\n" +
			"compares it with the workspace now and `opx rollback ID` restores it. Reads the snapshots projection of\n" +
			"the ledger file, or folds it from the running engine's ledger service while an engine holds it.\n\n" +
			exitCodesHelp("integrity failure found: an entry does not parse"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.StringFlag{Name: "session", Usage: "only the snapshots of session `ID`"},
			&cli.StringFlag{Name: "path", Usage: "only the snapshots that recorded workspace path `P`"},
			ui.JSONFlag(),
		),
		Action: runSnapshots,
	}
}

// snapshotSummary is one snapshot in listings and --json output.
type snapshotSummary struct {
	ID      uint64   `json:"id"`
	TS      string   `json:"ts"`
	Session string   `json:"session"`
	CallID  string   `json:"call_id"`
	Tool    string   `json:"tool"`
	Kind    string   `json:"kind"`
	Paths   []string `json:"paths"` // what a rollback restores (for a workspace snapshot: what the command changed)
	// Changed is what the call changed (paths whose post-state differs
	// from the pre-state), known once it ended with post-states recorded.
	Changed      []string `json:"changed"`
	ChangesKnown bool     `json:"changes_known"`
	// Status is how the call ended: "completed", "ran, exit N", "failed"
	// (event.ExecOutcome), or what else became of the snapshot.
	Status     string   `json:"status"`
	RestoredBy []uint64 `json:"restored_by"`
	PrunedBy   uint64   `json:"pruned_by,omitempty"`
}

func summarise(s *chronicle.Snapshot) snapshotSummary {
	info := projection.SnapshotInfo{Seq: s.Seq, TS: s.TS, Session: s.Session, CallID: s.CallID, Tool: s.Tool, Kind: s.Kind,
		Paths: s.Paths(), RestoredBy: s.RestoredBy, PrunedBy: s.Pruned}
	if s.TakenBy != nil {
		info.TakenBy = s.TakenBy.Seq
	}
	if x := s.Exec; x != nil {
		info.ExecSeq, info.Outcome, info.ExitCode, info.Failed, info.DiffError = x.Seq, x.Outcome, int64(x.ExitCode), x.Failed, x.DiffError
	}
	info.Changed, info.ChangesKnown = s.Changed()
	return summariseInfo(info)
}

func summariseInfo(s projection.SnapshotInfo) snapshotSummary {
	out := snapshotSummary{ID: s.Seq, TS: s.TS, Session: s.Session, CallID: s.CallID, Tool: s.Tool, Kind: s.Kind,
		Paths: s.Paths, Changed: s.Changed, ChangesKnown: s.ChangesKnown, Status: s.Status(), RestoredBy: s.RestoredBy, PrunedBy: s.PrunedBy}
	if out.Paths == nil {
		out.Paths = []string{}
	}
	if out.Changed == nil {
		out.Changed = []string{}
	}
	if out.RestoredBy == nil {
		out.RestoredBy = []uint64{}
	}
	return out
}

// runSnapshots lists from the snapshots projection.
func runSnapshots(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	session, path := c.String("session"), c.String("path")
	list := []snapshotSummary{}
	err := readReviewProjection(c, projection.Snapshots{}, func(b ledger.Bucket) error {
		for _, s := range projection.ReadSnapshots(b, session, path) {
			list = append(list, summariseInfo(s))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Snapshots []snapshotSummary `json:"snapshots"`
		}{list})

	}
	w := c.App.Writer
	if len(list) == 0 {
		fmt.Fprintln(w, "no snapshots"+filterNote(session, path))
		return nil
	}
	fmt.Fprintf(w, "%-7s  %-19s  %-20s  %-15s  %s\n", "ID", "TIME", "SESSION", "TOOL", "CHANGES")
	for _, s := range list {
		fmt.Fprintf(w, "%-7d  %-19s  %-20s  %-15s  %s\n", s.ID, shortTime(s.TS), orDash(s.Session), s.Tool, describeChanges(w, s))
	}
	return nil
}

func filterNote(session, path string) string {
	var f []string
	if session != "" {
		f = append(f, "session "+session)
	}
	if path != "" {
		f = append(f, "path "+path)
	}
	if len(f) == 0 {
		return ""
	}
	return " (" + strings.Join(f, ", ") + ")"
}

// describeChanges is the listing's last column: the paths the call
// changed (a few), or what a rollback would restore when that is not on
// record, and what became of the snapshot.
func describeChanges(w io.Writer, s snapshotSummary) string {
	var b strings.Builder
	paths := s.Changed
	switch {
	case s.ChangesKnown && len(s.Changed) == 0 && s.Kind == event.KindWorkspace:
		b.WriteString("(workspace; nothing changed)")
	case s.ChangesKnown && len(s.Changed) == 0:
		b.WriteString("(nothing changed)")
	case !s.ChangesKnown && s.Kind == event.KindWorkspace:
		b.WriteString("(workspace; changes not recorded)")
	case !s.ChangesKnown && len(s.Paths) == 0:
		b.WriteString("(nothing)")
	case !s.ChangesKnown:
		b.WriteString("changes not recorded: ")
		paths = s.Paths
	}
	if len(paths) > 0 {
		b.WriteString(strings.Join(paths[:min(3, len(paths))], " "))
		if len(paths) > 3 {
			fmt.Fprintf(&b, " (+%d more)", len(paths)-3)
		}
	}
	switch {
	case s.Status == event.ExecError:
		b.WriteString(ui.Red(w, "  [failed]"))
	case s.Status != event.ExecOK:
		b.WriteString("  [" + s.Status + "]")
	}
	for _, r := range s.RestoredBy {
		b.WriteString(ui.Paint(w, "33", fmt.Sprintf("  [restored by %d]", r)))
	}
	if s.PrunedBy != 0 {
		b.WriteString(ui.Paint(w, "2", fmt.Sprintf("  [pruned by %d]", s.PrunedBy)))
	}
	return b.String()
}

// shortTime shows an RFC 3339 timestamp to the second.
func shortTime(ts string) string {
	if len(ts) >= 19 {
		return strings.Replace(ts[:19], "T", " ", 1)
	}
	return ts
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
