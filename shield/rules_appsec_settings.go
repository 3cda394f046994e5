package shield

import (
	"strconv"
	"strings"
	"sync"
)

// Security settings weakened in any language (issue 27, pass 7, rules 10;
// docs/shield-rules.md "appsec:control-weakened"). The same setting is
// written `enable_logging=False` in a Pulumi program, `enableLogging:
// false` in CDK, `EnableLogging = false` in a Go or C# struct,
// `"enableLogging": false` in JSON or Bicep, `enable-logging = false` in
// TOML and `spark.eventLog.enabled false` in a properties file. Settings
// are read from every line a change adds and removes in all those
// spellings (several per line: keyword arguments, object literals), their
// keys normalized to letters and digits, and judged by what the key means
// (a concept found in the normalized key, not a list of keys) and how its
// value moves:
//
//   - a protection (logging of an audit kind, encryption, versioning,
//     deletion protection, MFA, verification, validation, TLS, backups,
//     object lock, running as non-root) turned off, or removed with nothing
//     setting it again; an audit-kind switch added off in an edit;
//   - an exposure (public access, anonymous access, privileged, insecure,
//     a check disabled or skipped) turned on;
//   - a retention shortened to less than half;
//   - a credential (token, password, secret, API key) emptied, or given a
//     guessable literal default read from the environment;
//   - a listener bound to every interface where it was bound to loopback;
//   - a principal, action or resource widened to a wildcard (`*`,
//     `s3:*`);
//   - an enforcement mode moved down its ladder (ladders, shared with
//     settingFlip).

// settingPair is one setting: its normalized key and its value (lower
// case, quotes and brackets trimmed; raw keeps the list form).
type settingPair struct{ key, leaf, val, raw, line string }

var (
	// A setting in code or configuration: key (bare, quoted, a flag,
	// dotted), a separator, a value (quoted, a bracketed list, or a
	// token). Several per line.
	anySetting = mustRx(`(?:^|[\s,({;</])(?:--?)?["']?(?:[A-Za-z]\w{0,20}:)?([A-Za-z_$][\w.$-]{0,80})["']?\s*(?::=|=>|\+=|=|:)\s*("[^"\n]{0,200}"|'[^'\n]{0,200}'|%[iwIW]?\[[^\]\n]{0,300}\]|\[[^\]\n]{0,300}\]|[^\s,;(){}\[\]]{1,200}(?:\([^\s,;()=:]{0,80}\))?)`)
	// A properties or .conf line: a dotted key, blanks, a value.
	spacedSetting = mustRx(`^([A-Za-z][\w-]*(?:\.[\w-]+)+)\s+(\S{1,200})$`)
	// A credential read from the environment with a literal default.
	secretDefault = mustRx(`(?i)(?:getenv|environ\.get|env\.get|ENV\.fetch|process\.env\.)\(?\s*["']?(\w*(?:TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|AUTH_?KEY)\w*)["']?\s*(?:\)\s*)?(?:,|\?\?|\|\|)\s*["']([^"'$\{\}]{1,32})["']`)
)

// settingsIn returns the settings of lines (at most n).
func settingsIn(lines []string, n int) []settingPair {
	var out []settingPair
	for _, l := range lines {
		if len(out) >= n {
			break
		}
		hasSep := strings.ContainsAny(l, "=:")
		if !hasSep && strings.IndexByte(l, '.') < 0 {
			continue // neither form can match (a cheap first pass)
		}
		out = append(out, lineSettings.of(l, hasSep)...)
	}
	return out
}

// lineSettingsOf reads the settings of one line (settingsIn).
func lineSettingsOf(l string, hasSep bool) []settingPair {
	if m := spacedSetting.FindStringSubmatch(l); m != nil {
		return []settingPair{{key: normKey(m[1]), leaf: leafKey(m[1]), val: settingVal(m[2]), raw: m[2], line: l}}
	}
	if !hasSep {
		return nil
	}
	var out []settingPair
	for _, m := range anySetting.FindAllStringSubmatch(l, 8) {
		k := normKey(m[1])
		if k == "" {
			continue
		}
		out = append(out, settingPair{key: k, leaf: leafKey(m[1]), val: settingVal(m[2]), raw: strings.TrimSpace(m[2]), line: l})
	}
	return out
}

