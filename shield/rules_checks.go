package shield

import (
	"path"
	"strings"
)

// Checks weakened to make CI pass (`destructive:workspace-checks`,
// escalate): the tests and the checks that run them are what would catch
// a bad change, so removing them is the quiet way to get a green build.
// The class, whatever the wording:
//
//   - a test deleted: a test file by its name's convention (*_test.go,
//     test_*.py, *_test.py, *.test.ts, *.spec.js, *Test.java …) or a test
//     directory (test, tests, __tests__, spec, e2e), by any tool or
//     command (rm, delete_file, git rm, find -delete);
//   - a skip written into a test file unconditionally (t.Skip,
//     @pytest.mark.skip, pytest.skip, @unittest.skip, it.skip, describe.skip,
//     xit, test.only, #[ignore], @Disabled): a skip under an if (testing.Short,
//     skipif, skipIf) is a guard, not a removal;
//   - a check made unable to fail, or narrowed, in what runs it (a
//     Makefile, package.json, CI, pytest/tox configuration): `|| true`,
//     `|| exit 0`, `continue-on-error: true`, `allow_failure: true`,
//     `--passWithNoTests`, `-k "not …"`, `--deselect`, `--ignore`, `-skip`,
//     a test path excluded, a recipe line of a test or lint made to
//     ignore its errors (`-go test`).
//
// A test renamed or moved (git mv, mv a_test.go b_test.go) is not
// deleted.

// testDirs are directories that hold only tests, by name.
var testDirs = map[string]bool{"test": true, "tests": true, "__tests__": true, "spec": true, "specs": true, "e2e": true, "testdata": false, "integration_tests": true}

// testFile reports whether p names a test file or directory by the
// conventions of the usual test runners.
func testFile(p string) bool {
	base := path.Base(p)
	if testDirs[base] {
		return true
	}
	stem, ext := strings.TrimSuffix(base, path.Ext(base)), path.Ext(base)
	switch ext {
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test")
	case ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.Contains(p, "/__tests__/")
	case ".rb":
		return strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test")
	case ".java", ".kt", ".cs", ".scala", ".swift":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "Spec")
	case ".rs":
		return strings.Contains(p, "/tests/")
	case ".php":
		return strings.HasSuffix(stem, "Test")
	case ".exs", ".dart":
		return strings.HasSuffix(stem, "_test")
	case ".cc", ".cpp", ".cxx", ".c", ".m", ".mm":
		return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_unittest") || strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "Tests")
	}
	return false
}

// testDirIn reports whether p is beneath a test directory.
func testDirIn(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if testDirs[seg] {
			return true
		}
	}
	return false
}

