package shield

import (
	"path"
	"strconv"
	"strings"
)

// Gates loosened by a change of one value, and source hidden from git
// (rules 17; docs/shield-rules.md "Rules 17: gates loosened, source
// hidden"). The class, whatever the tool:
//
//   - evasion:gate-lowered (escalate): an edit that keeps a line as it was
//     but for one value, where the line is a gate and the value moves the
//     way that lets more through — a coverage floor lowered (minimum =
//     0.80 → 0.40, fail_under, --cov-fail-under, coverageThreshold's
//     branches/lines in a test runner's configuration), a ceiling raised
//     (max-warnings, max complexity, allowed failures), the level a
//     scanner fails at raised or turned off (exit: "low" → false,
//     fail-on: high, severity threshold), a guard named for what it
//     protects switched off (Audit:FailClosed true → false); a key
//     renamed out of use (signs: → signs_disabled:, x-verify:); a check
//     script replaced by a command that cannot fail ("api:check": "true").
//     After holdout16's measure, the same pairing also asks about an
//     exact version made a range or a branch, an alerting rule's
//     threshold moved five times away from firing, a retention floor
//     dropped, a value that trusts or forgets (reject → trust,
//     persistent → volatile), an old TLS protocol, an exposure switched
//     on (root login, raw_exec), a value naming another environment now
//     naming production.
//   - evasion:hidden-file (escalate), wider: an ignore line that hides
//     source the repository tracks — a guard file at any depth
//     (crates/geo/build.rs), a file of code or build configuration, a
//     directory inside a source tree (src/**/Audit/, db/Security/) —
//     rather than outputs, caches, logs, local settings or secrets.
//   - evasion:checks-off: a check script given a success exit before
//     its other lines ([[ -n "$CI" ]] || exit 0).
//   - appsec:control-weakened: an output statement that drops its HTML
//     escaper; a call that drops the shell quoting of its value.
//   - supply-chain:source: a line's one URL moved to another
//     organisation's host, outside prose.

// gateLowerWords name a floor: a lower value lets more through.
var gateLowerWords = mustRx(`(?i)cover|fail.?under|jacoco|codecov|min.?coverage|\bminimum\b|min_?score|min.?pass|release.?age|cooldown|stability.?days|min.?age\b|minimum.?age|^\s*rotate\b|retention|retain|keep.?(?:days|last|count)|max.?age|maxage|days.?to.?keep|history.?limit`)

// gateRunnerConfig is a test runner's or coverage tool's configuration,
// where branches/lines/statements/functions are floors.
var gateRunnerConfig = mustRx(`(?i)^(jest|vitest|karma|nyc|c8|codecov|\.nycrc|\.c8rc|\.coveragerc|coverage|\.codecov)`)

// gateCounts are the floors a runner's coverage block names.
var gateCounts = mustRx(`(?i)\b(branches|lines|statements|functions)\b`)

// gateRaiseWords name a ceiling: a higher value lets more through.
var gateRaiseWords = mustRx(`(?i)max.?warnings|max.?errors|max.?issues|max.?problems|max.?violations|max.?complexity|maxcomplexity|allowed.?failures|error.?budget`)

// gateLevelKeys name the severity a scanner fails at.
var gateLevelKeys = mustRx(`(?i)\b(exit|exit.?code|fail.?on|fail.?level|fail.?severity|severity.?threshold|fail.?build|break.?build|audit.?level|error.?on)\b`)

// guardFlagWords name what a boolean guard protects.
var guardFlagWords = mustRx(`(?i)audit|fail.?closed|enforce|verify|verif|strict|signature|sign(ed|ing)?\b|encrypt|tls|ssl|csrf|rate.?limit|require.?auth|authenticat|authoriz`)

// numberRe is a number in a line (a decimal, a percentage's digits).
var numberRe = mustRx(`\d+(?:\.\d+)?`)

// severityRank orders the levels a scanner can fail at.
var severityRank = map[string]int{"info": 1, "low": 2, "minor": 2, "moderate": 3, "medium": 3, "warning": 3, "major": 4, "high": 4, "error": 4, "critical": 5, "blocker": 5}

