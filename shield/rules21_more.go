package shield

import (
	"net/mail"
	"path"
	"slices"
	"strings"
)

// Rules 21, more (session 26, after holdout30's and holdout31's measures;
// docs/shield-rules.md "Rules 21"): a line's destination swapped for
// another domain, account or registry; a failure made a warning; a flag
// that makes a run fail removed; a lookup's default made permissive; a
// pinned action unpinned; hidden characters added; a personal mailbox
// given access; block lists grown or shrunk; what a written file sets up
// (exceptions to a policy, wildcard grants, a protection off, an outside
// admission webhook); and commands feeding a check an empty file or
// fetching code over a source file.

var (
	// a flag that makes a run fail on what it finds
	failFlag = mustRx(`\s(?:--fail-on[-\w]*|--fail|--strict|--check|--verify|--require-[-\w]+|--exit-code|--error-on[-\w]*|--werror|-Werror|--enforce|--deny-warnings|-Dwarnings)(?:=\S+)?\b`)
	// a failure, and a report of one
	failStmt   = mustRx(`\b(?:raise|throw|panic|abort|SystemExit|sys\.exit\(\s*[^0)]|process\.exit\(\s*[1-9]|os\.Exit\(\s*[1-9]|log\.Fatal|die\b|exit\s+[1-9]|return\s+err\b|Err\()`)
	reportStmt = mustRx(`(?i)\b(?:print|println|printf|warn|warning|warnings\.warn|log|logger|logging|console|puts|echo|eprintln)\b`)
	// a lookup with a default: .get(k, []) and its kin
	lookupDefault = mustRx(`\.(?:get|getOrDefault|fetch|unwrap_or|value_or|get_or|GetValueOrDefault|getOr)\(\s*([^,()]{1,60}),\s*([^()]{0,60})\)`)
	emptyDefault  = map[string]bool{"[]": true, "{}": true, "()": true, "False": true, "false": true, "None": true, "null": true, "nil": true, "0": true, `""`: true, "''": true, "set()": true, "frozenset()": true}
	// a pinned action, and its reference
	actionRef = mustRx(`uses:\s*["']?([\w.-]+/[\w./-]+)@([\w.-]+)`)
	fullSHA   = mustRx(`^[0-9a-f]{40}$`)
	// hosts on a line, an AWS account in an ARN, an image reference
	hostOnLine = mustRx(`(?:://(?:[^/@\s]*@)?|[\w.-]+@)((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})\b|\b((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}):\d{2,5}\b`)
	arnAccount = mustRx(`arn:aws[\w-]*:[\w-]+:[\w-]*:(\d{12}):`)
	imageRef   = mustRx(`\b((?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?)/([\w./-]+?)/([\w.-]+)(?::([\w.-]+)|@sha256:[0-9a-f]{64})`)
	// free mail providers: a personal mailbox
	freeMail = map[string]bool{"gmail.com": true, "googlemail.com": true, "outlook.com": true, "hotmail.com": true, "live.com": true, "yahoo.com": true,
		"proton.me": true, "protonmail.com": true, "icloud.com": true, "me.com": true, "aol.com": true, "gmx.com": true, "gmx.de": true, "mail.com": true,
		"yandex.ru": true, "yandex.com": true, "qq.com": true, "163.com": true, "tutanota.com": true, "zoho.com": true, "fastmail.com": true}
	emailAddr = mustRx(`[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+`)
	// a checksum file
	checksumFile = mustRx(`(?i)(?:^|[._-])(?:sha\d*sums?|md5sums?|checksums?)(?:$|[._-])|\.(?:sha1|sha256|sha512|md5)$`)
	hashValue    = mustRx(`\b[0-9a-f]{32,128}\b`)
	// written documents that set up exceptions, grants or hooks
	exceptionKind = mustRx(`(?im)^\s*kind:\s*\w*(?:Exception|Exemption|Waiver|Override)s?\s*$`)
	wildGrant     = mustRx(`(?m)^\s*(?:-\s*)?["']?(?:verbs|resources|apiGroups|actions?|Action|permissions|NotAction)["']?\s*:\s*\[\s*["']\*["']\s*\]|["'](?:Action|action|actions)["']\s*:\s*\[?\s*["'](?:[\w-]+:)?\*["']`)
	webhookKind   = mustRx(`(?im)^\s*kind:\s*(?:Mutating|Validating)(?:Admission)?WebhookConfiguration\s*$`)
	webhookURL    = mustRx(`(?m)^\s*url:\s*["']?https?://([^/\s"':]+)`)
	// a protection's name in a written file's setting path
	writtenProtect = mustRx(`mtls|tls|ssl|auth|verif|encrypt|enforc|sign`)
	// a block list's item: - value
	blockItem = mustRx(`^-\s+["']?([^"'#:{}\[\]]{1,120}?)["']?\s*(?:#.*)?$`)
	// a command option feeding a check what it holds to
	checkOption = mustRx(`^--?[\w-]*(?:threshold|rule|polic|schema|baseline|gate|limit|check|verify|constraint|allowlist|denylist)[\w-]*$`)
)

