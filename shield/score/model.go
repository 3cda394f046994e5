package score

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Model is a logistic model: a proposal's score is the logistic of Bias
// plus the weights of its features; at or over Threshold it escalates.
type Model struct {
	Bias      float64
	Threshold float64
	Weights   map[string]float64
}

// Contribution is one feature's part in a score.
type Contribution struct {
	Feature string
	Weight  float64
}

// ScoreInput is Score of in's features, without listing them.
func (m *Model) ScoreInput(in Input, top int) (float64, []Contribution) {
	fs := extract(in)
	var ws []Contribution
	for f := range fs {
		if w, ok := m.Weights[f]; ok {
			ws = append(ws, Contribution{f, w})
		}
	}
	// Summed in the features' order, as Score sums them: the same bits
	// whatever order the set gives (a replay re-derives the verdict).
	sort.Slice(ws, func(i, j int) bool { return ws[i].Feature < ws[j].Feature })
	z := m.Bias
	var cs []Contribution
	for _, c := range ws {
		z += c.Weight
		if c.Weight > 0 {
			cs = append(cs, c)
		}
	}
	return sigmoid(z), topOf(cs, top)
}

// Score returns the probability the model gives that features are an
// attack's, and the features that raised it most (at most top, heaviest
// first).
func (m *Model) Score(features []string, top int) (float64, []Contribution) {
	z := m.Bias
	var cs []Contribution
	for _, f := range features {
		if w, ok := m.Weights[f]; ok {
			z += w
			if w > 0 {
				cs = append(cs, Contribution{f, w})
			}
		}
	}
	return sigmoid(z), topOf(cs, top)
}

// topOf is cs heaviest first (ties by name), at most top.
func topOf(cs []Contribution, top int) []Contribution {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Weight != cs[j].Weight {
			return cs[i].Weight > cs[j].Weight
		}
		return cs[i].Feature < cs[j].Feature
	})
	if len(cs) > top {
		cs = cs[:top]
	}
	return cs
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

//go:embed weights.tsv
var weightsTSV string

var (
	defaultOnce  sync.Once
	defaultModel *Model
)

// Default is the model trained on the Shield corpora (weights.tsv). It
// panics if the embedded table does not parse: a build error, caught by
// the package's tests.
func Default() *Model {
	defaultOnce.Do(func() {
		m, err := Parse(strings.NewReader(weightsTSV))
		if err != nil {
			panic("shield/score: weights.tsv: " + err.Error())
		}
		defaultModel = m
	})
	return defaultModel
}

// Write writes m as a table: comment lines ("# …"), "bias\tB",
// "threshold\tT", then "w\tFEATURE\tWEIGHT" sorted by feature, every
// number with four decimals.
func (m *Model) Write(w io.Writer, comments ...string) error {
	bw := bufio.NewWriter(w)
	for _, c := range comments {
		fmt.Fprintf(bw, "# %s\n", c)
	}
	fmt.Fprintf(bw, "bias\t%.4f\nthreshold\t%.4f\n", m.Bias, m.Threshold)
	keys := make([]string, 0, len(m.Weights))
	for k := range m.Weights {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(bw, "w\t%s\t%.4f\n", k, m.Weights[k])
	}
	return bw.Flush()
}