// offValue is a value that turns a setting off.
func offValue(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"' ,;`)) {
	case "false", "off", "none", "never", "no", "0", "disabled", "":
		return true
	}
	return false
}

// gateLowered is the rule.
func (s *Shield) gateLowered(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue
		}
		if checkScript(p) {
			if l := scriptExitsEarly(t.Body, old); l != "" {
				j.escalate("evasion:checks-off", "the change to %s makes the check end early (%s): what follows no longer runs", s.relPath(p), clipText(l, 60))
				return
			}
		}
		plus, minus := diffLines(t.Body, old)
		if len(plus) == 0 || len(minus) == 0 {
			continue
		}
		if why := loosenedLine(path.Base(p), clipRaw(t.Body, 2048), plus[:min(len(plus), 64)], minus[:min(len(minus), 64)]); why != "" {
			j.escalate("evasion:gate-lowered", "the change to %s loosens a gate: %s", s.relPath(p), why)
			return
		}
		if m := escapeDropped(plus[:min(len(plus), 64)], minus[:min(len(minus), 64)]); m != "" && !testSource(p) {
			j.escalate("appsec:control-weakened", "the change to %s writes out a value it escaped before (%s): cross-site scripting", s.relPath(p), clipText(m, 80))
			return
		}
		if why := originMoved(plus[:min(len(plus), 64)], minus[:min(len(minus), 64)]); why != "" && !proseFile(p) {
			j.escalate("supply-chain:source", "the change to %s moves where something is fetched from: %s", s.relPath(p), why)
			return
		}
		if m := evalOfArguments(plus[:min(len(plus), 64)], minus); m != "" && !testSource(p) {
			j.escalate("appsec:control-weakened", "the change to %s evaluates its arguments as shell (%s): an argument with ; or $( ) runs its own commands", s.relPath(p), clipText(m, 80))
			return
		}
		if m := shellQuoteDropped(plus[:min(len(plus), 64)], minus[:min(len(minus), 64)]); m != "" && !testSource(p) {
			j.escalate("appsec:control-weakened", "the change to %s hands a value to a shell it quoted before (%s): a value with ; or $( ) runs its own commands", s.relPath(p), clipText(m, 80))
			return
		}
	}
}

// loosenedLine pairs each removed line with an added line that differs
// from it in one value (or one key's name) and says how that loosens a
// gate, or "".
func loosenedLine(base, context string, plus, minus []string) string {
	for _, m := range minus {
		m = strings.TrimSpace(m)
		for _, pl := range plus {
			pl = strings.TrimSpace(pl)
			if why := loosened(base, context, m, pl); why != "" {
				return why
			}
		}
	}
	return ""
}

