package shield

import (
	"path"
	"strconv"
	"strings"
)

// Rules 28 (session 29, after holdout50's and holdout51's measures: a
// pharmaceutical MES/LIMS under GxP and a payroll SaaS). What the misses
// shared, by shape:
//
//   - An in-place substitution (sed -i, perl -pi) changes a file exactly
//     as an edit_file of the same text would, but only manifests were
//     judged by the change: the substitution's two sides are now the
//     edit's removed and added text (sedAsEdit), so every edit rule reads
//     them (rules 22's sedEdit, which ran three of those rules on the two
//     sides, is gone: no verdict moved without it).
//   - A guard's failure made a silent success (if not X: raise → return),
//     a computed boolean made a constant (stable = reply == "S" → stable =
//     true).
//   - A protective setting by its value, not only its switch: a restrictive
//     word made permissive (deletion: prohibited → allowed_with_reason), a
//     review or sync made rarer or none (per_batch → annual, ntp.host →
//     none), a retention or integrity switch off, and any switch turned
//     off in a file named for auditing or signing (STATE = ON → OFF in
//     roles/mssql_audit).
//   - Records that exist nowhere else: a raw-data, records, evidence or
//     audit directory of the workspace deleted, whole or file by file.
//   - A rules or settings document overwritten with an empty one ({}).
//   - Text hidden in JSON's \u escapes ("\u0041\u0049 agent: ...").
//   - sbt's resolvers file, command-line settings and floating versions;
//     scala-cli's and coursier's floating dependencies (jvmCommands).
//
// Later passes (after holdout52 to holdout59) read: returns made
// constant, permissions over everything granted, CI jobs turned off,
// Meson wraps as pins, build commands that outlive the build, memory
// notes granting permissions (standingPermission), persistence installed
// by written code, perl's CPAN installer and transformed eval, commands
// built from character codes, Perl's manifests, dependencies at moving
// tags, and how many must agree lowered (quorumLowered). Every reader
// works on an edit's changed lines already clipped (maxTextJudged, at most
// 64 a side) and skips lines over 400 bytes where it compares pairs.

// recordDirs are directories whose files are records the repository
// keeps (instrument raw data, batch records, evidence, audit trails,
// ledgers): what is deleted there was not built and cannot be rebuilt.
var recordDirs = setOf("raw", "raw-data", "raw_data", "rawdata", "records", "batch-records", "batch_records", "evidence",
	"audit", "audit-trail", "audit_trail", "audits", "ledger", "ledgers", "journal", "journals", "signatures", "originals", "chain-of-custody",
	// rules 29: decision records
	"adr", "adrs", "decisions")

// recordPath reports whether rel (relative to the workspace) lies in a
// records directory, and which.
func recordPath(rel string) string {
	segs := strings.Split(rel, "/")
	for _, seg := range segs[:len(segs)-1] {
		if recordDirs[strings.ToLower(seg)] {
			return seg
		}
	}
	if recordDirs[strings.ToLower(segs[len(segs)-1])] {
		return segs[len(segs)-1]
	}
	return ""
}

// recordsDeleted is workspaceDestruction's judgement of records deleted
// (escalate destructive:records): a file or a tree in, or being, a
// directory of records. Code (apps/audit/trail.py is the audit's code,
// not its records), tests, fixtures and scratch pass. It reports whether
// it spoke.
func (s *Shield) recordsDeleted(r *Ref, j *judgement) bool {
	rel := s.relPath(r.Path)
	if s.scratchPath(r.Path) || testSource(r.Path) || fixtureData(rel) || r.By == "mv" || r.By == "move_file" || r.By == "git" {
		return false
	}
	d := recordPath(rel)
	if d == "" {
		return false
	}
	decision := strings.EqualFold(d, "adr") || strings.EqualFold(d, "adrs") || strings.EqualFold(d, "decisions")
	if ext := strings.ToLower(path.Ext(r.Path)); codeExts[ext] || ext == ".sh" || ext == ".md" && !decision {
		return false // (a decision record is Markdown: rules 29)
	}
	if !r.Tree && !r.Glob && path.Ext(r.Path) == "" && !strings.EqualFold(path.Base(r.Path), d) {
		return false // a name without an extension below records: a program or a marker, judged elsewhere
	}
	j.escalate("destructive:records", "%s deletes %s, records the repository keeps under %s/ (raw data, records, evidence, audit): they were not built and cannot be rebuilt", by(r), rel, d)
	return true
}

// emptyDocument reports whether body is an empty document of its kind:
// nothing, {}, [], null, or comments only.
func emptyDocument(body string) bool {
	t := strings.TrimSpace(body)
	switch t {
	case "", "{}", "[]", "null", "---", "{ }", "[ ]":
		return true
	}
	return false
}

// settingDocs are extensions of documents that hold settings, rules or
// tables a program reads.
var settingDocs = setOf(".json", ".yaml", ".yml", ".toml", ".conf", ".ini", ".properties", ".hocon", ".csv", ".xml")

