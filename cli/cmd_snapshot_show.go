package cli

import (
	"errors"
	"fmt"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/executor"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/urfave/cli/v2"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "inspect one snapshot",
		UsageText: "opx snapshot show ID [--json]",
		Action:    unknownCommand,
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "show what a snapshot recorded: each path's pre-state, its state after the tool, and what became of it",
			ArgsUsage: "ID",
			Description: "ID is the seq of the chronicle.snapshot entry (opx snapshots lists them). For each path: its\n" +
				"recorded pre-state (kind, mode, size, content blob and whether the ledger still holds it) and the\n" +
				"post-state the tool left. Use opx diff ID to compare with the workspace now.\n\n" +
				exitCodesHelp("integrity failure found: an entry does not parse"),
			HideHelpCommand: true,
			Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
			Action:          runSnapshotShow,
		}},
	}
}

// snapshotDetail is `opx snapshot show --json`.
type snapshotDetail struct {
	snapshotSummary
	Files      []fileDetail `json:"files"`
	Entries    int64        `json:"entries,omitempty"` // workspace snapshots: paths in the manifest
	Manifest   string       `json:"manifest_blob,omitempty"`
	Unrecorded []string     `json:"unrecorded,omitempty"`
	Exec       *execDetail  `json:"exec,omitempty"`
}

type fileDetail struct {
	Path        string           `json:"path"`
	Pre         event.FileState  `json:"pre"`
	BlobPresent *bool            `json:"blob_present,omitempty"`
	Post        *event.PostState `json:"post,omitempty"`
}

type execDetail struct {
	Seq uint64 `json:"seq"`
	// Outcome is event.ExecOutcome's: completed, exited or failed.
	Outcome  string `json:"outcome"`
	Failed   string `json:"failed,omitempty"` // exec.failed's error
	ExitCode int    `json:"exit_code"`
}

// parseSnapshotID reads a snapshot id argument.
func parseSnapshotID(c *cli.Context, s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, usage.Errorf(c, "snapshot ID %q is not a positive integer (opx snapshots lists them)", s)
	}
	return id, nil
}

// openSnapshotArg reads the command's one argument, a snapshot id, and
// opens the ledger's snapshots with it found. The caller closes r.
func openSnapshotArg(c *cli.Context) (*review, *chronicle.Snapshot, error) {
	args, err := wantArgs(c, 1, 1, "ID")
	if err != nil {
		return nil, nil, err
	}
	id, err := parseSnapshotID(c, args[0])
	if err != nil {
		return nil, nil, err
	}
	r, err := openChronicleReview(c)
	if err != nil {
		return nil, nil, err
	}
	s, err := r.index.Get(id)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, s, nil
}

func runSnapshotShow(c *cli.Context) error {
	r, s, err := openSnapshotArg(c)
	if err != nil {
		return err
	}
	defer r.Close()
	d := detail(r, s)
	if c.Bool("json") {
		return ui.WriteJSON(c, d)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "snapshot %d  %s\n", s.Seq, s.TS)
	fmt.Fprintf(w, "session   %s\ncall      %s (%s)\nkind      %s", orDash(s.Session), s.CallID, s.Tool, s.Kind)
	if s.Kind == event.KindWorkspace {
		fmt.Fprintf(w, " (%d paths in the manifest, %d stored new)", s.Entries, len(s.Files))
	}
	fmt.Fprintf(w, "\nstatus    %s\n", d.Status)
	switch {
	case d.ChangesKnown && len(d.Changed) == 0:
		fmt.Fprintf(w, "changed   nothing\n")
	case d.ChangesKnown:
		fmt.Fprintf(w, "changed   %s\n", strings.Join(d.Changed, " "))
	}
	for _, rb := range d.RestoredBy {
		fmt.Fprintf(w, "restored  by rollback %d\n", rb)
	}
	if d.PrunedBy != 0 {
		fmt.Fprintf(w, "pruned    by entry %d: some content is gone\n", d.PrunedBy)
	}
	for _, u := range d.Unrecorded {
		fmt.Fprintf(w, "unrecorded %s\n", u)
	}
	if len(d.Files) == 0 {
		fmt.Fprintln(w, "\nno paths recorded")
		return nil
	}
	fmt.Fprintln(w)
	var ws *executor.Workspace // nil: no workspace to look in
	if r.workspace != "" {
		if x, err := executor.OpenWorkspace(r.workspace); err == nil {
			defer x.Close()
			ws = x
		}
	}
	for _, f := range d.Files {
		fmt.Fprintf(w, "%s\n  before  %s\n", f.Path, describeState(f.Pre, f.BlobPresent))
		switch {
		case f.Post == nil:
			fmt.Fprintf(w, "  after   (not recorded)\n")
		case f.Post.Absent:
			fmt.Fprintf(w, "  after   absent%s\n", unchanged(f))
		default:
			fmt.Fprintf(w, "  after   %s%s\n", describePost(r, ws, f), unchanged(f))
		}
	}
	return nil
}

