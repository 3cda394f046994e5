package textdiff_test

import (
	"bytes"
	"testing"

	"github.com/opx-dev/opx/chronicle/textdiff"
)

// FuzzUnified checks, for any pair of contents and context, that Unified
// does not panic, that its diff applies to old to give new (or that it is
// the binary notice), that Lines rebuilds both files, and, for files small
// enough for the naive table, that the script is a shortest one. Raw bytes
// seldom hold many lines, so each input is also checked as lines: every
// byte becomes a line from a small alphabet (see asLines).
//
//	go test -run '^$' -fuzz FuzzUnified ./chronicle/textdiff/
//
// Crashers land in testdata/fuzz/FuzzUnified and are rerun by go test.
func FuzzUnified(f *testing.F) {
	for _, tc := range unifiedCases {
		f.Add([]byte(tc.old), []byte(tc.new), uint8(tc.context))
	}
	f.Add([]byte("abcabba"), []byte("cbabac"), uint8(1)) // Myers' paper's example
	f.Fuzz(func(t *testing.T, old, new []byte, context uint8) {
		ctx := int(context % 8)
		checkPair(t, old, new, ctx)
		checkPair(t, asLines(old, context), asLines(new, context), ctx)
	})
}

// asLines turns each byte of b into the line "0\n" to "4\n"; the last one
// loses its newline when the context's top bit is set.
func asLines(b []byte, context uint8) []byte {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, '0'+c%5, '\n')
	}
	if len(out) > 0 && context&0x80 != 0 {
		out = out[:len(out)-1]
	}
	return out
}

func checkPair(t *testing.T, old, new []byte, ctx int) {
	t.Helper()
	diff := textdiff.Unified("a", "b", old, new, ctx)
	switch {
	case bytes.Equal(old, new):
		if diff != "" {
			t.Fatalf("equal contents, Unified = %q", diff)
		}
	case isBinary(string(old)) || isBinary(string(new)):
		if diff != "Binary files a and b differ\n" {
			t.Fatalf("binary contents, Unified = %q", diff)
		}
	default:
		got, err := applyUnified(string(old), diff, ctx)
		if err != nil {
			t.Fatalf("%q -> %q: apply: %v\n%s", old, new, err, diff)
		}
		if got != string(new) {
			t.Fatalf("%q -> %q: applied gives %q\n%s", old, new, got, diff)
		}
	}

	edits := textdiff.Lines(old, new)
	if err := checkEdits(edits, string(old), string(new)); err != nil {
		t.Fatalf("%q -> %q: %v", old, new, err)
	}
	if bytes.Count(old, []byte("\n")) <= 500 && bytes.Count(new, []byte("\n")) <= 500 {
		if got, want := distance(edits), naiveDistance(string(old), string(new)); got != want {
			t.Fatalf("%q -> %q: %d lines changed, shortest is %d", old, new, got, want)
		}
	}
}
