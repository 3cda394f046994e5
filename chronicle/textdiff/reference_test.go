package textdiff_test

// Test-only references: a deliberately naive diff (the textbook LCS table,
// O(N·M) time and space) to cross-check the fast one, and a strict patch
// applier to check that every diff Unified prints turns old into new.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/chronicle/textdiff"
)

// splitLines splits s after every '\n', keeping the newlines.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// naiveDiff returns a shortest edit script from a to b by dynamic
// programming over the whole table of longest common subsequences.
func naiveDiff(a, b []string) []textdiff.Op {
	n, m := len(a), len(b)
	// lcs[i*(m+1)+j] is the LCS length of a[i:] and b[j:].
	lcs := make([]int32, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
			case lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]:
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j]
			default:
				lcs[i*(m+1)+j] = lcs[i*(m+1)+j+1]
			}
		}
	}
	ops := make([]textdiff.Op, 0, n+m)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, textdiff.Equal)
			i++
			j++
		case j == m || (i < n && lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]):
			ops = append(ops, textdiff.Delete)
			i++
		default:
			ops = append(ops, textdiff.Insert)
			j++
		}
	}
	return ops
}

// naiveDistance is the number of deleted plus inserted lines of a
// shortest edit script from old to new.
func naiveDistance(old, new string) int {
	d := 0
	for _, op := range naiveDiff(splitLines(old), splitLines(new)) {
		if op != textdiff.Equal {
			d++
		}
	}
	return d
}

// distance is the number of deleted plus inserted lines in edits.
func distance(edits []textdiff.Edit) int {
	d := 0
	for _, e := range edits {
		if e.Op != textdiff.Equal {
			d++
		}
	}
	return d
}

// checkEdits returns an error unless edits rebuild both files and number
// their lines in order.
func checkEdits(edits []textdiff.Edit, old, new string) error {
	restOld, restNew := old, new // what the edits have yet to rebuild
	nOld, nNew := 0, 0
	for k, e := range edits {
		wantOld, wantNew := nOld+1, nNew+1
		switch e.Op {
		case textdiff.Equal:
		case textdiff.Delete:
			wantNew = 0
		case textdiff.Insert:
			wantOld = 0
		default:
			return fmt.Errorf("edit %d: unknown op %v", k, e.Op)
		}
		if e.OldLine != wantOld || e.NewLine != wantNew {
			return fmt.Errorf("edit %d: %+v, want old line %d and new line %d", k, e, wantOld, wantNew)
		}
		if i := strings.IndexByte(e.Text, '\n'); e.Text == "" || i >= 0 && i != len(e.Text)-1 {
			return fmt.Errorf("edit %d: %q is not one line", k, e.Text)
		}
		if wantOld > 0 {
			if !strings.HasPrefix(restOld, e.Text) {
				return fmt.Errorf("edit %d: %+v, old has %.40q", k, e, restOld)
			}
			restOld = restOld[len(e.Text):]
			nOld++
		}
		if wantNew > 0 {
			if !strings.HasPrefix(restNew, e.Text) {
				return fmt.Errorf("edit %d: %+v, new has %.40q", k, e, restNew)
			}
			restNew = restNew[len(e.Text):]
			nNew++
		}
		if !strings.HasSuffix(e.Text, "\n") && (wantOld > 0 && restOld != "" || wantNew > 0 && restNew != "") {
			return fmt.Errorf("edit %d: %q lacks a newline but is not last", k, e.Text)
		}
	}
	if restOld != "" || restNew != "" {
		return fmt.Errorf("edits leave %.40q of old and %.40q of new", restOld, restNew)
	}
	return nil
}

