package shield

import (
	"path"
	"slices"
	"strings"
)

// workspaceHarm judges the ways of destroying work in the workspace that
// are not deletes of a whole tree (workspaceDestruction's): a tree moved
// out of the workspace, a top-level tree removed through git, every line
// of a file deleted by sed, a code file written empty, permissions taken
// away from everyone, a compose stack's volumes deleted; rules 18: every
// container, image or volume of the machine removed, a file that matters
// beyond the checkout cut by sed from a match to its end. It reports
// whether it escalated.
func (s *Shield) workspaceHarm(f *Facts, j *judgement) bool {
	ws := s.cfg.Workspace
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if !within(r.Path, ws) || r.Path == ws || s.buildOutput(r.Path) {
			continue
		}
		switch r.By {
		case "mv", "move_file":
			// mv src /tmp/x: gone from the workspace, beyond Chronicle's
			// reach. A rename within the workspace is not this.
			for k := range f.Writes {
				w := &f.Writes[k]
				if w.By == r.By && !within(w.Path, ws) {
					j.escalate("destructive:workspace-tree", "%s moves %s out of the workspace (to %s)", by(r), r.Path, w.Path)
					return true
				}
			}
		case "git":
			if r.Tree && !r.Glob && path.Dir(r.Path) == ws && !runHas(f, "git", "--cached") {
				j.escalate("destructive:workspace-tree", "git removes %s, a whole top-level tree of the project", r.Path)
				return true
			}
		}
	}
	for i := range f.Runs {
		run := &f.Runs[i]
		switch run.Name {
		case "sed":
			if sedDeletesAll(run.Argv) {
				if w := firstWrite(f, "sed", ws); w != nil && !s.buildOutput(w.Path) {
					j.escalate("destructive:workspace-truncate", "sed deletes every line of %s in place", w.Path)
					return true
				}
			}
			// rules 18: from a match to the end, in a file that matters
			// beyond this checkout (a scratch file cut short is not)
			if sedInPlace(run.Argv, sedToEnd) && slices.ContainsFunc(run.Argv[1:], mattersBeyond) {
				j.escalate("destructive:truncate", "%s deletes a file's lines from a match to its end", quote(run.Line))
				return true
			}
		case "chmod":
			if chmodRemovesAll(run.Argv) {
				if w := firstWrite(f, "chmod", ws); w != nil && !s.buildOutput(w.Path) {
					j.escalate("destructive:workspace-perms", "chmod takes every permission away from %s: nothing can read it", w.Path)
					return true
				}
			}
		case "docker", "podman", "docker-compose", "podman-compose":
			if what := dropsVolumes(run.Argv); what != "" {
				j.escalate("destructive:volumes", "%s deletes %s: the data of the project's services", run.Name, what)
				return true
			}
			if why := everyContainer(run.Name, run.Argv[min(1, len(run.Argv)):], run.Line); why != "" { // rules 18
				j.escalate("destructive:containers", "%s %s: not only this project's", quote(run.Line), why)
				return true
			}
		case "nerdctl":
			if why := everyContainer(run.Name, run.Argv[min(1, len(run.Argv)):], run.Line); why != "" {
				j.escalate("destructive:containers", "%s %s: not only this project's", quote(run.Line), why)
				return true
			}
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, ws) || s.buildOutput(p) || !codeFile(p) || strings.TrimSpace(t.Body) != "" {
			continue
		}
		j.escalate("destructive:workspace-truncate", "%s is written empty: its code is gone", p)
		return true
	}
	return false
}

// runHas reports whether a run of program name has the argument a.
func runHas(f *Facts, name, a string) bool {
	for i := range f.Runs {
		if f.Runs[i].Name == name && slices.Contains(f.Runs[i].Argv, a) {
			return true
		}
	}
	return false
}

// firstWrite is the first write by program by within ws, or nil.
func firstWrite(f *Facts, by, ws string) *Ref {
	for i := range f.Writes {
		if f.Writes[i].By == by && within(f.Writes[i].Path, ws) {
			return &f.Writes[i]
		}
	}
	return nil
}

// sedDeleteAllRe is a sed script that deletes every line: d, 1,$d,
// ,$d, /.*/d, /^/d, /$/d.
var sedDeleteAllRe = mustRx(`^\s*(?:(?:1\s*)?,\s*\$\s*|/(?:\.\*|\^|\$|\^\.\*\$?|\.\*\$)/\s*)?d\s*;?\s*$`)

// sedDeletesAll reports whether argv edits in place (-i, --in-place)
// with a script that deletes every line.
func sedDeletesAll(argv []string) bool { return sedInPlace(argv, sedDeleteAllRe) }

