package event

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestIsLowerHex_MatchesRegexp cross-checks the hand-written hex checks
// against the regexps they replaced (the naive reference), on edge cases
// and random strings over an alphabet around the hex digits.
func TestIsLowerHex_MatchesRegexp(t *testing.T) {
	refs := map[int]*regexp.Regexp{
		8:  regexp.MustCompile(`^[0-9a-f]{8}$`),
		32: regexp.MustCompile(`^[0-9a-f]{32}$`),
		64: regexp.MustCompile(`^[0-9a-f]{64}$`),
	}
	source := regexp.MustCompile(`^([0-9a-f]{32}|-)$`)
	h := strings.Repeat("0123456789abcdef", 4)
	cases := []string{"", "-", "--", h, h[:8], h[:32], h[:63], h + "0", strings.ToUpper(h), h[:63] + "g",
		h[:63] + "\n", "\n" + h[:63], h[:32] + "\n", h[:7] + "/", h[:7] + ":", h[:7] + "`", h[:7] + "\x00", h[:62] + "é"}
	rng := rand.New(rand.NewPCG(24, 5))
	alphabet := "0123456789abcdefgABCDEF/:`-\n\x00é"
	for range 20000 {
		n := []int{8, 32, 64}[rng.IntN(3)] + rng.IntN(3) - 1
		var b strings.Builder
		for range n {
			if rng.IntN(8) == 0 {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			} else {
				b.WriteByte(h[rng.IntN(16)])
			}
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for n, re := range refs {
			if got, want := isLowerHex(s, n), re.MatchString(s); got != want {
				t.Fatalf("isLowerHex(%q, %d) = %v, the regexp says %v", s, n, got, want)
			}
		}
		if got, want := isSource(s), source.MatchString(s); got != want {
			t.Fatalf("isSource(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
