package shield

import (
	"slices"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// What interpreter code given on the command line (python3 -c, node -e,
// ruby -e, perl -e ...) writes and deletes, by the calls that name a
// literal path: open(p, 'w'), Path(p).write_text, fs.writeFileSync(p),
// File.write(p), shutil.rmtree(p), os.remove(p), fs.rmSync(p, {recursive})
// ... Each is a Write or Delete of the path, By the interpreter, with
// content Shield does not see: the rules that judge what a write means
// (an agent's instruction file, a manifest, a key file, a source tree)
// then judge it as they judge a write by any other program.

// requireFS is Node's fs module used where it is required
// (require('fs').rmSync(…), require("node:fs/promises").rm(…)): rules 14.
const requireFS = `\brequire\(\s*['"](?:node:)?fs(?:/promises)?['"]\s*\)`

// codeWrite and codeDelete find the calls; the path is the first group.
var (
	codeWrite = []*rx{
		mustRx(`\bopen\(\s*['"]([^'"\n]{1,512})['"]\s*,\s*(?:mode\s*=\s*)?['"][rbt]*[wax+]`),
		mustRx(`\bPath\(\s*['"]([^'"\n]{1,512})['"]\s*\)\s*\.\s*(?:write_text|write_bytes|touch|open\(\s*['"][rbt]*[wax+])`),
		mustRx(`(?:\b(?:fs|fsp|promises)|` + requireFS + `)\s*\.\s*(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|copyFile|copyFileSync|truncate|truncateSync)\(\s*['"` + "`" + `]([^'"` + "`" + `\n]{1,512})['"` + "`" + `]`),
		mustRx(`\b(?:File|IO)\s*\.\s*(?:write|binwrite|open\(\s*['"][^'"\n]{1,512}['"]\s*,\s*['"][wa])\(?\s*['"]?([^'"\n,)]{1,512})`),
		mustRx(`\bDeno\s*\.\s*(?:writeTextFile|writeFile|writeTextFileSync|writeFileSync)\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\bshutil\s*\.\s*(?:copy|copy2|copyfile|move)\(\s*[^,\n]{1,512},\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\bopen\s*\(\s*(?:my\s+)?\$?\w+\s*,\s*['"]\s*>>?\s*['"]\s*,\s*['"]([^'"\n]{1,512})['"]`), // perl 3-arg
		mustRx(`\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"]>>?\s*([^'"\n]{1,512})['"]`),                  // perl 2-arg
		mustRx(`\bfile_put_contents\(\s*['"]([^'"\n]{1,512})['"]`),
	}
	codeDelete = []*rx{
		mustRx(`\bshutil\s*\.\s*rmtree\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\bos\s*\.\s*(?:remove|unlink|rmdir|removedirs)\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\bPath\(\s*['"]([^'"\n]{1,512})['"]\s*\)\s*\.\s*(?:unlink|rmdir)\(`),
		mustRx(`(?:\b(?:fs|fsp|promises)|` + requireFS + `)\s*\.\s*(?:rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync)\(\s*['"` + "`" + `]([^'"` + "`" + `\n]{1,512})['"` + "`" + `]`),
		mustRx(`\bFileUtils\s*\.\s*(?:rm_rf|rm_r|rm|remove_dir|remove_entry|rmtree)\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\b(?:File|Dir)\s*\.\s*(?:delete|unlink|rmdir)\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\bDeno\s*\.\s*remove\(\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\b(?:unlink|rmtree|remove_tree)\s*\(?\s*['"]([^'"\n]{1,512})['"]`),
		mustRx(`\b(?:rmtree|remove_tree|rm_rf|rm_r|rmSync|rm)\s*\(\s*(?:glob|Dir\.glob|Dir\[|glob\.glob)\s*\(?\s*['"]([^'"\n]{1,512})['"]`),
	}
	// codeAnyDelete finds every delete call whatever its argument, for
	// the ones whose target is computed (a variable, path.join, a
	// template string, os.path.expanduser(...)): the group is the
	// argument's first character.
	codeAnyDelete = mustRx(`\b(?:shutil\s*\.\s*rmtree|os\s*\.\s*(?:remove|unlink|rmdir|removedirs)|(?:fs|fsp|promises|fse|fsExtra)\s*\.\s*(?:rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync|remove|removeSync|emptyDir|emptyDirSync)|FileUtils\s*\.\s*(?:rm_rf|rm_r|rm|remove_dir|remove_entry|rmtree)|(?:File|Dir)\s*\.\s*(?:delete|unlink|rmdir)|Deno\s*\.\s*remove|rimraf(?:Sync|\.sync)?|rimraf['"]\s*\)\s*\.\s*(?:sync|rimrafSync)|deleteSync|remove_tree)\s*\(\s*(.)` +
		`|\.\s*(?:rmSync|rmdirSync|unlinkSync|removeSync|emptyDirSync)\s*\(\s*(.)`)
	// perlComputedDelete is a delete of a computed list (unlink glob
	// "x/*", unlink <*.sql>, unlink @files, unlink map {...}).
	perlComputedDelete = mustRx(`\bunlink\s*\(?\s*(?:glob\b|<|@|\$|map\b|grep\b)[^;]{0,60}`)
	// codeTreeDelete are the deletes that remove a whole tree.
	codeTreeDelete = mustRx(`rmtree|rm_rf|rm_r|remove_tree|recursive|removedirs|remove_dir`)
)

// codeInterpreters are the programs whose -c/-e code is read for writes
// and deletes.
var codeInterpreters = []string{"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php"}

// codeEffects adds to f the writes and deletes of literal paths that the
// interpreter code of its Runs makes.
func (s *Shield) codeEffects(f *Facts) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if !slices.Contains(codeInterpreters, r.Name) || len(r.Argv) < 2 {
			continue
		}
		code := strings.Join(r.Argv[1:], " ")
		if !slices.ContainsFunc(r.Argv[1:], func(a string) bool { return a == "-c" || a == "-e" || a == "-E" || a == "-r" || a == "--eval" }) {
			// The code comes on standard input (python3 - <<EOF):
			// the line's here-documents.
			for _, t := range f.Texts {
				if t.Source == "stdin" {
					code += "\n" + t.Body
				}
			}
		}
		if len(code) > maxTextJudged {
			code = code[:maxTextJudged]
		}
		for _, re := range codeWrite {
			for _, m := range re.FindAllStringSubmatch(code, 16) {
				if p := strings.TrimSpace(m[1]); p != "" && !strings.ContainsAny(p, "{}$") {
					f.Writes = append(f.Writes, Ref{Path: s.ResolvePath(p), By: r.Name})
				}
			}
		}
		for _, re := range codeDelete {
			for _, m := range re.FindAllStringSubmatch(code, 16) {
				if p := strings.TrimSpace(m[1]); p != "" && !strings.ContainsAny(p, "{}$") {
					f.Deletes = append(f.Deletes, Ref{Path: s.ResolvePath(p), Glob: strings.ContainsAny(p, "*?["), Tree: codeTreeDelete.MatchString(m[0]) || strings.Contains(code, "recursive"), By: r.Name})
				}
			}
		}
		// A delete whose target is computed at run time (a variable,
		// path.join, a template string with ${...}, expanduser): what
		// it deletes cannot be known, so it is not allowed.
		for _, m := range codeAnyDelete.FindAllStringSubmatchIndex(code, 16) {
			call := code[m[0]:min(len(code), m[1]+60)]
			g := 2
			if m[2] < 0 {
				g = 4
			}
			first := code[m[g]:m[g+1]]
			if first == "'" || first == `"` || first == "`" {
				// A literal (judged above) unless it is a template
				// with ${...} or is concatenated with something.
				rest := code[m[g+1]:min(len(code), m[g+1]+512)]
				if end := strings.Index(rest, first); end >= 0 && !(first == "`" && strings.Contains(rest[:end], "${")) &&
					!strings.HasPrefix(strings.TrimLeft(rest[end+1:], " "), "+") && !strings.HasPrefix(strings.TrimLeft(rest[end+1:], " "), "%") {
					continue
				}
			}
			f.Unknown = append(f.Unknown, r.Name+" code deletes a path computed at run time ("+clip(strings.TrimSpace(call), 80)+"): what it deletes cannot be known")
			break
		}
		// Perl's unlink takes a list without parentheses: a glob, a
		// <pattern>, an array or a map deletes what it computes.
		if m := perlComputedDelete.FindString(code); m != "" {
			f.Unknown = append(f.Unknown, r.Name+" code deletes paths computed at run time ("+clip(strings.TrimSpace(m), 80)+"): what it deletes cannot be known")
		}
	}
}

