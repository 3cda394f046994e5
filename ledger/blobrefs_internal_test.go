package ledger

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCanonicalBlobRefs_MatchesBlobRefs cross-checks the in-place walk
// strict verify uses on canonical data against BlobRefs (the decoding
// reference) on random nested payloads: the same set of blobs, and an
// error for neither.
func TestCanonicalBlobRefs_MatchesBlobRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 5))
	hash := func() string { return Sum([]byte(fmt.Sprint(rng.Uint64()))).String() }
	keys := []string{"blob", "pre_blob", "post_blob", "blobs", "_blob", "x", "a\nb_blob", "é_blob", "blob_", "Blob"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.IntN(10); {
		case depth > 4 || n < 3:
			switch rng.IntN(5) {
			case 0:
				return hash()
			case 1:
				return hash()[:10] // a blob-named string that is no hash
			case 2:
				return rng.IntN(1000)
			case 3:
				return nil
			}
			return "blob\"" // the prefilter's bytes inside a value
		case n < 5:
			a := make([]any, rng.IntN(4))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := map[string]any{}
			for range rng.IntN(5) {
				m[keys[rng.IntN(len(keys))]] = gen(depth + 1)
			}
			return m
		}
	}
	for i := range 5000 {
		raw, err := json.Marshal(map[string]any{"blob": gen(0), "x": gen(0)})
		if err != nil {
			t.Fatal(err)
		}
		data, err := Canonicalize(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := BlobRefs(data)
		if err != nil {
			t.Fatalf("%d: BlobRefs(%s): %v", i, data, err)
		}
		var got []Hash
		if err := canonicalBlobRefs(data, func(h Hash) { got = append(got, h) }); err != nil {
			t.Fatalf("%d: canonicalBlobRefs(%s): %v", i, data, err)
		}
		cmp := func(a, b Hash) int { return slices.Compare(a[:], b[:]) }
		slices.SortFunc(want, cmp)
		slices.SortFunc(got, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("%d: %s\ncanonicalBlobRefs %v\nBlobRefs          %v", i, data, got, want)
		}
	}
}
