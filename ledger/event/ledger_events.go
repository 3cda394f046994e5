package event

import (
	"errors"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// Types of the ledger area.
const (
	TypeGenesis = ledger.TypeGenesis // ledger.genesis
	TypeNote    = ledger.TypeNote    // ledger.note
)

func init() {
	register(func() Payload { return &Genesis{} })
	register(func() Payload { return &Note{} })
}

// Genesis is the first entry of every ledger; the ledger package writes it.
type Genesis struct {
	Format   string `json:"format"`
	LedgerID string `json:"ledger_id"`
	Created  string `json:"created"` // RFC 3339 UTC
}

func (*Genesis) Type() string { return TypeGenesis }

func (g *Genesis) Validate() error {
	if g.Format != ledger.Format {
		return errors.New("format is not " + ledger.Format)
	}
	if len(g.LedgerID) != 32 {
		return errors.New("ledger_id is not 32 hex characters")
	}
	if _, err := time.Parse(time.RFC3339Nano, g.Created); err != nil {
		return errors.New("created is not RFC 3339")
	}
	return nil
}

// Note is an investigator's annotation (`opx ledger note`), optionally with
// an attached file stored as a blob.
type Note struct {
	Author     string `json:"author"`
	Text       string `json:"text"`
	Attachment string `json:"attachment,omitempty"` // file name of the attachment
	Blob       string `json:"blob,omitempty"`       // the attachment's content
	// Client names the client that asked the engine to append the note
	// (as client.message does), when the engine appended it.
	Client string `json:"client,omitempty"`
	// About is the seq of the entry the note is about (an annotation of
	// one step of a session, as `opx serve` writes them); 0 when the note
	// is about no one entry (seq 0 is the genesis, never annotated).
	// Strict verification checks that it names an entry before the note.
	About uint64 `json:"about,omitempty"`
}

func (*Note) Type() string { return TypeNote }

func (n *Note) Validate() error {
	if (n.Blob == "") != (n.Attachment == "") {
		return errors.New("attachment and blob go together")
	}
	return firstErr(need("author", n.Author, "text", n.Text), needHash("blob", n.Blob, true))
}

// TypeCheckpoint records projections' state roots and the Merkle tree
// (ledger.checkpoint).
const TypeCheckpoint = ledger.TypeCheckpoint

func init() { register(func() Payload { return &Checkpoint{} }) }

// Checkpoint is the state root of each projection as the engine had it,
// folded through an entry: `opx ledger rebuild` folds the entries again
// and must reach the same roots. Since the tree, it also holds the RFC
// 6962 tree of the entries before it (tree_size is the checkpoint's own
// seq, which verify checks) and, when the ledger signs checkpoints, the
// C2SP signed note of that tree. A ledger without projections records
// only the tree; one written before the tree only projections. The ledger
// package writes it (Ledger.Checkpoint).
type Checkpoint struct {
	Projections []ledger.CheckpointRoot `json:"projections,omitempty"`
	TreeSize    uint64                  `json:"tree_size,omitempty"`
	TreeRoot    string                  `json:"tree_root,omitempty"`
	Note        string                  `json:"note,omitempty"`
}

func (*Checkpoint) Type() string { return TypeCheckpoint }

func (c *Checkpoint) Validate() error {
	if len(c.Projections) == 0 && c.TreeRoot == "" {
		return errors.New("projections or tree_root is required")
	}
	for _, r := range c.Projections {
		if err := firstErr(need("name", r.Name, "version", r.Version), needHash("root", r.Root, false)); err != nil {
			return err
		}
	}
	if c.TreeRoot == "" {
		if c.TreeSize != 0 || c.Note != "" {
			return errors.New("tree_size and note need tree_root")
		}
		return nil
	}
	return needTree(c.TreeSize, c.TreeRoot)
}

// TypeTreeBuilt records the Merkle tree built for a ledger older than the
// tree (ledger.tree_built), on its first writable open.
const TypeTreeBuilt = ledger.TypeTreeBuilt

func init() { register(func() Payload { return &TreeBuilt{} }) }

// TreeBuilt is the tree of the entries before it (tree_size is its own
// seq), built from them when an older ledger was first opened for writing.
type TreeBuilt struct {
	TreeSize uint64 `json:"tree_size"`
	TreeRoot string `json:"tree_root"`
}

func (*TreeBuilt) Type() string { return TypeTreeBuilt }

func (t *TreeBuilt) Validate() error { return needTree(t.TreeSize, t.TreeRoot) }

// needTree reports a tree that covers no entry or whose root is not the
// standard base64 of 32 bytes.
func needTree(size uint64, root string) error {
	if size == 0 {
		return errors.New("tree_size is required (a tree covers at least genesis)")
	}
	if _, err := ledger.DecodeTreeRoot(root); err != nil {
		return err
	}
	return nil
}