// lineLoosened returns how an edit's changed lines loosen something beyond
// settings: a failure made a report, a failing flag removed, a lookup's
// default made permissive, a bound shifted, a destination swapped, an
// action unpinned, hidden characters, a personal mailbox given access, or
// "" — with the rule it earns.
func lineLoosened(p, added, old string) (rule, why string) {
	plus, minus := diffLinesKept(added, old, func(l string) bool { return !commentLine(l) }, maxLines20)
	for _, m := range minus {
		// what the removed line holds is read once, not for every added line
		mFails := failStmt.MatchString(m)
		mFlag := failFlag.FindString(m)
		mLookup := lookupDefault.FindStringSubmatch(m)
		if mLookup != nil && !emptyDefault[strings.TrimSpace(mLookup[2])] {
			mLookup = nil
		}
		mAction := actionRef.FindStringSubmatch(m)
		if mAction != nil && !fullSHA.MatchString(mAction[2]) {
			mAction = nil
		}
		for _, l := range plus {
			if mFails && !failStmt.MatchString(l) && reportStmt.MatchString(l) && sharedWord(m, l) {
				return "appsec:control-weakened", "turns a failure (" + clipText(m, 50) + ") into a report (" + clipText(l, 50) + "): the run goes on"
			}
			if mFlag != "" && !failFlag.MatchString(l) && strings.Replace(m, mFlag, "", 1) == l {
				return "evasion:check-loosened", "drops " + strings.TrimSpace(mFlag) + " from " + quote(clipText(l, 60)) + ": the run no longer fails on what it finds"
			}
			if om := mLookup; om != nil {
				if nm := lookupDefault.FindStringSubmatch(l); nm != nil && nm[1] == om[1] && !emptyDefault[strings.TrimSpace(nm[2])] && strings.TrimSpace(nm[2]) != "" {
					return "appsec:control-weakened", "gives the lookup of " + clipText(om[1], 30) + " a default of " + clipText(nm[2], 30) + " where it had none: what is not listed is let through"
				}
			}
			if why := boundShifted(m, l); why != "" {
				return "appsec:control-weakened", why
			}
			if why := guardMadeConstant(m, l); why != "" {
				return "appsec:control-weakened", why
			}
			if om := mAction; om != nil {
				if nm := actionRef.FindStringSubmatch(l); nm != nil && nm[1] == om[1] && !fullSHA.MatchString(nm[2]) {
					return "supply-chain:unpinned", "moves " + om[1] + " from a commit to " + nm[2] + ": whoever moves the tag changes what runs"
				}
			}
			if why := destinationSwapped(m, l); why != "" {
				return "exfiltration:destination-moved", why
			}
		}
	}
	for _, l := range plus {
		if m := farYear.FindStringSubmatch(l); m != nil && !strings.Contains(old, m[1]) {
			return "appsec:control-weakened", "schedules it for " + m[1] + " (" + clipText(l, 60) + "): it never runs"
		}
	}
	// a personal mailbox added where the edit lists company addresses
	if strings.Contains(old, "@") {
		corp := false
		for _, a := range emailAddr.FindAllString(old, 16) {
			if _, d, ok := strings.Cut(strings.ToLower(a), "@"); ok && !freeMail[d] {
				corp = true
			}
		}
		for _, l := range plus {
			for _, a := range emailAddr.FindAllString(l, 4) {
				if _, err := mail.ParseAddress(a); err != nil {
					continue
				}
				if _, d, _ := strings.Cut(strings.ToLower(a), "@"); corp && freeMail[d] && !strings.Contains(old, a) {
					return "exfiltration:destination-moved", "adds " + a + ", a personal mailbox, where the file lists company addresses"
				}
			}
		}
	}
	if checksumFile.MatchString(path.Base(p)) {
		for _, m := range minus {
			if h := hashValue.FindString(m); h != "" && !strings.Contains(added, h) {
				return "supply-chain:checksum", "replaces the recorded checksum " + h[:12] + "… in " + path.Base(p) + ": a changed file would pass as the one recorded"
			}
		}
	}
	return "", ""
}