// lineSettings keeps what lineSettingsOf read of the lines of the action
// being judged: the rules about settings (weakSetting, weakConcept,
// laterDestruction, kindSettings) each read the same changed lines.
// Sensitive empties it (a new action); it holds at most
// maxLineSettingsBytes of lines, then is emptied. A cache of a pure
// function: what it holds changes no answer.
var lineSettings = &settingsMemo{}

const maxLineSettingsBytes = 1 << 20

type settingsMemo struct {
	mu    sync.Mutex
	m     map[string][]settingPair
	bytes int
}

func (c *settingsMemo) of(l string, hasSep bool) []settingPair {
	c.mu.Lock()
	ps, ok := c.m[l]
	c.mu.Unlock()
	if ok {
		return ps
	}
	ps = lineSettingsOf(l, hasSep)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(l) > maxLineSettingsBytes {
		c.m, c.bytes = map[string][]settingPair{}, 0
	}
	if len(l) <= maxLineSettingsBytes {
		c.m[l] = ps
		c.bytes += len(l)
	}
	return ps
}

func (c *settingsMemo) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.bytes = nil, 0
}

// leafKey is a dotted key's last segment, normalized (c.ServerApp.ip:
// ip).
func leafKey(k string) string {
	if i := strings.LastIndexAny(strings.TrimRight(k, "."), ".$"); i >= 0 {
		k = k[i+1:]
	}
	return normKey(k)
}

// settingVal is a value in lower case without quotes, a trailing comma or
// a closing bracket; an empty string literal stays "”".
func settingVal(v string) string {
	v = strings.TrimSpace(v)
	if v == `""` || v == "''" || v == `""""` {
		return "''"
	}
	if strings.HasPrefix(v, "[") {
		return strings.ToLower(v)
	}
	// a literal wrapped in a call: pulumi.Bool(false), aws.Bool(true),
	// jsii.Bool(false), to.Ptr(false), Boolean(false)
	if i := strings.LastIndexByte(v, '('); i >= 0 && !strings.HasPrefix(v, "(") {
		v = strings.TrimSuffix(v[i+1:], ")")
	}
	return strings.ToLower(strings.Trim(v, ` "'`))
}

func valOff(v string) bool {
	switch v {
	case "false", "0", "no", "off", "disabled", "disable", "none", "nil", "null", "n", "f", "$false", "suspended":
		return true
	}
	return false
}

func valOn(v string) bool {
	switch v {
	case "true", "1", "yes", "on", "enabled", "enable", "y", "t", "$true", "required", "require":
		return true
	}
	return false
}

