package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/fixtures/shield/holdout"
	"github.com/opx-dev/opx/fixtures/shield/holdout10"
	"github.com/opx-dev/opx/fixtures/shield/holdout11"
	"github.com/opx-dev/opx/fixtures/shield/holdout12"
	"github.com/opx-dev/opx/fixtures/shield/holdout13"
	"github.com/opx-dev/opx/fixtures/shield/holdout14"
	"github.com/opx-dev/opx/fixtures/shield/holdout15"
	"github.com/opx-dev/opx/fixtures/shield/holdout16"
	"github.com/opx-dev/opx/fixtures/shield/holdout17"
	"github.com/opx-dev/opx/fixtures/shield/holdout18"
	"github.com/opx-dev/opx/fixtures/shield/holdout19"
	"github.com/opx-dev/opx/fixtures/shield/holdout2"
	"github.com/opx-dev/opx/fixtures/shield/holdout20"
	"github.com/opx-dev/opx/fixtures/shield/holdout21"
	"github.com/opx-dev/opx/fixtures/shield/holdout22"
	"github.com/opx-dev/opx/fixtures/shield/holdout23"
	"github.com/opx-dev/opx/fixtures/shield/holdout24"
	"github.com/opx-dev/opx/fixtures/shield/holdout25"
	"github.com/opx-dev/opx/fixtures/shield/holdout26"
	"github.com/opx-dev/opx/fixtures/shield/holdout27"
	"github.com/opx-dev/opx/fixtures/shield/holdout28"
	"github.com/opx-dev/opx/fixtures/shield/holdout29"
	"github.com/opx-dev/opx/fixtures/shield/holdout3"
	"github.com/opx-dev/opx/fixtures/shield/holdout30"
	"github.com/opx-dev/opx/fixtures/shield/holdout31"
	"github.com/opx-dev/opx/fixtures/shield/holdout32"
	"github.com/opx-dev/opx/fixtures/shield/holdout33"
	"github.com/opx-dev/opx/fixtures/shield/holdout34"
	"github.com/opx-dev/opx/fixtures/shield/holdout35"
	"github.com/opx-dev/opx/fixtures/shield/holdout36"
	"github.com/opx-dev/opx/fixtures/shield/holdout37"
	"github.com/opx-dev/opx/fixtures/shield/holdout38"
	"github.com/opx-dev/opx/fixtures/shield/holdout39"
	"github.com/opx-dev/opx/fixtures/shield/holdout4"
	"github.com/opx-dev/opx/fixtures/shield/holdout40"
	"github.com/opx-dev/opx/fixtures/shield/holdout41"
	"github.com/opx-dev/opx/fixtures/shield/holdout42"
	"github.com/opx-dev/opx/fixtures/shield/holdout43"
	"github.com/opx-dev/opx/fixtures/shield/holdout44"
	"github.com/opx-dev/opx/fixtures/shield/holdout45"
	"github.com/opx-dev/opx/fixtures/shield/holdout46"
	"github.com/opx-dev/opx/fixtures/shield/holdout47"
	"github.com/opx-dev/opx/fixtures/shield/holdout48"
	"github.com/opx-dev/opx/fixtures/shield/holdout49"
	"github.com/opx-dev/opx/fixtures/shield/holdout5"
	"github.com/opx-dev/opx/fixtures/shield/holdout50"
	"github.com/opx-dev/opx/fixtures/shield/holdout51"
	"github.com/opx-dev/opx/fixtures/shield/holdout52"
	"github.com/opx-dev/opx/fixtures/shield/holdout53"
	"github.com/opx-dev/opx/fixtures/shield/holdout54"
	"github.com/opx-dev/opx/fixtures/shield/holdout55"
	"github.com/opx-dev/opx/fixtures/shield/holdout56"
	"github.com/opx-dev/opx/fixtures/shield/holdout57"
	"github.com/opx-dev/opx/fixtures/shield/holdout58"
	"github.com/opx-dev/opx/fixtures/shield/holdout59"
	"github.com/opx-dev/opx/fixtures/shield/holdout6"
	"github.com/opx-dev/opx/fixtures/shield/holdout7"
	"github.com/opx-dev/opx/fixtures/shield/holdout8"
	"github.com/opx-dev/opx/fixtures/shield/holdout9"
	"github.com/opx-dev/opx/fixtures/shield/training"
	"github.com/opx-dev/opx/shield/score"
)

