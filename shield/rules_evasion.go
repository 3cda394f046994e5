package shield

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Evasion: acts that hide what an agent did or let it keep acting after
// the call returns, past the sandbox's and the recorder's view: clearing
// the system's journals or the shell's history, skipping the
// repository's hooks, leaving a process running detached.

var (
	// histVars are the shell's history settings turned off.
	histVars = mustRx(`(?:^|[\s;&|(])(?:export\s+|declare\s+(?:-x\s+)?|typeset\s+)?(?:HISTFILE=(?:/dev/null|["']{2}|\s|$)|HISTSIZE=0\b|HISTFILESIZE=0\b|SAVEHIST=0\b)|HISTIGNORE=["']?[^"'\s]|HISTFILE=["']?[^"'\s~$]|\bunset\s+(?:-v\s+)?HIST(?:FILE|SIZE|FILESIZE)\b|\bset\s+\+o\s+history\b`)
	// hookSkipEnv are the variables that turn hook managers off.
	hookSkipEnv = mustRx(`(?:^|[\s;&|(])(?:export\s+)?(?:HUSKY=0|HUSKY_SKIP_HOOKS=(?:1|true)|PRE_COMMIT_ALLOW_NO_CONFIG=1|LEFTHOOK=0|SKIP=\S+|OVERCOMMIT_DISABLE=1|GIT_HOOKS_DISABLED=1)\b`)
)

// evasion is `evasion:journal`, `evasion:history`, `evasion:skip-hooks`
// and `persistence:background` (escalate).
func (s *Shield) evasion(a *Action, f *Facts, j *judgement) {
	git := false
	for i := range f.Runs {
		r := &f.Runs[i]
		args := r.Argv[min(1, len(r.Argv)):]
		switch r.Name {
		case "journalctl":
			for _, x := range args {
				if strings.HasPrefix(x, "--vacuum-") || x == "--rotate" {
					j.escalate("evasion:journal", "%s deletes or rotates away the system journal", quote(r.Line))
					return
				}
			}
		case "git":
			git = true
			if why := skipsHooks(args); why != "" {
				j.escalate("evasion:skip-hooks", "%s %s: the repository's checks do not run", quote(r.Line), why)
				return
			}
		case "pre-commit", "husky", "lefthook":
			git = true
		case "disown", "daemonize", "start-stop-daemon":
			j.escalate("persistence:background", "%s leaves a process running after the call returns", quote(r.Line))
			return
		case "screen":
			if slices.ContainsFunc(args, func(x string) bool { return strings.HasPrefix(x, "-d") && strings.Contains(x, "m") || x == "-dm" }) ||
				slices.Contains(args, "-d") && slices.Contains(args, "-m") {
				j.escalate("persistence:background", "%s starts a detached screen session", quote(r.Line))
				return
			}
		case "tmux":
			if len(args) > 0 && (args[0] == "new" || args[0] == "new-session" || args[0] == "new-window") && slices.Contains(args, "-d") {
				j.escalate("persistence:background", "%s starts a detached tmux session", quote(r.Line))
				return
			}
		}
		for _, via := range strings.Split(r.Via, " > ") {
			if via == "nohup" || via == "setsid" || strings.HasPrefix(via, "nohup ") || strings.HasPrefix(via, "setsid ") {
				j.escalate("persistence:background", "%s runs %s detached from the call (%s)", quote(r.Line), r.Name, via)
				return
			}
		}
	}
	if a.Command == "" || j.inner {
		return
	}
	// The expression's words first: they spare most lines a search.
	if strings.Contains(a.Command, "HIST") || strings.Contains(a.Command, "history") {
		if m := histVars.FindString(a.Command); m != "" {
			j.escalate("evasion:history", "the command turns the shell's history off: %s", quote(strings.TrimSpace(m)))
			return
		}
	}
	if git || strings.Contains(a.Command, "export") {
		// Set for one git line, or exported: every later commit of the
		// session skips them.
		if m := hookSkipEnv.FindString(a.Command); m != "" && (git || strings.Contains(m, "export")) {
			j.escalate("evasion:skip-hooks", "the command turns the repository's hooks off: %s", quote(strings.TrimSpace(m)))
			return
		}
	}
	if bg := backgrounded(a.Command); bg != "" {
		j.escalate("persistence:background", "%s runs in the background and outlives the call (no wait follows it)", quote(bg))
	}
}

// skipsHooks says how git arguments skip the hooks, or "".
func skipsHooks(args []string) string {
	sub := ""
	for k := 0; k < len(args); k++ {
		x := args[k]
		if x == "-c" && k+1 < len(args) {
			if strings.HasPrefix(strings.ToLower(args[k+1]), "core.hookspath=") {
				return "points core.hooksPath elsewhere"
			}
			k++
			continue
		}
		if x == "-C" || x == "--git-dir" || x == "--work-tree" {
			k++
			continue
		}
		if strings.HasPrefix(x, "-") {
			if sub == "" {
				continue
			}
			if x == "--no-verify" {
				return "skips the hooks (--no-verify)"
			}
			if sub == "commit" && !strings.HasPrefix(x, "--") && shortFlag(x[1:], 'n', "mFCct") {
				return "skips the hooks (-n)"
			}
			continue
		}
		if sub == "" {
			sub = x
		}
	}
	return ""
}

// backgrounded returns the command a line leaves running in the
// background with no `wait` after it, or "".
func backgrounded(line string) string {
	if !loneAmp(line) {
		return ""
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	file, err := p.Parse(strings.NewReader(line), "")
	if err != nil {
		return ""
	}
	var bg, waits []syntax.Pos
	var first string
	syntax.Walk(file, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if x.Background {
				bg = append(bg, x.End())
				if first == "" && x.Pos().Offset() < uint(len(line)) && x.End().Offset() <= uint(len(line)) {
					first = line[x.Pos().Offset():x.End().Offset()]
				}
			}
		case *syntax.CallExpr:
			// wait, or kill of the job: it ends within the call.
			if len(x.Args) > 0 && (x.Args[0].Lit() == "wait" || x.Args[0].Lit() == "kill") {
				waits = append(waits, x.Pos())
			}
		}
		return true
	})
	for _, b := range bg {
		waited := false
		for _, w := range waits {
			if w.After(b) {
				waited = true
			}
		}
		if !waited {
			return first
		}
	}
	return ""
}

// loneAmp reports whether line holds an & that is not part of &&, >&,
// &> or <&: a cheap test before a parse.
func loneAmp(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] != '&' {
			continue
		}
		if i+1 < len(line) && (line[i+1] == '&' || line[i+1] == '>') {
			i++
			continue
		}
		if i > 0 && (line[i-1] == '>' || line[i-1] == '<' || line[i-1] == '&') {
			continue
		}
		return true
	}
	return false
}

// shortFlag reports whether a cluster of short options (without its
// dash) holds flag before any option that takes the rest as its value.
func shortFlag(cluster string, flag byte, valued string) bool {
	for i := 0; i < len(cluster); i++ {
		switch c := cluster[i]; {
		case c == flag:
			return true
		case strings.IndexByte(valued, c) >= 0:
			return false
		}
	}
	return false
}