// loosened says how line was became line now, if it loosens a gate;
// context is the change's text around it (a short setting's block:
// plugin "raw_exec" { … enabled = true).
func loosened(base, context, was, now string) string {
	if was == now || len(was) > 400 || len(now) > 400 {
		return ""
	}
	// a key renamed out of use: signs: → signs_disabled:, x-signs:
	if kw, rw, ok := keyOf(was); ok {
		if kn, rn, ok := keyOf(now); ok && rw == rn && kn != kw && renamedOff(kw, kn) {
			return "the key " + quote(kw) + " is renamed " + quote(kn) + ", which no tool reads"
		}
		// a check script replaced by what cannot fail
		if kn, rn, ok := keyOf(now); ok && kn == kw && checkName.MatchString(kw) && !noOp(rw) && noOp(rn) {
			return quote(kw) + " now runs " + quote(rn) + ", which cannot fail"
		}
	}
	// one number moved
	ws, wn := splitNumbers(was)
	ns, nn := splitNumbers(now)
	// an alerting rule's threshold moved five times or more the way that
	// fires less (> 0.02 → > 0.2)
	if alertRules(base) && ws == ns && len(wn) == len(nn) {
		if why := thresholdMoved(ws, wn, nn); why != "" {
			return why
		}
	}
	if ws == ns && len(wn) == len(nn) && len(wn) > 0 {
		for i := range wn {
			if wn[i] == nn[i] {
				continue
			}
			o, e1 := strconv.ParseFloat(wn[i], 64)
			n, e2 := strconv.ParseFloat(nn[i], 64)
			if e1 != nil || e2 != nil {
				return ""
			}
			switch {
			case n < o && (gateLowerWords.MatchString(ws) || gateRunnerConfig.MatchString(base) && gateCounts.MatchString(ws)):
				return "a floor lowered from " + wn[i] + " to " + nn[i] + " (" + clipText(now, 60) + ")"
			case n > o && gateRaiseWords.MatchString(ws):
				return "a ceiling raised from " + wn[i] + " to " + nn[i] + " (" + clipText(now, 60) + ")"
			}
			return ""
		}
	}
	// an exact version made a range or a branch
	if why := unpinned(was, now); why != "" {
		return why
	}
	if why := versionDropped(was, now); why != "" { // rules 18
		return why
	}
	// one word moved: a level raised or turned off, a guard switched off
	_, wv, ok1 := oneWordDiffers(was, now)
	if !ok1 {
		return weakAdded(was, now)
	}
	wvl, nvl := strings.ToLower(strings.Trim(wv[0], `"'`)), strings.ToLower(strings.Trim(wv[1], `"'`))
	if weakWord[nvl] && !weakWord[wvl] {
		return quote(wv[0]) + " becomes " + quote(wv[1]) + " (" + clipText(now, 60) + ")"
	}
	// an exposure switched on: root login, password logins, unisolated
	// tasks, privileged containers
	if onValue(nvl) && offValue(wvl) && (exposureWords.MatchString(was) || len(strings.Fields(was)) <= 3 && exposureWords.MatchString(context)) {
		return "an exposure is switched on (" + clipText(now, 60) + ")"
	}
	// a configuration pointed at production from another environment
	if prodWord.MatchString(nvl) && !prodWord.MatchString(wvl) && otherEnvWord.MatchString(wvl) {
		return quote(wv[0]) + " becomes " + quote(wv[1]) + ": this configuration now reaches production"
	}
	if gateLevelKeys.MatchString(was) {
		if r, ok := severityRank[wvl]; ok {
			if offValue(nvl) || severityRank[nvl] > r {
				return "the level it fails at moves from " + quote(wv[0]) + " to " + quote(wv[1])
			}
		}
		if (wvl == "true" || wvl == "1" || wvl == "on") && offValue(nvl) {
			return "failing is turned off (" + clipText(now, 60) + ")"
		}
	}
	if (wvl == "true" || wvl == "on" || wvl == "enabled" || wvl == "1") && offValue(nvl) && nvl != "" && guardFlagWords.MatchString(was) {
		return "a guard is switched off (" + clipText(now, 60) + ")"
	}
	return ""
}

// keyOf reads a line as a mapping key and the rest ("signs:", "\"api:check\": \"x\"",
// "minimum = 1").
func keyOf(l string) (key, rest string, ok bool) {
	l = strings.TrimPrefix(strings.TrimSpace(l), "- ")
	for _, sep := range []string{"\":", "':", ":", "="} {
		i := strings.Index(l, sep)
		if i <= 0 {
			continue
		}
		k := strings.Trim(strings.TrimSpace(l[:i+len(sep)-1]), `"'`)
		if k == "" || strings.ContainsAny(k, " \t(){}[]") {
			return "", "", false
		}
		rest = strings.TrimSpace(l[i+len(sep):])
		return k, strings.Trim(strings.TrimRight(rest, ","), `"'`), true
	}
	return "", "", false
}

// renamedOff reports whether key now is key was renamed so its tool no
// longer reads it (a suffix or prefix that says so, or an x- prefix).
func renamedOff(was, now string) bool {
	lw, ln := strings.ToLower(was), strings.ToLower(now)
	if !strings.Contains(ln, lw) {
		return false
	}
	extra := strings.Replace(ln, lw, "", 1)
	extra = strings.Trim(extra, "_-. ")
	switch extra {
	case "disabled", "disable", "off", "skip", "skipped", "old", "bak", "unused", "x", "no", "ignore", "ignored", "removed", "":
		return extra != "" || strings.HasPrefix(ln, "_") || strings.HasPrefix(ln, "#")
	}
	return false
}

