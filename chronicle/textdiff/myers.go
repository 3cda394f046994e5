package textdiff

// limits bound the work of one diff. Beyond them the result is still a
// correct edit script, but no longer a minimal one.
type limits struct {
	// maxCost is the edit cost at which one middle-snake search stops and
	// splits its region at the furthest point either direction reached.
	maxCost int
	// budget is the work allowed for the whole diff, counted in diagonal
	// steps and line comparisons. When it runs out, every region not yet
	// compared is reported as deleted and inserted whole.
	budget int
}

// defaultLimits returns the limits for n lines against m. As in GNU diff,
// a search gives up at a cost of about sqrt(n+m), and not below 4096. The
// budget, 2^25 steps plus 16 per line (a few tenths of a second), is the
// hard bound; it lets a shortest script be found for files that differ in
// some thousands of lines.
func defaultLimits(n, m int) limits {
	c := 4096
	for c*c < n+m {
		c *= 2
	}
	return limits{maxCost: c, budget: 1<<25 + 16*(n+m)}
}

// differ is the state of one comparison: Myers' O(ND) algorithm, refined
// to linear space by searching from both ends for the middle snake and
// recursing on either side of it ("An O(ND) Difference Algorithm and Its
// Variations", Algorithmica 1(2), 1986, section 4b). Its memory is
// linear: the lines' ids and two vectors indexed by diagonal.
type differ struct {
	x, y       []int32 // ids of the lines taking part in the search
	xi, yi     []int   // index in the whole file of each x, y
	delA, insB []bool  // the result, over the whole files
	fd, bd     []int   // per diagonal k (at k+off): furthest x forward, least x backward
	off        int
	maxCost    int
	budget     int
}

// newDiffer returns a differ of x against y, whose lines are xi and yi of
// the whole files, writing its result to delA and insB.
func newDiffer(x, y []int32, xi, yi []int, delA, insB []bool, lim limits) *differ {
	n := len(x) + len(y) + 3
	return &differ{
		x: x, y: y, xi: xi, yi: yi, delA: delA, insB: insB,
		fd: make([]int, n), bd: make([]int, n), off: len(y) + 1,
		maxCost: lim.maxCost, budget: lim.budget,
	}
}

// compare marks the changed lines of x[x0:x1] against y[y0:y1].
func (d *differ) compare(x0, x1, y0, y1 int) {
	for {
		start := x0
		for x0 < x1 && y0 < y1 && d.x[x0] == d.y[y0] {
			x0++
			y0++
		}
		end := x1
		for x1 > x0 && y1 > y0 && d.x[x1-1] == d.y[y1-1] {
			x1--
			y1--
		}
		d.budget -= x0 - start + end - x1
		if x0 == x1 || y0 == y1 || d.budget <= 0 {
			d.mark(x0, x1, y0, y1)
			return
		}
		xm, ym, ok := d.split(x0, x1, y0, y1)
		if !ok {
			d.mark(x0, x1, y0, y1)
			return
		}
		// Recurse on the lower half and loop on the upper one, so the
		// stack grows with the depth of one side only.
		d.compare(x0, xm, y0, ym)
		x0, y0 = xm, ym
	}
}

// mark reports x[x0:x1] deleted and y[y0:y1] inserted.
func (d *differ) mark(x0, x1, y0, y1 int) {
	for _, i := range d.xi[x0:x1] {
		d.delA[i] = true
	}
	for _, j := range d.yi[y0:y1] {
		d.insB[j] = true
	}
}

// split returns a point (xm, ym) strictly between (x0, y0) and (x1, y1)
// through which a shortest edit script passes, or, once the search costs
// more than maxCost or the budget runs out, the furthest point reached. It
// expects x[x0] != y[y0] and x[x1-1] != y[y1-1]. ok is false if no useful
// point was found; the caller then marks the whole region changed.
func (d *differ) split(x0, x1, y0, y1 int) (xm, ym int, ok bool) {
	x, y, fd, bd, off := d.x, d.y, d.fd, d.bd, d.off
	kmin, kmax := x0-y1, x1-y0 // the diagonals k = x-y that cross the region
	kf, kb := x0-y0, x1-y1     // where the forward and backward searches start
	odd := (kb-kf)&1 != 0
	fmin, fmax, bmin, bmax := kf, kf, kb, kb
	fd[kf+off], bd[kb+off] = x0, x1
	const far = int(^uint(0) >> 1)

	for c := 1; ; c++ {
		// Forward: one more edit on every other diagonal, then the snake.
		// Sentinels just outside the range make the max pick the inside.
		if fmin > kmin {
			fmin--
			fd[fmin-1+off] = -1
		} else {
			fmin++
		}
		if fmax < kmax {
			fmax++
			fd[fmax+1+off] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			px := fd[k-1+off] + 1 // a deletion from diagonal k-1
			if ins := fd[k+1+off]; ins > px {
				px = ins // an insertion from diagonal k+1
			}
			py := px - k
			sx := px
			for px < x1 && py < y1 && x[px] == y[py] {
				px++
				py++
			}
			d.budget -= 1 + px - sx
			fd[k+off] = px
			if odd && bmin <= k && k <= bmax && bd[k+off] <= px {
				return inside(x0, x1, y0, y1, px, py)
			}
		}

		// Backward, mirrored.
		if bmin > kmin {
			bmin--
			bd[bmin-1+off] = far
		} else {
			bmin++
		}
		if bmax < kmax {
			bmax++
			bd[bmax+1+off] = far
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			px := bd[k+1+off] - 1 // a deletion, met from diagonal k+1
			if ins := bd[k-1+off]; ins < px {
				px = ins // an insertion, met from diagonal k-1
			}
			py := px - k
			sx := px
			for px > x0 && py > y0 && x[px-1] == y[py-1] {
				px--
				py--
			}
			d.budget -= 1 + sx - px
			bd[k+off] = px
			if !odd && fmin <= k && k <= fmax && px <= fd[k+off] {
				return inside(x0, x1, y0, y1, px, py)
			}
		}

		if c < d.maxCost && d.budget > 0 {
			continue
		}
		// Too expensive: give up minimality here and split at whichever
		// search made more progress, clamped into the region.
		fbest, fx := -1, 0
		for k := fmax; k >= fmin; k -= 2 {
			px := min(fd[k+off], x1)
			if px-k > y1 {
				px = y1 + k
			}
			if s := 2*px - k; s > fbest {
				fbest, fx = s, px
			}
		}
		bbest, bx := far, 0
		for k := bmax; k >= bmin; k -= 2 {
			px := max(bd[k+off], x0)
			if px-k < y0 {
				px = y0 + k
			}
			if s := 2*px - k; s < bbest {
				bbest, bx = s, px
			}
		}
		if x1+y1-bbest < fbest-(x0+y0) {
			return inside(x0, x1, y0, y1, fx, fbest-fx)
		}
		return inside(x0, x1, y0, y1, bx, bbest-bx)
	}
}

// inside returns (xm, ym) with ok true if it lies in the region and splits
// it into two smaller ones, so that the recursion always terminates.
func inside(x0, x1, y0, y1, xm, ym int) (int, int, bool) {
	ok := x0 <= xm && xm <= x1 && y0 <= ym && ym <= y1 &&
		x0+y0 < xm+ym && xm+ym < x1+y1
	return xm, ym, ok
}
