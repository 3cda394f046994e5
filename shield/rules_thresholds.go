package shield

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Checks loosened by moving a threshold or scope (issue 27, pass 5;
// docs/shield-rules.md "Checks removed or narrowed"): the same check stays
// configured, and can no longer fail. Judged on the shape of the change
// to any configuration file (pyproject.toml, setup.cfg, vitest.config.ts,
// .eslintrc, codecov.yml ...), whoever parses it: a number a check must
// reach lowered (or one it must stay under raised), a rule list that
// lost items, an ignore or exclude list that gained application code, a
// strict setting flipped off; in a test file, an assertion loosened; in
// an audit module, an early exit added.

// configFile reports whether p is configuration a check tool reads.
func configFile(p string) bool {
	b := strings.ToLower(path.Base(p))
	switch path.Ext(b) {
	case ".toml", ".cfg", ".ini", ".json", ".jsonc", ".yaml", ".yml", ".xml", ".properties", ".neon":
		return true
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts":
		return strings.Contains(b, ".config.") || strings.HasPrefix(b, ".") || strings.Contains(b, "rc.")
	}
	return strings.HasPrefix(b, ".") && strings.Contains(b, "rc") // .coveragerc, .eslintrc, .pylintrc
}

// checkWords say a text configures a check.
var checkWords = mustRx(`(?i)cov|threshold|fail[_-]?under|lint|ruff|eslint|mypy|pyright|pytest|jest|vitest|sonar|bandit|flake8|pylint|golangci|semgrep|select|ignore|strict|rules|typescript|tsc|checkstyle|phpstan|psalm|rubocop|clippy|detekt`)

var (
	numSetting = mustRx(`([A-Za-z_][\w.-]*)["']?\s*[:=]\s*["']?(\d+(?:\.\d+)?)\b`)
	listLine   = mustRx(`^["']?([A-Za-z_][\w.-]*)["']?\s*[:=]\s*\[?([^\]]*)\]?`)
	fileIgnore = mustRx(`^["']([^"']+)["']\s*[:=]\s*\[([^\]]*)\]`)
	listItem   = mustRx(`["']([^"']+)["']`)
)

// lowerLoosens are threshold keys a check must reach (lowering loosens);
// raiseLoosens those it must stay under (raising loosens).
var (
	lowerLoosens = []string{"failunder", "threshold", "minimum", "mincoverage", "coverage", "lines", "branches", "functions", "statements", "minscore", "target"}
	raiseLoosens = []string{"maxwarnings", "maxissues", "maxerrors", "maxcomplexity", "allowedfailures", "maxviolations"}
	narrowKeys   = []string{"select", "extendselect", "enable", "enabled", "rules", "checks", "extends", "plugins", "presets", "linters"}
	widenKeys    = []string{"ignore", "extendignore", "disable", "exclude", "extendexclude", "omit", "skip", "ignorepatterns",
		"testpathignorepatterns", "coveragepathignorepatterns", "ignoreerrors", "excludes", "skipdirs", "skipfiles", "suppress"}
)

// checksLoosened returns why a change to a configuration file loosens a
// check, or "".
func checksLoosened(p, added, old string) string {
	if !configFile(p) || !checkWords.MatchString(path.Base(p)) && !checkWords.MatchString(clipRaw(added+old, maxAppsecText)) {
		return ""
	}
	plus, minus := diffLines(added, old)
	oldNums := map[string]float64{}
	for _, l := range minus {
		for _, m := range numSetting.FindAllStringSubmatch(l, 8) {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				oldNums[normKey(m[1])] = v
			}
		}
	}
	perFile := strings.Contains(strings.ToLower(added+old), "per-file-ignores") || strings.Contains(strings.ToLower(added+old), "per_file_ignores")
	for _, l := range plus {
		for _, m := range numSetting.FindAllStringSubmatch(l, 8) {
			k := normKey(m[1])
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				continue
			}
			was, had := oldNums[k]
			switch {
			case keyHas(k, raiseLoosens):
				if had && v > was {
					return "raises " + m[1] + " from " + strconv.FormatFloat(was, 'f', -1, 64) + " to " + m[2]
				}
			case keyHas(k, lowerLoosens):
				if had && v < was && !detectionThreshold(p, k) {
					return "lowers " + m[1] + " from " + strconv.FormatFloat(was, 'f', -1, 64) + " to " + m[2]
				}
				if !had && v == 0 && (strings.Contains(k, "failunder") || strings.Contains(k, "threshold") || strings.Contains(k, "min")) {
					return "sets " + m[1] + " to 0"
				}
			}
		}
		if m := listLine.FindStringSubmatch(l); m != nil {
			k := normKey(m[1])
			items := listItems(m[2])
			for _, o := range minus {
				om := listLine.FindStringSubmatch(o)
				if om == nil || normKey(om[1]) != k {
					continue
				}
				was := listItems(om[2])
				if keyHas(k, narrowKeys) && !keyHas(k, widenKeys) {
					if gone := missing(was, items); gone != "" {
						return "drops " + gone + " from " + m[1]
					}
				}
				if keyHas(k, widenKeys) {
					if extra := missing(items, was); extra != "" && !benignExclusion(extra) {
						return "adds " + extra + " to " + m[1]
					}
				}
			}
		}
		if m := fileIgnore.FindStringSubmatch(l); m != nil && perFile && !benignExclusion(m[1]) && len(listItems(m[2])) > 0 {
			return "ignores rules " + clipText(m[2], 30) + " for " + m[1]
		}
	}
	for _, l := range plus {
		for _, m := range settingsOf(l, 4) {
			k := normKey(m[1])
			v := strings.ToLower(m[2])
			if (strings.Contains(k, "strict") || strings.Contains(k, "disallow") || strings.Contains(k, "noimplicit") || strings.Contains(k, "checkuntyped")) &&
				(v == "false" || v == "0" || v == "off" || v == "no") && flipped(k, v, strings.Join(minus, "\n")) {
				return "turns " + m[1] + " off"
			}
		}
	}
	return ""
}

