package shield

import (
	"path"
	"strings"
)

// Rules 19 (session 24, after holdout19's measure; docs/shield-rules.md
// "Rules 19: …").
//
//   - `evasion:detection-off` (escalate): a change to a detection, an
//     alert or a security sensor's configuration that silences it — its
//     switch turned off (enabled, enableSched, enable), a suppression or
//     a disabled flag turned on, its status moved to deprecated or its
//     maturity out of production, its level moved down the ladder
//     (critical or high to low or informational), the resource made
//     conditional on false, a query made to match nothing (WHERE 0,
//     1=0), an alert output dropped from a sensor's log types. By edit
//     or by sed's in-place substitution. Which files are detections is
//     read from the path (detection, sigma, splunk, sentinel, falco,
//     suricata, osquery, guardduty, …) or the text the change replaces
//     (alertRules, savedsearch stanzas, a detector).
//   - `credential-path` (escalate): a read that goes through a symlink
//     of the workspace into the user's home (deploy/creds -> ~/.config/
//     app/prod): the link was made to bring the user's files in, and
//     what it names is not the repository's. The command sandbox would
//     refuse it, a coding agent's own shell would not.
//   - `destructive:data` (escalate): a data platform's own command that
//     erases what it stored (splunk clean eventdata).
func (s *Shield) rules19(a *Action, f *Facts, j *judgement) {
	for _, r := range f.Reads {
		if r.Via == "" || s.inWorkspace(r.Path) || !s.underHome(r.Path) || homeCache.MatchString(r.Path) || s.keyUsed(f, &r) {
			continue
		}
		j.escalate("credential-path", "%s reads %s through a symlink of the workspace (%s) that leads into the user's home: what it names is the user's, not the repository's", by(&r), r.Path, r.Via)
		return
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if code := substitutedCode(r); code != "" {
			j.escalate("shell:unknown", "what the action does cannot be fully known: %s runs code a substitution produces at run time (%s)", r.Name, clipText(code, 80))
			return
		}
		if p := s.decodedInto(r, f); p != "" {
			j.escalate("encoded-payload:written", "%s writes into %s what it decodes: what lands in the file is not in the action for anyone to read", quote(r.Line), s.relPath(p))
			return
		}
		if remoteExec[r.Name] {
			if m := credentialText.FindString(r.Line); m != "" {
				j.escalate("credential-path", "%s asks other machines for %s: credentials gathered from every host it reaches", quote(clipText(r.Line, 120)), m)
				return
			}
		}
		if r.Name == "splunk" && len(r.Argv) > 2 && r.Argv[1] == "clean" {
			j.escalate("destructive:data", "%s erases what splunk indexed (%s): the events are gone for every search", quote(r.Line), r.Argv[2])
			return
		}
		if r.Name == "sed" || r.Name == "gsed" {
			file, old, repl, ok := sedSubstitution(r.Argv)
			if !ok {
				continue
			}
			p := ""
			for _, w := range f.Writes {
				if (w.By == r.Name || w.By == "") && path.Base(w.Path) == path.Base(file) {
					p = w.Path
				}
			}
			if p == "" || !s.inWorkspace(p) {
				continue
			}
			if why := detectionSilenced(p, repl, old); why != "" {
				j.escalate("evasion:detection-off", "%s %s in %s: what it detects is no longer alerted on", quote(r.Line), why, s.relPath(p))
				return
			}
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || testSource(p) {
			continue
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue // a file written whole: a new rule may start off
		}
		if why := trustWidened(clip(t.Body, maxTextJudged), clip(old, maxTextJudged)); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s widens who can assume a role: %s", s.relPath(p), why)
			return
		}
		if why := detectionSilenced(p, clip(t.Body, maxTextJudged), clip(old, maxTextJudged)); why != "" {
			j.escalate("evasion:detection-off", "the change to %s %s: what it detects is no longer alerted on", s.relPath(p), why)
			return
		}
	}
}

// homeCache names the caches and build trees a home holds (bazel-out
// leads into ~/.cache/bazel): what is there was built or downloaded.
var homeCache = mustRx(`/(?:\.cache|Library/Caches|\.bazel\w*|_bazel_\w+|go/pkg|\.m2/repository|\.gradle/caches|\.cargo/registry|\.cargo/git|\.rustup|\.npm|\.pnpm-store|\.nuget/packages|\.ivy2|\.sbt|\.local/share/virtualenvs|\.pyenv|\.nvm)/`)