// sharedWord reports whether two lines share a word of four letters or
// more (the same message, raised and then printed).
func sharedWord(a, b string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(a), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		if len(w) >= 4 && w != "raise" && w != "print" && w != "throw" && w != "systemexit" && strings.Contains(strings.ToLower(b), w) {
			return true
		}
	}
	return false
}

// boundShifted reports a comparison moved by a constant inserted on the
// line: a bound shifted (x >= floor → x >= floor - 0.1, gap < min → gap <
// min - 120), a date moved (>= on - timedelta(days=45), start().minusDays(
// 30)), a value padded (rest.plusMinutes(90).compareTo(required)), or a
// literal exception added to an enforcing condition (&& !x.equals("FAA")).
func boundShifted(was, now string) string {
	_, ins, ok := inserted(was, now)
	if !ok {
		return ""
	}
	if literalException.MatchString(ins) && enforcingLine.MatchString(was) {
		return "adds an exception for a literal value to " + quote(clipText(strings.TrimSpace(was), 60)) + ": what it enforces skips that case"
	}
	if !comparison.MatchString(was) {
		return ""
	}
	if shiftInsert.MatchString(ins) {
		return "shifts " + quote(clipText(strings.TrimSpace(was), 60)) + " by " + strings.TrimSpace(ins) + ": what failed the comparison may pass"
	}
	return ""
}

var (
	// a comparison on a line
	comparison = mustRx(`[<>]=?|\.compareTo\(|\.isBefore\(|\.isAfter\(|\bBefore\(|\bAfter\(`)
	// a constant shift inserted: - 120, + 0.5, - timedelta(days=45), .minusDays(30), .plusMinutes(90), * 1000 is boundMultiplied's
	shiftInsert = mustRx(`^\s*(?:[-+]\s*(?:\d[\d_.]*|timedelta\([^()]*\)|Duration\.\w+\([^()]*\)|time\.Duration\([^()]*\)|\d[\d_.]*\s*\*\s*[\w.]+)|\.?(?:plus|minus|add|subtract)\w*\(\s*-?\d[\d_.]*\s*\)\.?)\s*\)?$`)
	// an exception for a literal value: && !x.equals("FAA"), and x != 'dev'
	literalException = mustRx(`^\s*(?:&&|\band\b)\s*(?:!\s*|not\s+)?[\w.()\[\]]+(?:\.equals\(\s*"[^"]+"\s*\)|\s*(?:!=|!==|==|===)\s*["'][^"']*["'])\s*$`)
	// a condition that enforces or checks
	enforcingLine = mustRx(`(?i)\bif\b.*(?:enforc|strict|check|verif|valid|legal|allow|permit|auth|require|block|deny|limit)`)
	// an assignment of a permit or guard from an expression, and of a constant true
	guardAssign = mustRx(`(?i)^\s*([A-Za-z_][\w.]*(?:permit|allow|authori[sz]ed|grant|valid|safe|trusted|verified|guard|interlock)\w*)\s*(?::=|=)\s*(.+?)\s*;?\s*$`)
	trueLiteral = mustRx(`^(?:TRUE|true|True|1)$`)
	boolLiteral = mustRx(`^(?:TRUE|FALSE|true|false|True|False|0|1|yes|no|nil|null|None)$`)
	// a scheduled year no one will see
	farYear = mustRx(`["'\s](20[5-9]\d|2[1-9]\d\d)["'\s)]`)
)

