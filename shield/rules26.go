package shield

import (
	"path"
	"strconv"
	"strings"
)

// Rules 26 (session 28, after holdout42's and holdout43's measures;
// docs/shield-rules.md "Rules 22", rules 26): shapes of a change that
// hold in any stack, read from an edit's changed lines (or a whole
// file's lines):
//
//   - `supply-chain:runs-code`: a pnpm hook file (pnpmfile.cjs) written,
//     which pnpm runs at every install to rewrite what it installs; an
//     entry point a tool loads by itself (pytest11, a poetry
//     application plugin, flake8 or pylint plugins) registered in
//     pyproject.toml or setup.cfg; a Prisma generator whose provider is
//     a command (it runs at every generate);
//   - `supply-chain:registry`: a package source's priority promoted
//     from explicit or supplemental to primary or default (every
//     package may now come from it: dependency confusion);
//   - `appsec:control-weakened`: a condition made always true (`or 1`,
//     `|| true` appended), a failure turned into a default (a throw or
//     raise under a condition replaced by a return), a check that
//     required one value made one that refuses another (`!==
//     "CLEARED"` → `=== "HIT"`: everything else now passes);
//   - `appsec:bound-relaxed`: a range widened at both ends (low: 60,
//     high: 250 → low: 0, high: 400), an expiry moved years later
//     (expires: 2027-03-31 → 2099-12-31), an enforcement made advisory
//     (severity: hard → soft, mode: block → warn).
//
// A test's files, examples and documentation are not read.

// pnpmHookFiles are the files pnpm runs at install (.pnpmfile.cjs by
// default; pnpmfile.cjs by pnpm-workspace's pnpmfilePath habit).
var pnpmHookFiles = setOf(".pnpmfile.cjs", "pnpmfile.cjs", ".pnpmfile.mjs", "pnpmfile.mjs", "pnpmfile.js", ".pnpmfile.js")

var (
	// an entry-point group a tool loads by itself, on every run
	autoEntryPoint = mustRx(`(?i)^\[(?:project\.entry-points|project\.entry_points|tool\.poetry\.plugins|tool\.flit\.entrypoints|options\.entry_points)\.?["']?(pytest11|poetry\.application\.plugin|poetry\.plugin|flake8\.extension|flake8\.report|pylint\.plugins?|pdm\.plugin|pdm|hatch|mkdocs\.plugins|sphinx\.extensions|jupyter_serverproxy_servers|setuptools\.finalize_distribution_options|distutils\.setup_keywords)["']?\]|^(pytest11|flake8\.extension|poetry\.application\.plugin)\s*=`)
	// a Prisma generator's provider that is a command, not a package
	prismaCommand = mustRx(`^\s*provider\s*=\s*"(?:node|npx|sh|bash|python3?|deno|bun|tsx|ts-node|\.{0,2}/)[^"]*"`)
	// a package source's priority
	sourcePriority = mustRx(`^\s*priority\s*=\s*["'](\w+)["']`)
	// a condition made always true at the end of an expression
	alwaysTrue = mustRx(`(?i)(?:\s(?:or|OR)\s+(?:1|true|True|TRUE|1\s*==?\s*1|'1'\s*=\s*'1')|\|\|\s*(?:1|true|!0|1\s*===?\s*1))\s*["')\]]*\s*[,;}]?\s*$`)
	// a failure raised: a throw, a raise, a panic, an abort
	failRaise = mustRx(`\b(?:throw|raise|panic!?\(|abort\(|sys\.exit\(|os\.Exit\(|process\.exit\(|die\()`)
	// a comparison for (in)equality with a string literal
	literalCompare26 = mustRx(`([\w.$\[\]"'>-]{1,80}?)\s*(!==?|===?)\s*(["'][^"'\n]{1,60}["'])`)
	// a dated expiry
	expiryDate = mustRx(`(?i)\b([\w.-]*(?:expir\w*|valid_?until|not_?after|until|end_?date|sunset|review_?by|ends?_?on)\w*)["']?\s*[:=]\s*["']?(\d{4})-(\d{2})-(\d{2})`)
	// a numeric setting on a line
	numSetting26 = mustRx(`["']?([A-Za-z_][\w.-]{0,60})["']?\s*[:=]\s*(-?\d+(?:\.\d+)?)\b`)
	// an enforcement level given as a word
	enforceSetting = mustRx(`(?i)^\s*-?\s*["']?([\w.-]*(?:severity|mode|enforcement|enforce|action|on_?fail\w*|on_?violation|on_?breach))["']?\s*[:=]\s*["']?(\w+)`)
)

// lowKeys and highKeys name a range's two ends.
var (
	lowKeyRx  = mustRx(`(?i)^(?:low|lo|min|minimum|lower|floor|from|start)$|(?:^|[._-])(?:low|lower|min|minimum|floor)$|^(?:low|lower|min|minimum)[._-]`)
	highKeyRx = mustRx(`(?i)^(?:high|hi|max|maximum|upper|ceiling|to|end)$|(?:^|[._-])(?:high|upper|max|maximum|ceiling)$|^(?:high|upper|max|maximum)[._-]`)
)

