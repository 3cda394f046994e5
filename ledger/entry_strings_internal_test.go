package ledger

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestParseEntry_WithStringTable checks that the verify workers' parse
// (session and type from a table, or lean: ts and session checked but
// dropped) reads every entry of the known-answer file, and mutations of
// it, as ParseEntry does: the same fields and the same errors.
func TestParseEntry_WithStringTable(t *testing.T) {
	f, err := os.Open("testdata/kat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) == 0 {
		t.Fatal("no known-answer entries")
	}
	var inputs []string
	for _, ln := range lines {
		inputs = append(inputs, ln,
			strings.Replace(ln, `"ts":"`, `"ts":"\u0032`, 1),       // escaped
			strings.Replace(ln, `"ts":"`, `"ts":`, 1),              // not a string
			strings.Replace(ln, `"type":"`, "\"type\":\"\xff", 1),  // invalid UTF-8
			strings.Replace(ln, `"session":"`, `"session":"\n`, 1), // control byte
			strings.Replace(ln, `"session":"`, `"session":"\\n`, 1))
	}
	for _, keep := range []bool{true, false} {
		tab := &entryStrings{lean: !keep}
		for _, in := range inputs {
			for range 2 { // the second time from the table
				want, wantErr := ParseEntry([]byte(in))
				got, gotErr := parseEntry([]byte(in), tab)
				if !keep {
					want.TS, want.Session = "", ""
				}
				if (gotErr == nil) != (wantErr == nil) || (wantErr != nil && gotErr.Error() != wantErr.Error()) {
					t.Fatalf("%s: error %v, ParseEntry says %v", in, gotErr, wantErr)
				}
				if wantErr == nil && (got.Session != want.Session || got.TS != want.TS || got.Type != want.Type ||
					got.Seq != want.Seq || got.Prev != want.Prev || string(got.Data) != string(want.Data)) {
					t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
				}
			}
		}
	}
}