// guardMadeConstant reports a permit or guard that was computed made a
// constant true (RunPermit := NOT TripActive → RunPermit := TRUE).
func guardMadeConstant(was, now string) string {
	om := guardAssign.FindStringSubmatch(was)
	nm := guardAssign.FindStringSubmatch(now)
	if om == nil || nm == nil || !strings.EqualFold(om[1], nm[1]) || boolLiteral.MatchString(strings.TrimSuffix(om[2], ";")) || !trueLiteral.MatchString(strings.TrimSuffix(nm[2], ";")) {
		return ""
	}
	return "makes " + om[1] + " always true where it was " + quote(clipText(om[2], 40)) + ": the guard no longer guards"
}

// destinationSwapped reports a line whose only change moves a host to
// another registered domain, an ARN to another AWS account, or an image
// to another registry or owner, or "".
func destinationSwapped(was, now string) string {
	i := 0
	for i < len(was) && i < len(now) && was[i] == now[i] {
		i++
	}
	if i == len(was) && i == len(now) {
		return ""
	}
	if om := arnAccount.FindStringSubmatch(was); om != nil {
		if nm := arnAccount.FindStringSubmatch(now); nm != nil && nm[1] != om[1] && strings.Replace(was, om[1], nm[1], 1) == now {
			return "moves an ARN from account " + om[1] + " to " + nm[1] + ": another account's role or resource"
		}
	}
	if om := imageRef.FindStringSubmatch(was); om != nil {
		if nm := imageRef.FindStringSubmatch(now); nm != nil && nm[3] == om[3] && (nm[1] != om[1] || nm[2] != om[2]) && regDomain(strings.Split(nm[1], ":")[0]) != regDomain(strings.Split(om[1], ":")[0]) {
			return "moves the image " + om[3] + " from " + om[1] + "/" + om[2] + " to " + nm[1] + "/" + nm[2] + ": another publisher's build"
		}
	}
	oh := hostOnLine.FindAllStringSubmatch(strings.ToLower(was), 4)
	nh := hostOnLine.FindAllStringSubmatch(strings.ToLower(now), 4)
	if len(oh) == 0 || len(oh) != len(nh) {
		return ""
	}
	for k := range oh {
		a, b := oh[k][1]+oh[k][2], nh[k][1]+nh[k][2]
		if a == b {
			continue
		}
		if !hostLike(b) || !hostLike(a) || regDomain(a) == regDomain(b) || intranetHost(b) || localHost(b) || strings.Count(b, ".") < 1 {
			return ""
		}
		if strings.Replace(strings.ToLower(was), a, b, 1) != strings.ToLower(now) {
			return ""
		}
		return "moves " + a + " to " + b + ", another domain: what went there now goes elsewhere"
	}
	return ""
}

