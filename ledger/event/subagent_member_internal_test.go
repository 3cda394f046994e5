package event

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestHasSubagentMember_MatchesContains cross-checks hasSubagentMember
// against bytes.Contains (the naive reference) on edge cases and random
// strings built from pieces of the member name.
func TestHasSubagentMember_MatchesContains(t *testing.T) {
	cases := []string{``, `"`, `subagent_id":`, `"subagent_id":`, `{"subagent_id":"a"}`, `x"subagent_id":`,
		`subagent_id":"subagent_id":`, `"xsubagent_id":subagent_id":`, `""subagent_id"`, `"subagent_id":"`,
		`{"a":"subagent_id":","subagent_id":1}`, `\"subagent_id":`}
	pieces := []string{`"`, `subagent_id":`, `subagent_id"`, `:`, `s`, `x`, `_id":`, `\`}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for n := r.IntN(6); n >= 0; n-- {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := hasSubagentMember([]byte(c)), bytes.Contains([]byte(c), subagentMember); got != want {
			t.Fatalf("%q: hasSubagentMember %v, bytes.Contains %v", c, got, want)
		}
	}
}