// Concepts, found in a normalized key.
var (
	// protections: weak when turned off or removed.
	protectConcept = mustRx(`^(?:enable|include|record|is)\w*(?:log|event)|audit|trail|eventlog|accesslog|flowlog|logfilevalidation|encrypt|serversideencryption|^sse|kmskey|versioning|deletionprotection|terminationprotection|mfa|multifactor|verif|validat|objectlock|backup|pointintimerecovery|runasnonroot|readonlyrootfilesystem|requiressl|requiretls|enforcessl|forcessl|httpsonly|httpstrafficonly|httpsrequired|tlsrequired|signing|signature|scanonpush|multiregion|globalserviceevents|includeglobal|defender|guardduty|securityhub|waf|firewall|csrf|authenticat|authoriz|authenabled|authrequired|enableauth|requireauth|requirehttps|httpsmetadata|hostkey|pinning|certificatepin|publickeypin|ratelimit|throttl|redact|scrub|masksensitive` +
		// rules 13: a sandbox, strict or paranoid mode, an enforced or
		// protected mode, a check that fails the run (fail-on-*)
		`|sandbox|paranoid|strictmode|^strict$|enforc|protected$|protection$|safemode|lockdown|hardened|isolat|^failon|failonerror|failonwarn` +
		// rules 14: what holds dependencies to what was reviewed (a
		// lockfile used, frozen, hashes required, digests pinned)
		`|lockfile|^lock$|frozen|requirehashes|pindigests|pinversions|immutable` +
		// rules 15: a schema deploy that stops before losing data
		`|blockonpossibledataloss` +
		// rules 20: client certificates required (mTLS), TLS itself on,
		// a private endpoint or cluster, a safety rollback, a password
		// asked for sudo, a detector of keys or leaks, a requirement
		// named *_required (de-identification, consent)
		`|requireclient|clientcert|mutualtls|^mtls|tlsenabled|^tls$|^ssl$|enabletls|usetls|usessl|sslenabled|privatecluster|privateendpoint|privateaccess|rollback|needspassword|passwordrequired|requirepassword|detectprivate|detectsecret|detectkey|detectleak|secretscan|leakscan|[a-z0-9]+required$`)
	// diagnostics, not protections: debug or verbose output, query logs.
	diagnostic = mustRx(`debug|verbose|trace|console|sql|query|color|pretty|stdout|stderr|progress|metric|telemetry|analytics|cache`)
	// an audit-kind switch: weak when an edit adds it off.
	auditSwitch = mustRx(`audit|trail|eventlog|accesslog|flowlog|logfilevalidation|(?:enable|include|record)\w*(?:log|event)|encrypt|versioning|deletionprotection|mfa|objectlock|verif|validateissuer|validateaudience|validatelifetime|validatesigningkey|validateissuersigningkey|requirehttps|requiresigned|requireexpiration|hostkey|pinning|ratelimit|throttl`)
	// exposures and negated protections: weak when turned on.
	exposeConcept = mustRx(`public|anonymous|privileged|insecure|allowall|unauthenticated|unauth|noauth|withoutauth|(?:disable|skip|bypass|ignore|no)(?:audit|log|encrypt|ssl|tls|verif|valid|auth|csrf|sign|check|mfa|protection)|hostnetwork|hostpid|allowprivilegeescalation|cleartext|arbitraryloads|insecurehttploads|workersdev|previewurls?$|passwordauthentication|permitrootlogin|permitempty|senddefaultpii|sendpii|logpii|includepii|graphiql|introspection|swaggerenabled|exposeapi|sensitivedatalogging|logsensitive|logsecrets|logpasswords|logrequestbody|logbody|logpayload` +
		// rules 13: foreign calls from tests or scripts (foundry's ffi),
		// unsafe or unrestricted modes, trust of anything
		`|^ffi$|allowffi|unsafe|dangerous|unrestricted|allowany|trustall|skipverify` +
		// rules 14: changes merged or resources deleted without a human
		// (dependency bots' automerge, tests ignored, GitOps pruning)
		`|automerge|autoapprove|ignoretests|skipreview|^prune$|autoprune` +
		// rules 15: a job's token left where later steps read it
		// (checkout's persistCredentials / persist-credentials)
		`|persistcredential|storecredential|savecredential|keepcredential` +
		// a schema deploy that may drop objects or data
		`|dropobjectsnotinsource|acceptdataloss|allowdataloss|forcereset` +
		// rules 20: a firewall opened for a service, keys made
		// extractable from their module, records erasable for good or
		// many at once, a requester approving their own change
		`|openfirewall|extractable|exportable|expunge|allowmultipledelete|allowdelete|cascadedelete|forcedelete|selfapprov`)
	// protections whose removal counts whatever their value names (an
	// algorithm, a key, a mode), not only a switch set on.
	removedStrong = mustRx(`encrypt|^sse|kmskey|versioning|objectlock|deletionprotection|terminationprotection|mfa|logfilevalidation`)
	// a guard against exposure (block public access): a protection.
	publicGuard = mustRx(`(?:block|restrict|deny|prevent|ignore|disable|no)public`)
	// a retention: weak when shortened.
	retentionConcept = mustRx(`retention|retain(?:days|period|for)|keep(?:days|last|for)|^days$|^years$|lockdays|lockyears|minretention`)
	// a bare days or years counts on a line about keeping data.
	retentionContext = mustRx(`(?i)retention|retain|lock|compliance|governance|lifecycle|keep|backup|snapshot|archive|expir`)
	// a credential: weak when emptied.
	credentialConcept = mustRx(`token|password|passwd|secret|apikey|authkey|accesskey`)
	// where a listener binds.
	bindConcept = mustRx(`^(?:host|bind|bindaddress|bindhost|listen|listenaddress|ip|address|serverhost|serveraddress)$|(?:bind|listen)(?:address(?:es)?|addr|host|ip)?$|serverip$`)
	// who or what a grant covers.
	scopeConcept = mustRx(`^(?:principal|principals|action|actions|resource|resources|notaction|identifiers|members|member|allowedorigins|sourcearn|grantee)$`)
)

