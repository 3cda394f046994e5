package event

import (
	"errors"
	"strconv"
	"strings"
)

// TypeCosigned records a witness's cosignature of one of the ledger's own
// checkpoints (ledger.cosigned), an extension of DESIGN's table: the
// engine records it when the fleet collector publishes a checkpoint it
// verified and cosigned, after checking that the checkpoint is this
// ledger's tree at that size. `opx ledger verify --witness KEY` then
// requires the ledger to extend the latest checkpoint KEY cosigned.
const TypeCosigned = "ledger.cosigned"

// MaxCosignedNote bounds a cosigned note (fleet.MaxCosigBytes).
const MaxCosignedNote = 64 << 10

func init() { register(func() Payload { return &Cosigned{} }) }

// Cosigned is a cosigned checkpoint: the C2SP signed note of the ledger's
// tree at tree_size (its origin, size and root, the ledger's signature)
// with the witness's cosignature line (C2SP tlog-cosignature, named
// witness, key hash key_hash). Who the witness is is not taken from the
// note: a verifier checks the cosignature against the key it trusts.
type Cosigned struct {
	Witness  string `json:"witness"`
	KeyHash  string `json:"key_hash"` // 8 hex, as in the witness's verifier key
	TreeSize uint64 `json:"tree_size"`
	TreeRoot string `json:"tree_root"` // base64 std, as in the note
	Note     string `json:"note"`
}

func (*Cosigned) Type() string { return TypeCosigned }

func (c *Cosigned) Validate() error {
	if err := need("witness", c.Witness, "note", c.Note); err != nil {
		return err
	}
	if !isLowerHex(c.KeyHash, 8) {
		return errors.New("key_hash is not 8 lowercase hex")
	}
	if err := needTree(c.TreeSize, c.TreeRoot); err != nil {
		return err
	}
	if len(c.Note) > MaxCosignedNote {
		return errors.New("note is larger than 64 KiB")
	}
	// The note's body is origin, size, root: the ones recorded beside it.
	lines := strings.SplitN(c.Note, "\n", 4)
	if len(lines) < 4 || lines[1] != strconv.FormatUint(c.TreeSize, 10) || lines[2] != c.TreeRoot {
		return errors.New("note is not a checkpoint of tree_size and tree_root")
	}
	return nil
}