// The learned scorer's weights (shield/score/weights.tsv) are trained on
// the corpora Shield may be fixed against: the training files and the
// holdouts already measured (spent). A holdout not yet measured is never
// among them. TestShieldScoreWeights retrains and fails when the
// embedded table is not what the corpora train; OPX_SCORE_UPDATE=1
// writes it, and OPX_SCORE_LOSO=1 prints each corpus's figures with a
// model trained on all the others (leave one corpus out): the scorer's
// estimate on a stack it has not seen.

// scoreCorpus is one corpus the scorer trains on.
type scoreCorpus struct {
	name, workspace string
	cases           []unseenCase
}

// scoreCorpora loads the corpora the weights are trained on.
func scoreCorpora(t *testing.T) []scoreCorpus {
	t.Helper()
	ws := func(name string) string { return filepath.Join("..", "fixtures", "shield", name, "workspace") }
	must := func(cs []unseenCase, err error) []unseenCase {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	conv := func(cs []training.Case, err error) ([]unseenCase, error) { return asUnseen(cs), err }
	var out []scoreCorpus
	out = append(out,
		scoreCorpus{"training", ws("training"), must(conv(training.Load()))},
		scoreCorpus{"probes", ws("training"), must(conv(training.LoadProbes()))},
		scoreCorpus{"probes3", ws("training"), must(conv(training.LoadProbes3()))},
		scoreCorpus{"classes", ws("training"), must(conv(training.LoadClasses()))},
	)
	// The holdouts measured so far (spent); every holdout package's Case is
	// the same type (casefile's), so one loader signature serves them all.
	for _, h := range []struct {
		name string
		load func() ([]holdout.Case, error)
	}{
		{"holdout", holdout.Load}, {"holdout2", holdout2.Load}, {"holdout3", holdout3.Load}, {"holdout4", holdout4.Load},
		{"holdout5", holdout5.Load}, {"holdout6", holdout6.Load}, {"holdout7", holdout7.Load}, {"holdout8", holdout8.Load},
		{"holdout9", holdout9.Load}, {"holdout10", holdout10.Load}, {"holdout11", holdout11.Load}, {"holdout12", holdout12.Load}, {"holdout13", holdout13.Load}, {"holdout14", holdout14.Load}, {"holdout15", holdout15.Load}, {"holdout16", holdout16.Load}, {"holdout17", holdout17.Load}, {"holdout18", holdout18.Load}, {"holdout19", holdout19.Load}, {"holdout20", holdout20.Load}, {"holdout21", holdout21.Load},
		{"holdout22", holdout22.Load}, {"holdout23", holdout23.Load}, {"holdout24", holdout24.Load}, {"holdout25", holdout25.Load},
		{"holdout26", holdout26.Load}, {"holdout27", holdout27.Load}, {"holdout28", holdout28.Load}, {"holdout29", holdout29.Load},
		{"holdout30", holdout30.Load}, {"holdout31", holdout31.Load},
		{"holdout32", holdout32.Load}, {"holdout33", holdout33.Load},
		{"holdout34", holdout34.Load}, {"holdout35", holdout35.Load},
		{"holdout36", holdout36.Load}, {"holdout37", holdout37.Load},
		{"holdout38", holdout38.Load}, {"holdout39", holdout39.Load},
		{"holdout40", holdout40.Load}, {"holdout41", holdout41.Load},
		{"holdout42", holdout42.Load}, {"holdout43", holdout43.Load}, {"holdout44", holdout44.Load}, {"holdout45", holdout45.Load},
		{"holdout46", holdout46.Load}, {"holdout47", holdout47.Load}, {"holdout48", holdout48.Load}, {"holdout49", holdout49.Load},
		{"holdout50", holdout50.Load}, {"holdout51", holdout51.Load}, {"holdout52", holdout52.Load}, {"holdout53", holdout53.Load}, {"holdout54", holdout54.Load},
		{"holdout55", holdout55.Load}, {"holdout56", holdout56.Load}, {"holdout57", holdout57.Load}, {"holdout58", holdout58.Load}, {"holdout59", holdout59.Load},
	} {
		cs, err := h.load()
		out = append(out, scoreCorpus{h.name, ws(h.name), must(asUnseen(cs), err)})
	}
	return out
}

// scoredCase is a case as opx shield eval --features judged it: the
// decision of the rules alone (the scorer's verdict left out) and the
// scorer's features.
type scoredCase struct {
	c        unseenCase
	rules    string // allow, escalate or block without learned:risk
	features []string
}

// scoreEval judges cases in a copy of workspace with --features.
func scoreEval(t *testing.T, workspace string, cases []unseenCase) []scoredCase {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	copyTree(t, workspace, ws)
	t.Setenv("HOME", "/home/dev")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv(cli.EnvLedger, "")
	var in strings.Builder
	for _, c := range cases {
		line, err := json.Marshal(map[string]any{"id": c.ID, "tool": c.Tool, "arguments": c.Arguments, "session": c.Session})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	r := runIn(t, strings.NewReader(in.String()), "shield", "eval", "--workspace", ws, "--features")
	r.wantCode(t, cli.ExitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d verdicts for %d cases", len(lines), len(cases))
	}
	out := make([]scoredCase, len(cases))
	for i, c := range cases {
		var e struct {
			ID       string
			Verdicts []struct{ Decision, Rule string }
			Features []string
		}
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil || e.ID != c.ID {
			t.Fatalf("verdict %d: %v: %s", i, err, lines[i])
		}
		d := "allow"
		for _, v := range e.Verdicts {
			switch {
			case v.Rule == "learned:risk":
			case v.Decision == "block":
				d = "block"
			case v.Decision == "escalate" && d == "allow":
				d = "escalate"
			}
		}
		out[i] = scoredCase{c: c, rules: d, features: e.Features}
	}
	return out
}

// scoreData judges every corpus the weights are trained on.
func scoreData(t *testing.T) map[string][]scoredCase {
	t.Helper()
	data := map[string][]scoredCase{}
	for _, sc := range scoreCorpora(t) {
		data[sc.name] = scoreEval(t, sc.workspace, sc.cases)
	}
	return data
}

// scoreExamples are the labelled cases the scorer judges (score.Applies)
// of every corpus but leaveOut.
func scoreExamples(data map[string][]scoredCase, leaveOut string) []score.Example {
	var ex []score.Example
	names := make([]string, 0, len(data))
	for n := range data {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == leaveOut {
			continue
		}
		for _, s := range data[n] {
			if !score.Applies(s.c.Tool) {
				continue
			}
			switch s.c.Expect {
			case "not-allow", "block":
				ex = append(ex, score.Example{Features: s.features, Attack: true, Corpus: n})
			case "allow":
				ex = append(ex, score.Example{Features: s.features, Corpus: n})
			}
		}
	}
	return ex
}

// TestShieldScoreWeights trains the scorer on the corpora and checks the
// embedded weights are what they train.
func TestShieldScoreWeights(t *testing.T) {
	data := scoreData(t)
	opts := scoreOptions(t)
	m := score.Train(scoreExamples(data, ""), opts)
	if os.Getenv("OPX_SCORE_LOSO") == "1" {
		scoreLOSO(t, data, opts)
	}
	if os.Getenv("OPX_SCORE_UPDATE") == "1" {
		f, err := os.Create(filepath.Join("..", "shield", "score", "weights.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		err = m.Write(f, "Trained by TestShieldScoreWeights (cli/cmd_shield_score_test.go) on the Shield corpora;",
			"do not edit: OPX_SCORE_UPDATE=1 go test ./cli -run TestShieldScoreWeights rewrites it.")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	// The embedded table is what the corpora train, each weight within
	// rounding of another machine's floating point.
	d := score.Default()
	diff := func(a, b float64) bool { return a-b > 2e-4 || b-a > 2e-4 }
	var bad []string
	if diff(d.Bias, m.Bias) || d.Threshold != m.Threshold {
		bad = append(bad, fmt.Sprintf("bias %v (trained %v), threshold %v (trained %v)", d.Bias, m.Bias, d.Threshold, m.Threshold))
	}
	for f, w := range m.Weights {
		if diff(d.Weights[f], w) {
			bad = append(bad, fmt.Sprintf("%s: embedded %v, trained %v", f, d.Weights[f], w))
		}
	}
	for f, w := range d.Weights {
		if _, ok := m.Weights[f]; !ok && diff(w, 0) {
			bad = append(bad, fmt.Sprintf("%s: embedded %v, trained 0", f, w))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("shield/score/weights.tsv is not what the corpora train (%d differ; OPX_SCORE_UPDATE=1 rewrites it):\n%s",
			len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
}

// scoreLOSO prints, for each corpus, the figures of the rules alone and
// of the rules with a scorer trained on every other corpus (leave one
// corpus out), at a few thresholds: attacks allowed, benign escalated.
func scoreLOSO(t *testing.T, data map[string][]scoredCase, opts score.Options) {
	names := make([]string, 0, len(data))
	for n := range data {
		names = append(names, n)
	}
	sort.Strings(names)
	thresholds := []float64{0.4, 0.5, 0.6, 0.7, 0.8}
	type tot struct{ att, attAllowed, ben, benEsc int }
	sum := make([]tot, len(thresholds)+1)
	for _, n := range names {
		m := score.Train(scoreExamples(data, n), opts)
		row := make([]tot, len(thresholds)+1)
		for _, s := range data[n] {
			p, _ := m.Score(s.features, 0)
			for k := 0; k <= len(thresholds); k++ {
				d := s.rules
				if k > 0 && d == "allow" && score.Applies(s.c.Tool) && p >= thresholds[k-1] {
					d = "escalate"
				}
				switch s.c.Expect {
				case "not-allow", "block":
					row[k].att++
					if d == "allow" {
						row[k].attAllowed++
					}
				case "allow":
					row[k].ben++
					if d == "escalate" {
						row[k].benEsc++
					}
				}
			}
		}
		for k := range row {
			sum[k].att += row[k].att
			sum[k].attAllowed += row[k].attAllowed
			sum[k].ben += row[k].ben
			sum[k].benEsc += row[k].benEsc
		}
		line := func(name string, row []tot) string {
			var b strings.Builder
			fmt.Fprintf(&b, "%-10s rules alone %4d/%4d attacks allowed, %4d/%4d benign escalated", name, row[0].attAllowed, row[0].att, row[0].benEsc, row[0].ben)
			for k, th := range thresholds {
				fmt.Fprintf(&b, " | %.1f: %4d %4d", th, row[k+1].attAllowed, row[k+1].benEsc)
			}
			return b.String()
		}
		t.Log(line(n, row))
		if n == names[len(names)-1] {
			t.Log(line("all", sum))
		}
	}
}

// scoreOptions are score.DefaultOptions, changed by OPX_SCORE_OPTS
// ("l2=0.001,it=300,minc=3,mincount=4,rate=0.1") for a study.
func scoreOptions(t *testing.T) score.Options {
	o := score.DefaultOptions
	for _, kv := range strings.Split(os.Getenv("OPX_SCORE_OPTS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "l2":
			_, err = fmt.Sscan(v, &o.L2)
		case "it":
			_, err = fmt.Sscan(v, &o.Iterations)
		case "minc":
			_, err = fmt.Sscan(v, &o.MinCorpora)
		case "mincount":
			_, err = fmt.Sscan(v, &o.MinCount)
		case "rate":
			_, err = fmt.Sscan(v, &o.Rate)
		default:
			err = fmt.Errorf("unknown option %q", k)
		}
		if err != nil {
			t.Fatalf("OPX_SCORE_OPTS %s: %v", kv, err)
		}
	}
	return o
}
