package jsonscan_test

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/opx-dev/opx/internal/jsonscan"
)

// naiveRun is PlainRun one byte at a time: the reference.
func naiveRun(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// TestPlainRun_MatchesNaive: every byte value at every position of
// buffers of 0..40 plain bytes, from every start, gives the naive scan's
// answer; so does SpecialBytes' lowest flag, word by word.
func TestPlainRun_MatchesNaive(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte{'a' | 0x80}, n)
				if at < n {
					b[at] = byte(c)
					if at+1 < n {
						b[at+1] = byte(c) ^ 1 // a borrow's neighbour
					}
				}
				for i := 0; i <= n; i++ {
					if got, want := jsonscan.PlainRun(b, i), naiveRun(b, i); got != want {
						t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, i, got, want)
					}
					if i+8 <= n {
						got, want := 8, naiveRun(b[i:i+8], 0)
						if f := jsonscan.SpecialBytes(binary.LittleEndian.Uint64(b[i:])); f != 0 {
							got = bits.TrailingZeros64(f) / 8
						}
						if got != want {
							t.Fatalf("SpecialBytes(%q) first at %d, want %d", b[i:i+8], got, want)
						}
					}
				}
			}
		}
	}
}