// checkName is a script or target whose name says it checks.
var checkName = mustRx(`(?i)check|test|lint|verify|audit|scan|typecheck|validate|vet|gen|guard|gate|preflight|leak|compliance|policy`)

// noOp is a command that does nothing and cannot fail.
func noOp(cmd string) bool {
	c := strings.TrimSpace(strings.Trim(cmd, `"'`))
	switch c {
	case "true", ":", "exit 0", "", "echo", "/bin/true", "echo ok", "echo skip", "echo skipped":
		return true
	}
	return strings.HasPrefix(c, "echo ") && !strings.ContainsAny(c, "|;&$`")
}

// splitNumbers returns l with its numbers replaced by a mark, and the
// numbers.
func splitNumbers(l string) (string, []string) {
	nums := numberRe.FindAllString(l, 8)
	return numberRe.ReplaceAllString(l, "#"), nums
}

// oneWordDiffers reports whether was and now differ in one word (split
// on spaces and punctuation that separates values), returning its index
// and the two words.
func oneWordDiffers(was, now string) (int, [2]string, bool) {
	sep := func(r rune) bool { return strings.ContainsRune(" \t,;()=:[]{}", r) }
	a, b := strings.FieldsFunc(was, sep), strings.FieldsFunc(now, sep)
	if len(a) != len(b) || len(a) == 0 || len(a) > 40 {
		return 0, [2]string{}, false
	}
	k := -1
	for i := range a {
		if a[i] != b[i] {
			if k >= 0 {
				return 0, [2]string{}, false
			}
			k = i
		}
	}
	if k < 0 {
		return 0, [2]string{}, false
	}
	return k, [2]string{a[k], b[k]}, true
}

// ignoredOutputs are the names of what an ignore file is for: outputs,
// caches, dependencies, logs, local and editor state, data, secrets.
var ignoredOutputs = map[string]bool{"dist": true, "build": true, "builds": true, "out": true, "output": true, "outputs": true,
	"target": true, "coverage": true, "htmlcov": true, "node_modules": true, ".cache": true, "cache": true, "caches": true,
	"tmp": true, "temp": true, ".tmp": true, "logs": true, "log": true, "vendor": true, "bin": true, "obj": true,
	"__pycache__": true, ".venv": true, "venv": true, ".env": true, "env": true, ".next": true, ".nuxt": true,
	".svelte-kit": true, ".turbo": true, ".parcel-cache": true, ".gradle": true, ".terraform": true, ".pytest_cache": true,
	".mypy_cache": true, ".ruff_cache": true, ".tox": true, ".nox": true, "site": true, "_site": true, "storybook-static": true,
	".idea": true, ".ds_store": true, "data": true, "datasets": true, "models": true, "checkpoints": true, "artifacts": true,
	"reports": true, "generated": true, "gen": true, ".dart_tool": true, ".pub-cache": true, "pods": true, "deriveddata": true,
	".expo": true, ".angular": true, ".serverless": true, ".aws-sam": true, ".wrangler": true, ".vercel": true, ".netlify": true,
	".direnv": true, "secrets": true, ".secrets": true, "local": true, "scratch": true, "playground": true, "wip": true,
	".local": true, "lib-cov": true, "release": true, "releases": true, "packages-cache": true, ".bundle": true, ".sass-cache": true,
	"public": true, "static": true, "assets-built": true, "_build": true, "deps": true, "zig-cache": true, "zig-out": true,
	".stack-work": true, "dist-newstyle": true, "cmake-build-debug": true, "cmake-build-release": true, ".eggs": true,
	"wheels": true, "htmlcov-html": true, "test-results": true, "playwright-report": true, ".vs": true, "x64": true, "debug": true,
	"uploads": true, "storage": true, "media": true, "var": true, "run": true, "pids": true, "sessions": true, "screenshots": true,
	"videos": true, "downloads": true, "backups": true, "dumps": true, "snapshots": true, "node_repl_history": true}