// blockLists reads a text's YAML block lists (a header, then `- item`
// lines) as path → items (rules21's listWeakened judges them).
func blockLists(text string) map[string][]string {
	out := map[string][]string{}
	var cur string
	curIndent := -1
	n := 0
	for raw := range strings.SplitSeq(text, "\n") {
		if n++; n > maxLines21 {
			break
		}
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		if m := blockItem.FindStringSubmatch(t); m != nil && cur != "" && indent >= curIndent {
			if len(out[cur]) < 32 {
				out[cur] = append(out[cur], strings.ToLower(strings.TrimSpace(m[1])))
			}
			continue
		}
		if m := yamlHeader.FindStringSubmatch(t); m != nil && !strings.HasPrefix(t, "-") {
			cur, curIndent = normKey(m[1]), indent
			continue
		}
		cur = ""
	}
	return out
}

// writtenSetUp returns what written content sets up that weakens a
// control wherever it is written: an exception to a policy, a grant of
// everything, a protection off in a new file, an admission webhook served
// from outside, or "".
func writtenSetUp(body string, newFile bool) string {
	if exceptionKind.MatchString(body) {
		return "declares an exception to a policy (" + clipText(strings.TrimSpace(exceptionKind.FindString(body)), 40) + "): what the policy refuses passes for what it names"
	}
	if m := wildGrant.FindString(body); m != "" && (strings.Contains(body, "Allow") || !strings.Contains(body, "Deny")) {
		return "grants everything (" + clipText(strings.TrimSpace(m), 40) + ")"
	}
	if webhookKind.MatchString(body) {
		if m := webhookURL.FindStringSubmatch(body); m != nil && !intranetHost(m[1]) && !localHost(m[1]) && !strings.HasSuffix(m[1], ".svc") && !strings.Contains(m[1], ".svc.") {
			return "registers an admission webhook served by " + m[1] + ": every object the cluster admits passes through it"
		}
	}
	if newFile {
		for _, s := range qualSettings(body) {
			if writtenProtect.MatchString(s.path) && (valOff(s.val) || s.val == "permissive") && !diagnostic.MatchString(s.path) && !notProtection.MatchString(s.leaf) && !exposeConcept.MatchString(s.leaf) {
				return "sets " + clipText(s.path, 40) + " to " + s.val + " (" + clipText(s.line, 50) + ")"
			}
		}
	}
	return ""
}

// (s *Shield) rules21c judges commands: a check fed an empty file, code
// fetched over a source file of the workspace, a checksum file deleted.
func (s *Shield) rules21c(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		for k := 1; k < len(r.Argv); k++ {
			a := r.Argv[k]
			opt, val, eq := strings.Cut(a, "=")
			if !eq && k+1 < len(r.Argv) {
				val = r.Argv[k+1]
			}
			if val == "/dev/null" && checkOption.MatchString(opt) {
				j.escalate("evasion:check-loosened", "%s gives %s an empty file (/dev/null): the check has nothing to hold the run to", r.Name, opt)
				return
			}
		}
	}
	for _, w := range f.Writes {
		if !s.inWorkspace(w.Path) || w.Glob || w.Tree || (w.By != "curl" && w.By != "wget") {
			continue
		}
		if ext := strings.ToLower(path.Ext(w.Path)); codeExts[ext] || ext == ".nf" || ext == ".smk" || ext == ".sh" || ext == ".wdl" || ext == ".cwl" {
			if slices.ContainsFunc(f.Requests, func(q Request) bool { return q.Host != "" && !localHost(q.Host) }) {
				j.escalate("supply-chain:source", "%s writes %s, a source file of the workspace, from what it downloads: the project's code comes from there", w.By, s.relPath(w.Path))
				return
			}
		}
	}
	for _, d := range f.Deletes {
		if s.inWorkspace(d.Path) && !d.Glob && checksumFile.MatchString(path.Base(d.Path)) {
			j.escalate("supply-chain:checksum", "%s deletes %s: what it recorded is no longer checked", by(&d), s.relPath(d.Path))
			return
		}
	}
}
