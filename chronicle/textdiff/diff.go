package textdiff

import "strings"

// splitLines splits s after every '\n'. Each line keeps its newline, so the
// last one lacks it exactly when s does not end with one; joining the lines
// gives s back. The lines share s's memory.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	if s[len(s)-1] != '\n' {
		n++
	}
	lines := make([]string, 0, n)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// diffLines compares a with b and returns, for each line of a, whether it
// is deleted and, for each line of b, whether it is inserted. The lines
// left unmarked in a, in order, equal those left unmarked in b.
func diffLines(a, b []string, lim limits) (delA, insB []bool) {
	delA, insB = make([]bool, len(a)), make([]bool, len(b))

	// A common head and tail are never part of the shortest script; most
	// edits leave most of a file there.
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA--
		hiB--
	}

	// Number the distinct lines, so that the search compares integers.
	// The lines of a get ids below nA, so "id < nA" means "found in a".
	t := newInterner(hiA - lo + hiB - lo)
	idA, idB := make([]int32, hiA-lo), make([]int32, hiB-lo)
	for i := range idA {
		idA[i] = t.id(a[lo+i])
	}
	nA := int32(len(t.text))
	posA := make([]int, nA) // where in idA each line is last found
	for i, id := range idA {
		posA[id] = i
	}
	// Most lines of b follow the same line in a as the line before them
	// did: trying that line first spares most lookups in the table.
	next := 0
	for j := range idB {
		if next < len(idA) && a[lo+next] == b[lo+j] {
			idB[j] = idA[next]
			next++
			continue
		}
		idB[j] = t.id(b[lo+j])
		if idB[j] < nA {
			next = posA[idB[j]] + 1
		}
	}
	inB := make([]bool, len(t.text))
	for _, id := range idB {
		inB[id] = true
	}

	// A line found in one file only can never be matched: it is marked
	// changed now and left out of the search. That keeps the script
	// minimal, makes wholly rewritten files cheap, and, since GNU diff
	// does the same, leads to the shortest script GNU diff would choose.
	x, xi := make([]int32, 0, len(idA)), make([]int, 0, len(idA))
	for i, id := range idA {
		if inB[id] {
			x, xi = append(x, id), append(xi, lo+i)
		} else {
			delA[lo+i] = true
		}
	}
	y, yi := make([]int32, 0, len(idB)), make([]int, 0, len(idB))
	for j, id := range idB {
		if id < nA {
			y, yi = append(y, id), append(yi, lo+j)
		} else {
			insB[lo+j] = true
		}
	}
	newDiffer(x, y, xi, yi, delA, insB, lim).compare(0, len(x), 0, len(y))

	slide(a, delA, insB)
	slide(b, insB, delA)
	return delA, insB
}

// change is one changed block: old lines [a, a+del) replaced by new lines
// [b, b+ins). Between two changes, and before the first and after the
// last, the files have the same lines.
type change struct {
	a, b, del, ins int
}

// compute splits both contents into lines and returns them with the
// changed blocks, in order.
func compute(oldContent, newContent []byte, lim *limits) (a, b []string, cs []change) {
	a, b = splitLines(string(oldContent)), splitLines(string(newContent))
	l := defaultLimits(len(a), len(b))
	if lim != nil {
		l = *lim
	}
	delA, insB := diffLines(a, b, l)

	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && !delA[i] && !insB[j] {
			i++
			j++
			continue
		}
		c := change{a: i, b: j}
		for i < len(a) && delA[i] {
			i++
		}
		for j < len(b) && insB[j] {
			j++
		}
		c.del, c.ins = i-c.a, j-c.b
		if c.del == 0 && c.ins == 0 {
			// One file has unchanged lines left and the other none: the
			// differ broke its invariant. Stop rather than loop forever.
			panic("textdiff: unchanged lines do not pair up")
		}
		cs = append(cs, c)
	}
	return a, b, cs
}