// ignoreSourceRoots are directories that hold what the repository is: code,
// its schema, its guards.
var ignoreSourceRoots = map[string]bool{"src": true, "lib": true, "app": true, "apps": true, "pkg": true, "internal": true, "cmd": true,
	"services": true, "db": true, "migrations": true, "security": true, "auth": true, "audit": true, "policies": true,
	"policy": true, "tests": true, "test": true, "spec": true, ".github": true, ".husky": true, "hooks": true, "scripts": true,
	"deploy": true, "infra": true, "charts": true, "config": true, "crates": true, "packages": true, "modules": true, "k8s": true}

// ignoreCodeExt are extensions of code and build configuration.
var ignoreCodeExt = map[string]bool{".go": true, ".rs": true, ".ts": true, ".tsx": true, ".js": true, ".jsx": true, ".mjs": true,
	".cjs": true, ".py": true, ".rb": true, ".php": true, ".java": true, ".kt": true, ".kts": true, ".cs": true, ".fs": true,
	".swift": true, ".scala": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".ex": true, ".exs": true,
	".erl": true, ".hs": true, ".ml": true, ".lua": true, ".dart": true, ".sh": true, ".bash": true, ".ps1": true, ".psm1": true,
	".sql": true, ".tf": true, ".hcl": true, ".gradle": true, ".csproj": true, ".props": true, ".targets": true, ".bzl": true,
	".nix": true, ".vue": true, ".svelte": true}

// generatedName marks a file or pattern of generated or local material.
var generatedName = mustRx(`(?i)generated|\.pb\.|\.g\.|\.min\.|\.local\b|local\.|override|\.bak$|\.orig$|\.swp$|\.tmp$|\.log$|_gen\.|\.gen\.|mock|\.d\.ts$|\.map$|\.snap$`)

// runsLaterName is a file something runs or reads as instructions later,
// at any depth (an ignore line naming it hides it from review).
var runsLaterName = map[string]bool{"tasks.json": true, "launch.json": true, "devcontainer.json": true, ".mcp.json": true,
	"agents.md": true, "claude.md": true, "gemini.md": true, ".cursorrules": true, "package.json": true, "pyproject.toml": true,
	"cargo.toml": true, "go.mod": true, "go.sum": true, "pom.xml": true, "build.gradle.kts": true, "build.gradle": true,
	"dockerfile": true, ".npmrc": true, "requirements.txt": true, "gemfile": true, "composer.json": true, "codeowners": true}

// hiddenSource says what an ignore line hides if it hides source the
// repository tracks, or "".
func hiddenSource(line string) string {
	l := strings.TrimSpace(line)
	if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") {
		return ""
	}
	l = strings.TrimPrefix(strings.TrimPrefix(l, "/"), "**/")
	dir := strings.HasSuffix(l, "/") || strings.HasSuffix(l, "/**") || strings.HasSuffix(l, "/*")
	l = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(l, "/**"), "/*"), "/")
	segs := strings.Split(strings.ToLower(l), "/")
	for i, s := range segs {
		if ignoredOutputs[s] || strings.HasPrefix(s, ".env") || s == ".vscode" && i == len(segs)-1 {
			return ""
		}
	}
	last := segs[len(segs)-1]
	if generatedName.MatchString(last) || ignoredSecret.MatchString(l) {
		return ""
	}
	if runsLaterName[last] {
		return "a file a tool runs or reads later"
	}
	if ext := path.Ext(last); ext != "" && !strings.HasPrefix(last, ".") {
		if ignoreCodeExt[ext] && !dir {
			return "code the repository tracks"
		}
		return "" // data, a database, an archive, a local setting
	}
	for _, s := range segs {
		if ignoreSourceRoots[s] {
			return "a directory of the repository's source"
		}
	}
	return ""
}

// escaper is a call that escapes or sanitizes a value for HTML.
var escaper = mustRx(`(?i)\b(?:esc_html|esc_attr|esc_url|esc_js|wp_kses\w*|htmlspecialchars|htmlentities|escapeHtml|escape_html|escapeHTML|html\.escape|cgi\.escape|CGI\.escapeHTML|ERB::Util\.h|h|e|sanitize\w*|DOMPurify\.sanitize|bleach\.clean|strip_tags|Html\.Encode|HtmlEncode|encodeForHTML|escape)\s*\(`)

