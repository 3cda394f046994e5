package shield

import (
	"fmt"
	"strings"

	"github.com/opx-dev/opx/shield/score"
)

// The learned scorer (shield/score) asks about edits tier 1's rules
// allowed: it runs only when no rule found anything, and may only
// escalate. Its verdict is tier 1's, rule "learned:risk", to be answered
// by tier 2 (a model) or, with none configured, a human; the reason names
// the features that weighed most.

// learned returns the scorer's escalation of a, if its score reaches the
// model's threshold.
func (s *Shield) learned(a *Action, f *Facts) (Verdict, bool) {
	if !score.Applies(a.Tool) {
		return Verdict{}, false
	}
	m := score.Default()
	p, top := m.ScoreInput(s.scoreInput(a, f), 5)
	if p < m.Threshold {
		return Verdict{}, false
	}
	names := make([]string, len(top))
	for i, c := range top {
		names[i] = c.Feature
	}
	return Verdict{Escalate, 2, "learned:risk", clip(fmt.Sprintf("the learned scorer gives %.2f (asks from %.2f), most from %s",
		p, m.Threshold, strings.Join(names, ", ")), 300)}, true
}

// Features are the learned scorer's features of a (score.Features), as
// Evaluate computes them: for `opx shield eval --features` and training.
func (s *Shield) Features(a Action) []string {
	f := s.facts(&a)
	return score.Features(s.scoreInput(&a, &f))
}

// scoreInput fills the scorer's Input from the facts, texts normalized as
// the rules read them, paths relative to the workspace ("~/…" the home).
func (s *Shield) scoreInput(a *Action, f *Facts) score.Input {
	f, _ = normalizedFacts(f)
	in := score.Input{Tool: a.Tool}
	removed := map[string]string{}
	for _, t := range f.Removed {
		removed[t.Source] += t.Body + "\n"
	}
	for _, t := range f.Texts {
		if p, ok := strings.CutPrefix(t.Source, "content:"); ok {
			in.Changes = append(in.Changes, score.Change{Path: s.relative(p), Added: t.Body, Removed: removed[t.Source]})
			continue
		}
		in.Texts = append(in.Texts, score.Text{Source: t.Source, Body: t.Body})
	}
	for _, r := range f.Runs {
		name := r.Name
		if name == "" && len(r.Argv) > 0 {
			name = r.Argv[0]
		}
		argv := []string{name}
		if len(r.Argv) > 1 {
			argv = append(argv, r.Argv[1:]...)
		}
		in.Runs = append(in.Runs, argv)
	}
	for _, r := range f.Requests {
		in.Requests = append(in.Requests, score.Request{Method: r.Method, Data: r.Data || len(r.Files) > 0, Query: r.Query != ""})
	}
	for _, r := range f.Reads {
		in.Reads = append(in.Reads, s.relative(r.Path))
	}
	for _, r := range f.Writes {
		in.Writes = append(in.Writes, s.relative(r.Path))
	}
	for _, r := range f.Deletes {
		in.Deletes = append(in.Deletes, s.relative(r.Path))
	}
	for _, x := range f.Supply {
		if x.Error != "" {
			in.Supply = append(in.Supply, "error")
			continue
		}
		in.Supply = append(in.Supply, x.Kind)
	}
	for _, x := range f.Execs {
		in.Execs = append(in.Execs, x.Runner)
	}
	return in
}

// relative is p as the scorer reads paths: relative to the workspace,
// "~/…" under the home, else absolute.
func (s *Shield) relative(p string) string {
	if rel, ok := strings.CutPrefix(p, s.cfg.Workspace+"/"); ok && s.cfg.Workspace != "" {
		return rel
	}
	if rel, ok := strings.CutPrefix(p, s.cfg.Home+"/"); ok && s.cfg.Home != "" {
		return "~/" + rel
	}
	return p
}