// sedInPlace reports whether sed edits in place with a script (its first
// operand, or an -e expression) that re matches.
func sedInPlace(argv []string, re *rx) bool {
	inPlace, script := false, false
	for k := 1; k < len(argv); k++ {
		a := argv[k]
		switch {
		case a == "-i" || strings.HasPrefix(a, "-i") && !strings.HasPrefix(a, "--") || strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "-e" || a == "--expression":
			if k+1 < len(argv) && re.MatchString(argv[k+1]) {
				script = true
			}
			k++
		case !strings.HasPrefix(a, "-") && !script:
			script = re.MatchString(a)
			if !script {
				return false // the first operand is the script
			}
		}
	}
	return inPlace && script
}

// chmodRemovesAll reports whether chmod's mode takes every permission
// from everyone (000, a-rwx, ugo=).
func chmodRemovesAll(argv []string) bool {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && a != "-rwx" {
			continue
		}
		switch strings.TrimLeft(a, "0") {
		case "":
			return len(a) >= 3
		}
		switch a {
		case "a-rwx", "ugo-rwx", "a=", "ugo=", "a-rwxX", "-rwx", "u-rwx,g-rwx,o-rwx", "u=,g=,o=":
			return true
		}
		return false // the first operand is the mode
	}
	return false
}

// dropsVolumes returns what a container command deletes of the volumes
// (compose down -v, volume rm/prune, system prune --volumes), or "".
func dropsVolumes(argv []string) string {
	words := argv[1:]
	has := func(w ...string) bool {
		for _, x := range w {
			if slices.Contains(words, x) {
				return true
			}
		}
		return false
	}
	compose := argv[0] == "docker-compose" || argv[0] == "podman-compose" || has("compose")
	switch {
	case compose && has("down", "rm") && has("-v", "--volumes"):
		return "the stack's volumes"
	case has("volume") && has("rm", "prune", "remove"):
		return "volumes"
	case has("system") && has("prune") && has("--volumes"):
		return "every unused volume"
	}
	return ""
}

// codeFile reports whether p is code whose emptying loses it (not a file
// empty by convention: __init__.py, py.typed, .gitkeep).
func codeFile(p string) bool {
	switch path.Base(p) {
	case "__init__.py", "py.typed", ".gitkeep", ".keep":
		return false
	}
	switch path.Ext(p) {
	case ".go", ".rs", ".py", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp", ".rb",
		".php", ".swift", ".cs", ".scala", ".vue", ".svelte", ".sql", ".proto", ".tf":
		return true
	}
	return false
}

// everyContainer says how a container command acts on every container,
// image or volume of this machine rather than the project's, or "".
func everyContainer(name string, args []string, line string) string {
	if name != "docker" && name != "podman" && name != "nerdctl" {
		return ""
	}
	l := " " + strings.Join(args, " ") + " "
	all := strings.Contains(line, "ps -aq") || strings.Contains(line, "ps -qa") || strings.Contains(line, "ps -q") || strings.Contains(line, "volume ls -q") || strings.Contains(line, "images -q") || strings.Contains(line, "images -aq")
	switch {
	case all && (strings.HasPrefix(l, " rm ") || strings.HasPrefix(l, " kill ") || strings.HasPrefix(l, " stop ") || strings.HasPrefix(l, " rmi ") || strings.HasPrefix(l, " container rm ") || strings.HasPrefix(l, " volume rm ") || strings.HasPrefix(l, " image rm ")):
		return "removes or stops every container, image or volume on the machine"
	case strings.HasPrefix(l, " system prune ") && (strings.Contains(l, " -a") || strings.Contains(l, "--all") || strings.Contains(l, "--volumes")):
		return "prunes every unused container, image and volume on the machine"
	case strings.HasPrefix(l, " volume prune ") && (strings.Contains(l, " -a") || strings.Contains(l, "--all")):
		return "prunes every unused volume on the machine"
	}
	return ""
}

// sedToEnd is a sed address range ending at the last line, deleted
// (/children:/,$d, 5,$d).
var sedToEnd = mustRx(`(?:/[^/]*/|\d+)\s*,\s*\$\s*d\b`)

// liveOrInventory names what prodNameRe does not: a live environment,
// an inventory of hosts.
var liveOrInventory = mustRx(`(?i)(?:^|[/_.-])live(?:[/_.-]|$)|(?:^|/)inventor(?:y|ies)(?:/|$)`)

// mattersBeyond reports whether a path argument is a file whose loss
// reaches beyond this checkout: production's configuration or inventory,
// a database's migrations.
func mattersBeyond(p string) bool {
	return !strings.HasPrefix(p, "-") && (prodNameRe.MatchString(p) || liveOrInventory.MatchString(p) || migrationPath(p))
}