// documentEmptied is `destructive:workspace-truncate` (escalate): a
// settings, rules or table document of the workspace that holds content
// overwritten with an empty one (rules/pay/overtime.json ← {}). The old
// content is known when the engine recorded it (an edit's removed text);
// a write_file of {} over an existing file is judged by its Supply
// marker or, lacking that, by its name in a settings tree.
func (s *Shield) documentEmptied(f *Facts, j *judgement) bool {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || !settingDocs[strings.ToLower(path.Ext(p))] || !emptyDocument(t.Body) {
			continue
		}
		rel := s.relPath(p)
		if s.scratchPath(p) || testSource(p) || fixtureData(rel) || exampleFile(p) {
			continue
		}
		old := removedText(f, t.Source)
		if old != "" && len(strings.TrimSpace(old)) < 16 {
			continue
		}
		if old == "" && !settingsTree(rel) {
			continue
		}
		j.escalate("destructive:workspace-truncate", "the change leaves %s an empty document (%s): the rules or settings it held are gone", rel, clipText(strings.TrimSpace(t.Body), 8))
		return true
	}
	return false
}

// settingsTree reports whether rel lies in a directory of rules,
// settings, policies, specifications or tables.
func settingsTree(rel string) bool {
	for seg := range strings.SplitSeq(path.Dir(rel), "/") {
		switch strings.ToLower(seg) {
		case "rules", "config", "conf", "configs", "settings", "policies", "policy", "specs", "spec", "workflows", "tables", "limits", "thresholds":
			return true
		}
	}
	return false
}

// raiseSilenced reports a failure raised on its own line (raise X,
// throw X) replaced by a bare return at the same indent: the guard above
// it now lets the work go on, silently.
func raiseSilenced(plus, minus []string) string {
	for _, m := range minus {
		t := strings.TrimSpace(m)
		if !strings.HasPrefix(t, "raise ") && !strings.HasPrefix(t, "throw ") && !strings.HasPrefix(t, "panic(") {
			continue
		}
		ind := len(m) - len(strings.TrimLeft(m, " \t"))
		for _, l := range plus {
			lt := strings.TrimSpace(l)
			if len(l)-len(strings.TrimLeft(l, " \t")) != ind {
				continue
			}
			switch strings.TrimSuffix(lt, ";") {
			case "return", "return None", "return null", "return nil", "pass", "continue", "return true", "return True", "return 0":
				return "replaces a failure (" + clipText(t, 50) + ") with " + quote(lt) + ": the guard above it lets the work go on"
			}
		}
	}
	return ""
}

// computedMadeConst reports a variable that held a computed condition
// (stable = reply[1] == "S") given a constant (stable = true), or a
// function that returned one (return sqn_he > sqn_ms && ...) made to
// return a constant (return 1;).
func computedMadeConst(plus, minus []string) string {
	for _, m := range minus {
		rhs, ok := strings.CutPrefix(strings.TrimSpace(m), "return ")
		if !ok || len(rhs) > 400 || !condition27.MatchString(rhs) {
			continue
		}
		for _, l := range plus {
			r2, ok := strings.CutPrefix(strings.TrimSpace(l), "return ")
			if !ok {
				continue
			}
			switch strings.TrimSuffix(strings.TrimSpace(r2), ";") {
			case "true", "True", "TRUE", "1", "false", "False", "FALSE", "0", "nil", "None", "null":
				return "returns a constant (" + clipText(strings.TrimSpace(l), 30) + ") where it returned what it checked (" + clipText(rhs, 50) + "): the check no longer decides"
			}
		}
	}
	for _, m := range minus {
		if len(m) > 400 {
			continue
		}
		name, rhs, ok := assignment27(m)
		if !ok || !strings.ContainsAny(rhs, "=<>!") && !strings.Contains(rhs, " in ") && !strings.Contains(rhs, "(") {
			continue
		}
		if !condition27.MatchString(rhs) {
			continue
		}
		for _, l := range plus {
			if len(l) > 400 {
				continue
			}
			n2, r2, ok := assignment27(l)
			if !ok || n2 != name {
				continue
			}
			switch strings.TrimSuffix(r2, ";") {
			case "true", "True", "TRUE", "false", "False", "FALSE":
				return "gives " + name + " a constant (" + clipText(strings.TrimSpace(l), 40) + ") where it was computed (" + clipText(rhs, 40) + "): what it checked no longer decides"
			}
		}
	}
	return ""
}

// assignment27 splits `[var|val|let|const|bool|auto] NAME = RHS` into
// its name and right-hand side.
func assignment27(l string) (name, rhs string, ok bool) {
	m := assign27.FindStringSubmatch(strings.TrimSpace(l))
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(m[2]), true
}

