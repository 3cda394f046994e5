package textdiff

// slide moves each run of changed lines of one file, within the freedom
// that equal lines give, to the place GNU diff prints it: first as far up
// as it goes, merging with runs above; then as far down as it goes,
// merging with runs below; and finally back up to the lowest place where
// it faces a run of changes in the other file, so that a replaced block
// prints as one change rather than a deletion and an insertion apart.
//
// A run moves one line at a time, and only past a line equal to the one at
// its other end, so the lines left unchanged stay equal, pair for pair, to
// those of the other file, and the number of changes does not grow.
//
// changed belongs to lines; other is the other file's and is only read.
func slide(lines []string, changed, other []bool) {
	// The unchanged lines of both files pair up in order. Gap g is the
	// place before the g-th unchanged line (or after the last one); facing
	// reports whether the other file has changed lines in gap g.
	facing := []bool{false}
	for _, c := range other {
		if c {
			facing[len(facing)-1] = true
		} else {
			facing = append(facing, false)
		}
	}

	n := len(lines)
	i, g := 0, 0 // g counts the unchanged lines before i
	for {
		for i < n && !changed[i] {
			i++
			g++
		}
		if i == n {
			return
		}
		start := i // the run is [start, i), in gap g
		for i < n && changed[i] {
			i++
		}

		aligned := -1 // the lowest end of the run that faces a change
		for {
			size := i - start
			for start > 0 && lines[start-1] == lines[i-1] {
				start--
				i--
				changed[start], changed[i] = true, false
				g--
				for start > 0 && changed[start-1] {
					start--
				}
			}
			aligned = -1
			if facing[g] {
				aligned = i
			}
			for i < n && lines[start] == lines[i] {
				changed[start], changed[i] = false, true
				start++
				i++
				g++
				for i < n && changed[i] {
					i++
				}
				if facing[g] {
					aligned = i
				}
			}
			if i-start == size {
				break
			}
		}
		for aligned >= 0 && i > aligned {
			start--
			i--
			changed[start], changed[i] = true, false
			g--
		}
	}
}
