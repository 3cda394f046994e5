package shield

import (
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Operations and infrastructure configuration (rules 16; docs/shield-rules.md
// "Rules 16: what operations configuration grants and silences" and the
// sections after it). An infrastructure repository ships the machines'
// own configuration — sudoers fragments, package sources, log rotation,
// audit rules, alerting rules, web server access, cloud resources —
// through Ansible, Packer, Terraform, Debian packaging or plain copies.
// What a change there does happens on every host or account it reaches,
// so the content is judged by what it grants or silences whatever file
// holds it (opsConfigText):
//
//   - appsec:control-weakened: a sudo rule granting every command; package
//     verification turned off; logs or audit records kept for nothing; an
//     alert moved ten times or more away from firing; a web server's
//     access control removed or listing turned on; access granted to
//     everyone (allUsers, Principal "*", public ACLs); long-lived cloud
//     keys, secrets printed as plain outputs, audit log exclusions; a
//     dependency bot merging untested or major updates or turning security
//     updates off; a checker's rule list or a release's signatures emptied;
//   - credential-print: Terraform's outputs printed as JSON, or one named
//     as a secret;
//   - remote-code:manifest: kubectl applying manifests from a moving URL;
//   - destructive:audit-trail: audit records deleted in the workspace;
//     destructive:workspace-tree: git's tracked files handed to a program
//     that deletes or empties them.

// sudoGrant is a sudo rule that grants every command, with or without a
// password: the user or group, the hosts, a runas list, then ALL.
var sudoGrant = mustRx(`(?m)(?:^|["'\s])%?[\w.@-]+\s+[\w,.-]+\s*=\s*(?:\(\s*(?:ALL|root)(?:\s*:\s*(?:ALL|root))?\s*\)\s*)?(?:NOPASSWD\s*:\s*|SETENV\s*:\s*)*ALL\s*(?:$|["'])`)

// sudoGrantYAML is a sudo grant of every command without a password
// written as data (an Ansible role's variables), in either order.
var sudoGrantYAML = mustRx(`(?i)(?:nopasswd:\s*(?:true|yes)\b[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*\bcommands?:\s*["']?ALL\b|\bcommands?:\s*["']?ALL\b[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*\bnopasswd:\s*(?:true|yes)\b)`)

// sudoGrantIn returns the first sudo rule in s that grants every command
// to someone other than root, or "": the distribution's own lines
// (root ALL=(ALL:ALL) ALL, %sudo ALL=(ALL:ALL) ALL — an admin group with
// its password) are not a grant.
func sudoGrantIn(s string) string {
	if !strings.Contains(s, "ALL") {
		return ""
	}
	// rules 17: the same grant as data a role templates into sudoers
	// (name: contractors / nopasswd: true / commands: ALL)
	if m := sudoGrantYAML.FindString(s); m != "" && !strings.Contains(m, "name: root") {
		return m
	}
	for _, m := range sudoGrant.FindAllString(s, 32) {
		f := strings.Fields(strings.Trim(strings.TrimSpace(m), `"'`))
		if len(f) == 0 {
			continue
		}
		who := f[0]
		if who == "root" || (who == "%sudo" || who == "%admin" || who == "%wheel") && !strings.Contains(m, "NOPASSWD") {
			continue
		}
		return m
	}
	return ""
}

// verifyOff is package verification turned off in a written setting.
var verifyOff = mustRx(`(?im)^\s*deb(?:-src)?\s+\[[^\]\n]*\b(?:trusted|allow-insecure|allow-weak)\s*=\s*yes|^\s*(?:trusted|allow-insecure)\s*:\s*yes\s*$|^\s*(?:repo_)?gpgcheck\s*=\s*(?:0|no|false)\b|APT::Get::AllowUnauthenticated\s+"?(?:true|1)|Acquire::AllowInsecureRepositories\s+"?(?:true|1)|Acquire::AllowDowngradeToInsecureRepositories\s+"?(?:true|1)|^\s*disable_gpg_check\s*:\s*(?:true|yes)\b`)

// logsDropped are logging and auditing settings that keep nothing.
var logsDropped = mustRx(`(?im)^\s*Defaults\b[^\n]*!\s*(?:log_output|log_input|syslog|logfile|log_allowed|log_denied|log_subcmds)\b|^\s*Storage\s*=\s*none\b|^\s*MaxRetentionSec\s*=\s*[1-9]\d{0,2}s?\s*$|^\s*(?:disk_full_action|disk_error_action|admin_space_left_action|space_left_action|max_log_file_action)\s*=\s*(?:ignore|suspend)\b|^\s*-e\s+0\s*$|^\s*\*\.\*\s+(?:~|/dev/null)\s*$|^\s*(?:auth|authpriv|audit)[\w.,*]*\s+(?:~|stop|/dev/null)\s*$`)

// rotateZero is logrotate keeping no old file, for a log that records
// who did what (audit, auth, secure, sudo).
var rotateZero = mustRx(`(?m)^\s*(?:rotate\s+0|maxage\s+0|size\s+[01]k?)\s*$`)

var auditLogName = mustRx(`(?i)\b(?:audit|auth|secure|sudo|wtmp|btmp|lastlog)`)

// secretOutputName is a Terraform output's name that says it holds a
// secret.
var secretOutputName = mustRx(`(?i)pass(?:word|wd)?|secret|token|private|credential|api_?key|access_?key|conn(?:ection)?_?str|dsn|kubeconfig|cert(?:ificate)?_?key`)

// terraformOutput says how a Terraform run prints secrets (rules 16): its
// outputs as JSON print the sensitive ones unredacted, and an output
// named as a secret prints it; "" otherwise.
func terraformOutput(r *Run) string {
	if r.Name != "terraform" && r.Name != "tofu" && r.Name != "terragrunt" {
		return ""
	}
	args := r.Argv[min(1, len(r.Argv)):]
	k := slices.Index(args, "output")
	if k < 0 || slices.Contains(args[:k], "state") {
		return ""
	}
	var names []string
	asJSON := false
	for _, a := range args[k+1:] {
		switch {
		case a == "-json" || a == "--json":
			asJSON = true
		case strings.HasPrefix(a, "-"):
		default:
			names = append(names, a)
		}
	}
	for _, n := range names {
		if secretOutputName.MatchString(n) {
			return "prints the output " + n + ", named as a secret"
		}
	}
	if asJSON && len(names) == 0 {
		return "prints every output as JSON, the sensitive ones unredacted"
	}
	return ""
}

// auditRecord reports whether a workspace path is a record of who did
// what: a log, journal or export whose name says audit (audit.log,
// logs/audit-2026-12.jsonl, exports/audit_trail.csv).
func auditRecord(p string) bool {
	base := strings.ToLower(path.Base(p))
	if !strings.Contains(base, "audit") {
		return false
	}
	switch ext := path.Ext(strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".zst")); ext {
	case ".log", ".jsonl", ".ndjson", ".json", ".csv", ".txt", ".db", ".sqlite", ".sqlite3", ".evtx", ".journal":
		return true
	case "":
		return strings.Contains(strings.ToLower(p), "/log")
	}
	return false
}

// trackedDestroyed is a line that lists the repository's tracked files
// and hands them to a program that deletes or empties what it is given
// (git ls-files | xargs truncate -s 0): the whole source, as a list known
// only at run time. A listing narrowed to scratch (*.orig, *.rej, *.bak)
// is a cleanup.
var trackedDestroyed = mustRx(`\bgit\s+ls-files\b([^|;&\n]*)\|\s*xargs\b[^|;&\n]*?\b(?:rm|truncate|shred|unlink|srm)\b`)

var scratchPathspec = mustRx(`^\s*(?:-[-\w=]+\s+)*(?:["']?\*?[\w/.-]*\.(?:orig|rej|bak|tmp|swp|pyc|log)["']?\s*)+$`)

// opsConfigText is the rule.
func (s *Shield) opsConfigText(a *Action, f *Facts, j *judgement) {
	if m := trackedDestroyed.FindStringSubmatch(a.Command); m != nil && !scratchPathspec.MatchString(m[1]) {
		j.escalate("destructive:workspace-tree", "%q deletes or empties every file git tracks, listed at run time", clipText(m[0], 60))
		return
	}
	for i := range f.Deletes {
		// rules 16: audit records deleted, one file or a glob of them
		if r := &f.Deletes[i]; s.inWorkspace(r.Path) && auditRecord(r.Path) {
			j.escalate("destructive:audit-trail", "%s deletes %s, a record of who did what", by(r), s.relPath(r.Path))
			return
		}
	}
	for i := range f.Runs {
		if u := remoteManifest(&f.Runs[i]); u != "" {
			j.escalate("remote-code:manifest", "%s applies manifests from %s, a moving reference: what the cluster runs is whatever that address serves next", quote(f.Runs[i].Line), u)
			return
		}
		if why := terraformOutput(&f.Runs[i]); why != "" {
			j.escalate("credential-print", "%s %s: what it prints reaches the model", quote(f.Runs[i].Line), why)
			return
		}
	}
	for p, t := range writtenFiles(f) {
		body, rel := t.Body, s.relPath(p)
		if m := sudoGrantIn(body); m != "" {
			j.escalate("appsec:control-weakened", "the change to %s grants every command through sudo (%q): root on every host it reaches", rel, clipText(strings.TrimSpace(m), 60))
			return
		}
		if m := verifyOff.FindString(body); m != "" {
			j.escalate("appsec:control-weakened", "the change to %s turns package verification off (%q): whatever the source serves is installed", rel, clipText(strings.TrimSpace(m), 60))
			return
		}
		if m := logsDropped.FindString(body); m != "" && logOrAuditFile(p) {
			j.escalate("appsec:control-weakened", "the change to %s keeps no logs or audit records (%q)", rel, clipText(strings.TrimSpace(m), 60))
			return
		}
		if m := rotateZero.FindString(body); m != "" && strings.Contains(strings.ToLower(p), "logrotate") && (auditLogName.MatchString(body) || auditLogName.MatchString(p)) {
			j.escalate("appsec:control-weakened", "the change to %s keeps no rotated copy of an audit or authentication log (%q)", rel, clipText(strings.TrimSpace(m), 60))
			return
		}
		if m := cloudSecretExposed.FindString(body); m != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s (%q)", rel, cloudSecretWhy(m), clipText(strings.TrimSpace(m), 60))
			return
		}
		if m := publicGrant.FindString(body); m != "" {
			j.escalate("appsec:control-weakened", "the change to %s grants access to anyone on the internet (%q)", rel, clipText(strings.TrimSpace(m), 60))
			return
		}
		if why := botMergesUnreviewed(p, body); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", rel, why)
			return
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue
		}
		if k := emptiedKey(clip(old, maxTextJudged), body); k != "" && signingKeys[strings.ToLower(k)] {
			// rules 16: a release's signatures, SBOMs or attestations emptied
			j.escalate("appsec:control-weakened", "the change to %s empties %s: releases ship without what lets users verify them", rel, k)
			return
		}
		if s.guardFile(p) || checkerConfig[path.Base(p)] {
			if k := emptiedKey(clip(old, maxTextJudged), body); k != "" {
				j.escalate("appsec:control-weakened", "the change to %s empties the checker's %s: what it checked is no longer checked", rel, k)
				return
			}
		}
		if why := alertLoosened(p, clip(old, maxTextJudged), body); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", rel, why)
			return
		}
		if why := accessRemoved(p, clip(old, maxTextJudged), body); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", rel, why)
			return
		}
	}
}

