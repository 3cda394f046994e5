package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/textdiff"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/urfave/cli/v2"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare a snapshot's recorded pre-state with the workspace now (unified diff)",
		ArgsUsage: "ID",
		Description: "For each path the snapshot's tool changed, prints a unified diff from its recorded pre-state\n" +
			"(a/, hash-checked) to the workspace now (b/): what a rollback of ID would undo, and anything that\n" +
			"changed since. Paths that are not text (directories, symlinks, binary files) are described in a\n" +
			"line. The workspace is --workspace, else the one the ledger's last engine.started names.\n\n" +
			exitCodesHelp("stored content fails its hash"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runDiff,
	}
}

// fileDiff is one path of `opx diff --json`.
type fileDiff struct {
	Path    string          `json:"path"`
	Pre     event.FileState `json:"pre"`
	Now     event.FileState `json:"now"`
	Same    bool            `json:"same"`
	Unified string          `json:"unified,omitempty"`
	Note    string          `json:"note,omitempty"`
}

func runDiff(c *cli.Context) error {
	r, s, err := openSnapshotArg(c)
	if err != nil {
		return err
	}
	defer r.Close()
	id := s.Seq
	ws := r.workspace
	if _, given := usage.FlagGiven(c, "workspace"); given || ws == "" {
		if ws, err = ledgerloc.WorkspaceDir(c); err != nil {
			return err
		}
	}
	w, err := executor.OpenWorkspace(ws)
	if err != nil {
		return ledgerloc.WorkspaceErr(ws, err)
	}
	defer w.Close()
	fsys := undo.WorkspaceFS(w)
	targets, err := r.index.Targets(s, r.src, func(excluded []string) (*chronicle.Tree, error) {
		return chronicle.ScanOnce(fsys, excluded)
	})
	if err != nil {
		return err
	}
	diffs := []fileDiff{}
	for _, t := range targets {
		d, err := diffOne(r.src, r.index, fsys, t.Pre)
		if err != nil {
			return err
		}
		diffs = append(diffs, d)
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, struct {
			Snapshot  uint64     `json:"snapshot"`
			Workspace string     `json:"workspace"`
			Files     []fileDiff `json:"files"`
		}{id, ws, diffs})

	}
	out := c.App.Writer
	if len(diffs) == 0 {
		fmt.Fprintf(out, "snapshot %d recorded no changed paths\n", id)
	}
	for _, d := range diffs {
		switch {
		case d.Same:
			fmt.Fprintf(out, "%s: unchanged since snapshot %d\n", d.Path, id)
		case d.Unified != "":
			writeColouredDiff(out, d.Unified)
		default:
			fmt.Fprintf(out, "%s: %s\n", d.Path, d.Note)
		}
	}
	return nil
}

// diffOne compares one path's recorded pre-state with the workspace.
func diffOne(src chronicle.Source, x *chronicle.Index, fsys chronicle.FS, pre event.FileState) (fileDiff, error) {
	d := fileDiff{Path: pre.Path, Pre: pre}
	now, nowContent, err := chronicle.Read(fsys, pre.Path)
	if err != nil {
		return d, err
	}
	d.Now = now
	if chronicle.StateHash(now) == chronicle.StateHash(pre) && now.Mode == pre.Mode && now.State == pre.State {
		d.Same = true
		return d, nil
	}
	if pre.State != event.StateFile && pre.State != event.StateAbsent || now.State != event.StateFile && now.State != event.StateAbsent {
		d.Note = fmt.Sprintf("was %s, now %s", describeState(pre, nil), describeState(now, nil))
		return d, nil
	}
	var old []byte
	if pre.State == event.StateFile {
		if pre.Blob == "" {
			d.Note = "content was not kept (" + pre.Omitted + "); now " + describeState(now, nil)
			return d, nil
		}
		h, err := ledger.ParseHash(pre.Blob)
		if err != nil {
			return d, err
		}
		if old, err = x.Blob(src, h, pre.Path); err != nil {
			return d, err
		}
	}
	oldName, newName := "a/"+pre.Path, "b/"+pre.Path
	if pre.State == event.StateAbsent {
		oldName = "/dev/null"
	}
	if now.State == event.StateAbsent {
		newName = "/dev/null"
	}
	d.Unified = textdiff.Unified(oldName, newName, old, nowContent, 3)
	if d.Unified == "" { // same content, another mode
		d.Note = fmt.Sprintf("mode %#o, now %#o", pre.Mode, now.Mode)
	}
	return d, nil
}

// writeColouredDiff prints a unified diff, coloured on a terminal.
func writeColouredDiff(w io.Writer, u string) {
	for _, line := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = ui.Paint(w, "1", line)
		case strings.HasPrefix(line, "+"):
			line = ui.Green(w, line)
		case strings.HasPrefix(line, "-"):
			line = ui.Red(w, line)
		case strings.HasPrefix(line, "@@"):
			line = ui.Paint(w, "36", line)
		}
		fmt.Fprintln(w, line)
	}
}