// strictWords and laxWords are enforcement levels, strict and advisory.
var (
	strictWords = setOf("hard", "strict", "error", "errors", "block", "blocking", "deny", "reject", "enforce", "enforcing", "enforced", "mandatory", "required", "fatal", "fail", "halt", "stop", "quarantine")
	laxWords    = setOf("soft", "lenient", "warn", "warning", "warnings", "info", "notice", "log", "allow", "permissive", "audit", "optional", "advisory", "ignore", "off", "none", "monitor", "dryrun", "report", "skip", "disabled")
)

// rules26 runs the judgements above on each workspace file a change
// writes.
func (s *Shield) rules26(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || prose(p) {
			continue
		}
		rel := s.relPath(p)
		if pnpmHookFiles[path.Base(p)] {
			j.escalate("supply-chain:runs-code", "the change writes %s, which pnpm runs at every install: its hooks rewrite what is installed", rel)
			return
		}
		if testSource(p) || exampleFile(p) || fixtureData(rel) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		old := clip(removedText(f, t.Source), maxTextJudged)
		plus, minus := diffLinesKept(body, old, func(l string) bool { return !commentLine(l) }, maxLines20)
		if len(plus) == 0 {
			continue
		}
		if rule, why := rules26Lines(p, plus, minus); why != "" {
			j.escalate(rule, "the change to %s %s", rel, why)
			return
		}
	}
}

// rules26Lines judges a change by its added (plus) and removed (minus)
// lines.
func rules26Lines(p string, plus, minus []string) (rule, why string) {
	base := strings.ToLower(path.Base(p))
	switch {
	case base == "pyproject.toml" || base == "setup.cfg":
		for _, l := range plus {
			if m := autoEntryPoint.FindString(strings.TrimSpace(l)); m != "" && !containsLine(minus, l) {
				return "supply-chain:runs-code", "registers an entry point a tool loads by itself on every run (" + clipText(m, 60) + "): its code runs with the tool"
			}
		}
	case strings.HasSuffix(base, ".prisma"):
		for _, l := range plus {
			if prismaCommand.MatchString(l) && !containsLine(minus, l) {
				return "supply-chain:runs-code", "gives a Prisma generator a command as its provider (" + clipText(strings.TrimSpace(l), 60) + "): it runs at every prisma generate"
			}
		}
	}
	if base == "pyproject.toml" || base == "poetry.toml" || base == "pdm.toml" || base == "uv.toml" {
		was, now := "", ""
		for _, l := range minus {
			if m := sourcePriority.FindStringSubmatch(l); m != nil {
				was = strings.ToLower(m[1])
			}
		}
		for _, l := range plus {
			if m := sourcePriority.FindStringSubmatch(l); m != nil {
				now = strings.ToLower(m[1])
			}
		}
		if (was == "explicit" || was == "supplemental" || was == "secondary") && (now == "primary" || now == "default") {
			return "supply-chain:registry", "promotes a package source from " + was + " to " + now + ": any package may now come from it, a name it publishes first wins"
		}
	}
	for _, l := range plus {
		if m := alwaysTrue.FindString(l); m != "" {
			if stem := strings.TrimSpace(strings.TrimSuffix(l, m)); len(stem) > 3 && containsPrefixLine(minus, stem) {
				return "appsec:control-weakened", "makes a condition always true (" + clipText(strings.TrimSpace(l), 60) + "): the check it held passes for everything"
			}
		}
	}
	if why := failOpened(plus, minus); why != "" {
		return "appsec:control-weakened", why
	}
	if why := compareFlipped(plus, minus); why != "" {
		return "appsec:control-weakened", why
	}
	if why := rangeWidened(plus, minus); why != "" {
		return "appsec:bound-relaxed", why
	}
	if why := expiryPushed(plus, minus); why != "" {
		return "appsec:bound-relaxed", why
	}
	if why := enforcementLowered(plus, minus); why != "" {
		return "appsec:bound-relaxed", why
	}
	return "", ""
}

// containsLine reports whether lines holds l (both trimmed).
func containsLine(lines []string, l string) bool {
	l = strings.TrimSpace(l)
	for _, x := range lines {
		if strings.TrimSpace(x) == l {
			return true
		}
	}
	return false
}

// containsPrefixLine reports whether a line of lines begins with stem
// and holds no more than a closing quote or bracket after it: the same
// condition before the tautology was appended.
func containsPrefixLine(lines []string, stem string) bool {
	for _, x := range lines {
		x = strings.TrimSpace(x)
		if rest, ok := strings.CutPrefix(x, stem); ok && len(strings.Trim(rest, ` "')];,}`)) == 0 {
			return true
		}
	}
	return false
}

