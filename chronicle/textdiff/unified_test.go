package textdiff_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/opx-dev/opx/chronicle/textdiff"
)

// unifiedCases are known answers printed by GNU diff (diffutils 3.8) with
// the timestamps cut from its header. To reproduce one:
//
//	printf '%b' "$old" > old; printf '%b' "$new" > new
//	diff -U "$context" old new | sed '1,2s/\t.*//'
//
// TestUnified_MatchesGNUDiff runs that again for every case.
var unifiedCases = []struct {
	name     string
	old, new string
	context  int
	want     string
}{
	{
		name:    "Equal",
		old:     "a\nb\n",
		new:     "a\nb\n",
		context: 3,
		want:    "",
	},
	{
		name:    "EmptyOld",
		old:     "",
		new:     "a\nb\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -0,0 +1,2 @@\n" +
			"+a\n" +
			"+b\n",
	},
	{
		name:    "EmptyNew",
		old:     "a\nb\n",
		new:     "",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,2 +0,0 @@\n" +
			"-a\n" +
			"-b\n",
	},
	{
		name:    "EmptyOldNoNewline",
		old:     "",
		new:     "a",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -0,0 +1 @@\n" +
			"+a\n" +
			"\\ No newline at end of file\n",
	},
	{
		name:    "OneLineChanged",
		old:     "a\n",
		new:     "b\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1 +1 @@\n" +
			"-a\n" +
			"+b\n",
	},
	{
		name:    "OneLineNoNewlineBoth",
		old:     "a",
		new:     "b",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1 +1 @@\n" +
			"-a\n" +
			"\\ No newline at end of file\n" +
			"+b\n" +
			"\\ No newline at end of file\n",
	},
	{
		name:    "NewlineAdded",
		old:     "a\nb",
		new:     "a\nb\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,2 +1,2 @@\n" +
			" a\n" +
			"-b\n" +
			"\\ No newline at end of file\n" +
			"+b\n",
	},
	{
		name:    "NewlineRemoved",
		old:     "a\nb\n",
		new:     "a\nb",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,2 +1,2 @@\n" +
			" a\n" +
			"-b\n" +
			"+b\n" +
			"\\ No newline at end of file\n",
	},
	{
		name:    "NoNewlineBothContextAtEnd",
		old:     "a\nb\nc",
		new:     "x\nb\nc",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,3 +1,3 @@\n" +
			"-a\n" +
			"+x\n" +
			" b\n" +
			" c\n" +
			"\\ No newline at end of file\n",
	},
	{
		name:    "NoNewlineOldLinesAppended",
		old:     "a\nb",
		new:     "a\nb\nc\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,2 +1,3 @@\n" +
			" a\n" +
			"-b\n" +
			"\\ No newline at end of file\n" +
			"+b\n" +
			"+c\n",
	},
	{
		name:    "ChangeAtStart",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,4 +1,4 @@\n" +
			"-1\n" +
			"+one\n" +
			" 2\n" +
			" 3\n" +
			" 4\n",
	},
	{
		name:    "InsertAtStart",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,3 +1,4 @@\n" +
			"+0\n" +
			" 1\n" +
			" 2\n" +
			" 3\n",
	},
	{
		name:    "ChangeAtEnd",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -7,4 +7,4 @@\n" +
			" 7\n" +
			" 8\n" +
			" 9\n" +
			"-10\n" +
			"+ten\n",
	},
	{
		name:    "DeleteAtEnd",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -7,4 +7,3 @@\n" +
			" 7\n" +
			" 8\n" +
			" 9\n" +
			"-10\n",
	},
	{
		name:    "ContextsOverlap",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		new:     "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\neleven\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -2,13 +2,13 @@\n" +
			" 2\n" +
			" 3\n" +
			" 4\n" +
			"-5\n" +
			"+five\n" +
			" 6\n" +
			" 7\n" +
			" 8\n" +
			" 9\n" +
			" 10\n" +
			"-11\n" +
			"+eleven\n" +
			" 12\n" +
			" 13\n" +
			" 14\n",
	},
	{
		name:    "ContextsTouch",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		new:     "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\ntwelve\n13\n14\n15\n16\n17\n18\n19\n20\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -2,14 +2,14 @@\n" +
			" 2\n" +
			" 3\n" +
			" 4\n" +
			"-5\n" +
			"+five\n" +
			" 6\n" +
			" 7\n" +
			" 8\n" +
			" 9\n" +
			" 10\n" +
			" 11\n" +
			"-12\n" +
			"+twelve\n" +
			" 13\n" +
			" 14\n" +
			" 15\n",
	},
	{
		name:    "ContextsApart",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		new:     "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\nthirteen\n14\n15\n16\n17\n18\n19\n20\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -2,7 +2,7 @@\n" +
			" 2\n" +
			" 3\n" +
			" 4\n" +
			"-5\n" +
			"+five\n" +
			" 6\n" +
			" 7\n" +
			" 8\n" +
			"@@ -10,7 +10,7 @@\n" +
			" 10\n" +
			" 11\n" +
			" 12\n" +
			"-13\n" +
			"+thirteen\n" +
			" 14\n" +
			" 15\n" +
			" 16\n",
	},
	{
		name:    "Context0Insert",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n2\n3\n4\nnew\n5\n6\n7\n8\n9\n10\n",
		context: 0,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -4,0 +5 @@\n" +
			"+new\n",
	},
	{
		name:    "Context0Delete",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n3\n4\n5\n6\n7\n8\n9\n10\n",
		context: 0,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -2 +1,0 @@\n" +
			"-2\n",
	},
	{
		name:    "Context0Adjacent",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n2\nc\n4\ne\n6\n7\n8\n9\n10\n",
		context: 0,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -3 +3 @@\n" +
			"-3\n" +
			"+c\n" +
			"@@ -5 +5 @@\n" +
			"-5\n" +
			"+e\n",
	},
	{
		name:    "Context1",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		new:     "1\n2\n3\n4\nfive\n6\n7\neight\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n",
		context: 1,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -4,6 +4,6 @@\n" +
			" 4\n" +
			"-5\n" +
			"+five\n" +
			" 6\n" +
			" 7\n" +
			"-8\n" +
			"+eight\n" +
			" 9\n",
	},
	{
		name:    "ContextLarge",
		old:     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		new:     "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n",
		context: 100,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,10 +1,10 @@\n" +
			" 1\n" +
			" 2\n" +
			" 3\n" +
			" 4\n" +
			"-5\n" +
			"+five\n" +
			" 6\n" +
			" 7\n" +
			" 8\n" +
			" 9\n" +
			" 10\n",
	},
	{
		name:    "RunOfEqualLinesInsert",
		old:     "a\nx\nx\nx\nb\n",
		new:     "a\nx\nx\nx\nx\nb\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -2,4 +2,5 @@\n" +
			" x\n" +
			" x\n" +
			" x\n" +
			"+x\n" +
			" b\n",
	},
	{
		name:    "RunOfEqualLinesDelete",
		old:     "a\nx\nx\nx\nb\n",
		new:     "a\nx\nx\nb\n",
		context: 1,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -3,3 +3,2 @@\n" +
			" x\n" +
			"-x\n" +
			" b\n",
	},
	{
		name:    "ReplaceBesideEqualLine",
		old:     "1\nX\nX\n2\n",
		new:     "1\nY\nX\n2\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,4 +1,4 @@\n" +
			" 1\n" +
			"-X\n" +
			"+Y\n" +
			" X\n" +
			" 2\n",
	},
	{
		name:    "DeleteJoinsAcrossEqualLines",
		old:     "a\nb\nX\nX\nX\nc\n",
		new:     "a\nX\nX\nZ\nc\n",
		context: 1,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,6 +1,5 @@\n" +
			" a\n" +
			"-b\n" +
			"-X\n" +
			" X\n" +
			" X\n" +
			"+Z\n" +
			" c\n",
	},
	{
		name:    "InsertsAroundUnchangedLine",
		old:     "d\n",
		new:     "a\nd\na\nd\na\n",
		context: 1,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1 +1,5 @@\n" +
			"+a\n" +
			" d\n" +
			"+a\n" +
			"+d\n" +
			"+a\n",
	},
	{
		name:    "UniqueLineSetAside",
		old:     "c\nd\nd\nc\n",
		new:     "d\nb\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,4 +1,2 @@\n" +
			"-c\n" +
			" d\n" +
			"-d\n" +
			"-c\n" +
			"+b\n",
	},
	{
		name:    "BlockMovedDown",
		old:     "a\nb\nc\nd\ne\nf\n",
		new:     "a\nd\ne\nb\nc\nf\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,6 +1,6 @@\n" +
			" a\n" +
			"-b\n" +
			"-c\n" +
			" d\n" +
			" e\n" +
			"+b\n" +
			"+c\n" +
			" f\n",
	},
	{
		name:    "WhollyRewritten",
		old:     "a\nb\nc\n",
		new:     "x\ny\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,3 +1,2 @@\n" +
			"-a\n" +
			"-b\n" +
			"-c\n" +
			"+x\n" +
			"+y\n",
	},
	{
		name:    "CRLF",
		old:     "a\r\nb\r\nc\r\n",
		new:     "a\r\nB\r\nc\r\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,3 +1,3 @@\n" +
			" a\r\n" +
			"-b\r\n" +
			"+B\r\n" +
			" c\r\n",
	},
	{
		name:    "BlankLines",
		old:     "a\n\n\nb\n",
		new:     "a\n\nb\n\n",
		context: 3,
		want: "--- old\n" +
			"+++ new\n" +
			"@@ -1,4 +1,4 @@\n" +
			" a\n" +
			" \n" +
			"-\n" +
			" b\n" +
			"+\n",
	},
	{
		name:    "Binary",
		old:     "a\x00b\n",
		new:     "a\x00c\n",
		context: 3,
		want:    "Binary files old and new differ\n",
	},
}