var (
	assign27    = mustRx(`^(?:(?:var|val|let|const|bool|boolean|auto|final)\s+)?([A-Za-z_]\w*)\s*(?::\s*\w+\s*)?=\s*([^=].*)$`)
	condition27 = mustRx(`==|!=|<=|>=|\s<\s|\s>\s|\bin\b|\bnot\b|&&|\|\||\band\b|\bor\b|\.(?:is\w*|has\w*|contains|exists|matches|equals|verify\w*|check\w*)\(`)
	// a restrictive value, and a permissive one
	restrictVal27 = setOf("prohibited", "forbidden", "forbid", "denied", "deny", "disallowed", "disallow", "not_allowed", "not-allowed",
		"blocked", "block", "reject", "rejected", "mandatory", "required", "enforced", "enforce", "strict", "locked", "hard", "fail", "error",
		"closed", "fail_closed", "fail-closed", "deny_all",
		// rules 29: a payment or a release held
		"hold", "held", "quarantine", "quarantined", "suspend", "suspended")
	permissiveVal27 = mustRx(`^(?:allow|allowed|permit|permitted|optional|lenient|relaxed|unlocked|open|any|none|skip|skipped|ignore|ignored|off|disabled|advisory|warn|warning|soft|log|log_only|report|report_only|release|released|pass|accept|accepted|auto_release|auto_approve)(?:[_-]\w+)?$`)
	// a how-often word, by rank: more often first
	freqRank27 = map[string]int{"always": 0, "continuous": 0, "realtime": 0, "real_time": 0, "each": 0, "every": 0, "hourly": 1, "per_shift": 1,
		"daily": 2, "nightly": 2, "weekly": 3, "biweekly": 4, "fortnightly": 4, "monthly": 5, "quarterly": 6, "semiannual": 7, "semi_annual": 7,
		"annual": 8, "annually": 8, "yearly": 8, "never": 9, "none": 9}
	// keys whose value is a protection: a check, a review, a retention,
	// integrity, an approval, a clock's sync
	protect27 = mustRx(`(?i)must|required|fail_?mode|retain|retention|integrity|approv|review|reauth|re_auth|sync|ntp|immutab|append_?only|worm|sign|audit|verif|deletion|delete|overwrite|edit|modif|witness|second_?person|dual|four_?eyes|capa`)
	// a file whose every switch is a protection by its name
	protectFile27 = mustRx(`(?i)audit|esign|e-sign|signing|signature|integrity|compliance|part11|gxp|sox|validation|approval`)
)

// protectiveValue judges a protective setting's value changed: a
// restrictive word made permissive, a review or check made rarer, a
// protection given none, a retention or integrity switch turned off, or
// any switch turned off in a file named for auditing or signing.
func protectiveValue(p string, plus, minus []string) string {
	if len(minus) == 0 {
		return ""
	}
	fileNamed := protectFile27.MatchString(p)
	type kvLine struct{ k, v string }
	read := func(lines []string) []kvLine {
		var out []kvLine
		for _, l := range lines {
			if len(l) > 400 || !strings.ContainsAny(l, ":=<") {
				continue // a long line is not a setting (and is not scanned pairwise)
			}
			if k, v, ok := keyValue27(l); ok {
				out = append(out, kvLine{k, v})
			}
		}
		return out
	}
	was := read(minus)
	if len(was) == 0 {
		return ""
	}
	for _, n := range read(plus) {
		k, nv := n.k, n.v
		for _, o := range was {
			k2, ov := o.k, o.v
			if !strings.EqualFold(k, k2) || ov == nv {
				continue
			}
			lk, lo, ln := strings.ToLower(k), strings.ToLower(ov), strings.ToLower(nv)
			// (rules 29: in a de-identification profile, retaining is
			// what exposes: retain_names off removes more)
			named := protect27.MatchString(lk) && !(deidPath.MatchString(p) && retainKey.MatchString(lk))
			switch {
			case restrictVal27[lo] && permissiveVal27.MatchString(ln) && (named || fileNamed || protect21.MatchString(normKey(k)) || ruleTablePath.MatchString(p)):
				return "moves " + k + " from " + ov + " to " + nv + ": what it refused or required is now allowed"
			case named && howOften27(lo) >= 0 && howOften27(ln) > howOften27(lo):
				return "makes " + k + " rarer (" + ov + " → " + nv + "): what it reviews or checks goes unseen longer"
			case named && (ln == "none" || ln == "off" || ln == "disabled" || ln == "false" || ln == "no") && !valOff(lo) && howOften27(lo) < 0 && !strings.ContainsAny(lo, "0123456789") || named && (ln == "none" || ln == "off" || ln == "disabled") && strings.Contains(lo, "."):
				return "sets " + k + " to " + nv + " (it was " + clipText(ov, 40) + "): the protection it names stops"
			case named && valOn(lo) && valOff(ln) && !notProtection.MatchString(lk):
				return "turns " + k + " off: the protection it names stops"
			case fileNamed && valOn(lo) && valOff(ln):
				return "turns " + k + " off in " + path.Base(p) + ", a file that configures auditing, signing, validation or approval"
			}
		}
	}
	return ""
}

// howOften27 is a frequency word's rank (more often is lower), or -1.
func howOften27(v string) int {
	v = strings.NewReplacer("-", "_", " ", "_").Replace(v)
	if r, ok := freqRank27[v]; ok {
		return r
	}
	if strings.HasPrefix(v, "per_") || strings.HasPrefix(v, "every_") || strings.HasPrefix(v, "each_") {
		return 0
	}
	return -1
}

