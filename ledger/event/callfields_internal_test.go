package event

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCallFields_ReadMatchesUnmarshal cross-checks the in-place read of
// the causality fields against json.Unmarshal (the reference it must
// equal) on random objects: exact and case-varied names (ASCII, and the
// Kelvin sign that encoding/json folds to k), escaped keys and values,
// duplicates, nulls, values of the wrong type, invalid UTF-8 and spaces.
func TestCallFields_ReadMatchesUnmarshal(t *testing.T) {
	// 20,000 objects, a fresh draw each run (logged; OPX_CALLFIELDS_SEED
	// replays one): every key meets every value some 200 times, and
	// duplicates and case variants come by the thousand. A fixed 100,000
	// took half the package's time under -race.
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OPX_CALLFIELDS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("OPX_CALLFIELDS_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("OPX_CALLFIELDS_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	keys := append([]string{"CALL_ID", "Call_Id", "tool\u212a", "too\u212a", "mutatinG", `call\u005fid`, "x", "subagent", "data", "é"}, callFieldNames...)
	values := []string{`"c1"`, `"c2"`, `""`, `null`, `true`, `false`, `1`, `{"call_id":"in"}`, `["a"]`,
		`"a\"b"`, `"a\u0041"`, "\"\xff\"", `"é"`, `"\u2028"`}
	for i := range 20000 {
		var b strings.Builder
		b.WriteByte('{')
		for j := range rng.IntN(6) {
			if j > 0 {
				b.WriteByte(',')
			}
			if rng.IntN(10) == 0 {
				b.WriteByte(' ')
			}
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `":`)
			b.WriteString(values[rng.IntN(len(values))])
		}
		b.WriteByte('}')
		data := []byte(b.String())
		var got, want callFields
		gotErr := got.read(data)
		wantErr := json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) || (wantErr == nil && got != want) {
			t.Fatalf("%d: %s\nread:      %+v, %v\nUnmarshal: %+v, %v", i, data, got, gotErr, want, wantErr)
		}
	}
}
