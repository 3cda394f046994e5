package shield

import (
	"fmt"
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// The supply chain (issue 27, docs/shield-rules.md "supply-chain:*"): a
// change to a file some toolchain reads to fetch or run code is judged by
// the change it makes, computed by parsing the file (shield/manifest), not
// by the words it is written in. Where code comes from being redirected
// (a replace, a git, URL or path dependency, an override, another index
// or registry), code added that runs at build, install or test time
// (lifecycle scripts, build.rs, //go:generate, conftest.py, a build
// backend) and a checksum turned off or changed are asked about; a version
// bump within the same source, or a new dependency from the default
// registry, is not. Typosquats (a new dependency whose name imitates
// another's, from the default registry) are out of reach of such rules.

// supplyAssigns are the environment settings of a simple command
// (NAME=value prefixes, and env's NAME=value arguments), judged by
// manifest.Env.
func (x *call) supplyAssigns() {
	for _, a := range x.c.Assigns {
		x.supplyEnv(a.Name, a.Value.Text)
	}
}

func (x *call) supplyEnv(name, value string) {
	for _, c := range manifest.Env(name, value) {
		x.m.f.Supply = append(x.m.f.Supply, Supply{Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: "environment " + name})
	}
}

// supplyCommand adds what a package manager's command changes in the
// manifests and settings it writes (go mod edit -replace, npm pkg set
// scripts.postinstall=..., cargo add --git, pip install --index-url,
// go env -w GOPROXY=...), and the environment an export, env or declare
// sets for what follows.
func (x *call) supplyCommand() {
	if len(x.argv) == 0 {
		return
	}
	switch x.name {
	case "export", "env", "declare", "typeset", "setenv":
		for _, w := range x.args {
			if k, v, ok := strings.Cut(w.Text, "="); ok && k != "" && !strings.HasPrefix(k, "-") {
				x.supplyEnv(k, v)
			}
		}
		return
	}
	argv := wordTexts(x.argv)
	argv[0] = x.name
	changes, files, ok := manifest.Command(argv)
	if !ok {
		return
	}
	file := ""
	if len(files) > 0 {
		if p, ok := x.abs(files[0]); ok {
			file = p
		}
	}
	for _, c := range changes {
		if c.Local != "" && !strings.HasPrefix(c.Local, "~") {
			// A directory inside the workspace is the workspace's own
			// code (relative to the command's directory, where go
			// finds go.mod: a go.mod elsewhere is go's to refuse).
			if p, ok := x.abs(c.Local); ok && within(p, x.m.s.cfg.Workspace) {
				continue
			}
		}
		x.m.f.Supply = append(x.m.f.Supply, Supply{Path: file, Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: x.name})
	}
}

// supplyChain is `supply-chain:*` (escalate): every change in f.Supply,
// and every manifest a command writes whose change can be computed from
// the text it writes (echo ... >> requirements.txt, a here-document into
// package.json: judged as what it adds) or cannot be computed at all
// (sed -i on go.mod: supply-chain:unjudged). A package manager's own
// commands (go get, npm install, cargo update) are judged by what they
// are asked to do (manifest.Command), not by the files they rewrite.
func (s *Shield) supplyChain(_ *Action, f *Facts, j *judgement) {
	for _, c := range f.Supply {
		s.supplyVerdict(c, j)
		if j.set {
			return
		}
	}
	if l := s.linkedManifestWrite(f); l != "" {
		j.escalate("supply-chain:unjudged", "%s", l)
		return
	}
	for i := range f.Writes {
		w := &f.Writes[i]
		if copier(w.By) && !w.Glob && s.inWorkspace(w.Path) {
			// A file copied, moved or linked over a manifest is a write
			// of the source's content: judged by the change the engine
			// computed from it (Facts.Supply, above, with a marker when
			// it found none), else asked about.
			rel := strings.TrimPrefix(w.Path, s.cfg.Workspace+"/")
			if format := manifest.Format(rel); format != "" && format != "go-source" && !observed(f, w.Path) {
				j.escalate("supply-chain:unjudged", "%s replaces %s, which %s reads to fetch or run code, with content Shield cannot see", w.By, rel, toolchainFor(rel, format))
				return
			}
			continue
		}
		if w.Tree || w.Glob || fileTool(w.By) || !s.inWorkspace(w.Path) {
			continue
		}
		rel := strings.TrimPrefix(w.Path, s.cfg.Workspace+"/")
		body, known := "", false
		for _, t := range f.Texts {
			if t.Source == "content:"+w.Path {
				body, known = t.Body, true
				break
			}
		}
		format := manifest.Format(rel)
		if format == "" && known && !inPlaceEditor(w.By) {
			format = manifest.Sniff(rel, []byte(body))
		}
		if format == "" || packageManager(w.By) {
			continue
		}
		if inPlaceEditor(w.By) {
			if observed(f, w.Path) {
				continue // a literal substitution the engine applied: judged by its change (Facts.Supply)
			}
			known = false // the text is an edit script, not what the file will hold
		}
		if format == "go-source" && (w.By == "git apply" || w.By == "patch") && !strings.Contains(body, "go:generate") {
			continue // a patch's added Go lines: only a //go:generate line runs later
		}
		if format == "go-source" && !known && !goGenerateIn(f) {
			continue // Go source edited: only a //go:generate line runs later
		}
		if !known {
			j.escalate("supply-chain:unjudged", "%s changes %s, which %s reads to fetch or run code, in a way Shield does not compute: asked about", w.By, rel, toolchainFor(rel, format))
			return
		}
		changes, err := manifest.DiffFormat(rel, format, nil, []byte(body))
		if err != nil {
			// A fragment appended to a structured file (JSON, TOML) does
			// not parse on its own: what it does is not known.
			j.escalate("supply-chain:unjudged", "%s writes text into %s that Shield cannot judge as part of it (%v)", w.By, rel, err)
			return
		}
		for _, c := range changes {
			s.supplyVerdict(Supply{Path: w.Path, Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: w.By}, j)
			if j.set {
				return
			}
		}
	}
}

// linkedManifestWrite says how a line writes a manifest through a
// symlink it makes itself (ln -s go.mod notes; echo ... >> notes), or
// "": the engine resolves the links that exist before the call, not
// the ones the line makes.
func (s *Shield) linkedManifestWrite(f *Facts) string {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "ln" {
			continue
		}
		sym := false
		var ops []string
		for _, a := range r.Argv[1:] {
			switch {
			case a == "--symbolic" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 's'):
				sym = true
			case strings.HasPrefix(a, "-"):
			default:
				ops = append(ops, a)
			}
		}
		if !sym || len(ops) != 2 || manifest.Format(path.Base(ops[0])) == "" && !agentFiles[path.Base(ops[0])] {
			continue
		}
		link := s.ResolvePath(ops[1])
		for k := range f.Writes {
			if w := &f.Writes[k]; w.By != "ln" && w.Path == link {
				return fmt.Sprintf("%s writes %s, a link the line makes to %s: the change to it cannot be judged", w.By, ops[1], ops[0])
			}
		}
	}
	return ""
}

