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
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func ledgerRebuildCommand() *cli.Command {
	return &cli.Command{
		Name:  "rebuild",
		Usage: "drop the projections and fold them again from the entries",
		Description: "The projections (p.* buckets: sessions, history, snapshots, approvals, metrics) are disposable:\n" +
			"rebuild deletes them and folds every entry again, which gives byte-identical buckets. As it passes\n" +
			"each ledger.checkpoint entry it compares the state roots the engine recorded there (through the entry\n" +
			"before it) with the ones it folded: a difference means the state the engine served was not what its\n" +
			"entries say (exit 4).\n" +
			"While an engine holds the ledger, the engine rebuilds (its appends wait until the rebuild is through).\n\n" + exitCodesHelp("a checkpoint's state root was not reproduced"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runLedgerRebuild,
	}
}

// rebuildJSON is `opx ledger rebuild --json`.
type rebuildJSON struct {
	Ok          bool                        `json:"ok"`
	Entries     uint64                      `json:"entries"`
	Checked     int                         `json:"checkpoint_roots_checked"`
	Unchecked   int                         `json:"checkpoint_roots_unchecked"`
	Projections []projectionJSON            `json:"projections"`
	Mismatches  []ledger.CheckpointMismatch `json:"mismatches"`
}

type projectionJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Through uint64 `json:"through"`
	Root    string `json:"root"`
}

func runLedgerRebuild(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return err
	}
	if err := ledgerloc.RefuseEmpty(path); err != nil {
		return err
	}
	rep, err := rebuild(c, path)
	if err != nil {
		return err
	}
	out := rebuildJSON{Ok: len(rep.Mismatches) == 0, Entries: rep.Entries, Checked: rep.Checked, Unchecked: rep.Unchecked, Mismatches: rep.Mismatches}
	if out.Mismatches == nil {
		out.Mismatches = []ledger.CheckpointMismatch{}
	}
	for _, p := range rep.Projections {
		out.Projections = append(out.Projections, projectionJSON{Name: p.Name, Version: p.Version, Through: p.Through, Root: p.Root.String()})
	}
	if c.Bool("json") {
		if err := ui.WriteJSON(c, out); err != nil {
			return err
		}
	} else {
		w := c.App.Writer
		fmt.Fprintf(w, "rebuilt %d projections from %s\n", len(out.Projections), ui.Plural(rep.Entries, "entry", "entries"))
		for _, p := range out.Projections {
			fmt.Fprintf(w, "  %-10s v%s  through %d  root %s\n", p.Name, p.Version, p.Through, p.Root[:16])
		}
		for _, m := range rep.Mismatches {
			fmt.Fprintf(w, "  %s %s\n", ui.Red(w, "MISMATCH"), m.Error())
		}
		if rep.Unchecked > 0 {
			fmt.Fprintf(w, "%s could not be compared (another projection version, or not taken at the entry before its checkpoint)\n",
				ui.Plural(uint64(rep.Unchecked), "checkpoint root", "checkpoint roots"))
		}
		switch {
		case len(rep.Mismatches) > 0:
		case rep.Checked == 0:
			fmt.Fprintln(w, "no checkpoint to compare with")
		default:
			fmt.Fprintf(w, "%s: %d checkpoint roots reproduced\n", ui.Green(w, "ok"), rep.Checked)
		}
	}
	if len(rep.Mismatches) > 0 {
		return fmt.Errorf("%w: %d checkpoint root(s) not reproduced by the entries", ledger.ErrIntegrity, len(rep.Mismatches))
	}
	return nil
}

// rebuild rebuilds the projections of the ledger at path: here, or by the
// engine that holds it.
func rebuild(c *cli.Context, path string) (*ledger.RebuildReport, error) {
	l, err := ledger.Open(path, writeOptions()) // builds missing or stale projections first
	if errors.Is(err, ledger.ErrLocked) {
		return rebuildByEngine(c, path, err)
	}
	if err != nil {
		return nil, ledgerloc.ExplainOpen(path, err)
	}
	defer l.Close()
	rep, err := l.RebuildProjections()
	if err != nil {
		return nil, fmt.Errorf("rebuild %s: %w", path, err)
	}
	return rep, nil
}

// rebuildByEngine asks the engine that holds the ledger to rebuild. Its
// report is the engine's word (the engine holds the buckets); it is only
// checked for shape.
func rebuildByEngine(c *cli.Context, path string, locked error) (*ledger.RebuildReport, error) {
	r, err := liveledger.Dial(c, path)
	if err != nil {
		return nil, &usage.Explained{Err: locked, Msg: fmt.Sprintf("an engine holds %s, and no engine registered for it answers (%v)", path, err)}
	}
	defer r.Close()
	resp, err := r.Client().Rebuild(r.Ctx(), &opxv1.RebuildRequest{})
	if err != nil {
		return nil, fmt.Errorf("rebuild %s: %w", path, liveledger.EngineErr(err))
	}
	var rep ledger.RebuildReport
	if err := json.Unmarshal(resp.ReportJson, &rep); err != nil {
		return nil, fmt.Errorf("rebuild %s: the engine's report: %w", path, err)
	}
	return &rep, nil
}