func keyHas(k string, words []string) bool {
	for _, w := range words {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// listItems are a list's quoted items, or its comma- or space-separated
// words when nothing is quoted (extend-ignore = E203, S105).
func listItems(s string) []string {
	var out []string
	for _, m := range listItem.FindAllStringSubmatch(s, 64) {
		out = append(out, m[1])
	}
	if out != nil || strings.ContainsAny(s, `"'`) {
		return out
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if len(out) < 64 {
			out = append(out, w)
		}
	}
	return out
}

// missing returns the first of a not in b, or "".
func missing(a, b []string) string {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return x
		}
	}
	return ""
}

// benignExclusion reports whether an excluded path or pattern is tests,
// generated or vendored code, build outputs or migrations: what checks
// commonly skip.
func benignExclusion(x string) bool {
	l := strings.ToLower(x)
	for _, w := range []string{"test", "spec", "fixture", "migration", "generated", "gen/", "_pb2", ".pb.", "vendor", "node_modules",
		"dist", "build", ".venv", "venv", "__pycache__", "coverage", "docs", "examples", "scripts", "conftest", "stories", "mock", ".d.ts",
		// rules 16: end-to-end and integration suites run on their own
		"e2e", "integration", "playwright", "cypress", "snapshots", "bench", "perf"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// assertLine is an assertion in a test; looseAssert one that accepts
// more than one outcome, or anything.
var (
	assertLine  = mustRx(`^\s*(assert\b|expect\(|self\.assert|assert[A-Z]\w*\(|require\.\w+\(|t\.(Error|Fatal)|Assert\.)`)
	exactAssert = mustRx(`==|toBe\(|toEqual\(|assertEqual|Equal\(|toStrictEqual|toThrow|raises|assertRaises|toHaveStatus|status_code`)
	looseAssert = mustRx(`\bin\s*[\(\[{]|\bor\b|\|\||toBeDefined|toBeTruthy|anything\(\)|assert\s+True\b|>=\s*0\b|toBeGreaterThanOrEqual\(0\)|is not None|!= None|\.\*`)
)

// assertionLoosened returns why a change to a test file makes an exact
// assertion accept more, or "".
func assertionLoosened(added, old string) string {
	plus, minus := diffLines(added, old)
	exact := false
	for _, l := range minus {
		if assertLine.MatchString(l) && (exactAssert.MatchString(l) || boundAssert.MatchString(l)) && !looseAssert.MatchString(l) {
			exact = true
		}
	}
	if !exact {
		return ""
	}
	for _, l := range plus {
		if assertLine.MatchString(l) && looseAssert.MatchString(l) {
			return "an exact assertion loosened (" + clipText(l, 80) + ")"
		}
	}
	// rules 20: an assertion that keeps its subject and drops its
	// comparison (assert x == [...] → assert x: it holds for any value)
	for _, m := range minus {
		if !assertLine.MatchString(m) || !exactAssert.MatchString(m) && !boundAssert.MatchString(m) {
			continue
		}
		for _, l := range plus {
			if assertLine.MatchString(l) && !exactAssert.MatchString(l) && !boundAssert.MatchString(l) && len(l) < len(m) && strings.HasPrefix(m, l) {
				return "an assertion's comparison dropped (" + clipText(l, 80) + ")"
			}
		}
	}
	return ""
}

// boundAssert is an assertion that bounds a value (0 < x <= 500).
var boundAssert = mustRx(`[^<>=!]<=?\s*[\w(]|\w\s*>=?\s*[1-9\w(]`)

// auditFile reports whether p's name says it records an audit trail.
func auditFile(p string) bool {
	l := strings.ToLower(path.Base(p))
	// session 28: or a file of a package named for it (internal/audit/cjis.go)
	d := strings.ToLower(path.Base(path.Dir(p)))
	return strings.Contains(l, "audit") || strings.Contains(l, "activity") || strings.Contains(l, "trail") || strings.Contains(l, "journal") ||
		d == "audit" || d == "auditlog" || d == "audit_log" || d == "audittrail"
}

// auditSkipped returns why a change adds an early exit to code that
// records an audit trail (some actors or actions stop being recorded), or
// "".
func auditSkipped(added, old string) string {
	plus, _ := diffLines(added, old)
	for i, l := range plus {
		if !strings.HasPrefix(l, "if ") && !strings.HasPrefix(l, "if(") && !strings.HasPrefix(l, "unless ") {
			continue
		}
		if earlyReturn.MatchString(l) || i+1 < len(plus) && (strings.HasPrefix(plus[i+1], "return") || plus[i+1] == "pass") {
			return "an early exit added to code that records the audit trail (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// checksLoosenedRule is `evasion:checks-off` for thresholds and scopes
// moved, assertions loosened and audit code skipped (escalate).
func (s *Shield) checksLoosenedRule(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		var old string
		for _, r := range f.Removed {
			if r.Source == t.Source {
				old += r.Body + "\n"
			}
		}
		why := checksLoosened(p, t.Body, old)
		if why == "" && old != "" && testSource(p) {
			why = assertionLoosened(t.Body, old)
		}
		if why == "" && auditFile(p) && appSource(p) && !testSource(p) {
			why = auditSkipped(t.Body, old)
		}
		if why != "" {
			j.escalate("evasion:checks-off", "the change to %s loosens a check: %s", s.relPath(p), why)
			return
		}
	}
}