// copier reports whether a program or tool writes a file with another
// file's content (a copy, a move, a link, an install, a sync).
func copier(by string) bool {
	switch by {
	case "cp", "mv", "ln", "install", "rsync", "ditto", "move_file", "copy_file", "git mv":
		return true
	}
	return false
}

// observed reports whether the engine computed the change a write makes
// to the manifest at p (a Supply for p, a change or KindNone).
func observed(f *Facts, p string) bool {
	for _, c := range f.Supply {
		if c.Path == p {
			return true
		}
	}
	return false
}

// supplyVerdict escalates one change.
func (s *Shield) supplyVerdict(c Supply, j *judgement) {
	where := "the package manager's settings"
	if c.Path != "" {
		where = strings.TrimPrefix(c.Path, s.cfg.Workspace+"/")
	}
	what := strings.TrimSpace(c.Key + " " + c.Detail)
	switch {
	case c.Error != "":
		j.escalate("supply-chain:unjudged", "%s changes %s, which a toolchain reads to fetch or run code, and the change cannot be judged: %s", c.By, where, c.Error)
	case c.Kind == manifest.KindSource:
		j.escalate("supply-chain:source", "%s changes where code comes from in %s: %s", c.By, where, clipText(what, 160))
	case c.Kind == manifest.KindRuns:
		j.escalate("supply-chain:runs-code", "%s adds or changes code that runs at build, install or test time in %s: %s", c.By, where, clipText(what, 160))
	case c.Kind == manifest.KindChecksum:
		j.escalate("supply-chain:checksum", "%s turns off or changes how fetched code is verified in %s: %s", c.By, where, clipText(what, 160))
	case c.Kind == manifest.KindChecks:
		j.escalate("evasion:checks-off", "%s makes a check unable to fail, skips it or narrows it to nothing in %s: %s", c.By, where, clipText(what, 160))
	case c.Kind == manifest.KindDestroy:
		j.escalate("destructive:protection-off", "%s switches off a guard against deleting infrastructure in %s: %s", c.By, where, clipText(what, 160))
	}
}