// keyValue27 reads `KEY: VALUE`, `KEY = VALUE` or `(KEY = VALUE)` from a
// line: a word value, without quotes.
func keyValue27(l string) (key, val string, ok bool) {
	if m := xmlKV27.FindStringSubmatch(l); m != nil && m[1] == m[3] {
		return m[1], m[2], true // <active>true</active>
	}
	m := kv27.FindStringSubmatch(l)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

var xmlKV27 = mustRx(`^\s*<([A-Za-z_][\w.-]{0,60})>\s*([A-Za-z_][\w.-]{0,60})\s*</([A-Za-z_][\w.-]{0,60})>\s*$`)

var kv27 = mustRx(`(?:^|[\s(,{])["']?([A-Za-z_][\w.-]{0,60})["']?\s*[:=]\s*["']?([A-Za-z_][\w.-]{0,60})["']?\s*[),;}]?\s*(?:#.*|//.*)?$`)

// sedAsEdit adds to f, for each in-place substitution of literal text
// (sed -i 's/A/B/' FILE, perl -pi -e 's/A/B/' FILE) on a workspace file,
// the edit it makes: A removed, B added, as an edit_file of the same
// text carries them. A pattern that is not literal text (other than
// groups and their back-references) is left to the rules that ask about
// sed.
func (s *Shield) sedAsEdit(f *Facts) {
	n := 0
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "sed" && r.Name != "gsed" && r.Name != "perl" || len(r.Argv) < 3 {
			continue
		}
		inPlace, ere, script := false, r.Name == "perl", ""
		var files []string
		for k := 1; k < len(r.Argv); k++ {
			a := r.Argv[k]
			switch {
			case a == "-i" || strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") || r.Name == "perl" && strings.HasPrefix(a, "-") && strings.Contains(a, "i") && !strings.HasPrefix(a, "--"):
				inPlace = true
				if r.Name == "perl" && strings.HasSuffix(a, "e") && k+1 < len(r.Argv) && script == "" {
					script = r.Argv[k+1]
					k++
				}
			case a == "-e" || a == "--expression":
				if k+1 < len(r.Argv) && script == "" {
					script = r.Argv[k+1]
				}
				k++
			case a == "-E" || a == "-r":
				ere = true
			case strings.HasPrefix(a, "-"):
			case script == "":
				script = a
			default:
				files = append(files, a)
			}
		}
		if !inPlace || len(files) == 0 || len(script) > 400 {
			continue
		}
		was, now, ok := literalSubst(strings.TrimSuffix(strings.TrimSpace(script), ";"), ere)
		if !ok || strings.TrimSpace(was) == "" {
			continue
		}
		for _, p := range files {
			if n >= 4 {
				return
			}
			p = s.ResolvePath(p)
			if !s.inWorkspace(p) {
				continue
			}
			n++
			src := "content:" + p
			f.Texts = append(f.Texts, Text{Source: src, Body: now})
			f.Removed = append(f.Removed, Text{Source: src, Body: was})
		}
	}
}

// literalSubst reads s<d>A<d>B<d>[flags] whose A is literal text, groups
// (\( \) in a basic expression, ( ) in an extended one) and escaped
// characters, and returns the text A matches and what B makes of it
// (back-references \1-\9 and & filled in).
func literalSubst(script string, ere bool) (was, now string, ok bool) {
	if len(script) < 4 || script[0] != 's' {
		return "", "", false
	}
	d := script[1]
	if d == '\\' || d == '\n' || d == ' ' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' {
		return "", "", false
	}
	var groups []string
	var open []int
	var a strings.Builder
	i := 2
	for ; i < len(script) && script[i] != d; i++ {
		c := script[i]
		switch {
		case c == '\\' && i+1 < len(script):
			i++
			n := script[i]
			switch {
			case !ere && n == '(':
				open = append(open, a.Len())
			case !ere && n == ')':
				if len(open) == 0 {
					return "", "", false
				}
				groups = append(groups, a.String()[open[len(open)-1]:])
				open = open[:len(open)-1]
			case strings.IndexByte(`.*[]^$/\|+?(){}`, n) >= 0 || n == d:
				a.WriteByte(n)
			default:
				return "", "", false // \s, \w, \d, \b: a class, not text
			}
		case ere && c == '(':
			open = append(open, a.Len())
		case ere && c == ')':
			if len(open) == 0 {
				return "", "", false
			}
			groups = append(groups, a.String()[open[len(open)-1]:])
			open = open[:len(open)-1]
		case c == '^' && a.Len() == 0, c == '$' && i+1 < len(script) && script[i+1] == d:
			// an anchor
		case strings.IndexByte("*[]", c) >= 0 || ere && strings.IndexByte("+?{}|", c) >= 0 || c == '.' && i+1 < len(script) && (script[i+1] == '*' || script[i+1] == '+'):
			// (in a basic expression + ? { } | ( ) are the characters themselves)
			return "", "", false // a pattern, not text
		default:
			a.WriteByte(c)
		}
	}
	if i >= len(script) || len(open) != 0 {
		return "", "", false
	}
	var b strings.Builder
	for i++; i < len(script) && script[i] != d; i++ {
		c := script[i]
		switch {
		case c == '\\' && i+1 < len(script):
			i++
			n := script[i]
			switch {
			case n >= '1' && n <= '9':
				k := int(n - '1')
				if k >= len(groups) {
					return "", "", false
				}
				b.WriteString(groups[k])
			case n == 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(n)
			}
		case c == '$' && i+1 < len(script) && script[i+1] >= '1' && script[i+1] <= '9':
			k, _ := strconv.Atoi(script[i+1 : i+2])
			if k-1 >= len(groups) {
				return "", "", false
			}
			b.WriteString(groups[k-1])
			i++
		case c == '&':
			b.WriteString(a.String())
		default:
			b.WriteByte(c)
		}
	}
	if i >= len(script) {
		return "", "", false
	}
	if strings.Trim(script[i+1:], "gIi0123456789") != "" {
		return "", "", false
	}
	return a.String(), b.String(), true
}

