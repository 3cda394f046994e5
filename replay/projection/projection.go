package projection

import (
	"encoding/binary"
	"encoding/json"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// All returns every projection the engine keeps, in a fixed order.
func All() []ledger.Projection {
	return []ledger.Projection{Sessions{}, History{}, Snapshots{}, Approvals{}, Metrics{}, Taint{}, event.KeysProjection{}}
}

// key joins parts with NUL, which no id, path or name contains.
func key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// seqKey is key(parts...) + NUL + seq as 8 bytes big-endian, so keys of
// one prefix sort by seq.
func seqKey(seq uint64, parts ...string) []byte {
	b := append(key(parts...), 0)
	return binary.BigEndian.AppendUint64(b, seq)
}

// getJSON decodes the value at k into v; false when there is none.
func getJSON(b ledger.Bucket, k []byte, v any) bool {
	raw := b.Get(k)
	if raw == nil {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

func putJSON(b ledger.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

// decode reads an entry's data into the typed payload p (not strictly:
// verify checks payloads; a fold takes what it needs).
func decode(e *ledger.Entry, p any) bool { return json.Unmarshal(e.Data, p) == nil }

// str and num read one top-level member of an entry's data without
// decoding the rest (ledger.Field): most folds need a member or two.
func str(e *ledger.Entry, name string) string {
	v, _ := ledger.FieldString(e.Data, name)
	return v
}

func num(data []byte, name string) int64 {
	v, _ := ledger.FieldInt(data, name)
	return v
}

// usage reads a payload's "usage" member.
func usage(e *ledger.Entry) (in, out, total int64) {
	u, ok := ledger.Field(e.Data, "usage")
	if !ok {
		return 0, 0, 0
	}
	return num(u, "input_tokens"), num(u, "output_tokens"), num(u, "total_tokens")
}