// fileTool reports whether by is a file tool, whose changes to manifests
// the engine computes before the call (Facts.Supply).
func fileTool(by string) bool {
	switch by {
	case "write_file", "edit_file", "move_file", "delete_file", "make_dir", "memory_append":
		return true
	}
	return strings.HasPrefix(by, "mcp__")
}

// packageManager reports whether a program rewrites manifests as its
// job: it is judged by what it is asked to do.
func packageManager(name string) bool {
	switch name {
	case "go", "npm", "pnpm", "yarn", "bun", "cargo", "pip", "pip3", "poetry", "uv", "pdm", "pipenv", "bundle", "gem", "gofmt", "goimports":
		return true
	}
	return false
}

// toolchainFor names who reads the file rel of format, for reasons.
func toolchainFor(rel, format string) string {
	if format == manifest.ShapeFormat {
		if r := manifest.BuildReader(rel); r != "" {
			return r
		}
		return "a build tool"
	}
	return toolchainOf(format)
}

// toolchainOf names who reads a manifest of format, for reasons.
func toolchainOf(format string) string {
	switch {
	case strings.HasPrefix(format, "go"):
		return "the Go toolchain"
	case format == "package.json" || strings.Contains(format, "npm") || strings.Contains(format, "yarn") || strings.Contains(format, "pnpm") || format == "package-lock.json":
		return "npm"
	case strings.HasPrefix(format, "Cargo") || strings.HasPrefix(format, "cargo") || format == "build.rs":
		return "cargo"
	case strings.HasPrefix(format, "Gem") || strings.Contains(format, "gem") || strings.Contains(format, "bundle"):
		return "bundler"
	}
	return "a toolchain"
}

// inPlaceEditor reports whether a program edits files in place by a
// script (sed -i, perl -pi): the text Shield sees is the script.
func inPlaceEditor(name string) bool {
	switch name {
	case "sed", "gsed", "perl", "awk", "gawk", "ruby", "ex", "ed", "vim", "vi", "nvim", "emacs":
		return true
	}
	return false
}

// goGenerateIn reports whether the action's text or lines mention a
// //go:generate directive.
func goGenerateIn(f *Facts) bool {
	for _, t := range f.Texts {
		if strings.Contains(t.Body, "go:generate") {
			return true
		}
	}
	for _, r := range f.Runs {
		if strings.Contains(r.Line, "go:generate") {
			return true
		}
	}
	return false
}
