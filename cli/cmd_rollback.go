package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "restore what a snapshot recorded, or everything a session changed",
		UsageText: "opx rollback ID [--dry-run] [--force] [--json]\n   opx rollback --session ID [--dry-run] [--force] [--json]",
		Description: "Restores each path the snapshot's tool changed to its recorded pre-state: content (checked against\n" +
			"its BLAKE3 hash first), mode, or absence. Each file is replaced atomically. Before it changes\n" +
			"anything the rollback snapshots what it will overwrite and records a chronicle.rollback entry after,\n" +
			"so a rollback is itself undoable (opx rollback <its pre_snapshot>). A path that changed since opx\n" +
			"changed it is a conflict: the rollback is refused and the conflicts listed, unless --force.\n" +
			"With --session, restores every path the session changed to its state before the session first\n" +
			"changed it. While the engine runs, the engine carries the rollback out between tool calls;\n" +
			"otherwise opx opens the ledger itself (the workspace is --workspace, else the one the ledger's\n" +
			"last engine.started names). The plan (every path and the state it will write) is durable before\n" +
			"the first file changes; a rollback that was killed part way is recorded (what each path holds,\n" +
			"measured from disk, marked interrupted) by the engine's next start or the next opx rollback.\n\n" +
			exitCodesHelp("refused: a path changed since it was recorded (a conflict), or stored content fails its hash"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(),
			&cli.StringFlag{Name: "session", Usage: "roll back everything session `ID` changed"},
			&cli.BoolFlag{Name: "dry-run", Usage: "show what would change and the conflicts; change nothing"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite paths that changed since opx changed them"},
			ui.JSONFlag(),
		),
		Action: runRollback,
	}
}

func runRollback(c *cli.Context) error {
	args, err := wantArgs(c, 0, 1, "ID") // applies flags given after the ID
	if err != nil {
		return err
	}
	if _, ok := usage.FlagGiven(c, "source"); ok {
		// A mirror is never written, and the workspace its source
		// recorded is a directory of another machine.
		return usage.Errorf(c, "--source names a collector's mirror of another machine's ledger: rollback works on a workspace's own ledger (review the mirror with replay, report, diff)")
	}
	req := undo.RollbackRequest{Session: c.String("session"), DryRun: c.Bool("dry-run"), Force: c.Bool("force")}
	switch {
	case req.Session != "" && len(args) > 0:
		return usage.Errorf(c, "give a snapshot ID or --session, not both")
	case req.Session == "" && len(args) == 0:
		return usage.Errorf(c, "missing ID (or --session)")
	case req.Session == "":
		if req.Snapshot, err = parseSnapshotID(c, args[0]); err != nil {
			return err
		}
	}
	rep, err := rollbackSomewhere(c, req)
	if rep == nil {
		return err
	}
	if c.Bool("json") {
		if jerr := ui.WriteJSON(c, rep); jerr != nil {
			return jerr
		}
	} else {
		printRollback(c.App.Writer, rep)
	}
	return err
}

