package cli

import (
	"io"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/urfave/cli/v2"

	"github.com/opx-dev/opx/cli/internal/ui"
)

func ledgerCheckpointCommand() *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "print the ledger's latest signed checkpoint, exactly as stored, to save elsewhere",
		Description: "Prints the latest signed checkpoint the ledger records: a C2SP tlog-checkpoint (origin\n" +
			"opx.local/ledger/<ledger id>, tree size, base64 root hash) signed as a C2SP signed-note, byte\n" +
			"for byte, so it can be saved anywhere (another machine, a git repository, a ticket):\n\n" +
			"   opx ledger checkpoint > ledger.checkpoint\n\n" +
			"Later, opx ledger verify --since ledger.checkpoint proves the ledger only grew since, and\n" +
			"opx ledger prove SEQ --checkpoint ledger.checkpoint proves an entry against it. Before\n" +
			"printing, it checks the note: signed by the key the ledger records before it, naming the tree\n" +
			"the ledger holds at that size. While an engine holds the ledger, the note comes from the engine\n" +
			"and is checked here (signed by the key recorded last; a proof ties it to the entries).\n\n" +
			"With --cosigned, prints instead the largest checkpoint witnesses cosigned (ledger.cosigned: the\n" +
			"C2SP witnesses of ledger.witnesses, the fleet's collector) with every cosignature line the ledger\n" +
			"records for it merged into one C2SP note, the form a verifier expects. Save it off this machine:\n\n" +
			"   opx ledger checkpoint --cosigned > ledger.cosigned\n" +
			"   opx ledger verify --witness KEY --cosigned ledger.cosigned\n\n" +
			exitCodesHelp("the latest checkpoint does not verify against the ledger's key or tree"),
		HideHelpCommand: true,
		Flags: append(ledgerloc.Flags(), ui.JSONFlag(),
			&cli.BoolFlag{Name: "cosigned", Usage: "print the largest cosigned checkpoint with every cosignature line merged"}),
		Action: runLedgerCheckpoint,
	}
}

// checkpointResult is the --json output of checkpoint.
type checkpointResult struct {
	Seq      uint64 `json:"seq"` // the ledger.checkpoint entry
	Origin   string `json:"origin"`
	TreeSize uint64 `json:"tree_size"`
	RootHash string `json:"root_hash"`
	VKey     string `json:"vkey"`
	Note     string `json:"note"`
	// Witnesses (--cosigned): each cosigner merged, as name+key hash.
	Witnesses []string `json:"witnesses,omitempty"`
}

func runLedgerCheckpoint(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var sc signedCheckpoint
	if rv.local != nil {
		sc, err = latestSigned(rv.local)
	} else {
		// The engine's latest note, with a proof of entry 0 that ties it
		// to the ledger's tree: both checked here.
		_, sc, err = remoteProve(rv.remote, rv.path, 0, nil, nil)
	}
	if err != nil {
		return err
	}
	if c.Bool("cosigned") {
		cs, err := latestCosigned(rv, sc.Key)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return ui.WriteJSON(c, checkpointResult{Seq: cs.Seqs[len(cs.Seqs)-1], Origin: sc.CP.Origin, TreeSize: cs.TreeSize,
				RootHash: strings.SplitN(cs.Note, "\n", 4)[2], VKey: sc.Key.String(), Note: cs.Note, Witnesses: cs.Witnesses})
		}
		_, err = io.WriteString(c.App.Writer, cs.Note)
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, checkpointResult{Seq: sc.Seq, Origin: sc.CP.Origin, TreeSize: sc.CP.Size,
			RootHash: sc.CP.RootString(), VKey: sc.Key.String(), Note: sc.Note})

	}
	_, err = io.WriteString(c.App.Writer, sc.Note)
	return err
}
