package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// PlainRun returns the index of the first byte at or after i that needs a
// look in a JSON string (a quote, a backslash or a control character), or
// len(b), examining eight bytes per step.
func PlainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if t := SpecialBytes(binary.LittleEndian.Uint64(b[i:])); t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// SpecialBytes flags, in the top bit of a byte of v (eight bytes read
// little-endian), the bytes that are a quote, a backslash or below 0x20:
// it is zero when there is none, and its lowest flag is the first (a
// flag above it may come of a borrow). Small enough to be inlined, so a
// reader can look at a string's first word without a call.
func SpecialBytes(v uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := v ^ (lo * '"')
	bs := v ^ (lo * '\\')
	return (((q - lo) &^ q) | ((bs - lo) &^ bs) | ((v - lo*0x20) &^ v)) & hi
}
