package shield

import (
	"path"
	"strings"
)

// What make runs by default (`runs-later:make-default`, escalate): the
// next bare `make` (an agent's, a human's, CI's) runs the default goal,
// so changing which target that is, or which files and flags make reads,
// changes what runs later without touching any recipe. Judged in the text
// written to a Makefile (or *.mk) and in the environment a command sets:
//
//   - .DEFAULT_GOAL set to a variable or a computed value, or to a
//     target other than the usual entry points (all, help, build,
//     default, test, check);
//   - MAKEFLAGS or MAKEFILES set (in a Makefile, exported, or for a
//     command) with options that read other files or evaluate text
//     (-f, --file, --makefile, -I, --include-dir, --eval, -e);
//   - an include of a file outside the workspace, under a scratch
//     directory, or with a computed name ($(shell ...), a variable);
//   - a $(shell …) outside a recipe that reaches the network (curl,
//     wget, nc, ssh, git fetch …): make runs it while reading the file,
//     whatever the target (session 15, rules 9).
//
// Out of reach: a rewrite that only moves another target first (the
// default goal is then that target): Shield does not read the Makefile
// as it was.

var (
	defaultGoal  = mustRx(`(?m)^\s*\.DEFAULT_GOAL\s*[:?+!]?=\s*(\S*)`)
	makeFlagsSet = mustRx(`(?m)(?:^|[\s;&|(])(?:export\s+|override\s+)?(?:MAKEFLAGS|MAKEFILES|GNUMAKEFLAGS)\s*[:?+!]?=\s*(.*)`)
	makeInclude  = mustRx(`(?m)^\s*(?:-|s)?include\s+(.+)$`)
	// parseTimeFetch is a $(shell …) outside a recipe that reaches the
	// network: make runs it while reading the file, for any target.
	parseTimeFetch = mustRx(`\$\(shell\b[^\n]*\b(curl|wget|nc|ncat|socat|ssh|scp|rsync|git\s+(clone|fetch|pull)|iwr|Invoke-WebRequest)\b`)
	makeFileOpt    = mustRx(`(?:^|\s|["'])(?:-[a-zA-Z]*[fIe]|--file|--makefile|--include-dir|--eval)\b`)
)

// usualGoals are the default goals a project sets as its entry point.
var usualGoals = map[string]bool{"all": true, "help": true, "build": true, "default": true, "test": true, "check": true, "dev": true}

// makeDefault is `runs-later:make-default`.
func (s *Shield) makeDefault(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		base := path.Base(p)
		if base != "Makefile" && base != "makefile" && base != "GNUmakefile" && !strings.HasSuffix(base, ".mk") {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		if strings.Contains(body, "$(shell") {
			for l := range strings.SplitSeq(body, "\n") {
				if !strings.HasPrefix(l, "\t") && strings.Contains(l, "$(shell") && parseTimeFetch.MatchString(l) {
					j.escalate("runs-later:make-default", "the content of %s runs %s when make reads the file: every make, whatever the target, reaches the network", p, quote(clipText(strings.TrimSpace(l), 80)))
					return
				}
			}
		}
		if !strings.Contains(body, "DEFAULT_GOAL") && !strings.Contains(body, "MAKE") && !strings.Contains(body, "include") {
			continue
		}
		if m := defaultGoal.FindStringSubmatch(body); m != nil && (!usualGoals[m[1]] || strings.ContainsAny(m[1], "$(){}")) {
			j.escalate("runs-later:make-default", "the content of %s sets make's default goal to %s: what a bare make runs changes", p, quote(m[1]))
			return
		}
		if m := makeFlagsSet.FindStringSubmatch(body); m != nil && makeFileOpt.MatchString(m[1]) {
			j.escalate("runs-later:make-default", "the content of %s sets %s: make reads other files or text on every run", p, quote(strings.TrimSpace(m[0])))
			return
		}
		for _, m := range makeInclude.FindAllStringSubmatch(body, 16) {
			for _, inc := range strings.Fields(m[1]) {
				if strings.ContainsAny(inc, "$`") || strings.HasPrefix(inc, "/") || strings.HasPrefix(inc, "~") || strings.Contains(inc, "..") {
					j.escalate("runs-later:make-default", "the content of %s includes %s, a makefile from outside the workspace or computed: make runs what it holds", p, quote(inc))
					return
				}
			}
		}
	}
	if a.Command != "" && (strings.Contains(a.Command, "MAKEFLAGS") || strings.Contains(a.Command, "MAKEFILES")) {
		if m := makeFlagsSet.FindStringSubmatch(a.Command); m != nil && makeFileOpt.MatchString(m[1]) {
			j.escalate("runs-later:make-default", "the command sets %s: make reads other files or text", quote(strings.TrimSpace(m[0])))
		}
	}
}