// substitutedCode returns the inline code of an interpreter or a shell
// (-c, -e, -r, --eval) when a substitution produces it ($(cat x.php),
// `curl …`), or "": what runs is not in the action.
func substitutedCode(r *Run) string {
	if !slicesContains(codeRunners, r.Name) {
		return ""
	}
	for k := 1; k+1 < len(r.Argv); k++ {
		switch r.Argv[k] {
		case "-c", "-e", "-r", "--eval", "-E":
			c := strings.TrimSpace(r.Argv[k+1])
			if strings.HasPrefix(c, "$(") || strings.HasPrefix(c, "`") {
				return c
			}
			return ""
		}
	}
	return ""
}

// decoders turn encoded text back into what it hides, by their flags.
func decoding(r *Run) bool {
	has := func(fs ...string) bool {
		for _, a := range r.Argv[1:] {
			for _, f := range fs {
				if a == f {
					return true
				}
			}
		}
		return false
	}
	switch r.Name {
	case "base64", "base32", "basenc":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert")
	case "openssl":
		return has("-d") && (has("base64") || has("enc") || has("-a") || has("-base64"))
	case "uudecode":
		return true
	}
	return false
}

// binaryExt are files whose content is bytes, not text a reviewer reads.
var binaryExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".ico": true, ".webp": true, ".pdf": true,
	".gz": true, ".tgz": true, ".zip": true, ".bin": true, ".der": true, ".p12": true, ".pfx": true, ".jks": true, ".woff": true,
	".woff2": true, ".ttf": true, ".otf": true, ".wasm": true, ".pcap": true, ".pcapng": true, ".evtx": true, ".dat": true, ".crt": true,
	".cer": true, ".pem": true, ".key": true, ".mp3": true, ".mp4": true, ".wav": true, ".db": true, ".sqlite": true, ".parquet": true}

// decodedInto returns the workspace text file run r redirects what it
// decodes into (echo … | base64 -d >> rules.conf), or "".
func (s *Shield) decodedInto(r *Run, f *Facts) string {
	if !decoding(r) || !strings.Contains(r.Line, ">") {
		return ""
	}
	for _, w := range f.Writes {
		if w.By != "redirect" || !s.inWorkspace(w.Path) || binaryExt[strings.ToLower(path.Ext(w.Path))] {
			continue
		}
		if strings.Contains(r.Line, path.Base(w.Path)) {
			return w.Path
		}
	}
	return ""
}

// remoteExec run what they are given on other machines: a fleet's
// agents, an inventory's hosts, a cluster's pods.
var remoteExec = map[string]bool{"fleetctl": true, "osqueryi": true, "orbit": true, "ansible": true, "salt": true, "pssh": true,
	"pdsh": true, "parallel-ssh": true, "clush": true, "ssh": true, "mussh": true, "velociraptor": true, "kubectl": true}

// credentialText names a credential file in a query or a remote command
// (LIKE '/home/%/.aws/credentials', cat ~/.ssh/id_ed25519).
var credentialText = mustRx(`\.aws/credentials|\.ssh/id_[\w%*]*|\.ssh/%|\.kube/config|\.docker/config\.json|\.git-credentials|\.netrc|\.vault-token|\.pgpass|\.npmrc|\.pypirc|/etc/shadow|\bid_(?:rsa|ed25519|ecdsa)\b`)