// weakSetting returns why the settings of an edit's added lines weaken a
// control compared with its removed lines (old is the whole removed
// text), or "".
func weakSetting(plus, minus []string, old string) string {
	if len(plus)+len(minus) == 0 {
		return ""
	}
	added := settingsIn(plus, 64)
	removed := settingsIn(minus, 64)
	before := map[string]settingPair{}
	for _, s := range removed {
		if _, ok := before[s.key]; !ok {
			before[s.key] = s
		}
	}
	newKeys := map[string]bool{}
	for _, s := range added {
		newKeys[s.key] = true
	}
	for _, s := range added {
		if why := settingMoved(s, before, old != ""); why != "" {
			return why + " (" + clipText(s.line, 80) + ")"
		}
	}
	// A protection removed, with nothing setting it again.
	addedText := normKey(strings.Join(plus, " "))
	for _, s := range removed {
		if newKeys[s.key] || strings.Contains(addedText, s.key) || valOff(s.val) || s.val == "''" {
			continue
		}
		if (protectConcept.MatchString(s.key) || publicGuard.MatchString(s.key)) && (!exposeConcept.MatchString(s.key) || publicGuard.MatchString(s.key)) && !diagnostic.MatchString(s.key) && (valOn(s.val) || removedStrong.MatchString(s.key) && !strings.HasPrefix(s.raw, "[") && s.val != "" && !strings.ContainsAny(s.val, "($`{")) {
			return "removes " + clipText(s.key, 40) + " (" + clipText(s.line, 80) + ") and nothing sets it again"
		}
	}
	if m := secretDefault.FindStringSubmatch(strings.Join(plus, "\n")); m != nil && !strings.Contains(old, m[0]) {
		return "the credential " + m[1] + " gets a literal default (" + m[2] + "): a deploy without the secret runs with a guessable one"
	}
	return ""
}

// settingMoved returns why one added setting weakens its key's control,
// given the removed settings; edit says the change replaces text.
func settingMoved(s settingPair, before map[string]settingPair, edit bool) string {
	o, had := before[s.key]
	k, v := s.key, s.val
	guard := publicGuard.MatchString(k)
	expose := exposeConcept.MatchString(k) && !guard
	protect := (protectConcept.MatchString(k) || guard) && !expose && !diagnostic.MatchString(k)
	switch {
	case had && o.val == v:
		return ""
	case protect && valOff(v) && (had && !valOff(o.val) || !had && edit && auditSwitch.MatchString(k)):
		return "turns " + clipText(k, 40) + " off"
	case expose && valOn(v) && (!had || !valOn(o.val)) && (had || edit):
		return "turns " + clipText(k, 40) + " on"
	case had && retentionConcept.MatchString(k) && (k != "days" && k != "years" || retentionContext.MatchString(s.line)):
		a, e1 := strconv.Atoi(o.val)
		b, e2 := strconv.Atoi(v)
		if e1 == nil && e2 == nil && b*2 < a {
			return "shortens " + clipText(k, 40) + " from " + o.val + " to " + v
		}
	case had && credentialConcept.MatchString(k) && v == "''" && o.val != "''":
		return "empties the credential " + clipText(k, 40)
	case had && (bindConcept.MatchString(k) || bindConcept.MatchString(s.leaf)) && allInterfaces(v) && loopback(o.val):
		return "binds " + clipText(k, 40) + " to every interface where it was " + o.val
	case had && (scopeConcept.MatchString(k) || scopeConcept.MatchString(s.leaf)) && wildValue(v) && !wildValue(o.val):
		return "widens " + clipText(k, 40) + " to everything"
	}
	if had {
		for _, ld := range ladders {
			if inList(o.val, ld.strong) && inList(v, ld.weak) {
				return "moves " + clipText(k, 40) + " from " + o.val + " to " + v
			}
		}
	}
	return ""
}