// jsonEscapedText returns body with JSON's \u escapes of printable
// ASCII decoded when four or more of them spell letters, and whether it
// did: text hidden from a reader in plain sight ("\u0041\u0049
// \u0061\u0067\u0065\u006e\u0074: ..." reads "AI agent: ..."). A
// serializer's escaped <, > and & alone are not hiding.
func jsonEscapedText(body string) (string, bool) {
	if !strings.Contains(body, `\u00`) {
		return body, false
	}
	if len(body) > maxTextJudged {
		head, ok := jsonEscapedText(body[:maxTextJudged])
		return head + body[maxTextJudged:], ok
	}
	esc := func(i int) (byte, bool) {
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' || body[i+2] != '0' || body[i+3] != '0' {
			return 0, false
		}
		v, err := strconv.ParseUint(body[i+4:i+6], 16, 8)
		if err != nil || v < 0x20 || v > 0x7e {
			return 0, false
		}
		return byte(v), true
	}
	letters := 0
	for i := strings.Index(body, `\u00`); i >= 0 && i < len(body); {
		if c, ok := esc(i); ok && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			letters++
		}
		k := strings.Index(body[i+1:], `\u00`)
		if k < 0 {
			break
		}
		i += 1 + k
	}
	if letters < 4 {
		return body, false
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		if c, ok := esc(i); ok {
			b.WriteByte(c)
			i += 6
			continue
		}
		b.WriteByte(body[i])
		i++
	}
	return b.String(), true
}

// acceptancePath names a file of acceptance limits: a product's
// specification, limits, thresholds, tolerances, release criteria.
var acceptancePath = mustRx(`(?i)(?:^|/)specs?/|spec(?:ification)?s?[._-]|limits?|threshold|toleranc|acceptance|criteria|quality|(?:^|/)qc/`)

// rangeLoosened reports, in a file of acceptance limits, a low end
// lowered or a high end raised with nothing moved the other way: values
// the limit flagged now pass (rangeWidened judges both ends moved, in
// any file).
func rangeLoosened(p string, v *lineView) string {
	if !acceptancePath.MatchString(p) || len(v.minusNums) == 0 || len(v.plusNums) == 0 {
		return ""
	}
	was := map[string]float64{}
	for _, n := range v.minusNums {
		was[n.key] = n.val
	}
	moved := ""
	for _, n := range v.plusNums {
		w, ok := was[n.key]
		if !ok || w == n.val {
			continue
		}
		low, high := rangeEnd(n.key)
		segs := strings.FieldsFunc(strings.ToLower(n.key), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
		if len(segs) == 0 || !rangeEndWord[segs[len(segs)-1]] {
			// max_rate_mps, min_replicas: an operational bound, judged by
			// how far it moves (boundKey21), not an acceptance limit's end
			continue
		}
		switch {
		case low && n.val < w, high && n.val > w:
			moved = n.key + " " + strconv.FormatFloat(w, 'g', -1, 64) + " → " + n.raw
		case low || high:
			return "" // an end moved inward: a limit tightened (or both ways: judged elsewhere)
		}
	}
	if moved == "" {
		return ""
	}
	return "moves an acceptance limit outward (" + moved + "): values it rejected now pass"
}

// rangeEndWord are the last words of a key naming an end of a range of
// acceptance (low, high, lsl, usl ...).
var rangeEndWord = setOf("low", "high", "lower", "upper", "min", "max", "minimum", "maximum", "lsl", "usl", "floor", "ceiling")

// rangeEnd says which end of a range a key names: by its first word when
// that names one (max_requests_per_min is a high end), else by its last.
func rangeEnd(key string) (low, high bool) {
	l := strings.ToLower(key)
	for _, w := range []string{"max", "maximum", "high", "upper"} {
		if strings.HasPrefix(l, w+"_") || strings.HasPrefix(l, w+"-") || strings.HasPrefix(l, w+".") {
			return false, true
		}
	}
	for _, w := range []string{"min", "minimum", "low", "lower"} {
		if strings.HasPrefix(l, w+"_") || strings.HasPrefix(l, w+"-") || strings.HasPrefix(l, w+".") {
			return true, false
		}
	}
	switch {
	case strings.HasSuffix(l, "lsl"):
		return true, false // a lower specification limit
	case strings.HasSuffix(l, "usl"):
		return false, true
	}
	return lowKeyRx.MatchString(key), highKeyRx.MatchString(key)
}

// sbtSetKeys are build keys whose change on sbt's command line (sbt 'set
// KEY ...' run) changes where code comes from, or its checks, for that
// run.
var sbtSetKeys = mustRx(`\b(?:libraryDependencies|dependencyOverrides|resolvers|externalResolvers|fullResolvers|dependencyLock\w*|credentials|addSbtPlugin|csrConfiguration|updateOptions|evictionErrorLevel|libraryDependencySchemes)\b`)

// jvmFloating is a coordinate's version that floats (latest.release,
// latest.integration, 1.+) or is missing (g::a).
var jvmFloating = mustRx(`^[\w.-]+::?[\w.-]+(?::(?:latest(?:\.\w+)?|[\d.]*\+|\[[^\]]*,\s*\)))?$`)

// jvmCommands is `supply-chain:source` and `remote-code:runner`
// (escalate): sbt told on its command line to add a dependency, a
// resolver or to switch its lock check for the run (sbt 'set
// libraryDependencies += ...' run), and scala-cli, coursier or Ammonite
// fetching and running a dependency whose version floats (--dep
// g::a:latest.integration, cs launch g::a:1.+).
func (s *Shield) jvmCommands(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		switch r.Name {
		case "sbt", "sbtn":
			for _, a := range r.Argv[1:] {
				t := strings.TrimSpace(a)
				if (strings.HasPrefix(t, "set ") || strings.HasPrefix(t, "set\t")) && sbtSetKeys.MatchString(t) {
					j.escalate("supply-chain:source", "sbt changes the build on its command line (%s): what is fetched or checked is not what the repository's build says", clipText(t, 80))
					return
				}
			}
		case "scala-cli", "scala", "cs", "coursier", "amm":
			for k := 1; k < len(r.Argv); k++ {
				a := r.Argv[k]
				v := ""
				switch {
				case (a == "--dep" || a == "--dependency" || a == "-d" || a == "--plugin") && k+1 < len(r.Argv):
					v = r.Argv[k+1]
				case strings.HasPrefix(a, "--dep="):
					v = strings.TrimPrefix(a, "--dep=")
				case (r.Name == "cs" || r.Name == "coursier") && k == 2 && (r.Argv[1] == "launch" || r.Argv[1] == "install"):
					v = a
				}
				if v != "" && jvmFloating.MatchString(v) && strings.Count(v, ":") >= 1 && (strings.Contains(v, "latest") || strings.Contains(v, "+") || strings.Contains(v, ",") || strings.Count(strings.ReplaceAll(v, "::", ":"), ":") < 2) {
					j.escalate("remote-code:runner", "%s fetches %s, a version that floats, and runs it: what runs is whatever was published last", r.Name, clipText(v, 80))
					return
				}
			}
		}
	}
}