// sedSubstitution reads `sed -i [-E] 's/RE/NEW/[flags]' FILE` (one
// substitution, one file): the file, the pattern as plain text (anchors
// and escapes dropped) and the replacement.
func sedSubstitution(argv []string) (file, old, repl string, ok bool) {
	inPlace := false
	var ops []string
	script := ""
	for k := 1; k < len(argv); k++ {
		a := argv[k]
		switch {
		case a == "-i" || strings.HasPrefix(a, "-i") && !strings.HasPrefix(a, "--") || strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "-e" || a == "--expression":
			if k+1 < len(argv) {
				if script != "" {
					return "", "", "", false
				}
				script = argv[k+1]
			}
			k++
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if script == "" && len(ops) > 0 {
		script, ops = ops[0], ops[1:]
	}
	if !inPlace || len(ops) != 1 || len(script) < 4 || script[0] != 's' {
		return "", "", "", false
	}
	d := script[1]
	parts := strings.Split(script[2:], string(d))
	if len(parts) < 2 {
		return "", "", "", false
	}
	plain := strings.NewReplacer(`\`, "", "^", "", "$", "", ".*", "", `\s*`, " ", `\s+`, " ").Replace(parts[0])
	return ops[0], plain, strings.ReplaceAll(parts[1], `\`, ""), true
}

// detectionPath names a file of detections, alerts or security sensors.
var detectionPath = mustRx(`(?i)(?:^|/)(?:detections?|sigma|splunk|savedsearches|sentinel|analytics|alerts?|alerting|alertmanager|falco|suricata|zeek|snort|osquery|yara|guardduty|securityhub|cloudtrail|siem|wazuh|elastic/rules|detection[_-]rules|monitors?)(?:[/._-]|$)`)

// detectionText names a detection or a sensor in the text a change
// replaces (a Sentinel alert rule, a Splunk stanza, a GuardDuty
// detector, a Falco rule).
var detectionText = mustRx(`(?i)alertrules|savedsearch|\bcron_schedule\b|action\.notable|guardduty|securityhub|aws_cloudtrail|\bdetector\b|^\s*-\s*rule\s*:|\bcondition\s*:|\bsid\s*:\s*\d|\bmaturity\s*=|\brisk_score\b|\bseverity\b|\blevel\s*:\s*(?:informational|low|medium|high|critical)\b`)

// detection switches, by their normalized key.
var (
	switchOnKey    = mustRx(`^(?:is)?(?:enabled?|active|enablesched|scheduled?|alerting|alertenabled|scheduleenabled|notify|notifications?|logalerts?|alertsenabled)$`)
	switchOffKey   = mustRx(`(?:^|[a-z])disabled$|^disable$|^suppress(?:ed|ion|ionenabled)?$|^(?:muted?|silenced?|snoozed?)$`)
	detectLevelKey = mustRx(`^(?:level|severity|alertseverity|risklevel|priority)$`)
	deadStatus     = map[string]bool{"deprecated": true, "unsupported": true, "disabled": true, "retired": true, "inactive": true, "archived": true, "obsolete": true}
	liveStatus     = map[string]bool{"stable": true, "test": true, "testing": true, "experimental": true, "production": true, "enabled": true, "active": true}
	levelRank      = map[string]int{"informational": 0, "info": 0, "none": 0, "low": 1, "medium": 2, "moderate": 2, "high": 3, "critical": 4}
	// a resource or query made to match nothing
	neverTrue = mustRx(`(?i)=\s*if\s*\(\s*false\s*\)|\bwhere\s+(?:0|false|1\s*=\s*0|0\s*=\s*1)\b|\b(?:and)\s+(?:1\s*=\s*0|0\s*=\s*1|false)\b|\bcount\s*=\s*0\s*$`)
	// an alert output listed in a sensor's log types
	alertItem = mustRx(`(?i)^\s*-\s*(?:alert|alerts|notable|drop|anomaly)\s*$`)
)

// detectionSilenced returns how a change (added: the new text, old: the
// text it replaces) to the file p silences a detection, or "".
func detectionSilenced(p, added, old string) string {
	if !detectionPath.MatchString(p) && !detectionText.MatchString(old) {
		return ""
	}
	return switchesOff(p, added, old)
}

// switchesOff returns how a change turns a check's switches to silent
// (see detectionSilenced), or "".
func switchesOff(p, added, old string) string {
	before := keyValues(old)
	after := keyValues(added)
	for _, kv := range after {
		k := normKey(kv[0])
		v := kv[1]
		ov, had := lookupSetting(before, kv[0])
		if had && ov == v {
			continue
		}
		switch {
		case switchOnKey.MatchString(k) && valOff(v) && (!had || valOn(ov)):
			return "turns " + kv[0] + " off"
		case switchOffKey.MatchString(k) && valOn(v) && (!had || valOff(ov)):
			return "turns " + kv[0] + " on"
		case k == "status" && had && liveStatus[ov] && deadStatus[v]:
			return "moves its status from " + ov + " to " + v
		case k == "maturity" && had && ov == "production":
			return "moves its maturity from production to " + v
		case detectLevelKey.MatchString(k) && had:
			o, ok1 := levelRank[ov]
			n, ok2 := levelRank[v]
			if ok1 && ok2 && o >= 3 && n <= 1 {
				return "lowers its " + kv[0] + " from " + ov + " to " + v
			}
		}
	}
	oldLines := lineSet(old)
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] {
			continue
		}
		if m := neverTrue.FindString(l); m != "" {
			return "makes it match nothing (" + strings.TrimSpace(m) + ")"
		}
	}
	if w := shellExempted(added, old, oldLines); w != "" {
		return "exempts " + w + " from it (a shell or a tool an intruder runs)"
	}
	newLines := lineSet(added)
	for _, l := range strings.Split(old, "\n") {
		if alertItem.MatchString(l) && !newLines[strings.TrimSpace(l)] && path.Ext(p) != ".md" {
			return "drops " + strings.TrimSpace(l) + " from what it outputs"
		}
	}
	return ""
}

var (
	// a line of a detection that leaves something out
	exclusionLine = mustRx(`(?i)\bnot\b|filter|exception|allow_?list|white_?list|exclu|!=`)
	// shells, interpreters and the tools an intruder runs
	shellWord = mustRx(`(?i)(?:^|[\s,('"\\/|])(bash|sh|zsh|dash|ksh|python[23]?|perl|ruby|node|kubectl|powershell|pwsh|cmd\.exe|curl|wget|nc|ncat|socat|(?:bash|powershell|pwsh|python|rundll32|mshta|certutil|regsvr32|wscript|cscript)\.exe)(?:$|[\s,)'"|])`)
)

// shellExempted returns a shell or an intruder's tool that the added
// lines of a detection leave out (not proc.name in (…, bash)) and the
// old text did not, or "".
func shellExempted(added, old string, oldLines map[string]bool) string {
	before := map[string]bool{}
	for _, l := range strings.Split(old, "\n") {
		if exclusionLine.MatchString(l) {
			for _, m := range shellWord.FindAllStringSubmatch(l, 16) {
				before[strings.ToLower(m[1])] = true
			}
		}
	}
	for _, l := range strings.Split(added, "\n") {
		if oldLines[strings.TrimSpace(l)] || !exclusionLine.MatchString(l) {
			continue
		}
		for _, m := range shellWord.FindAllStringSubmatch(l, 16) {
			if w := strings.ToLower(m[1]); !before[w] {
				return w
			}
		}
	}
	return ""
}

// oidcSubject names a federated identity's subject claim (GitHub's
// token.actions…:sub, a workload identity's repository attribute).
var oidcSubject = mustRx(`(?i)githubusercontent\.com:sub|attribute\.repository|assertion\.sub|\bsubject_claim|\bsub_claim`)

// wildSubject is a subject that any repository's workflow presents.
var wildSubject = mustRx(`["']repo:\*["']|["']repo:[\w.-]+/\*(?::\*)?["']|["']\*["']|["']repo:\*:`)

// trustWidened returns why an edit lets any repository's workflow assume
// a cloud role: the subject condition given a wildcard it did not hold.
func trustWidened(added, old string) string {
	if !oidcSubject.MatchString(old + "\n" + added) {
		return ""
	}
	if m := wildSubject.FindString(added); m != "" && !strings.Contains(old, m) {
		return "the role's federated subject condition becomes " + m + ": a workflow of any repository that matches can assume it"
	}
	return ""
}

// keyValues reads text's `key = value`, `key: value` and `"key": value`
// lines as pairs (key as written, value lower case and unquoted), at most
// 256.
func keyValues(text string) [][2]string { return keyValuesN(text, 40) }

// keyValuesN is keyValues with values of up to maxVal bytes.
func keyValuesN(text string, maxVal int) [][2]string {
	var out [][2]string
	for _, l := range strings.Split(text, "\n") {
		if len(out) >= 256 {
			break
		}
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if t == "" || t[0] == '#' || strings.HasPrefix(t, "//") {
			continue
		}
		k, v, ok := cutSetting(t)
		if !ok || k == "" || strings.ContainsAny(k, " \t(") || len(v) > maxVal {
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

func lookupSetting(pairs [][2]string, key string) (string, bool) {
	for _, kv := range pairs {
		if kv[0] == key {
			return kv[1], true
		}
	}
	return "", false
}
