package textdiff_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/chronicle/textdiff"
)

// randomText returns up to maxLines lines drawn from an alphabet of size
// letters (small alphabets make many equally short scripts, the hard
// case), the last one sometimes without its newline.
func randomText(rng *rand.Rand, maxLines, letters int) string {
	var b strings.Builder
	for range rng.Intn(maxLines + 1) {
		b.WriteByte(byte('a' + rng.Intn(letters)))
		b.WriteByte('\n')
	}
	s := b.String()
	if s != "" && rng.Intn(4) == 0 {
		s = s[:len(s)-1]
	}
	return s
}

// mutate returns s with a few lines replaced, inserted or deleted, so
// that random pairs also include the near-equal files diffs are made of.
func mutate(rng *rand.Rand, s string, letters int) string {
	lines := splitLines(s)
	for range rng.Intn(4) {
		i := rng.Intn(len(lines) + 1)
		line := string(rune('a'+rng.Intn(letters))) + "\n"
		switch {
		case rng.Intn(3) == 0 || i == len(lines):
			lines = append(lines[:i], append([]string{line}, lines[i:]...)...)
		case rng.Intn(2) == 0:
			lines = append(lines[:i], lines[i+1:]...)
		default:
			lines[i] = line
		}
	}
	return strings.Join(lines, "")
}

// randomPair returns the i-th of a seeded sequence of file pairs.
func randomPair(rng *rand.Rand, i int) (old, new string) {
	letters := 2 + i%6
	old = randomText(rng, 14, letters)
	if i%2 == 0 {
		return old, mutate(rng, old, letters)
	}
	return old, randomText(rng, 14, letters)
}

// TestLines_Random_MatchesNaiveLCS checks on thousands of seeded random
// pairs that the script rebuilds both files, is as short as the LCS table
// says a script can be, and that Unified's diff at several contexts
// applies to old to give new.
func TestLines_Random_MatchesNaiveLCS(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 5000 {
		old, new := randomPair(rng, i)
		edits := textdiff.Lines([]byte(old), []byte(new))
		if err := checkEdits(edits, old, new); err != nil {
			t.Fatalf("pair %d %q -> %q: %v", i, old, new, err)
		}
		if got, want := distance(edits), naiveDistance(old, new); got != want {
			t.Fatalf("pair %d %q -> %q: %d lines changed, shortest is %d", i, old, new, got, want)
		}
		for context := range 4 {
			checkUnified(t, old, new, context)
		}
	}
}

// checkUnified checks that Unified's diff applies to old to give new.
func checkUnified(t *testing.T, old, new string, context int) {
	t.Helper()
	diff := textdiff.Unified("a", "b", []byte(old), []byte(new), context)
	if (diff == "") != (old == new) {
		t.Fatalf("%q -> %q: Unified = %q", old, new, diff)
	}
	got, err := applyUnified(old, diff, context)
	if err != nil {
		t.Fatalf("%q -> %q, context %d: %v\n%s", old, new, context, err, diff)
	}
	if got != new {
		t.Fatalf("%q -> %q, context %d: applied gives %q\n%s", old, new, context, got, diff)
	}
}

// TestLines_Limited_StillCorrect drives the fallbacks (a search that gives
// up after a few edits, a budget that runs out) and checks that the
// scripts, no longer always shortest, still rebuild both files.
func TestLines_Limited_StillCorrect(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	longer := 0
	for i := range 3000 {
		old, new := randomPair(rng, i)
		edits := textdiff.LinesLimited([]byte(old), []byte(new), 1+i%3, i%40)
		if err := checkEdits(edits, old, new); err != nil {
			t.Fatalf("pair %d %q -> %q: %v", i, old, new, err)
		}
		got, shortest := distance(edits), naiveDistance(old, new)
		if got < shortest {
			t.Fatalf("pair %d: %d lines changed, fewer than the shortest %d", i, got, shortest)
		}
		if got > shortest {
			longer++
		}
	}
	if longer == 0 {
		t.Fatal("the limits never made a script longer: the fallbacks were not exercised")
	}
}