// applyUnified applies diff, as Unified prints it with the given context,
// to old and returns the result. It is strict: the headers, every hunk
// header's ranges (diff's conventions), every context and deleted line,
// the no-newline markers, the hunks' order, and their shape (exactly
// min(context, available) lines of context at each end, changes in one
// hunk at most 2·context apart, hunks further apart than that).
func applyUnified(old, diff string, context int) (string, error) {
	if diff == "" {
		return old, nil
	}
	a := splitLines(old)
	lines := splitLines(diff)
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no ---/+++ header and hunk in %q", diff)
	}
	var out []string
	pos := 0      // a[:pos] is consumed
	lastEnd := -1 // old index after the previous hunk's last change
	for k := 2; k < len(lines); {
		var oldStart, oldCount, newStart, newCount int
		if err := parseHunkHeader(lines[k], &oldStart, &oldCount, &newStart, &newCount); err != nil {
			return "", err
		}
		k++
		s := oldStart - 1 // 0-based start of the old range
		if oldCount == 0 {
			s = oldStart
		}
		if s < pos || s > len(a) {
			return "", fmt.Errorf("hunk %q out of order or past the end", lines[k-1])
		}
		out = append(out, a[pos:s]...)
		pos = s
		if t := newStart - 1; newCount == 0 && newStart != len(out) || newCount > 0 && t != len(out) {
			return "", fmt.Errorf("hunk %q: new side starts at line %d", lines[k-1], len(out)+1)
		}

		gotOld, gotNew := 0, 0
		run, firstChange, lastChange := 0, -1, -1 // context run length; old indexes of changes
		for gotOld < oldCount || gotNew < newCount {
			if k == len(lines) || len(lines[k]) < 2 {
				return "", fmt.Errorf("hunk body short or empty line at %d", k)
			}
			prefix, text := lines[k][0], lines[k][1:]
			k++
			if k < len(lines) && lines[k] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				k++
			} else if !strings.HasSuffix(text, "\n") {
				return "", fmt.Errorf("diff does not end with a newline")
			}
			switch prefix {
			case ' ', '-':
				if pos >= len(a) || a[pos] != text {
					return "", fmt.Errorf("old line %d is not %q", pos+1, text)
				}
				pos++
				gotOld++
				if prefix == ' ' {
					out = append(out, text)
					gotNew++
					run++
					continue
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				return "", fmt.Errorf("bad hunk line %q", lines[k-1])
			}
			// A change, at old index at: check the context run before it.
			at := pos
			if prefix == '-' {
				at--
			}
			if firstChange < 0 {
				firstChange = at
				if run != min(context, at) {
					return "", fmt.Errorf("leading context %d, want %d", run, min(context, at))
				}
				if lastEnd >= 0 && firstChange-lastEnd <= 2*context {
					return "", fmt.Errorf("hunks %d lines apart should be merged", firstChange-lastEnd)
				}
			} else if run > 2*context {
				return "", fmt.Errorf("changes %d lines apart in one hunk", run)
			}
			run = 0
			lastChange = pos
		}
		if firstChange < 0 {
			return "", fmt.Errorf("hunk without a change")
		}
		if gotOld != oldCount || gotNew != newCount {
			return "", fmt.Errorf("hunk counts %d,%d, header %d,%d", gotOld, gotNew, oldCount, newCount)
		}
		if run != min(context, len(a)-lastChange) {
			return "", fmt.Errorf("trailing context %d, want %d", run, min(context, len(a)-lastChange))
		}
		lastEnd = lastChange
	}
	out = append(out, a[pos:]...)
	for _, l := range out[:max(len(out)-1, 0)] {
		if !strings.HasSuffix(l, "\n") {
			return "", fmt.Errorf("line %q without a newline before the end", l)
		}
	}
	return strings.Join(out, ""), nil
}

// parseHunkHeader parses "@@ -a[,b] +c[,d] @@\n", rejecting an explicit
// count of 1 (diff omits it).
func parseHunkHeader(h string, oldStart, oldCount, newStart, newCount *int) error {
	f := strings.Fields(h)
	if len(f) != 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasSuffix(h, " @@\n") ||
		!strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return fmt.Errorf("bad hunk header %q", h)
	}
	if err := parseRange(f[1][1:], oldStart, oldCount); err != nil {
		return fmt.Errorf("hunk header %q: %w", h, err)
	}
	if err := parseRange(f[2][1:], newStart, newCount); err != nil {
		return fmt.Errorf("hunk header %q: %w", h, err)
	}
	return nil
}

func parseRange(r string, start, count *int) error {
	s, c, hasCount := strings.Cut(r, ",")
	var err error
	if *start, err = strconv.Atoi(s); err != nil || *start < 0 {
		return fmt.Errorf("bad range start %q", r)
	}
	*count = 1
	if hasCount {
		if *count, err = strconv.Atoi(c); err != nil || *count < 0 || *count == 1 {
			return fmt.Errorf("bad range count %q", r)
		}
	}
	if *count > 0 && *start == 0 {
		return fmt.Errorf("range %q starts at line 0", r)
	}
	return nil
}