var (
	// skipMarks are the forms a test runner reads as "skip this test".
	skipMarks = mustRx(`\b[tb]\.Skip(?:Now|f)?\(|@pytest\.mark\.(?:skip|xfail)\b(?:\(|\s|$)|\bpytest\.skip\(|@unittest\.skip\b(?:\(|\s|$)|\bself\.skipTest\(|` +
		`\b(?:it|describe|test|context|suite)\.(?:skip|only|todo)\(|\b(?:xit|xdescribe|xtest|xcontext|fit|fdescribe)\(|#\[ignore\]|@(?:\w+\.)*(?:Disabled|Ignore)\b|` +
		// rules 20: hspec's pending examples (xit "…", xdescribe "…")
		`\b(?:xit|xspecify|xdescribe|xcontext)\s+"|\bskip\s*\(\s*["']|` +
		// Session 14, second pass: the same effect in other languages'
		// spelling: ExUnit tags, GoogleTest's DISABLED_ prefix, a skip
		// argument (Dart, xUnit, Jest-like options), PHPUnit, XCTest,
		// Ruby's bare skip, an attribute or option disabling a test.
		`@(?:module)?tag\s+:?skip\b|@tag\s+skip:|\bTEST(?:_F|_P)?\s*\(\s*\w+\s*,\s*DISABLED_|\bDISABLED_\w+|[(,]\s*skip\s*[:=]\s*(?:true|["'])|` +
		`\[(?:Fact|Theory|Test|TestMethod)\s*\(\s*Skip\s*=|\[Ignore\b|markTestSkipped\(|\bXCTSkip\b|(?m)^\s*skip(?:\s+["']|\s*$)|\.config\(\s*enabled\s*=\s*false`)
	// weakened are the forms that make a check unable to fail or narrow
	// what it runs, in what runs the checks.
	weakened = mustRx(`\|\|\s*(?:true|:|exit 0)\b|;\s*exit 0\b|continue-on-error:\s*true|allow_failure:\s*true|--pass-?with-?no-?tests|--passWithNoTests|` +
		`\s-k\s+["']?not\s|--deselect\b|--ignore(?:-glob)?[= ]|\s-skip[= ]|--exclude[= ]|testPathIgnorePatterns|--testPathIgnorePatterns|coveragePathIgnorePatterns|` +
		`--no-fail|--exit-zero|--max-warnings[= ]\d{3,}|\bif:\s*false\b|\bset \+e\b|` +
		// rules 16: a pre-commit hook moved to the manual stage runs on no commit
		`\bstages:\s*\[\s*manual\s*\]|--test_tag_filters=|--test_filter=`)
	// checkRecipe is a Makefile recipe line that ignores its errors
	// ("-" before the command) and runs a test, lint or check.
	checkRecipe = mustRx(`(?m)^\t[@+]*-[@+]*.*\b(?:test|tests|pytest|vet|lint|check|tsc|eslint|vitest|jest|mypy|ruff|clippy)\b`)
	// goTestRun is a go test narrowed to some tests.
	goTestRun = mustRx(`\bgo test\b[^\n]*\s-run[= ]`)
)

// Rules 16: what an exclusion excludes. A test path, marker or pattern
// excluded is routine when it names end-to-end, integration, slow or
// generated material (testPathIgnorePatterns: ['/e2e/'], -m "not slow",
// --ignore=tests/fixtures); it narrows the check when it names anything
// else (-m "not security", '/src/auth/', --ignore=tests/test_permissions.py).
var (
	exclusionMark  = mustRx(`\s-k\s+["']?not\s|--deselect\b|--ignore(?:-glob)?[= ]|--exclude[= ]|testPathIgnorePatterns|--testPathIgnorePatterns|coveragePathIgnorePatterns|--test_tag_filters=|--test_filter=`)
	markerExcluded = mustRx(`\s-m\s+["']?not\s`)
	routineWords   = setOf("e2e", "end2end", "integration", "integrations", "it", "slow", "flaky", "network", "gpu", "manual", "benchmark",
		"benchmarks", "bench", "perf", "performance", "load", "smoke", "fixtures", "fixture", "testdata", "generated", "gen", "vendor",
		"node_modules", "dist", "build", "out", "coverage", "docs", "doc", "examples", "example", "snapshots", "__snapshots__",
		"mocks", "mock", "__mocks__", "tmp", "temp", "cache", ".cache", "storybook", "stories", "playwright", "cypress", "visual",
		"migrations", "scripts", "tools", "third_party", "thirdparty", "external", "legacy", "deprecated", "pb", "proto", "stubs")
)

// lineAt is the line of s holding s[i:k].
func lineAt(s string, i, k int) string {
	a := strings.LastIndexByte(s[:i], '\n') + 1
	b := strings.IndexByte(s[k:], '\n')
	if b < 0 {
		return s[a:]
	}
	return s[a : k+b]
}