// TestLines_LargeFewEdits_Shortest checks a 100,000-line file with
// scattered edits gets exactly the shortest script.
func TestLines_LargeFewEdits_Shortest(t *testing.T) {
	old, new, changed := scatteredEdits(100_000, 10)
	edits := textdiff.Lines(old, new)
	if err := checkEdits(edits, string(old), string(new)); err != nil {
		t.Fatal(err)
	}
	if got := distance(edits); got != changed {
		t.Fatalf("%d lines changed, want %d", got, changed)
	}
}

// TestLines_Pathological_Bounded runs inputs whose shortest script is
// expensive to find and checks that the guard bounds the time while the
// script stays correct.
func TestLines_Pathological_Bounded(t *testing.T) {
	n := 200_000
	if testing.Short() || raceEnabled {
		n = 50_000
	}
	rng := rand.New(rand.NewSource(3))
	tests := []struct {
		name     string
		old, new string
		shortest int // the length of a shortest script, if known
	}{
		{"NoLineInCommon", numbered("old", n), numbered("new", n), 2 * n},
		{"SameVocabulary", randomLines(rng, n, 8), randomLines(rng, n, 8), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled && tc.name == "SameVocabulary" {
				// It spends the whole budget, 2^25 steps, which the race
				// detector stretches to several seconds; the fallback's
				// correctness is TestLines_Limited_StillCorrect's job.
				t.Skip("too slow under the race detector")
			}
			start := time.Now()
			edits := textdiff.Lines([]byte(tc.old), []byte(tc.new))
			elapsed := time.Since(start)
			if err := checkEdits(edits, tc.old, tc.new); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d lines changed in %v", distance(edits), elapsed)
			if tc.shortest > 0 && distance(edits) != tc.shortest {
				t.Errorf("%d lines changed, shortest is %d", distance(edits), tc.shortest)
			}
			if limit := 20 * time.Second; elapsed > limit {
				t.Fatalf("took %v, more than %v", elapsed, limit)
			}
		})
	}
}

// numbered returns n distinct lines "prefix i".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// scatteredEdits returns a file of n source-like lines and a copy with
// edits spread evenly over it (a replaced line, an inserted one, a deleted
// one in turn), and the number of lines changed.
func scatteredEdits(n, edits int) (old, new []byte, changed int) {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "\tx" + strconv.Itoa(i%97) + " := compute(ctx, " + strconv.Itoa(i) + `, "arg") // line ` + strconv.Itoa(i) + "\n"
	}
	old = []byte(strings.Join(lines, ""))
	for e := edits - 1; e >= 0; e-- {
		i := (e*2 + 1) * n / (edits * 2)
		switch e % 3 {
		case 0:
			lines[i] = "\t// replaced\n"
			changed += 2
		case 1:
			lines = append(lines[:i], append([]string{"\t// inserted\n"}, lines[i:]...)...)
			changed++
		case 2:
			lines = append(lines[:i], lines[i+1:]...)
			changed++
		}
	}
	return old, []byte(strings.Join(lines, "")), changed
}

func TestOp_String(t *testing.T) {
	tests := []struct {
		op   textdiff.Op
		want string
	}{
		{textdiff.Equal, "equal"},
		{textdiff.Delete, "delete"},
		{textdiff.Insert, "insert"},
		{textdiff.Op(9), "Op(9)"},
	}
	for _, tc := range tests {
		if got := tc.op.String(); got != tc.want {
			t.Errorf("Op(%d).String() = %q, want %q", uint8(tc.op), got, tc.want)
		}
	}
}

func TestLines_Example(t *testing.T) {
	got := textdiff.Lines([]byte("a\nb\nc"), []byte("a\nB\nc"))
	want := []textdiff.Edit{
		{Op: textdiff.Equal, OldLine: 1, NewLine: 1, Text: "a\n"},
		{Op: textdiff.Delete, OldLine: 2, Text: "b\n"},
		{Op: textdiff.Insert, NewLine: 2, Text: "B\n"},
		{Op: textdiff.Equal, OldLine: 3, NewLine: 3, Text: "c"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Lines = %+v\nwant %+v", got, want)
	}
}