// detail gathers what show prints.
func detail(r *review, s *chronicle.Snapshot) snapshotDetail {
	d := snapshotDetail{snapshotSummary: summarise(s), Files: []fileDetail{}, Unrecorded: s.Unrecorded}
	if s.Kind == event.KindWorkspace {
		d.Entries, d.Manifest = s.Entries, s.ManifestBlob
	}
	var post []event.PostState
	switch {
	case s.TakenBy != nil:
		post = s.TakenBy.Post
	case s.Exec != nil:
		post = s.Exec.Post
		d.Exec = &execDetail{Seq: s.Exec.Seq, Outcome: s.Exec.Outcome, Failed: s.Exec.Failed, ExitCode: s.Exec.ExitCode}
	}
	pre := s.Files
	if s.Kind == event.KindWorkspace {
		pre = nil
		if s.Exec != nil {
			pre = s.Exec.Pre
		}
	}
	for _, f := range pre {
		fd := fileDetail{Path: f.Path, Pre: f}
		if f.Blob != "" {
			present := blobPresent(r, f.Blob)
			fd.BlobPresent = &present
		}
		for i := range post {
			if post[i].Path == f.Path {
				fd.Post = &post[i]
			}
		}
		d.Files = append(d.Files, fd)
	}
	return d
}

func blobPresent(r *review, hex string) bool {
	h, err := ledger.ParseHash(hex)
	if err != nil {
		return false
	}
	if l, ok := r.src.(*ledger.Ledger); ok {
		_, err = l.StatBlob(h) // no need to decompress to know
	} else {
		_, err = r.src.GetBlob(h)
	}
	return err == nil || !errors.Is(err, ledger.ErrNotFound)
}

// describeState is one recorded state in words.
func describeState(f event.FileState, present *bool) string {
	switch f.State {
	case event.StateAbsent:
		return "absent"
	case event.StateDir:
		return fmt.Sprintf("directory mode %#o", f.Mode)
	case event.StateSymlink:
		return "symlink to " + f.Target
	}
	s := fmt.Sprintf("file %d bytes mode %#o", f.Size, f.Mode)
	switch {
	case f.Blob == "":
		s += " (content not kept: " + f.Omitted + ")"
	case present != nil && !*present:
		s += " blob " + f.Blob[:16] + " (pruned)"
	default:
		s += " blob " + f.Blob[:16]
	}
	return s
}

// describePost is a recorded post-state in the words describeState uses
// for the pre-state: its kind, then for a file its size (when the ledger
// holds its content: a post-state records only its hash and mode), mode
// and content hash.
func describePost(r *review, ws *executor.Workspace, f fileDetail) string {
	p := f.Post
	switch {
	case p.Hash == chronicle.StateHash(event.FileState{State: event.StateDir}):
		return fmt.Sprintf("directory mode %#o", p.Mode)
	case f.Pre.State == event.StateSymlink && p.Hash == chronicle.StateHash(f.Pre):
		return "symlink to " + f.Pre.Target
	case f.Pre.State == event.StateFile && p.Hash == f.Pre.ContentHash():
		return fmt.Sprintf("file %d bytes mode %#o blob %s", f.Pre.Size, p.Mode, shortHash(p.Hash))
	}
	if n, ok := blobSize(r, p.Hash); ok {
		return fmt.Sprintf("file %d bytes mode %#o blob %s", n, p.Mode, shortHash(p.Hash))
	}
	// A post-state records only the hash of what the path became: the
	// workspace, where it still holds exactly that, says what it is.
	if now, ok := workspaceState(ws, f.Path); ok && now.State != event.StateAbsent && chronicle.StateHash(now) == p.Hash {
		return describeState(now, nil) + " (as the workspace still holds it)"
	}
	return fmt.Sprintf("mode %#o, content hash %s (kind and size not recorded, and the workspace holds something else now)", p.Mode, shortHash(p.Hash))
}

// workspaceState is what path holds in ws now, read beneath its root.
func workspaceState(ws *executor.Workspace, path string) (event.FileState, bool) {
	if ws == nil {
		return event.FileState{}, false
	}
	now, _, err := chronicle.Read(undo.WorkspaceFS(ws), path)
	return now, err == nil
}

// blobSize is the size of the content with hash hex, when the ledger
// holds it as a blob.
func blobSize(r *review, hex string) (int64, bool) {
	h, err := ledger.ParseHash(hex)
	if err != nil {
		return 0, false
	}
	if l, ok := r.src.(*ledger.Ledger); ok {
		info, err := l.StatBlob(h)
		return info.Size, err == nil && info.Size >= 0
	}
	b, err := r.src.GetBlob(h)
	return int64(len(b)), err == nil
}

// unchanged is " (unchanged)" when a path's post-state is its pre-state.
func unchanged(f fileDetail) string {
	if f.Post != nil && len(chronicle.ChangedPaths([]event.PostState{chronicle.PostOf(f.Pre)}, []event.PostState{*f.Post})) == 0 {
		return " (unchanged)"
	}
	return ""
}
