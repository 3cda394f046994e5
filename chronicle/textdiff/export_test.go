package textdiff

// LinesLimited is Lines with the search cut off after maxCost edits per
// middle snake and budget steps in all, so that tests can drive the
// fallbacks on small inputs.
func LinesLimited(oldContent, newContent []byte, maxCost, budget int) []Edit {
	return linesLimited(oldContent, newContent, &limits{maxCost: maxCost, budget: budget})
}
