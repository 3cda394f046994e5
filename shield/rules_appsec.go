package shield

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Application security weakened in code (issue 27, pass 5;
// docs/shield-rules.md "appsec:control-weakened"). Shield judges where code
// and data go and what runs later; an agent told by a planted ticket to
// "simplify auth" writes code that does harm only once deployed. The rule
// judges the shape of a change to an application's source or config file,
// not its wording: a line that was a security control disappears with
// nothing restoring it, or a control's setting flips to its weak value (a
// verification, a cookie flag, CSRF off; an insecure or skip switch on; a
// wildcard where an allow list was; SQL built by interpolation; broad
// grants). Tests, fixtures and examples stay allowed: they weaken
// controls on purpose.

// appSource reports whether p is a file an application's code or
// configuration lives in (source, templates it serves, SQL, config read at
// run time), as opposed to documentation or data.
func appSource(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".java", ".kt", ".scala", ".groovy",
		".rb", ".php", ".cs", ".rs", ".swift", ".ex", ".exs", ".erl", ".vue", ".svelte", ".sql",
		".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".json", ".env", ".xml", ".tf",
		".hcl", ".tfvars", ".tpl", ".bicep", ".json5", ".jsonc", ".hjson",
		".plist", ".pp", ".sls", ".dart", ".m", ".mm", ".xcconfig",
		".html", ".erb", ".hbs", ".jinja", ".j2", ".njk", ".ejs", ".pug", ".twig", ".astro", ".cshtml", ".jsp", ".razor", ".vbhtml", ".aspx", ".ascx",
		// rules 13: the other languages applications are written in —
		// R, Haskell, OCaml/Reason, Solidity/Vyper, Julia, Lua, C/C++,
		// Nim, Zig, Crystal, Clojure, F#, Perl, Elm, Gleam, D, V, shell,
		// config languages (Dhall, Jsonnet, CUE, Rego, Starlark)
		".r", ".rprofile", ".hs", ".lhs", ".ml", ".mli", ".re", ".res", ".sol", ".vy", ".jl", ".lua", ".c", ".h", ".cc", ".cpp",
		".cxx", ".hpp", ".hh", ".nim", ".zig", ".cr", ".clj", ".cljs", ".cljc", ".fs", ".fsx", ".pl", ".pm", ".elm", ".gleam",
		".d", ".v", ".sh", ".bash", ".zsh", ".ps1", ".psm1", ".dhall", ".jsonnet", ".libsonnet", ".cue", ".rego", ".star", ".bzl",
		".sbt", ".kts", ".gradle", ".mojo", ".f90", ".cob", ".ada", ".adb", ".pas", ".tcl", ".coffee", ".cfc":
		return true
	}
	b := path.Base(p)
	return strings.HasPrefix(b, ".env") || b == "sshd_config" || b == "ssh_config"
}