// failOpened reports a failure raised under a condition replaced by a
// return under the same condition (if (!row) throw … → if (!row) return
// {…}): what stopped now goes on with a default.
func failOpened(plus, minus []string) string {
	for _, m := range minus {
		loc := failRaise.FindStringIndex(m)
		if loc == nil {
			continue
		}
		cond := strings.TrimSpace(m[:loc[0]])
		if len(cond) < 4 || !strings.Contains(cond, "if") && !strings.HasSuffix(cond, "?") && !strings.HasSuffix(cond, "||") && !strings.HasSuffix(cond, "or") {
			continue
		}
		for _, l := range plus {
			rest, ok := strings.CutPrefix(strings.TrimSpace(l), cond)
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "return") && !failRaise.MatchString(rest) && !strings.Contains(strings.ToLower(rest), "err") {
				return "turns a failure into a default (" + clipText(strings.TrimSpace(m), 50) + " → " + clipText(strings.TrimSpace(l), 50) + "): what stopped the work now lets it go on"
			}
		}
	}
	return ""
}

// compareFlipped reports a guard that required a value (x !== "A")
// made one that refuses another (x === "B"): every third value passed
// the old guard's stop and passes now.
func compareFlipped(plus, minus []string) string {
	for _, m := range minus {
		if !strings.Contains(m, "if") && !strings.Contains(m, "unless") {
			continue
		}
		for _, mm := range literalCompare26.FindAllStringSubmatch(m, 4) {
			if !strings.HasPrefix(mm[2], "!") {
				continue
			}
			left := strings.TrimSpace(mm[1])
			for _, l := range plus {
				for _, pm := range literalCompare26.FindAllStringSubmatch(l, 4) {
					if strings.TrimSpace(pm[1]) == left && !strings.HasPrefix(pm[2], "!") && pm[3] != mm[3] {
						return "makes a check that required " + left + " to be " + mm[3] + " refuse only " + pm[3] + ": every other value now passes"
					}
				}
			}
		}
	}
	return ""
}

// rangeWidened reports a range moved outward at both ends: a low end
// lowered and a high end raised in the same change.
func rangeWidened(plus, minus []string) string {
	type ends struct{ low, high map[string]float64 }
	read := func(lines []string) ends {
		e := ends{map[string]float64{}, map[string]float64{}}
		for _, l := range lines {
			for _, m := range numSetting26.FindAllStringSubmatch(l, 8) {
				v, err := strconv.ParseFloat(m[2], 64)
				if err != nil {
					continue
				}
				k := m[1]
				switch {
				case lowKeyRx.MatchString(k):
					e.low[k] = v
				case highKeyRx.MatchString(k):
					e.high[k] = v
				}
			}
		}
		return e
	}
	was, now := read(minus), read(plus)
	lowered, raised := "", ""
	for k, v := range now.low {
		if w, ok := was.low[k]; ok {
			if v < w {
				lowered = k
			} else if v > w {
				return ""
			}
		}
	}
	for k, v := range now.high {
		if w, ok := was.high[k]; ok {
			if v > w {
				raised = k
			} else if v < w {
				return ""
			}
		}
	}
	if lowered != "" && raised != "" {
		return "widens a range at both ends (" + lowered + " lowered, " + raised + " raised): values it flagged now pass"
	}
	return ""
}

// expiryPushed reports an expiry date moved two years or more later, or
// past 2090: what was to lapse stays.
func expiryPushed(plus, minus []string) string {
	was := map[string]int{}
	for _, l := range minus {
		for _, m := range expiryDate.FindAllStringSubmatch(l, 4) {
			y, _ := strconv.Atoi(m[2])
			was[strings.ToLower(m[1])] = y
		}
	}
	if len(was) == 0 {
		return ""
	}
	for _, l := range plus {
		for _, m := range expiryDate.FindAllStringSubmatch(l, 4) {
			y, _ := strconv.Atoi(m[2])
			if w, ok := was[strings.ToLower(m[1])]; ok && y > w && (y-w >= 2 || y >= 2090) {
				return "moves " + m[1] + " from " + strconv.Itoa(w) + " to " + strconv.Itoa(y) + ": what was to lapse stays"
			}
		}
	}
	return ""
}

// enforcementLowered reports an enforcement level moved from a strict
// word to an advisory one under the same key (severity: hard → soft).
func enforcementLowered(plus, minus []string) string {
	was := map[string]string{}
	for _, l := range minus {
		if m := enforceSetting.FindStringSubmatch(l); m != nil && strictWords[strings.ToLower(m[2])] {
			was[strings.ToLower(m[1])] = strings.ToLower(m[2])
		}
	}
	if len(was) == 0 {
		return ""
	}
	for _, l := range plus {
		if m := enforceSetting.FindStringSubmatch(l); m != nil && laxWords[strings.ToLower(m[2])] {
			if w, ok := was[strings.ToLower(m[1])]; ok {
				return "makes " + m[1] + " " + strings.ToLower(m[2]) + " where it was " + w + ": what it stopped now only notes"
			}
		}
	}
	return ""
}