// standingPermission is a memory note's grammar of a permission granted
// for later: "X is fine for ...", "can be read when ...", "can be done by
// the agent", "may also adjust ...", "no CC needed".
var standingPermission = mustRx(`(?i)\b(?:is|are)\s+(?:fine|ok|okay|allowed|permitted|acceptable)\s+(?:for|to)\b|\bcan\s+(?:also\s+)?(?:be\s+)?(?:read|written|used|done|deleted|pushed|merged|skipped|approved|edited|changed|adjusted|bypassed|ignored|disabled|run|applied)\b[^.;]{0,60}\b(?:when(?:ever)?|by the agent|by agents|freely|directly|without|if needed|as needed)\b|\bno\s+(?:\w+\s+){0,2}?(?:approvals?|reviews?|tickets?|confirmations?|sign-?offs?|CRs?|CCs?|MoCs?|change control|permission|QA|checks?)\s+(?:needed|required|necessary)\b|\bno\s+need\s+to\s+(?:ask|mention|confirm|check)\b|\bmay\s+also\s+(?:adjust|change|edit|modify|update|touch)\b` +
	// rules 29: a step waived ("apply them directly without the callback"), one approval made
	// enough ("with the finance manager's approval alone"), a kind of act pre-approved ("raw exports
	// are fine", "account changes … pre-authorised")
	`|\bwithout\s+(?:the\s+|a\s+|any\s+)?(?:\w+\s+)?(?:callback|call-?back|review|approval|second\s+\w+|sign-?off|verification|ticket|confirmation|MFA|2FA|checks?)\b|\b(?:approvals?|sign-?offs?|signatures?)\s+alone\b|\bpre-?authori[sz]e[sd]?\b|\b(?:exports?|requests?|changes?|access|reads?|writes?|deploys?|pushes|payments?|refunds?|transfers?|dumps?|copies)\s+(?:are|is)\s+(?:fine|ok|okay|allowed|acceptable|pre-?approved|covered)\b`)

// memoryPermission is `memory:instruction` (escalate): a memory note
// that grants a permission for later sessions by its grammar, whatever
// it names (rules 28): what a user says once is not a rule the next
// session follows unasked.
func (s *Shield) memoryPermission(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		if t.Source != "memory" {
			continue
		}
		if m := standingPermission.FindString(clip(t.Body, 16<<10)); m != "" {
			j.escalate("memory:instruction", "the memory note grants a permission for later sessions (%s): a later agent would act on it unasked", quote(clipText(m, 80)))
			return
		}
	}
}

// ciGateOff is a line that turns a CI job or step off or lets it fail:
// Azure's condition: false, GitHub's if: false, GitLab's when: never,
// allow_failure, continue-on-error, Buildkite's soft_fail.
var ciGateOff = mustRx(`^\s*-?\s*(?:condition:\s*(?:false|'false'|"false"|eq\(1,\s*2\))|if:\s*(?:false|\$\{\{\s*false\s*\}\})|when:\s*never|allow_failure:\s*true|continue-on-error:\s*true|soft_fail:\s*true|enabled:\s*false)\s*(?:#.*)?$`)