func TestUnified_KnownAnswers(t *testing.T) {
	for _, tc := range unifiedCases {
		t.Run(tc.name, func(t *testing.T) {
			got := textdiff.Unified("old", "new", []byte(tc.old), []byte(tc.new), tc.context)
			if got != tc.want {
				t.Fatalf("Unified:\n%s\nwant:\n%s", got, tc.want)
			}
			if isBinary(tc.old) || isBinary(tc.new) {
				return
			}
			applied, err := applyUnified(tc.old, got, tc.context)
			if err != nil {
				t.Fatalf("apply: %v\n%s", err, got)
			}
			if applied != tc.new {
				t.Fatalf("apply gives %q, want %q", applied, tc.new)
			}
		})
	}
}

// TestUnified_MatchesGNUDiff compares Unified with the diff on PATH, byte
// for byte but for the header's timestamps. Without GNU diff it skips,
// except on CI (CI=true), where diffutils is expected and its absence is a
// failure.
func TestUnified_MatchesGNUDiff(t *testing.T) {
	gnuDiff(t)
	dir := t.TempDir()
	for _, tc := range unifiedCases {
		t.Run(tc.name, func(t *testing.T) {
			got := textdiff.Unified("old", "new", []byte(tc.old), []byte(tc.new), tc.context)
			want := runGNUDiff(t, dir, tc.old, tc.new, tc.context)
			if got != want {
				t.Fatalf("Unified:\n%s\nGNU diff:\n%s", got, want)
			}
		})
	}
}

