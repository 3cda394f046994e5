package ledgertest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/opx-dev/opx/ledger"
)

// Relink covers an edit of lines (an export's entries, seq i at index i)
// from index from on, as a forger who owns the file would: each entry's
// prev becomes the BLAKE3 of the line before it, and each tree an entry
// records (a ledger.checkpoint's tree_root, a ledger.tree_built's) becomes
// the Merkle root of the lines before it. The result verifies on its own;
// only a checkpoint kept elsewhere (a signed note, verify --since) tells.
// A note a checkpoint holds is left as it was: the forger has no key.
func Relink(lines [][]byte, from int) error {
	rng := (&compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}).NewEmptyRange(0)
	for i := range lines {
		if i >= max(from, 1) {
			line, err := relinkOne(lines[i], lines[i-1], rng)
			if err != nil {
				return fmt.Errorf("line %d: %w", i, err)
			}
			lines[i] = line
		}
		lh := ledger.LeafHash(lines[i])
		if err := rng.Append(lh[:], nil); err != nil {
			return err
		}
	}
	return nil
}

func relinkOne(line, prev []byte, rng *compact.Range) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	m["prev"] = ledger.Sum(prev).String()
	if typ := m["type"]; typ == ledger.TypeCheckpoint || typ == ledger.TypeTreeBuilt {
		if data, ok := m["data"].(map[string]any); ok && data["tree_root"] != nil {
			h := rng.Hashes()
			root := h[len(h)-1]
			for j := len(h) - 2; j >= 0; j-- {
				root = rfc6962.DefaultHasher.HashChildren(h[j], root)
			}
			data["tree_root"] = ledger.EncodeTreeRoot([32]byte(root))
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return ledger.Canonicalize(b)
}