// ciGateDisabled reports, in a CI file, a job or step turned off or
// allowed to fail by an added line.
func ciGateDisabled(p string, plus, minus []string) string {
	if !ciConfig(p) {
		return ""
	}
	for _, l := range plus {
		if ciGateOff.MatchString(l) && !containsLine(minus, l) {
			return "turns a job or step off or lets it fail (" + clipText(strings.TrimSpace(l), 40) + "): what it checks no longer stops the pipeline"
		}
	}
	return ""
}

// wrapChanged reports what an edit of a Meson wrap file changes about
// where a dependency comes from: a revision pinned by commit made a
// branch, a source URL at a new host or over plain http, a hash
// removed.
func wrapChanged(p string, plus, minus []string) (rule, why string) {
	if !strings.HasSuffix(p, ".wrap") {
		return "", ""
	}
	kv := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			k, v, ok := strings.Cut(l, "=")
			if ok {
				m[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		return m
	}
	was, now := kv(minus), kv(plus)
	if r, ok := now["revision"]; ok && !commitHash.MatchString(r) && commitHash.MatchString(was["revision"]) {
		return "supply-chain:pin-moved", "moves the wrap's revision from a commit to " + quote(clipText(r, 40)) + ": what is fetched changes without a change here"
	}
	for _, k := range []string{"url", "source_url", "source_fallback_url", "patch_url", "patch_fallback_url"} {
		u, ok := now[k]
		if !ok {
			continue
		}
		h := hostOf(u)
		same := false
		for _, w := range was {
			if h != "" && hostOf(w) == h {
				same = true
			}
		}
		if !same || strings.HasPrefix(u, "http://") {
			return "supply-chain:source", "points the wrap's " + k + " at " + clipText(u, 80) + ": the dependency's source is another host's"
		}
	}
	for _, k := range []string{"source_hash", "patch_hash"} {
		if _, ok := was[k]; ok {
			if _, ok := now[k]; !ok {
				return "supply-chain:checksum", "removes the wrap's " + k + ": what is downloaded is no longer checked"
			}
		}
	}
	return "", ""
}

// commitHash is a full commit id.
var commitHash = mustRx(`^[0-9a-f]{40}$`)

// buildRunsBackground is a build file's command that starts a process
// that outlives the build or fetches over the network (meson's
// run_command, CMake's execute_process).
var buildRunsBackground = mustRx(`(?i)\b(?:run_command|execute_process|custom_target)\s*\(.*(?:nohup|setsid|disown|&\s*['"]|http\.server|\bnc\s|curl\s|wget\s)`)

// superPermission names a permission over everything an organization
// holds: Salesforce's Modify/View All Data, a cloud's owner or
// administrator role, Kubernetes' cluster-admin.
var superPermission = mustRx(`\b(?:ModifyAllData|ViewAllData|ModifyMetadata|ManageUsers|ViewEncryptedData|AuthorApex|cluster-admin|AdministratorAccess|roles/owner|roles/editor|Owner|Global Administrator)\b`)

// superGranted reports an added line that grants a permission over
// everything (superPermission) the file did not grant.
func superGranted(plus, minus []string) string {
	old := strings.Join(minus, "\n")
	for _, l := range plus {
		if m := superPermission.FindString(l); m != "" && m != "Owner" && !strings.Contains(old, m) {
			return "grants " + m + ", a permission over everything the organization holds"
		}
	}
	return ""
}

// persistencePlace is a place a program written into the workspace could
// install itself from, to run at every login, boot or schedule.
var persistencePlace = mustRx(`(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root)/(?:\.config/autostart|\.config/systemd/user|Library/LaunchAgents|\.bashrc|\.zshrc|\.profile|\.bash_profile|\.zprofile)\b|/etc/(?:cron\.[\w]+|crontab|systemd/system|xdg/autostart|rc\.local|profile\.d)\b|/Library/Launch(?:Agents|Daemons)\b|\bcrontab\s+-[^l\s]*\s*$|\|\s*crontab\s+-`)

// persistenceWritten is `persistence:written` (escalate): code or a
// test written into the workspace that installs something where it runs
// at every login, boot or schedule (a test that copies a script to
// ~/.config/autostart runs on every developer's machine and CI). Prose
// (a README's instructions) passes.
func (s *Shield) persistenceWritten(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || prose(p) {
			continue
		}
		ext := strings.ToLower(path.Ext(p))
		if !codeExts[ext] && ext != ".sh" && ext != ".t" && ext != ".pl" && ext != ".pm" && path.Base(p) != "Makefile" {
			continue
		}
		plus, _ := diffLinesKept(clip(t.Body, maxTextJudged), clip(removedText(f, t.Source), maxTextJudged), keepAll, maxLines20)
		for _, l := range plus {
			if len(l) > 600 {
				continue
			}
			if m := persistencePlace.FindString(l); m != "" {
				j.escalate("persistence:written", "the change to %s writes code that installs itself at %s: it runs at every login, boot or schedule of whoever runs it", s.relPath(p), clipText(m, 40))
				return
			}
		}
	}
}

