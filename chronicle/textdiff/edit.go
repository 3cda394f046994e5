package textdiff

import "fmt"

// Op says what an Edit does with its line.
type Op uint8

const (
	// Equal is a line found in both files.
	Equal Op = iota
	// Delete is a line of the old file only.
	Delete
	// Insert is a line of the new file only.
	Insert
)

// String returns "equal", "delete" or "insert".
func (op Op) String() string {
	switch op {
	case Equal:
		return "equal"
	case Delete:
		return "delete"
	case Insert:
		return "insert"
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// Edit is one line of an edit script.
type Edit struct {
	Op Op
	// OldLine is the line's 1-based number in the old file, or 0 for an
	// Insert.
	OldLine int
	// NewLine is the line's 1-based number in the new file, or 0 for a
	// Delete.
	NewLine int
	// Text is the line with its "\n"; only the last line of a file that
	// does not end in a newline lacks it. A "\r" before the "\n" is part
	// of the line.
	Text string
}

// Lines returns the edit script that turns oldContent into newContent, one
// Edit per line of either file, in file order; within each changed block
// the deletions come before the insertions, as diff prints them. The Text
// of the Equal and Delete edits joined gives oldContent back, and that of
// the Equal and Insert edits newContent. The script is a shortest one
// unless the inputs are pathological (see the package documentation).
//
// Lines splits at '\n' whatever the content is; Unified is the one that
// refuses binary content.
func Lines(oldContent, newContent []byte) []Edit {
	return linesLimited(oldContent, newContent, nil)
}

// linesLimited is Lines with the limits lim, or the default ones if nil.
func linesLimited(oldContent, newContent []byte, lim *limits) []Edit {
	a, b, cs := compute(oldContent, newContent, lim)
	n := len(a)
	for _, c := range cs {
		n += c.ins
	}
	edits := make([]Edit, 0, n)
	i, j := 0, 0
	equal := func(to int) {
		for ; i < to; i, j = i+1, j+1 {
			edits = append(edits, Edit{Op: Equal, OldLine: i + 1, NewLine: j + 1, Text: a[i]})
		}
	}
	for _, c := range cs {
		equal(c.a)
		for ; i < c.a+c.del; i++ {
			edits = append(edits, Edit{Op: Delete, OldLine: i + 1, Text: a[i]})
		}
		for ; j < c.b+c.ins; j++ {
			edits = append(edits, Edit{Op: Insert, NewLine: j + 1, Text: b[j]})
		}
	}
	equal(len(a))
	return edits
}
