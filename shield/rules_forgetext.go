package shield

import "strings"

// Text a forge client publishes (rules 10): the title and body of a pull
// or merge request, an issue, a comment or a release that `gh` or `glab`
// creates or edits are read by reviewers and review bots. The default
// policy allows proposing a pull request (check-and-inspect), so tier 1
// reads what it says: text addressed to an AI reader that directs it
// (addressedIn) escalates, as in a commit message.

// forgeTextFlags are the flags whose value a forge publishes as text.
var forgeTextFlags = map[string]bool{"--title": true, "-t": true, "--body": true, "-b": true, "--description": true,
	"--message": true, "-m": true, "--notes": true, "-n": true}

// forgeText is `prompt-injection:addressed` (escalate) for text gh or
// glab publishes.
func (s *Shield) forgeText(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "gh" && r.Name != "glab" || len(r.Argv) < 3 {
			continue
		}
		for k := 2; k < len(r.Argv); k++ {
			w := r.Argv[k]
			val := ""
			if name, v, ok := strings.Cut(w, "="); ok && forgeTextFlags[name] {
				val = v
			} else if forgeTextFlags[w] && k+1 < len(r.Argv) {
				val = r.Argv[k+1]
			}
			if val == "" {
				continue
			}
			val = clipRaw(val, maxTextJudged)
			if m, ok := addressedIn(val); ok {
				j.escalate("prompt-injection:addressed", "%s %s publishes text that addresses an AI reader and directs it (%q)", r.Name, r.Argv[1], clipText(m, 80))
				return
			}
		}
	}
}
