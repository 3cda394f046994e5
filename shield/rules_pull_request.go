package shield

import "strings"

// A pull request's code run on this machine (rules 15, session 20;
// docs/shield-rules.md "remote-code:pull-request"). Checking a pull
// request out is reading someone else's proposal (the default policy
// allows `gh pr checkout N`); running what it brings in the same line —
// its setup task, its tests, its install scripts — runs code nobody here
// reviewed yet, the "pwn request" of CI systems on a developer's
// machine. Asked (escalate); git and the text tools that only read are
// not runs.

// prCheckout reports whether r checks a pull or merge request out.
func prCheckout(r *Run) bool {
	a := r.Argv
	switch r.Name {
	case "gh":
		return len(a) > 2 && a[1] == "pr" && a[2] == "checkout" || len(a) > 2 && a[1] == "co"
	case "glab":
		return len(a) > 2 && a[1] == "mr" && a[2] == "checkout"
	case "git":
		for _, w := range a[1:] {
			if strings.Contains(w, "pull/") && strings.Contains(w, "/head") || strings.Contains(w, "merge-requests/") && strings.Contains(w, "/head") {
				return true
			}
		}
	}
	return false
}

// prRunReaders are the programs that run nothing of a checkout.
var prRunReaders = setOf("git", "gh", "glab", "cat", "less", "head", "tail", "grep", "rg", "ls", "tree", "diff", "wc", "find", "echo",
	"printf", "cd", "pwd", "true", "jq", "sed", "awk", "sort", "uniq", "cut", "stat", "file")

// pullRequestRun is `remote-code:pull-request` (escalate).
func (s *Shield) pullRequestRun(a *Action, f *Facts, j *judgement) {
	if a.Command == "" {
		return
	}
	checkout := ""
	for i := range f.Runs {
		r := &f.Runs[i]
		if checkout == "" {
			if prCheckout(r) {
				checkout = r.Line
			}
			continue
		}
		if r.Name != "" && !prRunReaders[r.Name] && !literalVia(r.Via) {
			j.escalate("remote-code:pull-request", "%s checks out a pull request, then %s runs what it brought: code nobody here has reviewed", quote(clipText(checkout, 60)), quote(clipText(r.Line, 60)))
			return
		}
	}
}
