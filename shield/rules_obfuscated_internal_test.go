package shield

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestQuotedRuns: the scanner finds what b64Lit and hexLit find, in the
// corpora's texts and in random strings of quotes, base64 and hex
// characters, "=" and others.
func TestQuotedRuns(t *testing.T) {
	texts := prefilterTexts(t)
	rng := rand.New(rand.NewSource(7))
	class, other := []byte("aF09+/_-"), []byte("\"'`==x\n é")
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.Intn(120))
		for i := range b {
			if rng.Intn(10) < 8 {
				b[i] = class[rng.Intn(len(class))]
			} else {
				b[i] = other[rng.Intn(len(other))]
			}
		}
		texts = append(texts, string(b))
	}
	texts = append(texts, `x = "QUJDREVGR0hJSktMTU5PUA==" + 'deadbeefdeadbeef' + "abc"`, strings.Repeat(`"0123456789abcdef0123" `, 40))
	found := 0
	defer func() { t.Logf("%d texts, %d with a match", len(texts), found) }()
	for _, s := range texts {
		if b64Lit.Regexp.MatchString(s) || hexLit.Regexp.MatchString(s) {
			found++
		}
		for _, n := range []int{-1, 0, 1, 3, maxLiterals} {
			if got, want := quotedRuns(s, n, b64Char, 16, false), b64Lit.Regexp.FindAllStringSubmatch(s, n); !reflect.DeepEqual(got, want) {
				t.Fatalf("base64 in %q (n %d): %q, want %q", s, n, got, want)
			}
			if got, want := quotedRuns(s, n, hexChar, 16, true), hexLit.Regexp.FindAllStringSubmatch(s, n); !reflect.DeepEqual(got, want) {
				t.Fatalf("hex in %q (n %d): %q, want %q", s, n, got, want)
			}
		}
	}
}