// patchEffects adds to f the files a patch given on the line (a
// here-document or here-string fed to git apply, git am or patch) writes,
// each with the lines it adds as its content: the rules that judge a
// write (an agent's instruction file, CI, a hook, a manifest's change, a
// test's skip) then judge the patch's targets. A patch read from a file
// is the engine's to read (judge.ShieldEvaluator.Manifests).
func (s *Shield) patchEffects(f *Facts) {
	for i := range f.Runs {
		r := &f.Runs[i]
		strip, by := -1, ""
		switch {
		case r.Name == "git" && slices.ContainsFunc(r.Argv, func(a string) bool { return a == "apply" || a == "am" }):
			if slices.ContainsFunc(r.Argv, func(a string) bool { return a == "--check" || a == "--stat" || a == "--numstat" || a == "--summary" }) {
				continue
			}
			by = "git apply"
		case r.Name == "patch":
			strip, by = 0, "patch"
			for k, a := range r.Argv {
				if a == "--dry-run" {
					by = ""
				}
				if a == "-p" && k+1 < len(r.Argv) {
					strip, _ = strconv.Atoi(r.Argv[k+1])
				} else if n, ok := strings.CutPrefix(a, "-p"); ok && n != "" {
					strip, _ = strconv.Atoi(n)
				} else if n, ok := strings.CutPrefix(a, "--strip="); ok {
					strip, _ = strconv.Atoi(n)
				}
			}
		}
		if by == "" {
			continue
		}
		for _, t := range f.Texts {
			if t.Source != "stdin" || !strings.Contains(t.Body, "\n+++ ") && !strings.HasPrefix(t.Body, "+++ ") && !strings.Contains(t.Body, "diff --git ") {
				continue
			}
			for _, pf := range manifest.Patch(t.Body, strip) {
				p := s.ResolvePath(pf.Path)
				f.Writes = append(f.Writes, Ref{Path: p, By: by})
				f.Texts = append(f.Texts, Text{Source: "content:" + p, Body: pf.Added})
			}
		}
	}
}