// gnuDiff returns the path of GNU diff, or skips the test (fails it on CI)
// if there is none.
func gnuDiff(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("diff")
	if err == nil {
		var out []byte
		if out, err = exec.Command(path, "--version").Output(); err == nil && !strings.Contains(string(out), "GNU diffutils") {
			err = errors.New("diff on PATH is not GNU diffutils")
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("GNU diff is required on CI: %v", err)
		}
		tb.Skipf("no GNU diff: %v", err)
	}
	return path
}

// runGNUDiff writes old and new to dir as "old" and "new" and returns what
// "diff -U context old new" prints, without the header's timestamps.
func runGNUDiff(tb testing.TB, dir, old, new string, context int) string {
	tb.Helper()
	for name, content := range map[string]string{"old": old, "new": new} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command("diff", "-U", strconv.Itoa(context), "old", "new")
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		tb.Fatalf("diff: %v", err)
	}
	lines := strings.SplitAfter(string(out), "\n")
	for i := 0; i < 2 && i < len(lines) && strings.HasPrefix(string(out), "--- "); i++ {
		if name, _, ok := strings.Cut(lines[i], "\t"); ok {
			lines[i] = name + "\n"
		}
	}
	return strings.Join(lines, "")
}

func TestUnified_Binary(t *testing.T) {
	const differ = "Binary files a and b differ\n"
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"NULInOld", "x\x00\n", "x\n", differ},
		{"NULInNew", "x\n", "x\x00\n", differ},
		{"InvalidUTF8", "x\n", "caf\xe9\n", differ},
		{"EqualBinary", "\x00\xff", "\x00\xff", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := textdiff.Unified("a", "b", []byte(tc.old), []byte(tc.new), 3); got != tc.want {
				t.Fatalf("Unified = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUnified_NegativeContext_ActsAsZero(t *testing.T) {
	old, new := []byte("1\n2\n3\n"), []byte("1\nb\n3\n")
	got := textdiff.Unified("a", "b", old, new, -5)
	if want := textdiff.Unified("a", "b", old, new, 0); got != want {
		t.Fatalf("context -5:\n%s\ncontext 0:\n%s", got, want)
	}
}

func TestUnified_HugeContext_OneHunk(t *testing.T) {
	old, new := []byte("1\n2\n3\n"), []byte("1\nb\n3\n")
	got := textdiff.Unified("a", "b", old, new, int(^uint(0)>>1))
	if want := "--- a\n+++ b\n@@ -1,3 +1,3 @@\n 1\n-2\n+b\n 3\n"; got != want {
		t.Fatalf("Unified:\n%s\nwant:\n%s", got, want)
	}
}

// isBinary is Unified's rule for content it will not diff.
func isBinary(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s)
}