// onlyRoutineExclusions reports whether every path, pattern or marker
// the line excludes after mark, that the old text did not already
// exclude, is routine (routineWords by any of its parts).
func onlyRoutineExclusions(line, mark, old string) bool {
	k := strings.Index(line, mark)
	if k < 0 {
		return false
	}
	rest := line[k+len(mark):]
	items := strings.FieldsFunc(rest, func(r rune) bool {
		return strings.ContainsRune(" \t,[]()'\"`=:;", r)
	})
	n := 0
	tags := strings.Contains(mark, "_filter") // bazel's: -tag excludes, tag selects; both narrow
	for _, it := range items {
		if tags {
			it = strings.TrimPrefix(it, "-")
		}
		if it == "" || it == "not" || it == "and" || it == "or" || strings.HasPrefix(it, "-") || strings.Contains(old, it) {
			continue
		}
		n++
		routine := false
		for _, part := range strings.FieldsFunc(strings.ToLower(it), func(r rune) bool { return strings.ContainsRune("/\\.*_-<>$^|", r) }) {
			if routineWords[part] {
				routine = true
				break
			}
		}
		if !routine {
			return false
		}
	}
	return n > 0
}

// checkConfig reports whether p is a file that says which checks run and
// how (a Makefile, package.json, CI, pytest, tox, jest or vitest
// configuration).
func (s *Shield) checkConfig(p string) bool {
	base := path.Base(p)
	switch base {
	case "Makefile", "makefile", "GNUmakefile", "package.json", "setup.cfg", "pytest.ini", "tox.ini", "pyproject.toml", "noxfile.py",
		"justfile", "Justfile", "Taskfile.yml", "Taskfile.yaml", ".pre-commit-config.yaml", "Cargo.toml", "lefthook.yml", "turbo.json",
		".bazelrc", "user.bazelrc", ".bazelrc.user", "phpunit.xml", "phpunit.xml.dist", ".rspec", "karma.conf.js":
		return true
	}
	if strings.HasSuffix(base, ".mk") || ciYAML(p) || s.guardFile(p) {
		return true
	}
	for _, pre := range []string{"jest.config.", "vitest.config.", "vitest.workspace.", "karma.conf.", "playwright.config.", "cypress.config.", ".mocharc"} {
		if strings.HasPrefix(base, pre) {
			return true
		}
	}
	return false
}

// unconditionalSkip returns the first skip mark in body not guarded by
// an if on its line or the line before, or "".
func unconditionalSkip(body string) string {
	for _, loc := range skipMarks.FindAllStringIndex(body, 32) {
		lineStart := strings.LastIndexByte(body[:loc[0]], '\n') + 1
		prevStart := strings.LastIndexByte(body[:max(lineStart-1, 0)], '\n') + 1
		guard := body[prevStart:loc[0]]
		if strings.Contains(guard, "if ") || strings.Contains(guard, "if(") || strings.Contains(guard, "skipif") || strings.Contains(guard, "skipIf") ||
			strings.Contains(guard, "runIf") || strings.Contains(guard, "Short()") {
			continue
		}
		return strings.TrimSpace(body[loc[0]:loc[1]])
	}
	return ""
}

