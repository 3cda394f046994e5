package textdiff

import "hash/maphash"

// interner numbers distinct lines, equal lines alike. It is an open
// addressing table sized once for all the lines it will see (at most half
// full, so probes are short), faster than a map[string]int32 on large
// files. Each slot holds the top 32 bits of the line's hash and its id+1,
// so most probes are decided without touching the line; a match is
// confirmed by comparing the lines, so ids are exact whatever the hashes.
type interner struct {
	seed  maphash.Seed
	slots []uint64
	text  []string // each id's line
}

// newInterner returns an interner for up to n lines.
func newInterner(n int) *interner {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return &interner{seed: maphash.MakeSeed(), slots: make([]uint64, size)}
}

// id returns the id of line s, numbering it if it is new.
func (t *interner) id(s string) int32 {
	h := maphash.String(t.seed, s)
	tag := h &^ (1<<32 - 1)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			id := int32(len(t.text))
			t.text = append(t.text, s)
			t.slots[i] = tag | uint64(id+1)
			return id
		}
		if v&^(1<<32-1) == tag && t.text[v&(1<<32-1)-1] == s {
			return int32(v&(1<<32-1) - 1)
		}
	}
}