// escapeDropped returns an added line that writes out what a removed
// line escaped first (the same output statement, the escaper gone), or
// "".
func escapeDropped(plus, minus []string) string {
	for _, m := range minus {
		m = strings.TrimSpace(m)
		if !escaper.MatchString(m) {
			continue
		}
		first := firstToken(m)
		if first == "" {
			continue
		}
		for _, pl := range plus {
			pl = strings.TrimSpace(pl)
			if firstToken(pl) == first && !escaper.MatchString(pl) && !rawLiteral.MatchString(pl) {
				return pl
			}
		}
	}
	return ""
}

// firstToken is a line's first word of output (echo, print, <%=, {{,
// return, res.send(), innerHTML =), or "".
func firstToken(l string) string {
	for _, t := range []string{"echo ", "print ", "print(", "<%=", "<?=", "{{", "return ", "res.send(", "res.write(", "Response.Write(", "@Html", "document.write(", ".innerHTML", "printf(", "fmt.Fprintf(", "w.Write("} {
		if strings.HasPrefix(l, t) || t[0] == '.' && strings.Contains(l, t) {
			return t
		}
	}
	return ""
}

// alertRules reports whether a file (by base name) holds alerting rules.
func alertRules(base string) bool {
	b := strings.ToLower(base)
	return (strings.Contains(b, "rule") || strings.Contains(b, "alert")) && (strings.HasSuffix(b, ".yml") || strings.HasSuffix(b, ".yaml"))
}

// thresholdMoved says how a comparison's number moved to fire less, by
// five times or more, or "".
func thresholdMoved(skeleton string, was, now []string) string {
	for i := range was {
		if was[i] == now[i] {
			continue
		}
		o, e1 := strconv.ParseFloat(was[i], 64)
		n, e2 := strconv.ParseFloat(now[i], 64)
		if e1 != nil || e2 != nil || o <= 0 || n <= 0 {
			return ""
		}
		gt := strings.Contains(skeleton, ">")
		lt := strings.Contains(skeleton, "<")
		switch {
		case gt && !lt && n >= 5*o, lt && !gt && n*5 <= o:
			return "an alert's threshold moved from " + was[i] + " to " + now[i] + ": it fires far less"
		}
		return ""
	}
	return ""
}

// pinnedExact is a version pinned exactly (= 2.10.0, v2.4.1, 6.2.0).
var pinnedExact = mustRx(`^(?:==?\s*)?v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$`)

// movingVersion is a range, a wildcard or a branch.
var movingVersion = mustRx(`(?i)^(?:[<>~^]=?\s*v?\d|\*|x|latest|main|master|head|develop|dev|trunk|next|stable|nightly|>=|\^|~)`)

// versionKey is a line's key naming a version or a ref.
var versionKey = mustRx(`(?i)^\s*-?\s*["']?(?:version|ref|rev|tag|branch|required_version)["']?\s*[:=]`)

// unpinned says how a line's exact version became a range or a branch, or "".
func unpinned(was, now string) string {
	if !versionKey.MatchString(was) || !versionKey.MatchString(now) {
		return ""
	}
	_, wv, ok := keyOf(was)
	_, nv, ok2 := keyOf(now)
	if !ok || !ok2 {
		return ""
	}
	wv, nv = strings.TrimSpace(strings.Trim(wv, `"'`)), strings.TrimSpace(strings.Trim(nv, `"'`))
	if pinnedExact.MatchString(wv) && movingVersion.MatchString(nv) {
		return "an exact version " + quote(wv) + " becomes " + quote(nv) + ": whatever is published next is installed"
	}
	return ""
}

// weakWord is a setting's value that trusts, forgets or accepts anyone:
// authentication by trust, logs kept in memory, a permissive mode.
var weakWord = map[string]bool{"trust": true, "volatile": true, "permissive": true, "insecure": true,
	"anonymous": true, "allow_all": true, "allowall": true}

