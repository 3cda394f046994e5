package shield

import "strings"

// A topic branch pushed for review (issue 27, pass 7, rules 10;
// docs/shield-rules.md "network:git-push"): `git push [-u] origin
// <prefix>/<name>` with a conventional topic prefix (feature/, fix/,
// chore/ …) sends commits where review happens, not to the default
// branch. No force (but --force-with-lease, rules 14), no tags, no
// deletes, no other remote, no refspec but HEAD:<topic>: the shape is the
// whole line. A tainted session still asks
// (flow:tainted-egress), and a URL remote is judged by its host.

// topicPrefixes are the first segment of a branch name meant for review.
var topicPrefixes = map[string]bool{"feature": true, "feat": true, "fix": true, "bugfix": true, "chore": true,
	"docs": true, "doc": true, "refactor": true, "test": true, "tests": true, "ci": true, "perf": true, "style": true,
	"build": true, "topic": true, "wip": true, "spike": true, "exp": true, "experiment": true, "task": true, "issue": true,
	// rules 14: hotfixes, dependency bumps and an agent's own branches
	"hotfix": true, "deps": true, "dependencies": true, "bump": true, "upgrade": true, "agent": true, "ai": true, "bot": true,
	"claude": true, "codex": true, "gemini": true, "copilot": true, "opx": true}

// protectedBranches are first segments of branches that ship or are
// guarded: never a topic.
var protectedBranches = map[string]bool{"release": true, "releases": true, "rel": true, "stable": true, "prod": true,
	"production": true, "main": true, "master": true, "develop": true, "development": true, "staging": true, "stage": true,
	"deploy": true, "deployment": true, "gh-pages": true, "trunk": true, "live": true, "lts": true, "maintenance": true}

// namespaceTopic reports whether a branch's first segment is a plain
// namespace (api/, infra/, renovate/ — rules 16: teams prefix topic
// branches by component as often as by kind) and not a protected one.
func namespaceTopic(seg string) bool {
	if seg == "" || protectedBranches[seg] || len(seg) > 40 {
		return false
	}
	return strings.Trim(seg, "abcdefghijklmnopqrstuvwxyz0123456789._-") == "" && seg[0] != '.' && seg[0] != '-'
}

// topicPush reports whether r is `git push [-u|--set-upstream] origin
// <topic>/<name>` and nothing else.
func topicPush(r *Run) bool {
	if r.Name != "git" || r.Via != "" {
		return false
	}
	a := r.Argv
	if len(a) < 4 || a[1] != "push" {
		return false
	}
	a = a[2:]
	for len(a) > 0 && (a[0] == "-u" || a[0] == "--set-upstream" || a[0] == "--force-with-lease") {
		// rules 14: --force-with-lease rewrites only this topic branch,
		// and only if nobody pushed to it meanwhile.
		a = a[1:]
	}
	if len(a) != 2 || a[0] != "origin" {
		return false
	}
	// rules 14: the current commit pushed to the branch by name
	// (HEAD:fix/x, HEAD:refs/heads/fix/x).
	ref := strings.TrimPrefix(strings.TrimPrefix(a[1], "HEAD:"), "refs/heads/")
	seg := strings.Split(ref, "/")
	if len(seg) < 2 || !topicPrefixes[seg[0]] && !namespaceTopic(seg[0]) {
		return false
	}
	for _, s := range seg[1:] {
		if s == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" || strings.HasPrefix(s, ".") {
			return false
		}
	}
	return true
}

// onlyTopicPushes reports whether every git run of f that can push is a
// topic push (and there is at least one).
func onlyTopicPushes(f *Facts) bool {
	n := 0
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "git" {
			continue
		}
		if len(r.Argv) > 1 && r.Argv[1] == "push" || strings.Contains(r.Line, "push") {
			if !topicPush(r) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// onlyDryRunPushes reports whether every git run of f that can push is a
// dry run (git push --dry-run|-n …: nothing is sent), and there is one
// (rules 12, k27h).
func onlyDryRunPushes(f *Facts) bool {
	n := 0
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "git" {
			continue
		}
		if len(r.Argv) > 1 && r.Argv[1] == "push" || strings.Contains(r.Line, "push") {
			if len(r.Argv) < 2 || r.Argv[1] != "push" || !slicesContains(r.Argv[2:], "--dry-run") && !slicesContains(r.Argv[2:], "-n") {
				return false
			}
			n++
		}
	}
	return n > 0
}