// rollbackSomewhere asks the workspace's running engine to roll back, or,
// when none runs (or --ledger names a file), does it here.
func rollbackSomewhere(c *cli.Context, req undo.RollbackRequest) (*undo.RollbackReport, error) {
	if !ledgerloc.Named(c) {
		ec, err := dialEngine(c)
		if err == nil {
			defer ec.Close()
			resp, err := opxv1.NewChronicleServiceClient(ec.conn).Rollback(ec.ctx, &opxv1.RollbackRequest{
				Snapshot: req.Snapshot, Session: req.Session, DryRun: req.DryRun, Force: req.Force})
			if err != nil {
				return nil, fmt.Errorf("rollback through the engine: %w", err)
			}
			var rep undo.RollbackReport
			if err := json.Unmarshal(resp.ReportJson, &rep); err != nil {
				return nil, fmt.Errorf("rollback report: %w", err)
			}
			return &rep, rep.ReportError()
		}
		if !errors.Is(err, registry.ErrNotRunning) {
			return nil, err
		}
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return nil, err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return nil, err
	}
	var l *ledger.Ledger
	if req.DryRun {
		l, err = ledger.OpenReadOnly(path)
	} else {
		l, err = ledger.Open(path, writeOptions())
	}
	if err != nil {
		return nil, ledgerloc.ExplainOpen(path, err)
	}
	defer l.Close()
	ws, err := rollbackWorkspace(c, l)
	if err != nil {
		return nil, err
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	rec := engine.NewRecorder(l)
	if req.DryRun {
		// Read-only: an interrupted rollback stays unrecorded, and what
		// it left looks like later changes. Say so.
		if plans, err := chronicle.OpenPlans(l); err == nil {
			for _, p := range plans {
				fmt.Fprintf(c.App.ErrWriter, "opx: the rollback planned at entry %d was interrupted and what it left is not recorded yet "+
					"(the next opx rollback without --dry-run, or the engine's start, records it); conflicts below may be its doing\n", p.Seq)
			}
		}
	} else if err := recoverRollbacks(c, l, rec, w.Path()); err != nil {
		return nil, err
	}
	chron := undo.NewChronicle(rollbackFS(w), rec, chronicle.Retention{})
	chron.SetDir(w.Path())
	return chron.Rollback(c.Context, req)
}

// rollbackFS gives an offline rollback its workspace. Crash tests wrap it
// to stop a rollback part way (export_test.go).
var rollbackFS = undo.WorkspaceFS

// recoverRollbacks records, as the engine does when it starts, how any
// rollback that was interrupted left the workspace (undo.RecoverRollbacks),
// before this command appends anything, and says so on stderr.
func recoverRollbacks(c *cli.Context, l *ledger.Ledger, rec chronicle.Recorder, workspace string) error {
	recovered, err := undo.RecoverRollbacks(c.Context, l, rec, workspace)
	for _, r := range recovered {
		fmt.Fprintf(c.App.ErrWriter, "opx: the rollback planned at entry %d was interrupted; recorded what it left as entry %d (opx ledger show %d)\n",
			r.Plan, r.Rollback, r.Rollback)
	}
	return err
}

// rollbackWorkspace is the workspace an offline rollback restores into:
// --workspace, else the one the ledger's last engine.started names.
func rollbackWorkspace(c *cli.Context, l *ledger.Ledger) (string, error) {
	if _, given := usage.FlagGiven(c, "workspace"); given {
		return ledgerloc.WorkspaceDir(c)
	}
	ws := ""
	err := l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeEngineStarted {
			if p, err := event.Decode(e); err == nil {
				ws = p.(*event.EngineStarted).Workspace
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if ws == "" {
		return ledgerloc.WorkspaceDir(c)
	}
	if _, err := os.Stat(ws); err != nil {
		return "", fmt.Errorf("the ledger's workspace %s: %w; name where it is now with --workspace", ws, err)
	}
	return ws, nil
}

// printRollback prints a rollback report for people.
func printRollback(w io.Writer, rep *undo.RollbackReport) {
	what := fmt.Sprintf("snapshot %d", rep.Snapshot)
	if rep.Session != "" {
		what = "session " + rep.Session
	}
	verb := "rollback of"
	if rep.DryRun {
		verb = "dry run: rollback of"
	}
	fmt.Fprintf(w, "%s %s\n", verb, what)
	for _, s := range rep.Steps {
		action := stepAction(s)
		line := fmt.Sprintf("  %-8s %s  (%s; now %s)", action, s.Path, describeState(s.To, nil), describeState(s.Now, nil))
		if s.Conflict != "" {
			line = ui.Red(w, fmt.Sprintf("  CONFLICT %s: %s", s.Path, s.Conflict)) + "\n" + line
		}
		fmt.Fprintln(w, line)
	}
	if n := len(rep.Unchanged); n > 0 {
		fmt.Fprintf(w, "  %s already in the recorded state\n", ui.Plural(uint64(n), "path", "paths"))
	}
	switch {
	case rep.Error != "" && rep.Rollback != 0:
		fmt.Fprintf(w, "%s: %s before it stopped; recorded as entry %d (undo with: opx rollback %d)\n",
			ui.Red(w, "rolled back in part"), doneWords(rep), rep.Rollback, rep.PreSnapshot)
	case rep.Error != "":
		fmt.Fprintf(w, "%s\n", ui.Red(w, "not rolled back"))
	case len(rep.Steps) == 0:
		fmt.Fprintln(w, "nothing to do: every path is already in its recorded state")
	case rep.DryRun:
		fmt.Fprintf(w, "dry run: nothing changed (%s would change)\n", ui.Plural(uint64(len(rep.Steps)), "path", "paths"))
	default:
		fmt.Fprintf(w, "%s: %s; recorded as entry %d (undo with: opx rollback %d)\n", ui.Green(w, "rolled back"),
			doneWords(rep), rep.Rollback, rep.PreSnapshot)
	}
}

// stepAction is what a rollback step does to its path: "restore" its
// content, "delete" it (it did not exist before) or "recreate" it (it
// was deleted since).
func stepAction(s undo.RollbackStep) string {
	switch {
	case s.To.State == event.StateAbsent:
		return "delete"
	case s.Now.State == event.StateAbsent:
		return "recreate"
	}
	return "restore"
}

// doneWords says what a rollback did to the paths it wrote, by what it
// did: "1 path removed", "2 paths restored, 1 removed".
func doneWords(rep *undo.RollbackReport) string {
	action := map[string]string{}
	for _, s := range rep.Steps {
		action[s.Path] = stepAction(s)
	}
	var n [3]uint64 // restored, recreated, removed
	for _, p := range rep.Restored {
		switch action[p] {
		case "delete":
			n[2]++
		case "recreate":
			n[1]++
		default:
			n[0]++
		}
	}
	var parts []string
	for i, word := range []string{"restored", "recreated", "removed"} {
		if n[i] == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, ui.Plural(n[i], "path", "paths")+" "+word)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n[i], word))
		}
	}
	if len(parts) == 0 {
		return "0 paths restored"
	}
	return strings.Join(parts, ", ")
}