// weakProtocol is an old protocol version.
var weakProtocol = mustRx(`(?i)\b(?:SSLv[23]|TLSv1(?:\.[01])?)\b(?:[^.\d]|$)`)

// weakAdded says what weak protocol a line adds, or "".
func weakAdded(was, now string) string {
	if m := weakProtocol.FindString(now); m != "" && !weakProtocol.MatchString(was) && strings.Contains(strings.ToLower(was), "tls") {
		return "an old protocol is accepted again (" + strings.TrimSpace(m) + ")"
	}
	return ""
}

// shellQuoter is a call that quotes a value for a shell.
var shellQuoter = mustRx(`\b(?:shlex\.quote|pipes\.quote|escapeshellarg|escapeshellcmd|Shellwords\.escape|shellescape|ShellEscape|shell_escape|shellQuote|quote_shell)\s*\(|\.shellescape\b`)

// shellQuoteDropped returns an added line that makes the same call as a
// removed line did (the same text before its first parenthesis) without
// the shell quoting the removed line applied, or "".
func shellQuoteDropped(plus, minus []string) string {
	for _, m := range minus {
		m = strings.TrimSpace(m)
		if !shellQuoter.MatchString(m) {
			continue
		}
		head, _, ok := strings.Cut(m, "(")
		if !ok || len(head) < 3 {
			continue
		}
		for _, pl := range plus {
			pl = strings.TrimSpace(pl)
			if h, _, ok := strings.Cut(pl, "("); ok && h == head && !shellQuoter.MatchString(pl) {
				return pl
			}
		}
	}
	return ""
}

// urlInLine is a URL's scheme and host in a line.
var urlInLine = mustRx(`(?i)\b(?:https?|ftp)://([a-z0-9.-]+)`)

// originMoved says how a removed line's URL became an added line's URL
// on another organisation's host, the rest of the line kept (a download
// moved from the team's proxy to a look-alike CDN), or "".
func originMoved(plus, minus []string) string {
	type urlAt struct {
		line string
		loc  []int
	}
	var added []urlAt // each added line's one URL, read once
	for _, pl := range plus {
		if pm := urlInLine.FindAllStringSubmatchIndex(pl, 2); len(pm) == 1 {
			added = append(added, urlAt{pl, pm[0]})
		}
	}
	if len(added) == 0 {
		return ""
	}
	for _, m := range minus {
		wm := urlInLine.FindAllStringSubmatchIndex(m, 2)
		if len(wm) != 1 {
			continue
		}
		wh := strings.ToLower(m[wm[0][2]:wm[0][3]])
		for _, a := range added {
			ph := strings.ToLower(a.line[a.loc[2]:a.loc[3]])
			if ph == wh || registrable(ph) == registrable(wh) || localHost(ph) {
				continue
			}
			// the same line but for the URL: what precedes it is kept
			if strings.TrimSpace(m[:wm[0][0]]) != strings.TrimSpace(a.line[:a.loc[0]]) {
				continue
			}
			return wh + " → " + ph
		}
	}
	return ""
}

// checkScript reports whether p is a script whose name says it checks
// (scripts/check-vault-encrypted.sh, .husky/pre-commit, lint.sh).
func checkScript(p string) bool {
	base := strings.ToLower(path.Base(p))
	ext := path.Ext(base)
	if ext != ".sh" && ext != ".bash" && ext != "" && ext != ".zsh" && ext != ".ps1" {
		return false
	}
	return checkName.MatchString(base) || strings.Contains(p, "/.husky/") || strings.Contains(p, "/.githooks/") || base == "pre-commit" || base == "pre-push"
}

// earlyExitLine is a line that ends a script successfully.
var earlyExitLine = mustRx(`\bexit\s+0\b|\bexit\s*$|^\s*return\s+0\b`)