// Parse reads a table Write wrote.
func Parse(r io.Reader) (*Model, error) {
	m := &Model{Weights: map[string]float64{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		num := func(s string) (float64, error) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("line %d: %q is not a number", n, s)
			}
			return v, nil
		}
		var err error
		switch {
		case len(f) == 2 && f[0] == "bias":
			m.Bias, err = num(f[1])
		case len(f) == 2 && f[0] == "threshold":
			m.Threshold, err = num(f[1])
		case len(f) == 3 && f[0] == "w":
			m.Weights[f[1]], err = num(f[2])
		default:
			err = fmt.Errorf("line %d: not bias, threshold or w: %q", n, clip(line, 80))
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.Threshold <= 0 || m.Threshold >= 1 {
		return nil, fmt.Errorf("threshold %v is not in (0, 1)", m.Threshold)
	}
	return m, nil
}

// Applies reports whether the scorer judges a tool's proposals: edits
// (edit_file), where what a change does is in the words it swaps. A leave-
// one-corpus-out study (cli/cmd_shield_score_test.go) found whole-file
// writes, deletes, moves and commands scored worse than the rules alone
// (more benign work asked than attacks caught), so they are not scored.
func Applies(tool string) bool { return tool == "edit_file" }

// Example is a proposal's features and whether it is an attack, from a
// corpus.
type Example struct {
	Features []string
	Attack   bool
	Corpus   string
}

// Options are Train's settings.
type Options struct {
	// MinCorpora: a feature is kept only when it occurs in at least this
	// many corpora (so a word of one stack carries no weight).
	MinCorpora int
	// MinCount: … and in at least this many examples.
	MinCount int
	// L2 is the regularization weight; Iterations and Rate the gradient
	// descent's.
	L2         float64
	Iterations int
	Rate       float64
	// Threshold is the model's escalation threshold.
	Threshold float64
}

// DefaultOptions are the settings weights.tsv is trained with.
var DefaultOptions = Options{MinCorpora: 3, MinCount: 4, L2: 0.001, Iterations: 300, Rate: 0.1, Threshold: 0.5}

// Train fits a model to examples, deterministically: the same examples
// (in any order) and options give the same weights. Classes are weighed
// equally whatever their sizes.
func Train(examples []Example, o Options) *Model {
	// The vocabulary: features in enough corpora and examples.
	corpora := map[string]map[string]bool{}
	count := map[string]int{}
	for _, e := range examples {
		for _, f := range e.Features {
			if corpora[f] == nil {
				corpora[f] = map[string]bool{}
			}
			corpora[f][e.Corpus] = true
			count[f]++
		}
	}
	var vocab []string
	for f, cs := range corpora {
		if len(cs) >= o.MinCorpora && count[f] >= o.MinCount {
			vocab = append(vocab, f)
		}
	}
	sort.Strings(vocab)
	index := make(map[string]int, len(vocab))
	for i, f := range vocab {
		index[f] = i
	}
	// Examples as index lists, in a canonical order (by features, then
	// label) so the sums below are taken in the same order every time.
	type row struct {
		x []int
		y float64
		w float64
	}
	var attacks, benign int
	for _, e := range examples {
		if e.Attack {
			attacks++
		} else {
			benign++
		}
	}
	rows := make([]row, 0, len(examples))
	for _, e := range examples {
		var x []int
		for _, f := range e.Features {
			if i, ok := index[f]; ok {
				x = append(x, i)
			}
		}
		sort.Ints(x)
		r := row{x: x}
		if e.Attack {
			r.y, r.w = 1, float64(len(examples))/(2*float64(max(attacks, 1)))
		} else {
			r.w = float64(len(examples)) / (2 * float64(max(benign, 1)))
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		for k := 0; k < len(a.x) && k < len(b.x); k++ {
			if a.x[k] != b.x[k] {
				return a.x[k] < b.x[k]
			}
		}
		if len(a.x) != len(b.x) {
			return len(a.x) < len(b.x)
		}
		return a.y < b.y
	})
	w := make([]float64, len(vocab))
	g := make([]float64, len(vocab))
	h := make([]float64, len(vocab))
	bias, hb := 0.0, 0.0
	n := float64(max(len(rows), 1))
	for it := 0; it < o.Iterations; it++ {
		for i := range g {
			g[i] = 0
		}
		gb := 0.0
		for _, r := range rows {
			z := bias
			for _, i := range r.x {
				z += w[i]
			}
			d := r.w * (sigmoid(z) - r.y)
			gb += d
			for _, i := range r.x {
				g[i] += d
			}
		}
		// AdaGrad: each weight's step shrinks with the gradients it has
		// had, so a rare feature learns as fast as a common one.
		gb /= n
		hb += gb * gb
		bias -= o.Rate * gb / math.Sqrt(hb+1e-12)
		for i := range w {
			gi := g[i]/n + o.L2*w[i]
			h[i] += gi * gi
			w[i] -= o.Rate * gi / math.Sqrt(h[i]+1e-12)
		}
	}
	m := &Model{Bias: round4(bias), Threshold: o.Threshold, Weights: make(map[string]float64, len(vocab))}
	for i, f := range vocab {
		if v := round4(w[i]); v != 0 {
			m.Weights[f] = v
		}
	}
	return m
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