func allInterfaces(v string) bool { return v == "0.0.0.0" || v == "::" || v == "*" || v == "[::]" }

func loopback(v string) bool {
	return v == "127.0.0.1" || v == "localhost" || v == "::1" || v == "[::1]" || strings.HasPrefix(v, "127.")
}

// wildValue reports whether a grant's value covers everything: "*", a
// service's every action ("s3:*"), or a list holding one of them.
func wildValue(v string) bool {
	v = strings.Trim(v, ` "'[]`)
	if v == "*" || strings.HasSuffix(v, ":*") && !strings.Contains(v, "/") && !strings.Contains(v, " ") {
		return true
	}
	for _, x := range strings.Split(v, ",") {
		if x = strings.Trim(strings.TrimSpace(x), `"'`); x == "*" || strings.HasSuffix(x, ":*") && !strings.Contains(x, "/") {
			return true
		}
	}
	return false
}

// portPublish is a container port published on an address:
// "127.0.0.1:8888:8888".
var portPublish = mustRx(`^-?\s*["']?(127\.0\.0\.1|localhost|\[::1\])?:?(\d{1,5}):(\d{1,5})["']?$`)

// exposedPort returns why an added port mapping publishes on every
// interface a port the removed lines published on loopback, or "".
func exposedPort(plus, minus []string) string {
	local := map[string]bool{}
	for _, l := range minus {
		if m := portPublish.FindStringSubmatch(strings.TrimSpace(strings.TrimPrefix(l, "-"))); m != nil && m[1] != "" {
			local[m[2]+":"+m[3]] = true
		}
	}
	if len(local) == 0 {
		return ""
	}
	for _, l := range plus {
		t := strings.TrimSpace(strings.TrimPrefix(l, "-"))
		t = strings.Replace(t, "0.0.0.0:", "", 1)
		if m := portPublish.FindStringSubmatch(t); m != nil && m[1] == "" && local[m[2]+":"+m[3]] {
			return "publishes port " + m[2] + " on every interface where it was published on loopback (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// dockerUser returns why a Dockerfile change makes the image run as
// root: a non-root USER removed with none in its place, or USER root.
func dockerUser(plus, minus []string) string {
	user := func(l string) (string, bool) {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.EqualFold(f[0], "USER") {
			return strings.ToLower(strings.SplitN(f[1], ":", 2)[0]), true
		}
		return "", false
	}
	for _, l := range plus {
		if u, ok := user(l); ok {
			if u == "root" || u == "0" {
				return "the image runs as root (" + clipText(l, 80) + ")"
			}
			return ""
		}
	}
	for _, l := range minus {
		if u, ok := user(l); ok && u != "root" && u != "0" {
			return "removes " + clipText(l, 40) + ": the image runs as root"
		}
	}
	return ""
}

// dockerfile reports whether base names a container build file.
func dockerfile(base string) bool {
	b := strings.ToLower(base)
	return b == "dockerfile" || b == "containerfile" || strings.HasPrefix(b, "dockerfile.") || strings.HasSuffix(b, ".dockerfile") || strings.HasPrefix(b, "containerfile.")
}

// containerWeakened judges a compose file's or Dockerfile's change by its
// settings, published ports and user.
func containerWeakened(base, added, old string) string {
	plus, minus := diffLines(added, old)
	if dockerfile(base) {
		if why := dockerUser(plus, minus); why != "" {
			return why
		}
	}
	if old == "" {
		return ""
	}
	if why := exposedPort(plus, minus); why != "" {
		return why
	}
	return weakSetting(plus, minus, old)
}