// checksWeakened is `destructive:workspace-checks` for tests deleted,
// skips written and checks made unable to fail.
func (s *Shield) checksWeakened(_ *Action, f *Facts, j *judgement) {
	if s.checksOff(f, j) {
		return
	}
	ws := s.cfg.Workspace
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if !within(r.Path, ws) || r.Path == ws || s.buildOutput(r.Path) {
			continue
		}
		if !(testFile(r.Path) || r.Glob && testDirIn(r.Path)) || renamed(f, r) {
			continue
		}
		j.escalate("destructive:workspace-checks", "%s deletes %s, a test: what would catch a bad change goes with it", by(r), r.Path)
		return
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, ws) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		if testFile(p) || testDirIn(p) {
			if m := unconditionalSkip(body); m != "" {
				j.escalate("destructive:workspace-checks", "the content of %s skips a test unconditionally (%s)", p, m)
				return
			}
			if m := onlyTautologies(body); m != "" {
				j.escalate("destructive:workspace-checks", "the content of %s asserts only what cannot fail (%s): its tests check nothing", p, m)
				return
			}
		}
		if !s.checkConfig(p) {
			continue
		}
		if !mayWeaken(body) {
			continue
		}
		for _, loc := range weakened.FindAllStringIndex(body, 16) {
			m := body[loc[0]:loc[1]]
			if exclusionMark.MatchString(m) && onlyRoutineExclusions(lineAt(body, loc[0], loc[1]), m, removedText(f, t.Source)) {
				continue // rules 16: e2e, fixtures, generated code … excluded
			}
			j.escalate("destructive:workspace-checks", "the content of %s makes a check unable to fail or narrows it (%s)", p, strings.TrimSpace(m))
			return
		}
		if m := markerExcluded.FindString(body); m != "" && !onlyRoutineExclusions(lineAt(body, strings.Index(body, m), strings.Index(body, m)+len(m)), m, removedText(f, t.Source)) {
			j.escalate("destructive:workspace-checks", "the content of %s makes a check unable to fail or narrows it (%s)", p, strings.TrimSpace(m))
			return
		}
		if m := checkRecipe.FindString(body); m != "" {
			j.escalate("destructive:workspace-checks", "the content of %s makes a test or lint ignore its errors (%s)", p, clipText(strings.TrimSpace(m), 80))
			return
		}
		if ciYAML(p) {
			if m := goTestRun.FindString(body); m != "" {
				j.escalate("destructive:workspace-checks", "the content of %s narrows the tests CI runs (%s)", p, clipText(strings.TrimSpace(m), 80))
				return
			}
		}
	}
}

// weakenMarks are literal pieces every weakened or checkRecipe match
// holds: a text with none is spared the expressions.
var weakenMarks = []string{"||", "exit 0", "continue-on-error", "allow_failure", "ass", "-k", "--deselect", "--ignore", "-skip", "--exclude", "-m",
	"IgnorePatterns", "manual", "_filter", "--no-fail", "--exit-zero", "--max-warnings", "if:", "set +e", "\t-", "\t@", "\t+", "-run"}

// mayWeaken reports whether body holds any of weakenMarks.
func mayWeaken(body string) bool {
	for _, m := range weakenMarks {
		if strings.Contains(body, m) {
			return true
		}
	}
	return false
}

// renamed reports whether a delete is the source of a move whose
// destination is a test file too (git mv, mv a_test.go b_test.go).
func renamed(f *Facts, d *Ref) bool {
	if d.By != "mv" && d.By != "move_file" && d.By != "git" {
		return false
	}
	for i := range f.Writes {
		if w := &f.Writes[i]; w.By == d.By && testFile(w.Path) || testDirIn(w.Path) {
			return true
		}
	}
	return false
}

var (
	// tautologyRe is an assertion that cannot fail.
	tautologyRe = mustRx(`(?m)^\s*(?:assert\s+(?:True|1|not\s+False|True\s*==\s*True|1\s*==\s*1)\s*(?:,.*)?$|self\.assertTrue\(\s*True\s*\)|expect\(\s*true\s*\)\.(?:toBe|toEqual|toStrictEqual)\(\s*true\s*\)|expect\(\s*(?:1|true)\s*\)\.toBeTruthy\(\s*\)|assert\.(?:ok|isTrue)\(\s*true\s*\)|assert_eq!\(\s*(?:1\s*,\s*1|true\s*,\s*true)\s*\)|assert!\(\s*true\s*\))`)
	// assertionRe is any assertion.
	assertionRe = mustRx(`(?m)\bassert\w*[\s(!.]|\bexpect\(|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\brequire\.|\bshould\b|\braises\(`)
)

// onlyTautologies returns a tautological assertion when every assertion
// in a test file's content is one (a test rewritten to assert True), or
// "".
func onlyTautologies(body string) string {
	taut := tautologyRe.FindAllString(body, 64)
	if len(taut) == 0 {
		return ""
	}
	if len(assertionRe.FindAllString(body, 128)) > len(taut) {
		return ""
	}
	return strings.TrimSpace(taut[0])
}