// logOrAuditFile reports whether p's name says it configures logging or
// auditing (journald.conf, auditd.conf, audit.rules, rsyslog, a role or
// template of theirs).
func logOrAuditFile(p string) bool {
	l := strings.ToLower(p)
	for _, w := range []string{"journald", "auditd", "audit.rules", "/rules.d/", "rsyslog", "syslog", "logrotate", "audit", "sudoers"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// alertRuleFile reports whether p holds alerting rules.
func alertRuleFile(p string) bool {
	l := strings.ToLower(p)
	return strings.Contains(l, "alert") || strings.Contains(l, "prometheus") || strings.Contains(l, "rules") || strings.Contains(l, "monitor") ||
		strings.HasSuffix(l, ".rules") || strings.Contains(l, "vmalert") || strings.Contains(l, "mimir") || strings.Contains(l, "loki")
}

var (
	exprCmp = mustRx(`(>=|<=|>|<|==)\s*(-?\d+(?:\.\d+)?(?:e\d+)?)\s*$`)
	forDur  = mustRx(`(?m)^\s*for\s*:\s*(\d+)([smhdw])\s*$`)
)

// alertLoosened says how an edit of an alerting rule moves it away from
// firing: an expression's threshold moved ten times or more the way that
// fires less (a > threshold raised, a < threshold lowered), or its for:
// duration stretched ten times or more; "" when it does not.
func alertLoosened(p, old, new string) string {
	if !alertRuleFile(p) {
		return ""
	}
	oldCmp, newCmp := exprThresholds(old), exprThresholds(new)
	for i := 0; i < len(oldCmp) && i < len(newCmp); i++ {
		o, n := oldCmp[i], newCmp[i]
		if o.op != n.op || o.v == n.v {
			continue
		}
		switch {
		case (o.op == ">" || o.op == ">=") && o.v > 0 && n.v >= 10*o.v,
			(o.op == "<" || o.op == "<=") && o.v > 0 && n.v <= o.v/10:
			return "moves an alert's threshold from " + o.op + " " + fmtNum(o.v) + " to " + n.op + " " + fmtNum(n.v) + ": the alert stops firing"
		}
	}
	od, nd := forDur.FindStringSubmatch(old), forDur.FindStringSubmatch(new)
	if od != nil && nd != nil {
		if a, b := durSeconds(od[1], od[2]), durSeconds(nd[1], nd[2]); a > 0 && b >= 10*a && b >= 3600 {
			return "stretches an alert's for: from " + od[1] + od[2] + " to " + nd[1] + nd[2] + ": the alert stops firing"
		}
	}
	return ""
}

type cmpThreshold struct {
	op string
	v  float64
}

// exprThresholds are the comparisons that end an alerting rule's expr
// lines, in order.
func exprThresholds(s string) []cmpThreshold {
	var out []cmpThreshold
	for _, line := range strings.Split(s, "\n") {
		if len(out) == 32 {
			break
		}
		k := strings.Index(line, "expr:")
		if k < 0 {
			continue
		}
		m := exprCmp.FindStringSubmatch(strings.TrimRight(strings.Trim(strings.TrimSpace(line[k+5:]), `"'`), " "))
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		out = append(out, cmpThreshold{m[1], v})
	}
	return out
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func durSeconds(n, unit string) float64 {
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return 0
	}
	return v * map[string]float64{"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
}

// accessDirective is a web server's access control: nginx's deny and
// auth directives, Apache's Require and auth settings, HAProxy's stats
// auth and request denials, Caddy's basicauth.
var accessDirective = mustRx(`(?im)^\s*(deny\s+all\s*;|auth_basic\s+(?:"[^"]*"|'[^']*'|[^\s;]+)\s*;|auth_request\s+\S+\s*;|satisfy\s+all\s*;|allow\s+[\d./:a-f]+\s*;|Require\s+(?:valid-user|user|group|ip|host|all\s+denied)\b.*|AuthType\s+\w+|stats\s+auth\s+\S+|http-request\s+(?:deny|auth)\b.*|basic_?auth\b.*|forward_auth\b.*)$`)

// webConfigFile reports whether p is a web server's or proxy's
// configuration (or a template of one).
func webConfigFile(p string) bool {
	l := strings.ToLower(p)
	base := path.Base(l)
	return strings.Contains(l, "nginx") || strings.Contains(l, "apache") || strings.Contains(l, "httpd") || strings.Contains(l, "haproxy") ||
		strings.Contains(l, "caddy") || base == ".htaccess" || strings.Contains(base, ".conf") || strings.Contains(l, "sites-") || strings.Contains(l, "vhost")
}

// accessRemoved says which access control an edit of a web server's
// configuration takes out (or that it turns directory listing on); ""
// when it takes none.
func accessRemoved(p, old, new string) string {
	if !webConfigFile(p) {
		return ""
	}
	if strings.Contains(new, "autoindex on") && !strings.Contains(old, "autoindex on") {
		return "turns directory listing on (autoindex on): every file under the location is listed"
	}
	kept := map[string]bool{}
	for _, m := range accessDirective.FindAllString(new, 64) {
		kept[strings.Join(strings.Fields(m), " ")] = true
	}
	for _, m := range accessDirective.FindAllString(old, 64) {
		if d := strings.Join(strings.Fields(m), " "); !kept[d] {
			return "takes out an access control (" + clipText(d, 50) + "): what it guarded is open"
		}
	}
	return ""
}

// publicGrant is access granted to everyone: a cloud IAM member that is
// every user (allUsers, allAuthenticatedUsers), a policy's principal "*"
// allowed, a bucket's public ACL or its public-access block turned off.
var publicGrant = mustRx(`(?i)\b(?:members?|principals?|grantee|identity)\b[^\n]{0,40}?["'\[\s:=]\s*(?:allUsers|allAuthenticatedUsers)\b|"Principal"\s*:\s*(?:"\*"|\{\s*"AWS"\s*:\s*"\*"\s*\})|\bprincipals?\s*=\s*"\*"|\bacl\s*=\s*"public-read(?:-write)?"|\b(?:block_public_acls|block_public_policy|ignore_public_acls|restrict_public_buckets|BlockPublicAcls|BlockPublicPolicy|IgnorePublicAcls|RestrictPublicBuckets)\s*[=:]\s*"?false\b|\ballow_blob_public_access\s*=\s*true\b|\ballowBlobPublicAccess\s*:\s*true\b`)

// botMergesUnreviewed says how a dependency bot's configuration merges
// updates nobody reviewed or tested: tests ignored for an automerge, or
// major versions merged automatically; "" otherwise.
func botMergesUnreviewed(p, body string) string {
	base := strings.ToLower(path.Base(p))
	if !strings.HasPrefix(base, "renovate") && !strings.HasPrefix(base, ".renovaterc") && !strings.HasPrefix(base, "dependabot.") {
		return ""
	}
	compact := strings.Join(strings.Fields(body), "")
	if (base == "dependabot.yml" || base == "dependabot.yaml") && strings.Contains(compact, "updates:[]") {
		return "turns every dependency update off (updates: [])"
	}
	if strings.Contains(compact, `"vulnerabilityAlerts":{"enabled":false`) || strings.Contains(compact, "vulnerabilityAlerts:{enabled:false") {
		return "turns off the security updates it opens for vulnerable dependencies (vulnerabilityAlerts)"
	}
	if strings.Contains(compact, `"ignoreTests":true`) || strings.Contains(compact, "ignoreTests:true") {
		return "merges dependency updates with their tests ignored (ignoreTests): an update that breaks the build lands"
	}
	if strings.Contains(compact, `"automerge":true`) && strings.Contains(compact, `"major"`) {
		return "merges major dependency updates automatically: a new major version lands unreviewed"
	}
	return ""
}

// signingKeys are release configuration lists that make a release
// verifiable (goreleaser's signs, docker_signs, sboms; attestations).
var signingKeys = setOf("signs", "docker_signs", "binary_signs", "sboms", "attestations", "provenance", "notarize", "checksum_signs")

// checkerConfig are checkers' configurations beyond guardConfig whose
// rule lists an edit may empty (buf's lint and breaking rules, linters').
var checkerConfig = setOf("buf.yaml", "buf.work.yaml", ".yamllint", ".yamllint.yml", ".yamllint.yaml", ".markdownlint.json",
	".markdownlint.yaml", ".eslintrc", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml", "ruff.toml", ".ruff.toml", ".spectral.yaml",
	".spectral.yml", "clippy.toml", ".clippy.toml", "rustfmt.toml", ".swiftlint.yml", "detekt.yml", ".rubocop.yml", "phpstan.neon", "psalm.xml")

var (
	emptyValue = mustRx(`^\s*["']?([\w.-]+)["']?\s*[:=]\s*(?:\[\s*\]|\{\s*\}|""|'')\s*,?\s*$`)
	keyOpen    = mustRx(`^\s*["']?([\w.-]+)["']?\s*[:=]\s*(.*)$`)
)

// emptiedKey returns a key whose value the new text empties ([] {} "")
// while the old text gave it items (inline, or as the lines below it),
// or "".
func emptiedKey(old, new string) string {
	emptied := map[string]bool{}
	for _, l := range strings.SplitN(new, "\n", 2001) {
		if m := emptyValue.FindStringSubmatch(l); m != nil {
			emptied[m[1]] = true
		}
	}
	if len(emptied) == 0 {
		return ""
	}
	lines := strings.SplitN(old, "\n", 2001)
	for i, l := range lines {
		m := keyOpen.FindStringSubmatch(l)
		if m == nil || !emptied[m[1]] {
			continue
		}
		v := strings.TrimSpace(m[2])
		if v != "" && v != "[]" && v != "{}" && v != `""` && v != "''" {
			return m[1]
		}
		if v == "" && i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
			return m[1]
		}
	}
	return ""
}

// cloudSecretExposed is infrastructure code that mints a long-lived
// credential (a service account's or an IAM user's key), prints a secret
// as a plain output, or drops audit logs before they are stored.
var cloudSecretExposed = mustRx(`(?is)resource\s+"(?:google_service_account_key|aws_iam_access_key|azuread_application_password|azuread_service_principal_password|google_apikeys_key)"|output\s+"[^"]+"\s*\{[^}]{0,200}?(?:private_key|secret|password|token|access_key)[^}]{0,200}?sensitive\s*=\s*false|resource\s+"google_logging_(?:project|folder|organization|billing_account)_exclusion"[^}]{0,400}?(?:cloudaudit|audit)|exclusions?\s*\{[^}]{0,300}?cloudaudit`)

// cloudSecretWhy names what cloudSecretExposed matched.
func cloudSecretWhy(m string) string {
	l := strings.ToLower(m)
	switch {
	case strings.Contains(l, "exclusion"):
		return "drops audit log entries before they are stored"
	case strings.Contains(l, "output"):
		return "prints a secret as a plain (not sensitive) output"
	}
	return "mints a long-lived credential (a key that does not expire with a session)"
}

// pinnedURL is a URL that names a fixed release: a release asset's tag,
// a version in the path, a commit's hash, an image digest.
var pinnedURL = mustRx(`/releases/download/v?\d+[\w.-]*/|/v\d+\.\d+[\w.-]*/|/[0-9a-f]{40}/|@sha256:[0-9a-f]{64}|[?&]ref=v?\d+\.\d+`)

// remoteManifest returns the URL of manifests kubectl or oc applies,
// creates or replaces from the network when it is not pinned to a
// release, version or commit (raw.githubusercontent.com/…/main/…), or
// "" (rules 16).
func remoteManifest(r *Run) string {
	if r.Name != "kubectl" && r.Name != "oc" {
		return ""
	}
	verb := false
	for i, a := range r.Argv {
		if i == 0 {
			continue
		}
		if a == "apply" || a == "create" || a == "replace" {
			verb = true
		}
		v := ""
		switch {
		case a == "-f" || a == "--filename" || a == "-k" || a == "--kustomize":
			if i+1 < len(r.Argv) {
				v = r.Argv[i+1]
			}
		case strings.HasPrefix(a, "--filename=") || strings.HasPrefix(a, "-f="):
			_, v, _ = strings.Cut(a, "=")
		}
		if verb && strings.Contains(v, "://") && !pinnedURL.MatchString(v) {
			return v
		}
	}
	return ""
}