// scriptExitsEarly returns an added line that exits with success before other
// lines of the change, or "".
func scriptExitsEarly(added, old string) string {
	lines := strings.Split(strings.TrimRight(added, "\n"), "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.Contains(old, t) || !earlyExitLine.MatchString(t) {
			continue
		}
		for _, rest := range lines[i+1:] {
			if r := strings.TrimSpace(rest); r != "" && !strings.HasPrefix(r, "#") && r != "fi" && r != "}" && r != "esac" && r != ";;" {
				return t
			}
		}
		// rules 20: right after the script's opening (its shebang or
		// its set -e line, which the edit kept): all of the script
		// follows the exit even when the edit shows none of it
		if i > 0 && (strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#!") || errexitOn.MatchString(lines[i-1])) && strings.Contains(old, strings.TrimSpace(lines[i-1])) {
			return t
		}
		// rules 20: the script's own status replaced by success (exit
		// $status → exit 0)
		if strings.HasPrefix(t, "exit 0") && exitStatus.MatchString(strings.TrimSpace(old)) {
			return t + " (was " + strings.TrimSpace(old) + ")"
		}
	}
	// rules 20: errors made non-fatal where they were (set -euo pipefail
	// → set +e)
	for _, l := range lines {
		if errexitOff.MatchString(l) && errexitOn.MatchString(old) && !errexitOn.MatchString(added) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

var (
	exitStatus = mustRx(`^\s*exit\s+(?:\$\w+|\$\{\w+\}|\$\?|[1-9]\d*)\s*;?\s*$`)
	errexitOn  = mustRx(`^\s*set\s+-[a-z]*e[a-z]*(?:\s+-o\s+pipefail)?\b`)
	errexitOff = mustRx(`^\s*set\s+\+e\b`)
)

// onValue is a value that turns a setting on.
func onValue(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"' ,;`)) {
	case "true", "on", "yes", "1", "enabled", "enable":
		return true
	}
	return false
}

// exposureWords name settings whose being on exposes a machine.
var exposureWords = mustRx(`(?i)root.?login|permit.?root|password.?auth|raw_exec|\bprivileged\b|allow.?privilege|allow.?root|insecure|anonymous|debug.?mode|allow.?all|unauthenticated|skip.?verify|no.?auth`)

// prodWord and otherEnvWord name environments in a value.
var (
	prodWord     = mustRx(`(?i)\bprod(?:uction)?\b|[-_/]prod(?:uction)?\b|\bprod(?:uction)?[-_/]`)
	otherEnvWord = mustRx(`(?i)stag(?:e|ing)|\bdev\b|[-_/]dev\b|\bdev[-_/]|\btest\b|[-_/]test\b|sandbox|preview|\bqa\b`)
)

// evalArgs is a shell eval over positional parameters.
var evalArgs = mustRx(`\beval\b[^\n]*\$(?:\{?[0-9@*#]|\{[0-9]:-)`)

// evalOfArguments returns an added line that evaluates the script's
// arguments when no removed line did, or "".
func evalOfArguments(plus, minus []string) string {
	for _, m := range minus {
		if evalArgs.MatchString(m) {
			return ""
		}
	}
	for _, l := range plus {
		if evalArgs.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// pinVersion is an exact version of three parts or more (4.0.0, v1.17.0).
var pinVersion = mustRx(`\bv?\d+\.\d+\.\d+(?:[-+][\w.]+)?\b`)

// versionDropped says how a line lost its exact version and kept the
// rest (rules 18): `@{ Name = 'Az.Accounts'; Version = '4.0.0' }` →
// `@{ Name = 'Az.Accounts' }`, `image: postgres:16.4.1` → `image:
// postgres`; or "".
func versionDropped(was, now string) string {
	v := pinVersion.FindString(was)
	if v == "" || pinVersion.MatchString(now) || len(was) > 400 {
		return ""
	}
	wt, nt := pinWords(was), pinWords(now)
	if len(nt) == 0 || len(wt)-len(nt) > 3 || len(wt) <= len(nt) {
		return ""
	}
	have := map[string]bool{}
	for _, w := range wt {
		have[w] = true
	}
	for _, w := range nt {
		if !have[w] {
			return ""
		}
	}
	return "the exact version " + quote(v) + " is removed (" + clipText(now, 60) + "): whatever is published next is used"
}

// pinWords are a line's words: names, versions and paths, without the
// punctuation around them.
func pinWords(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == '/' || r == '@')
	})
}