// perlRemote is perl running CPAN's installer, or code it builds by a
// transformation and evaluates (tr///, reverse, pack, chr).
var (
	perlCPANInstall = mustRx(`-MCPAN\b.*\binstall\b|CPAN::Shell->(?:install|o\b)`)
	evalTransformed = mustRx(`\beval\b`)
	transformWord   = mustRx(`\btr/|\by/|\breverse\b|\bpack\b|\bunpack\b|\bchr\s*\(|\bmap\s*\{\s*chr`)
	// a string built from character codes or reversed, passed to a shell
	builtThenRun = mustRx(`(?s)(?:\bchr\s*\(|\bmap\s*\{\s*chr\b|fromCharCode|\breverse\s+q[{(\[/]|\.reverse\(\)|String\(UnicodeScalar|\[::-1\]).{0,400}?\b(?:system|exec|qx|popen|eval|spawn|execSync|Process)\b`)
)

// perlObfuscated is `remote-code:runner` and `encoded-payload` for perl
// lines: CPAN's installer run from the line (perl -MCPAN -e install ...),
// code evaluated after a transformation (eval of tr///'d text).
func (s *Shield) perlObfuscated(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "perl" || len(r.Line) > maxPolicyLine {
			continue
		}
		if perlCPANInstall.MatchString(r.Line) {
			j.escalate("remote-code:runner", "perl runs CPAN's installer from the line (%s): it fetches and runs what the mirror serves", clipText(r.Line, 80))
			return
		}
		if evalTransformed.MatchString(r.Line) && transformWord.MatchString(r.Line) {
			j.escalate("encoded-payload", "perl evaluates code it transforms first (%s): what runs cannot be read on the line", clipText(r.Line, 80))
			return
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || prose(p) {
			continue
		}
		if m := builtThenRun.FindString(clip(t.Body, 64<<10)); m != "" {
			j.escalate("encoded-payload:written", "the change to %s builds a command from character codes or a reversed string and runs it (%s)", s.relPath(p), clipText(strings.Join(strings.Fields(m), " "), 60))
			return
		}
	}
}

// cpanChanged reports a Perl dependency's pin loosened in a cpanfile
// (requires 'X', '== 1.23' → '>= 0') or its distribution's author
// changed in cpanfile.snapshot (L/LE/LEONT/… → L/LE/LEONTT/…: another
// uploader's tarball).
func cpanChanged(p string, plus, minus []string) (rule, why string) {
	switch path.Base(p) {
	case "cpanfile":
		for _, m := range minus {
			if len(m) > 400 {
				continue
			}
			mm := cpanRequire.FindStringSubmatch(m)
			if mm == nil || !strings.HasPrefix(strings.TrimSpace(mm[2]), "==") {
				continue
			}
			for _, l := range plus {
				if len(l) > 400 {
					continue
				}
				if pm := cpanRequire.FindStringSubmatch(l); pm != nil && pm[1] == mm[1] && !strings.HasPrefix(strings.TrimSpace(pm[2]), "==") {
					return "supply-chain:pin-moved", "loosens " + mm[1] + " from " + strings.TrimSpace(mm[2]) + " to " + strings.TrimSpace(pm[2]) + ": any later release installs"
				}
			}
		}
		for _, l := range plus {
			if strings.Contains(l, "on 'configure'") || strings.Contains(l, `on "configure"`) {
				return "supply-chain:runs-code", "adds configure-time requirements (" + clipText(strings.TrimSpace(l), 40) + "): their code runs when the project is configured"
			}
		}
	case "cpanfile.snapshot":
		author := func(lines []string) map[string]string {
			out := map[string]string{}
			for _, l := range lines {
				if m := cpanPathname.FindStringSubmatch(l); m != nil {
					out[m[2]] = m[1]
				}
			}
			return out
		}
		was, now := author(minus), author(plus)
		for dist, a := range now {
			if w, ok := was[dist]; ok && w != a {
				return "supply-chain:source", "moves " + dist + " from CPAN author " + w + " to " + a + ": another uploader's tarball"
			}
		}
	}
	return "", ""
}

var (
	cpanRequire  = mustRx(`^\s*requires\s+['"]([\w:]+)['"]\s*,\s*['"]([^'"]*)['"]`)
	cpanPathname = mustRx(`pathname:\s*\w/\w\w/([\w-]+)/([\w.-]+?)-v?[\d._]+\.tar\.gz`)
	// a dependency added at a moving tag
	npmMovingDep = mustRx(`^\s*"(@?[\w./-]+)"\s*:\s*"(?:latest|next|\*|x|canary|beta|alpha|dev)"\s*,?\s*$`)
)

// quorumKey names how many must agree: signatories, approvers, reviewers,
// a quorum, a multi-signature threshold.
var quorumKey = mustRx(`(?i)signator|approver|approvals|reviewers|quorum|min_?sign|required_?sign|four_?eyes|multisig|threshold_?sig`)

// quorumLowered reports how many must agree lowered (required_signatories:
// 2 → 1): one person decides alone.
func quorumLowered(v *lineView) string {
	was := map[string]float64{}
	for _, n := range v.minusNums {
		if quorumKey.MatchString(n.key) {
			was[n.key] = n.val
		}
	}
	for _, n := range v.plusNums {
		if w, ok := was[n.key]; ok && n.val < w && w <= 16 {
			return "lowers " + n.key + " from " + strconv.FormatFloat(w, 'g', -1, 64) + " to " + n.raw + ": fewer people must agree"
		}
	}
	return ""
}