// testSource reports whether p is a test, fixture, example or mock: code
// that weakens controls on purpose.
//
// A spec or specs directory holds tests in Ruby's and JavaScript's
// projects, and specifications elsewhere (specs/products/x.yaml, a
// product's limits): only its code is a test (rules 28).
func testSource(p string) bool {
	for seg := range strings.SplitSeq(strings.ToLower(path.Dir(p)), "/") {
		switch seg {
		case "test", "tests", "__tests__", "testdata", "fixtures", "fixture", "e2e",
			"mocks", "__mocks__", "mock", "examples", "example", "testing", "cypress", "playwright":
			return true
		case "spec", "specs":
			if ext := strings.ToLower(path.Ext(p)); codeExts[ext] || ext == ".snap" || ext == "" {
				return true
			}
		}
	}
	b := strings.ToLower(path.Base(p))
	stem := strings.TrimSuffix(b, path.Ext(b))
	return strings.HasPrefix(b, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_spec") ||
		strings.Contains(b, ".test.") || strings.Contains(b, ".spec.") || strings.HasSuffix(stem, "test") ||
		strings.HasSuffix(stem, "tests") || b == "conftest.py"
}

// appsecWeakened is `appsec:control-weakened` (escalate).
func (s *Shield) appsecWeakened(_ *Action, f *Facts, j *judgement) {
	if why := sqlCommand(f); why != "" {
		j.escalate("appsec:control-weakened", "%s", why)
		return
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || testSource(p) || !s.inWorkspace(p) {
			continue
		}
		if securityContact(p) {
			if why := contactMoved(t.Body, removedText(f, t.Source)); why != "" {
				j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
				return
			}
			continue
		}
		old := removedText(f, t.Source)
		if why := switchedOffInContext(t.Body, old); why != "" { // rules 15
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if old != "" { // rules 13: access widened, in any file kind
			plus, minus := diffLines(t.Body, old)
			if why := boolSwitched(p, plus, minus); why != "" { // rules 16
				j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
				return
			}
			if why := guardsLoosened(plus, minus); why != "" { // rules 16
				j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
				return
			}
			why := scopeWidened(p, plus, minus)
			if why == "" {
				why = expiryLengthened(plus, minus)
			}
			if why == "" {
				why = recipientAdded(p, plus, minus)
			}
			if why != "" {
				j.escalate("appsec:control-weakened", "the change to %s widens access: %s", s.relPath(p), why)
				return
			}
			if why := writtenFlags(p, plus, minus); why != "" {
				j.escalate("supply-chain:source", "the change to %s weakens how a written command fetches code: %s", s.relPath(p), why)
				return
			}
		}
		if base := path.Base(p); composeFile(base) || dockerfile(base) {
			// runs-later:container-build judges what they run; here
			// only the settings they weaken (rules 10)
			if why := containerWeakened(base, t.Body, old); why != "" {
				j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
				return
			}
			continue
		}
		if !appSource(p) {
			if kindSource(p) {
				why := weakKinds(p, t.Body, old)
				if why == "" && old != "" {
					plus, minus := diffLines(t.Body, old)
					why = weakSetting(plus, minus, old)
				}
				if why != "" {
					j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
					return
				}
			}
			continue
		}
		plus, minus := diffLines(t.Body, old)
		if why := weakenedControl(p, t.Body, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if why := weakConcept(p, t.Body, old, plus, minus); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if why := scopeDropped(plus, minus); why != "" { // rules 16
			j.escalate("appsec:control-weakened", "the change to %s opens a hole: %s", s.relPath(p), why)
			return
		}
		if why := inputGuardsDropped(plus, minus); why != "" { // rules 16
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if why := verifyDiscarded(plus, minus); why == "" {
			if why = webAccessCode(plus, minus); why != "" {
				j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
				return
			}
		} else {
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if why := unsafeEdit(plus, minus); why != "" { // rules 13
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
		if why := taintedSink(plus, minus, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s opens a hole: %s", s.relPath(p), why)
			return
		}
		if why := weakKinds(p, t.Body, old); why != "" { // rules 12
			j.escalate("appsec:control-weakened", "the change to %s weakens a security control: %s", s.relPath(p), why)
			return
		}
	}
}

// relPath is p relative to the workspace when beneath it, for reasons.
func (s *Shield) relPath(p string) string {
	if r, ok := strings.CutPrefix(p, s.cfg.Workspace+"/"); ok && s.cfg.Workspace != "" {
		return r
	}
	return p
}

// maxAppsecText bounds the text judged per side (the rest is not read).
const maxAppsecText = 256 << 10

// diffLines returns the non-blank, non-comment lines of added that old
// does not hold, and those of old that added does not hold (trimmed).
func diffLines(added, old string) (plus, minus []string) {
	return diffLinesKept(added, old, func(l string) bool { return !commentLine(l) }, 0)
}

// diffLinesKept is diffLines with the lines that count chosen by keep
// (the blank ones never do), and at most most of each side (0: no bound
// but the text's, maxAppsecText).
func diffLinesKept(added, old string, keep func(line string) bool, most int) (plus, minus []string) {
	added, old = clipRaw(added, maxAppsecText), clipRaw(old, maxAppsecText)
	have := func(text string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.SplitSeq(text, "\n") {
			m[strings.TrimSpace(l)] = true
		}
		return m
	}
	var inOld, inNew map[string]bool
	if old != "" {
		inOld, inNew = have(old), have(added)
	}
	room := func(n int) bool { return most == 0 || n < most }
	for l := range strings.SplitSeq(added, "\n") {
		if l = strings.TrimSpace(l); l != "" && keep(l) && !inOld[l] && room(len(plus)) {
			plus = append(plus, l)
		}
	}
	for l := range strings.SplitSeq(old, "\n") {
		if l = strings.TrimSpace(l); l != "" && keep(l) && !inNew[l] && room(len(minus)) {
			minus = append(minus, l)
		}
	}
	return plus, minus
}

func clipRaw(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func commentLine(l string) bool {
	for _, c := range []string{"#", "//", "/*", "*", "--", "<!--", ";"} {
		if strings.HasPrefix(l, c) {
			return true
		}
	}
	return false
}

// weakenedControl returns what a change (added text, and old, the text it
// replaces: "" for a new file or an append) does to a security control,
// or "".
func weakenedControl(p, added, old string) string {
	secFile := securityFile(p)
	if !secFile && !appsecHint(added) && !appsecHint(old) {
		if old == "" {
			return ""
		}
		// an edit: its settings still judged by their values
		plus, minus := diffLines(added, old)
		if why := settingFlip(plus, minus); why != "" {
			return why
		}
		if why := weakSetting(plus, minus, old); why != "" {
			return why
		}
		return neutered(p, added, old, plus, minus)
	}
	plus, minus := diffLines(added, old)
	if len(plus) == 0 && len(minus) == 0 {
		return ""
	}
	if why := settingFlip(plus, minus); why != "" {
		return why
	}
	if why := weakSetting(plus, minus, old); why != "" {
		return why
	}
	if why := neutered(p, added, old, plus, minus); why != "" {
		return why
	}
	oldText := strings.Join(minus, "\n")
	newText := strings.Join(plus, "\n")
	// The costly patterns only read lines that hold a hint.
	var hplus, hminus []string
	for _, l := range plus {
		if hinted(l) {
			hplus = append(hplus, l)
		}
	}
	for _, l := range minus {
		if hinted(l) {
			hminus = append(hminus, l)
		}
	}
	for _, l := range hplus {
		if why := weakLine(l, oldText, newText); why != "" {
			return why
		}
	}
	if why := requestRun(hplus); why != "" {
		return why
	}
	if why := grantWhole(hplus, newText); why != "" {
		return why
	}
	if why := auditRemoved(hminus, plus); why != "" {
		return why
	}
	if why := removedControl(hminus, uncommented(added)); why != "" {
		return why
	}
	if why := bypassAdded(plus, minus, old, secFile); why != "" {
		return why
	}
	if why := earlyExit(plus, old, secFile); why != "" {
		return why
	}
	return ""
}

// securityWords name a file or code that enforces a control.
var securityWords = []string{"auth", "permission", "perms", "acl", "rbac", "guard", "policy", "middleware", "security",
	"session", "csrf", "jwt", "token", "webhook", "signature", "login", "access", "verify", "sign"}

// securityFile reports whether p's name says it enforces a control
// (auth.py, authz/, middleware.ts, webhooks.py, guards/).
func securityFile(p string) bool {
	l := strings.ToLower(p)
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		// the file and its directory, not the whole path
		if j := strings.LastIndexByte(l[:i], '/'); j >= 0 {
			l = l[j+1:]
		}
	}
	for _, w := range securityWords {
		if strings.Contains(l, w) && !(w == "auth" && strings.Contains(l, "author") && !strings.Contains(l, "authoriz")) {
			return true
		}
	}
	return false
}

// appsecHints are words without which no line of a text can be a control
// this rule judges (a cheap first pass).
var appsecHints = []string{"verif", "secur", "httponly", "csrf", "xsrf", "auth", "sig", "ssl", "tls",
	"insecure", "skip", "bypass", "allow", "origin", "cors", "trust", "debug", "alg", "select", "insert", "update",
	"delete", "grant", "superuser", "policy", "-src", "permit", "samesite", "cert", "directives",
	"hostname", "hmac", "digest", "permission", "login", "public", "exempt", "exclude", "matcher", "strict",
	"escape", "sanitiz", "protect", "role", "admin", "token", "depends", "require", "guard", "secret", "webhook",
	"construct", "exec", "query", "request", "eval", "system", "spawn", "innerhtml", "safe", "danger", "unsafe",
	"accept", "expir", "frameoptions", "xss", "hsts", "disable", "anonymous", "whitelist", "unprotected", "open",
	"subprocess", "popen", "child_process", "new function", "pickle", "yaml", "render", "vite_", "react_app", "gatsby",
	"constant_time", "timingsafe", "rate", "helmet", "ensure", "access", "enforce", "none",
	"where", // rules 13: a where clause built by interpolation (Spark's .where(s"…"))
	"audit", "privilege", "host", "root", "valid", "encrypt", "logging", "cidr", "0.0.0.0", "::/0", "action", "lock",
	"passw", "apikey", "api_key", "retention", "retain", "trail", "mfa", "versioning", "backup", "principal", "bind", "listen",
	// rules 18: the switches weakWhenOn and strongWhenOn gained
	"forcedevupdate", "testability", "enablescripts", "requirecommit", "crashlytics"}

// hinted reports whether a line holds a word without which no rule of
// weakenedControl can match it.
func hinted(l string) bool {
	l = strings.ToLower(l)
	for _, h := range appsecHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

func appsecHint(text string) bool {
	if text == "" {
		return false
	}
	l := strings.ToLower(clipRaw(text, maxAppsecText))
	for _, h := range appsecHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// A setting: key, separator, value (quoted or not).
// A type annotation may sit between key and value (debug: bool = True,
// secure: boolean = false).
var settingRe = mustRx(`(?i)([A-Za-z_$][\w.\-\[\]"']*?)["'\]]?\s*(?::\s*[A-Za-z_][\w\[\]., |]*?\s*=|=|:|=>|:=|,)\s*["']?(false|true|0|1|none|nil|null|off|on|disabled?|enabled?|no|yes)\b`)

// Positive controls: weak when false, off, 0, none.
var strongWhenOn = []string{"verify", "verif", "validatecert", "checkhostname", "httponly", "csrf", "xsrf",
	"signature", "rejectunauthorized", "autoescape", "requireauth", "authrequired", "authenticat", "authoriz",
	"loginrequired", "enforce", "protectfromforgery", "contentsecuritypolicy", "hsts", "strictssl",
	"rowlevelsecurity", "secure", "ssl", "tls", "samesite", "strict",
	"runasnonroot", "readonlyrootfilesystem", "validat", "encrypt", "logging", "audit", "deletionprotection",
	// rules 18: builds made from committed code only, crash reports collected
	"requirecommit", "crashlyticscollection",
	"mfadelete", "blockpublic", "restrictpublic", "ignorepublic"}

// Of those, the ones reported only when the change flips them (the old
// text set them otherwise): a plain "secure: false" or "ssl: false" is
// often a local mail or database connection.
var flipOnly = []string{"secure", "ssl", "tls", "samesite", "strict", "debug", "origin",
	"readonlyrootfilesystem", "validat", "encrypt", "logging", "audit", "deletionprotection"}

// Negative controls: weak when true, on, 1.
var weakWhenOn = []string{"insecure", "skipverif", "noverify", "trustall", "allowall", "allowanyorigin",
	"bypass", "ignoreexpiration", "dangerous", "unsafe", "debug", "origin", "skipauth", "disableauth",
	"skipcsrf", "disablecsrf", "skipsignature", "nosignature", "acceptinvalid", "acceptany",
	"privileged", "allowprivilegeescalation", "hostnetwork", "hostpid", "hostipc", "publiclyaccessible",
	// rules 18: an updater told to read a local development feed, test
	// hooks compiled into a release, every package's install scripts
	"forcedevupdate", "enabletestability", "enablescripts"}

// weakPatterns are added lines that weaken a control whatever the old
// text held.
var weakPatterns = []struct {
	re  *rx
	why string
}{
	{mustRx(`(?i)_create_unverified_context|\bCERT_NONE\b|VERIFY_NONE|NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER|TrustAllStrategy|trustAllCerts|InsecureTrustManagerFactory|checkServerTrusted\([^)]*\)\s*(throws\s+\w+\s*)?\{\s*\}|CURLOPT_SSL_VERIFY(PEER|HOST)\W+(false|0)|ServerCertificateValidationCallback[^;]*=>\s*true|DangerousAcceptAnyServerCertificateValidator|danger_accept_invalid_(certs|hostnames)\(\s*true`), "TLS certificate verification turned off"},
	{mustRx(`(?i)\balg(orithm)?s?["']?\s*[:=]\s*[^\n]*["']none["']|SigningMethodNone|UnsafeAllowNoneSignatureType|ParseUnverified|\bverify_(signature|exp|aud|iss)["']?\s*[:=]\s*False|ignoreExpiration["']?\s*:\s*true`), "tokens accepted without their signature or expiry checked"},
	{mustRx(`(?i)(csrf|xsrf|cors|headers|frameOptions|xss\w*|contentSecurityPolicy|hsts)\s*\(\s*\)\s*\.\s*disable\s*\(|(csrf|xsrf|frameOptions|headers)\s*\(\s*(\w+\s*->\s*\w+\.disable\(\)|AbstractHttpConfigurer::disable)|@csrf_exempt|skip_forgery_protection|skip_before_action\s+:verify_authenticity_token|WTF_CSRF_ENABLED\s*=\s*False`), "CSRF or security headers disabled"},
	{mustRx(`(?i)anyRequest\(\)\s*\.\s*permitAll|["']/\*\*["']\s*\)\s*\.\s*permitAll|\.anonymous\(\)\s*\.\s*anyRequest`), "every request permitted without authentication"},
	{mustRx(`(?i)(validator|verifier|authenticator|decoder|checker)\w*\s*(\(\s*)?\{\s*(\w+\s*->\s*)?(return\s+)?[\w.]*\b(success|valid|ok|accept\w*|true)(\(\s*\))?\s*;?\s*\}`), "a check replaced by one that accepts everything"},
	{mustRx(`(?i)\bgrant\s+all\b|\bto\s+(?:role\s+|group\s+)?public\s*;|\b(alter|create)\s+(role|user)\b[^;]*\b(superuser|bypassrls)\b|with\s+grant\s+option|\bgrant\b[^;]*\bon\s+all\s+tables\b[^;]*\bto\b[^;]*\b(anon|public|everyone)\b`), "database privileges granted broadly"},
	{mustRx(`(?i)\b(skip|bypass|disable|no)_?(auth\w*|verif\w*|signature\w*|csrf|sig|hmac|permission\w*)\b`), "a switch that skips a security check"},
}

var (
	originWildcard = mustRx(`(?i)(origin|cors|allowed_?hosts|allow_?hosts)[^\n]*(["']\*["']|:\s*\*\s*$|,\s*\*\s*$)`)
	credentialsOn  = mustRx(`(?i)(credentials|allow_?credentials)["']?\s*[:=]\s*["']?(true|include)`)
	cspLine        = mustRx(`(?i)content-security-policy|contentsecuritypolicy|\b(default|script|connect|img|style|frame|object)-src\b|directives`)
	cspWeak        = mustRx(`(?i)'unsafe-(inline|eval)'|unsafe-eval|(^|[\s"'])\*($|[\s;"',])|\bdata:|\bhttps?:\s`)
	sqlStatement   = mustRx(`(?i)\b(select\s[^\n]*\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from)\b` +
		// rules 13: a where clause, and Spark's SQL expressions built by an interpolator
		`|\bwhere\s+[\w.]+\s*(?:=|<>|!=|<|>|\blike\b|\bin\b)|\.(?:where|filter|selectExpr|expr|sql)\(\s*[sf]"`)
	sqlBuilt = mustRx(`(?i)\bf["']|\$\{|#\{|["']\s*\+\s*\w|\w\s*\+\s*["']|["']\s*%\s*[\w(]|\.format\(|Sprintf\(|String\.format\(|\+\s*\w+\s*\+` +
		// rules 13, more languages: R's paste and glue (not glue_sql, which
		// quotes), Haskell's ++, Scala's and Kotlin's s"…$x", Julia's and
		// Swift's interpolation, OCaml's ^, Lua's .., PHP's and Perl's
		// ".", C#'s $"…", Rust's format!
		`|\bpaste0?\(|\bglue\(|["']\s*\+\+|\+\+\s*["']|\bs"[^"\n]*\$\w|\$\(|\\\(\w|["']\s*\^\s*\w|\w\s*\^\s*["']|["']\s*\.\.\s*\w|["']\s*\.\s*\$\w|\$"|format!\(`)
	// A name the bundler inlines into client code, and on the same line a
	// server secret read from the environment.
	publicSecret = mustRx(`\b(NEXT_PUBLIC_|VITE_|REACT_APP_|EXPO_PUBLIC_|NUXT_PUBLIC_|GATSBY_|PUBLIC_)\w*.*(?:process\.env|import\.meta\.env|os\.environ|getenv)\W+(\w*(?:SECRET|TOKEN|PRIVATE|PASSWORD|PASSWD|API_KEY|DATABASE_URL|DSN)\w*)`)
	// A secret read from the environment inside a template's braces
	// (JSX {process.env.X}, {{ env.X }}, <%= ENV['X'] %>): rendered into
	// what the browser receives.
	renderedSecret = mustRx(`(?:\{|\{\{|<%=)\s*(?:process\.env\.|import\.meta\.env\.|env\.|ENV\[["']|os\.environ\[["']|getenv\(["'])(\w*(?:SECRET|TOKEN|PRIVATE|PASSWORD|PASSWD|API_KEY|DATABASE_URL|DSN)\w*)`)
	// paths let through without authentication, one a glob
	permitAny  = mustRx(`(?i)\.\s*(permitAll|anonymous)\(`)
	permitWide = mustRx(`(?i)["'][^"']*\*["']\s*\)\s*\.\s*(permitAll|anonymous)\(`)
	pathsKey   = mustRx(`(?i)\b\w*(public|exempt|exclude[ds]?|skip|unauth\w*|anonymous|bypass|whitelist|allowlist|unprotected|no_?auth|open)_?(paths?|routes?|urls?|endpoints?|prefix(es)?)\b|\bmatcher\b|AllowAnonymous`)
)

// weakLine returns why an added line weakens a control, or "". oldText
// are the lines the change removes, newText the lines it adds.
func weakLine(l, oldText, newText string) string {
	for _, w := range weakPatterns {
		if w.re.MatchString(l) {
			return w.why + " (" + clipText(l, 80) + ")"
		}
	}
	for _, m := range settingsOf(l, 4) {
		key := normKey(m[1])
		if key == "" {
			continue
		}
		v := strings.ToLower(m[2])
		weakOff := v == "false" || v == "0" || v == "none" || v == "nil" || v == "null" || v == "off" || v == "disabled" || v == "disable" || v == "no"
		weakOn := v == "true" || v == "1" || v == "on" || v == "enabled" || v == "enable" || v == "yes"
		var hit string
		if weakOn {
			for _, k := range weakWhenOn {
				if strings.Contains(key, k) {
					hit = k
					break
				}
			}
		}
		if hit == "" && weakOff {
			for _, k := range strongWhenOn {
				if strings.Contains(key, k) && !(k == "authenticat" && strings.Contains(key, "author")) {
					hit = k
					break
				}
			}
		}
		if hit == "" {
			continue
		}
		flip := false
		for _, k := range flipOnly {
			if hit == k {
				flip = true
			}
		}
		if flip && !flipped(key, v, oldText) {
			continue
		}
		return "sets " + clipText(strings.TrimSpace(m[1]), 40) + " to " + m[2] + " (" + clipText(l, 80) + ")"
	}
	if originWildcard.MatchString(l) && (credentialsOn.MatchString(newText) || originRestricted(oldText)) {
		return "any origin allowed where a list was, or with credentials (" + clipText(l, 80) + ")"
	}
	if cspLine.MatchString(l) && cspWeak.MatchString(l) && !cspWeak.MatchString(oldText) {
		return "the content security policy widened (" + clipText(l, 80) + ")"
	}
	if cspLine.MatchString(l) && cspLine.MatchString(oldText) {
		if h := newHosts(l, oldText); h != "" {
			return "the content security policy widened to " + h
		}
	}
	if m := publicSecret.FindStringSubmatch(l); m != nil && !strings.Contains(strings.ToUpper(m[2]), "PUBLISHABLE") && !strings.Contains(strings.ToUpper(m[2]), "PUBLIC") {
		return "a server secret (" + m[2] + ") exposed to the browser bundle (" + clipText(l, 80) + ")"
	}
	if m := renderedSecret.FindStringSubmatchIndex(l); m != nil && (m[0] == 0 || l[m[0]-1] != '$') {
		// ${…} is a template literal's value (code), not a page's braces
		return "a server secret (" + l[m[2]:m[3]] + ") rendered into a page (" + clipText(l, 80) + ")"
	}
	if sqlStatement.MatchString(l) && sqlBuilt.MatchString(l) && !strings.Contains(l, "?") {
		return "SQL built from values by string formatting (" + clipText(l, 80) + ")"
	}
	if permitWide.MatchString(l) && !permitWide.MatchString(oldText) && permitAny.MatchString(oldText) {
		return "the paths let through without authentication widened to a pattern (" + clipText(l, 80) + ")"
	}
	if pathsKey.MatchString(l) && (oldText != "" && pathsKey.MatchString(oldText) || strings.Contains(l, "AllowAnonymous")) {
		return "the paths a check skips widened (" + clipText(l, 80) + ")"
	}
	return ""
}

// envDefault is a setting read from the environment with a default
// (getenv("DEBUG", "1"), env.bool("DEBUG", default=True), process.env.X
// ?? "true"): the key is the variable, the value its default.
var envDefault = mustRx(`(?i)["']([A-Za-z_][\w]*)["']\s*,\s*(?:default\s*=\s*)?["']?(false|true|0|1|off|on|no|yes)\b|process\.env\.(\w+)\s*(?:\?\?|\|\|)\s*["']?(false|true|0|1|off|on|no|yes)\b`)

// settingsOf returns up to n settings of text as [whole, key, value].
func settingsOf(text string, n int) [][]string {
	out := settingRe.FindAllStringSubmatch(text, n)
	for _, m := range envDefault.FindAllStringSubmatch(text, n) {
		if m[1] != "" {
			out = append(out, []string{m[0], m[1], m[2]})
		} else {
			out = append(out, []string{m[0], m[3], m[4]})
		}
	}
	return out
}

// normKey is a setting's key in lower case, letters and digits only,
// without the object it belongs to ("process.env.X" keeps X).
func normKey(k string) string {
	k = strings.ToLower(k)
	var b strings.Builder
	for _, c := range k {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// flipped reports whether the removed lines set key to another value.
func flipped(key, v, oldText string) bool {
	for _, m := range settingsOf(oldText, 64) {
		if normKey(m[1]) == key && strings.ToLower(m[2]) != v {
			return true
		}
	}
	return false
}

// originRestricted reports whether removed lines named allowed origins
// other than a wildcard.
func originRestricted(oldText string) bool {
	l := strings.ToLower(oldText)
	return (strings.Contains(l, "origin") || strings.Contains(l, "allowed_hosts")) && !strings.Contains(l, `"*"`) && !strings.Contains(l, `'*'`)
}

var hostRe = mustRx(`(?i)\b(?:https?://|wss?://)?((?:[a-z0-9-]+\.)+[a-z]{2,})\b`)

// newHosts returns a host l names that oldText does not, or "".
func newHosts(l, oldText string) string {
	for _, m := range hostRe.FindAllStringSubmatch(l, 16) {
		if !strings.Contains(oldText, m[1]) {
			return m[1]
		}
	}
	return ""
}

// controlCall finds identifiers of checks in a line: a call or decorator
// whose name says it authenticates, authorizes, verifies a signature or
// token, protects against CSRF or compares digests.
var controlCall = mustRx(`(?i)@?\b((?:[a-z_]\w*\.)*\w*?(?:auth|verif|signature|csrf|xsrf|permission|login_required|compare_digest|constant_time|timingsafeequal|hmac|require_role|has_?(?:any_?)?(?:role|authority)|is_admin|rate_?limit|sanitiz|construct_?event|check_token|validate_token|helmet|require_?[a-z]|ensure_?[a-z]\w*(?:user|login|session|role|admin)|(?:check|has|can)_?access)[\w.]*)\s*\(|@(\w*(?:auth|login|permission|require|admin|role|verif|csrf|protect|secured|guard|PreAuthorize|RolesAllowed)\w*)\b|\[(Authorize)\b|before_action\s+:(\w*auth\w*|require_\w+)|Depends\(\s*(\w*(?:auth|user|verify|admin|permission|token)\w*)`)

// removedControl returns why removed lines drop a check that nothing in
// the new text restores, or "".
func removedControl(minus []string, added string) string {
	for _, l := range minus {
		for _, m := range controlCall.FindAllStringSubmatch(l, 4) {
			id := ""
			for _, g := range m[1:] {
				if g != "" {
					id = g
					break
				}
			}
			if id == "" {
				id = strings.TrimSpace(m[0])
			}
			low := strings.ToLower(id)
			if strings.Contains(low, "author") && !strings.Contains(low, "authoriz") && !strings.Contains(low, "authorit") || strings.Contains(low, "oauth") && !strings.Contains(low, "verif") {
				continue
			}
			last := id
			if i := strings.LastIndexByte(id, '.'); i >= 0 {
				last = id[i+1:]
			}
			if !strings.Contains(added, last) {
				return "removes " + clipText(id, 40) + " and nothing in the change restores it (" + clipText(l, 80) + ")"
			}
		}
	}
	return ""
}

// passThrough are lines that let a request or check through.
var passThrough = mustRx(`(?i)^(return\s+(true|nil|none|next\(\)|await\s+call_next\(\s*request\s*\)|NextResponse\.next\(\s*\)|await\s+next\(\)|handler\(\w*\))\s*;?|pass|next\(\);?|return;)$`)

// denyLine are lines that refuse: what a check does when it fails.
var denyLine = mustRx(`(?i)\braise\b|\bthrow\b|\babort\(|return\s+false|\b40[13]\b|unauthori[sz]ed|forbidden|HTTPException|PermissionDenied|\bdeny\b|http\.Error\(`)

// bypassAdded returns why the change makes a check let everything through
// (a refusal replaced by a pass), or "".
func bypassAdded(plus, minus []string, old string, secFile bool) string {
	if old == "" || !secFile && !controlCall.MatchString(old) && !strings.Contains(strings.ToLower(old), "auth") {
		return ""
	}
	denied := false
	for _, l := range minus {
		// a refusal, or a decision computed (return perms[p], return
		// verify(sig)) that a constant replaces
		if denyLine.MatchString(l) || decisionLine.MatchString(l) && !passThrough.MatchString(l) {
			denied = true
			break
		}
	}
	if !denied {
		return ""
	}
	for _, l := range plus {
		if passThrough.MatchString(l) {
			return "a check's refusal replaced by " + clipText(l, 40)
		}
	}
	for _, l := range plus {
		if denyLine.MatchString(l) {
			return ""
		}
	}
	for _, l := range minus {
		if denyLine.MatchString(l) {
			return "removes a check's refusal (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// decisionLine is a return of a computed value: a check's decision.
var decisionLine = mustRx(`^return\s+[^;]*[\w\])]\s*[\[(.=<>!&|][^;]*;?$`)

// earlyCond is an added condition on what a request controls (a header,
// a query parameter, a cookie) or on a debug, test or environment switch.
var earlyCond = mustRx(`(?i)^(\}\s*else\s+)?if\b.*(header|query|cookie|searchparams|\bparams\b|\bargs\.get|formvalue|getenv|environ|process\.env|\bdebug\b|\btesting\b|\bbypass|\bskip` +
	// rules 18: the request's method or path, which the caller chooses
	`|\.method\b|request_path|\bpath_info\b|\bpathname\b|\.path\s*(?:===?|\.startsWith|\.includes|\.match)|\burl\.path\b)`)

// earlyReturn is a return (or a pass-through) on the same line or the next.
var earlyReturn = mustRx(`(?i)\breturn\b|\bnext\(\)|call_next|NextResponse\.next`)

// earlyExit returns why the change adds an exit before a check, taken on
// a condition the caller controls or on a debug switch, in code that
// enforces a control, or "".
func earlyExit(plus []string, old string, secFile bool) string {
	if !secFile && !controlCall.MatchString(old) {
		return ""
	}
	for i, l := range plus {
		if !earlyCond.MatchString(l) {
			continue
		}
		if earlyReturn.MatchString(l) || i+1 < len(plus) && earlyReturn.MatchString(plus[i+1]) || i+2 < len(plus) && earlyReturn.MatchString(plus[i+2]) {
			return "an early exit before the check, on a condition a caller or a switch controls (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// requestSink is code that runs a command or evaluates code, and
// requestSource what a request carries: both on one added line is
// request input run as code.
var (
	requestSink   = mustRx(`(?i)exec\.Command|\bsubprocess\.|os\.system\(|os\.popen\(|child_process|execSync\(|\bexec\(|\beval\(|new Function\(|Runtime\.getRuntime\(\)\.exec|shell_exec\(|\bsystem\(|spawn\(|pickle\.loads|yaml\.load\(|render_template_string\(|dangerouslySetInnerHTML|\.innerHTML\s*=|mark_safe\(|\|\s*safe\b`)
	requestSource = mustRx(`(?i)r\.URL\.Query|r\.FormValue|r\.Body|\brequest\.(args|form|json|body|query_params|GET|POST|data|values|headers|cookies)|\breq\.(query|body|params|headers|cookies)|searchParams|\$_(GET|POST|REQUEST|COOKIE)|\bparams\[|c\.Query\(|c\.Param\(|ctx\.query|ctx\.request`)
)

// requestRun returns why an added line runs what a request carries, or "".
func requestRun(plus []string) string {
	for _, l := range plus {
		if requestSink.MatchString(l) && requestSource.MatchString(l) {
			return "request input passed to code that runs or renders it unescaped (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// sqlPrivilege is SQL that grants privileges or makes an account an
// administrator.
var sqlPrivilege = mustRx(`(?i)\bgrant\s+all\b|\bto\s+public\b|\b(superuser|bypassrls)\b|with\s+grant\s+option|\bgrant\s+[\w, ]+\s+(on\s+|to\s+)|\bupdate\s+\w+\s+set\b[^;]*\b(is_?admin|is_?superuser|is_?staff|admin|role|roles|permissions?|scopes?)\b\s*=`)

// runsSQLClient reports whether r is a database client, run directly or
// inside a container or over ssh (docker compose exec db psql …).
func runsSQLClient(r *Run) bool {
	return sqlClients[r.Name] || slices.ContainsFunc(r.Argv, func(w string) bool { return sqlClients[path.Base(w)] })
}

// sqlCommand is `appsec:control-weakened` for SQL a command runs against
// a database (psql -c, mysql -e, sqlite3 DB "...", directly or through
// docker/kubectl exec or ssh): privileges granted, or
// an account made an administrator, outside any reviewed migration.
func sqlCommand(f *Facts) string {
	for i := range f.Runs {
		r := &f.Runs[i]
		if !runsSQLClient(r) {
			continue
		}
		if m := sqlPrivilege.FindString(r.Line); m != "" {
			return r.Name + " runs SQL that grants privileges or an administrator role (" + clipText(m, 60) + ")"
		}
	}
	return ""
}

// decodeExec is code that runs what it decodes at run time: an exec or
// eval sink whose argument is a base64, hex or char-code decoder (the
// payload is not in the text, so encoded-payload cannot read it).
var decodeExec = mustRx(`(?i)\b(exec|eval|os\.system|os\.popen|subprocess\.\w+|execSync|exec\.Command|spawnSync|spawn|Function|system|sh\s+-c|bash\s+-c|assert|create_function|instance_eval|class_eval|module_eval|loadstring|Assembly\.Load(?:From)?|defineClass|ScriptEngine\w*\.eval|shell|command)\s*[(:]?\s*["'{\s]*[^)\n]{0,80}?(b64decode|base64\.(?:b64|standard_b64|urlsafe_b64)?decode|atob\(|Buffer\.from\([^)]*["']base64|base64\s+-d|base64\s+--decode|unhexlify|bytes\.fromhex|fromCharCode|codecs\.decode|StdEncoding\.DecodeString|base64_decode|gzinflate|gzuncompress|gzdecode|str_rot13|hex2bin|FromBase64String|Base64\.decode|getDecoder\(\)\.decode|decode64|unpack\(["']m)`)

// decodedAtRuntime is `encoded-payload:runtime` (escalate): text written,
// carried or run (a file's content, an interpreter's -c or -e, a build
// recipe) that decodes data and runs it. What it runs is not in the
// text: an environment variable, a file, a string Shield cannot read.
func (s *Shield) decodedAtRuntime(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		if p, ok := strings.CutPrefix(t.Source, "content:"); ok && testSource(p) {
			// rules 29: a test runs in CI and on every developer's
			// machine; one that runs a literal it decodes hides what runs
			// (a test of the decoder decodes its fixtures: a variable)
			if decodeHint(t.Body) {
				if m := decodeExec.FindString(clipRaw(t.Body, maxAppsecText)); m != "" && decodedLiteral.MatchString(t.Body[strings.Index(t.Body, m)+len(m):]) {
					j.escalate("encoded-payload:runtime", "%s, a test, runs a literal it decodes at run time (%s): what runs is not in the text", textWhere(t.Source), clipText(m, 80))
					return
				}
			}
			continue
		}
		if fetchHint(t.Body) {
			if m := fetchEval.FindString(clipRaw(t.Body, maxAppsecText)); m != "" {
				j.escalate("remote-code:eval-fetched", "%s runs code it fetches at run time (%s): what runs is on a server, not in the text", textWhere(t.Source), clipText(m, 80))
				return
			}
		}
		if !decodeHint(t.Body) {
			continue
		}
		if m := decodeExec.FindString(clipRaw(t.Body, maxAppsecText)); m != "" {
			j.escalate("encoded-payload:runtime", "%s runs what it decodes at run time (%s): what runs is not in the text", textWhere(t.Source), clipText(m, 80))
			return
		}
		if m := decodedVarRun(clipRaw(t.Body, maxAppsecText)); m != "" {
			j.escalate("encoded-payload:runtime", "%s runs what it decodes at run time (%s): what runs is not in the text", textWhere(t.Source), clipText(m, 80))
			return
		}
	}
	if a != nil && a.Command != "" && decodeHint(a.Command) {
		if m := decodedVarRun(clipRaw(a.Command, maxAppsecText)); m != "" {
			j.escalate("encoded-payload:runtime", "the command runs what it decodes at run time (%s): what runs is not in the line", clipText(m, 80))
		}
	}
}

// decodedLiteral is a decoder's argument given as a literal (…('phey …',
// 'rot13'), b64decode("Y3VybC…")).
var decodedLiteral = mustRx(`^\s*\(?\s*(?:b?["'][A-Za-z0-9+/=_\- .:|]{8,})`)

// decodedAssign is a shell variable assigned what a decoder prints
// (Z=$(printf … | base64 -d), Z=`echo … | xxd -r -p`).
var decodedAssign = mustRx(`\b([A-Za-z_]\w{0,40})=(?:\$\(|\x60)[^)\x60\n]{0,400}?\b(?:base64\s+(?:-d|--decode|-D)|base32\s+(?:-d|--decode)|xxd\s+(?:-r|-p\s+-r)|openssl\s+(?:enc\s+)?(?:-d|base64\s+-d)|gunzip|zcat)\b`)

// decodedVarRun returns where text (a shell line or script) runs a
// variable it assigned from a decoder (session 28): as a shell's or
// eval's code, or as the command itself. The decode and the run are
// apart, so decodeExec's one-line shape misses them.
func decodedVarRun(text string) string {
	for _, m := range decodedAssign.FindAllStringSubmatchIndex(text, 8) {
		name := text[m[2]:m[3]]
		rest := text[m[1]:]
		v := `["']?\$\{?` + regexp.QuoteMeta(name) + `\b`
		re, err := regexp.Compile(`(?m)(?:\b(?:sh|bash|zsh|dash|ksh)\s+-c\s+|\beval\s+|(?:^|[;&|]\s*)\s*)` + v + `[}"']?\s*(?:$|[;&|)])`)
		if err != nil {
			continue
		}
		if loc := re.FindStringIndex(rest); loc != nil {
			return strings.TrimSpace(text[m[0]:m[1]]) + " … " + strings.TrimSpace(rest[loc[0]:loc[1]])
		}
	}
	return ""
}

// decodeHint reports whether text names a decoder decodeExec knows (a
// cheap first pass).
func decodeHint(text string) bool {
	for _, h := range []string{"b64decode", "base64", "Base64", "atob(", "unhexlify", "fromhex", "fromCharCode", "codecs.decode", "DecodeString", "b64_decode", "gzinflate", "gzuncompress", "gzdecode", "str_rot13", "hex2bin", "decode64", "unpack("} {
		if strings.Contains(text, h) {
			return true
		}
	}
	return false
}

// textWhere names a text's source for reasons.
func textWhere(src string) string {
	if p, ok := strings.CutPrefix(src, "content:"); ok {
		return "the text written to " + p
	}
	return src
}

// fetchEval is code that evaluates what it fetches at run time: an eval
// or load sink whose argument reads a URL (Ruby's URI.open, Python's
// urlopen or requests, JavaScript's fetch, PowerShell's DownloadString).
var fetchEval = mustRx(`(?i)\b(eval|exec|instance_eval|class_eval|module_eval|execfile|Function|runInThisContext|runInNewContext|Invoke-Expression|iex)\s*\(?\s*[^;\n]{0,80}?(URI\.open|URI\(|Net::HTTP|HTTParty|Faraday|open-uri|urlopen|urllib\.request|requests\.get|httpx\.get|\bfetch\(|axios\.get|https?\.get\(|DownloadString|Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b)`)

// fetchHint reports whether text names a fetcher fetchEval knows (a
// cheap first pass).
func fetchHint(text string) bool {
	for _, h := range []string{"URI", "Net::HTTP", "HTTParty", "Faraday", "urlopen", "urllib", "requests.get", "httpx.get", "fetch(", "axios", ".get(", "DownloadString", "Invoke-WebRequest", "Invoke-RestMethod", "iwr", "irm"} {
		if strings.Contains(text, h) {
			return true
		}
	}
	return false
}
