package textdiff

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// noNewline is the marker diff prints after a line that ends its file
// without a newline.
const noNewline = "\\ No newline at end of file\n"

// Unified returns the unified diff of oldContent (named oldName) against
// newContent (newName) with context lines of context around each change,
// as GNU "diff -U context" prints it, without the timestamps in the
// "---"/"+++" header lines: hunks whose contexts overlap or touch are
// merged, ranges follow diff's conventions ("-3" for one line, "-0,0" for
// none in an empty file), and "\ No newline at end of file" follows a last
// line without one. A negative context counts as 0; 3 is the usual.
//
// It returns "" when the contents are equal, and the line "Binary files
// oldName and newName differ\n" when they differ and either holds a NUL
// byte or is not valid UTF-8. Names are printed as given; they should not
// contain a newline.
func Unified(oldName, newName string, oldContent, newContent []byte, context int) string {
	if bytes.Equal(oldContent, newContent) {
		return ""
	}
	if isBinary(oldContent) || isBinary(newContent) {
		return "Binary files " + oldName + " and " + newName + " differ\n"
	}
	a, b, cs := compute(oldContent, newContent, nil)
	if len(cs) == 0 {
		return ""
	}
	context = min(max(context, 0), len(a)+len(b)) // 2*context cannot overflow

	var w strings.Builder
	w.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	for h := 0; h < len(cs); {
		// A hunk takes the next changes while fewer than 2*context+1
		// equal lines separate them.
		e := h
		for e+1 < len(cs) && cs[e+1].a-(cs[e].a+cs[e].del) <= 2*context {
			e++
		}
		first, last := cs[h], cs[e]
		loA := max(first.a-context, 0)
		loB := first.b - (first.a - loA)
		hiA := min(last.a+last.del+context, len(a))
		hiB := last.b + last.ins + (hiA - (last.a + last.del))

		w.WriteString("@@ -")
		writeRange(&w, loA, hiA-loA)
		w.WriteString(" +")
		writeRange(&w, loB, hiB-loB)
		w.WriteString(" @@\n")
		i := loA
		for _, c := range cs[h : e+1] {
			writeLines(&w, ' ', a[i:c.a])
			writeLines(&w, '-', a[c.a:c.a+c.del])
			writeLines(&w, '+', b[c.b:c.b+c.ins])
			i = c.a + c.del
		}
		writeLines(&w, ' ', a[i:hiA])
		h = e + 1
	}
	return w.String()
}

// isBinary reports whether content is not text, by diff's rule (a NUL
// byte) or because it is not UTF-8.
func isBinary(content []byte) bool {
	return bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content)
}

// writeRange writes the range of count lines after the first start lines
// as diff does: "start+1,count", "start+1" alone for one line, and
// "start,0" for none (the line after which the hunk applies).
func writeRange(w *strings.Builder, start, count int) {
	switch count {
	case 0:
		w.WriteString(strconv.Itoa(start) + ",0")
	case 1:
		w.WriteString(strconv.Itoa(start + 1))
	default:
		w.WriteString(strconv.Itoa(start+1) + "," + strconv.Itoa(count))
	}
}

// writeLines writes each line after prefix, and the no-newline marker
// after a line that lacks its newline.
func writeLines(w *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		w.WriteByte(prefix)
		w.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			w.WriteString("\n" + noNewline)
		}
	}
}
