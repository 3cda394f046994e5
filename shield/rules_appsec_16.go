package shield

import (
	"strings"
)

// Application code, rules 16 (docs/shield-rules.md "Rules 16: application
// code"), judged by the change's shape in any language:
//
//   - a query's scope dropped: the removed lines filter a query by the
//     tenant, organisation, customer, account, owner or user it belongs
//     to (tenant_id = $2, .Where(c => c.TenantId == tenant), orgId:
//     req.user.orgId, s.customer = :c) and the added lines still query
//     but name that scope nowhere — any tenant's rows come back (IDOR);
//   - a verification's result discarded: `verify(…)?` becomes `let _ =
//     verify(…)`, `err := Verify(…)` becomes `_ = Verify(…)`;
//   - cross-origin requests from any site allowed (origin: true, "*",
//     AllowOriginFunc returning true, the request's Origin echoed back);
//   - a password hash's work factor lowered to its minimum (bcrypt's
//     MinCost, a cost or rounds under 10, PBKDF2 iterations under 10,000);
//   - server-side request forgery: an outbound request whose URL is what
//     the request carries (http.Get(r.URL.Query().Get("url")),
//     fetch(url) after url = searchParams.get("src")) — a sink of
//     taintedSink, with the environment served and ORDER BY built;
//   - in any file: a setting flipped by its name's polarity (a guard
//     turned off, an exposure turned on: boolSwitched), a constant-time
//     comparison replaced by a plain one, a guard's condition made
//     constant, a lifetime made unbounded, a verification given an empty
//     argument, an exemption's match widened (guardsLoosened); a URL
//     allowlist given file: or gopher:, a field's validators removed, an
//     account's standing dropped from a condition (inputGuardsDropped).

// scopeWords are the owners a query's rows are scoped to.
var scopeWords = []string{"tenant", "org", "organization", "organisation", "customer", "account", "owner", "workspace", "company", "team", "user"}

// scopeFilter is a removed line's predicate on such an owner inside a
// query or filter: a column or property compared or bound.
var scopeFilter = mustRx(`(?i)(?:\b(?:where|and|filter|filter_by|find\w*|andWhere|Where|eq|equals|select|query|scope)\b[^\n]{0,160}?)\b((?:tenant|org|organi[sz]ation|customer|account|owner|workspace|company|team|user)(?:_?id|Id|ID|_uuid)?)\b\s*(?:=|==|===|:|\.eq\(|IN\b|\bis\b)`)

// scopeEq is a query builder's equality on a scope column (drizzle's
// eq(orders.accountId, …), sqlalchemy's table.c.org_id == …).
var scopeEq = mustRx(`(?i)\beq\(\s*[\w.]*?\b((?:tenant|org|organi[sz]ation|customer|account|owner|workspace|company|team|user)(?:_?id|Id|ID|_uuid)?)\s*,`)

// queryish is a line that still queries or filters.
// (rules 18: all( and first( never matched inside the word-bounded
// group — a "(" then ")" holds no word boundary — and C#'s AsQueryable()
// still queries.)
var queryish = mustRx(`(?i)\b(?:select|where|filter|filter_by|find\w*|query\w*|get\w*|load\w*)\b|\b(?:all|first|asqueryable|asnotracking)\(`)

// scopeDropped returns the scope the removed lines filtered a query by
// that the added lines drop, or "".
func scopeDropped(plus, minus []string) string {
	if len(plus) == 0 || len(minus) == 0 {
		return ""
	}
	var code []string
	for _, l := range plus {
		// a trailing comment is not code (`.AsQueryable(); // tenant
		// filter slowed paging` names the scope it drops)
		if k := strings.Index(l, "//"); k >= 0 && !strings.Contains(l[:k], ":") {
			l = l[:k]
		}
		if k := strings.Index(l, " # "); k >= 0 {
			l = l[:k]
		}
		code = append(code, l)
	}
	added := strings.ToLower(strings.Join(code, "\n"))
	if !queryish.MatchString(added) {
		return ""
	}
	for _, l := range minus[:min(len(minus), 64)] {
		m := scopeFilter.FindStringSubmatch(l)
		if m == nil {
			m = scopeEq.FindStringSubmatch(l) // rules 18
		}
		if m == nil {
			continue
		}
		word := strings.ToLower(m[1])
		base := word
		for _, w := range scopeWords {
			if strings.HasPrefix(word, w) {
				base = w
				break
			}
		}
		if base == "user" && !strings.Contains(word, "id") {
			continue // a user named in a query is not always its scope
		}
		if !strings.Contains(added, base) {
			return "a query's " + m[1] + " filter removed: the rows of every " + base + " come back (insecure direct object reference)"
		}
	}
	return ""
}

var (
	// a call whose result a check depends on
	verifyCallName = mustRx(`\b(\w*(?:[vV]erify|[vV]alidate|[aA]uthenticate|[aA]uthori[sz]e|[cC]heck[A-Z_]\w*|check_\w+)\w*)\s*\(`)
	// the result thrown away: let _ =, _ =, a bare statement in Go
	discarded = mustRx(`^\s*(?:let\s+_\w*\s*=|_\s*=|_\s*,\s*_\s*=|_ = )`)
)

// verifyDiscarded returns the verification whose result an added line
// throws away while a removed line used it, or "".
func verifyDiscarded(plus, minus []string) string {
	old := strings.Join(minus, "\n")
	for _, l := range plus {
		if !discarded.MatchString(l) {
			continue
		}
		m := verifyCallName.FindStringSubmatch(l)
		if m == nil || !strings.Contains(old, m[1]+"(") {
			continue
		}
		return "the result of " + m[1] + " thrown away: the check runs and nothing depends on it"
	}
	return ""
}

// anyOrigin is cross-origin access allowed from any site.
var anyOrigin = mustRx(`(?i)\borigin\s*:\s*(?:true|["']\*["'])|AllowedOrigins\s*:\s*\[\]string\{\s*"\*"\s*\}|allow_origins\s*=\s*\[\s*["']\*["']\s*\]|AllowOriginFunc\s*:\s*func\([^)]*\)\s*bool\s*\{\s*return\s+true|Access-Control-Allow-Origin["']\s*,\s*(?:r|req|request|ctx|c)\.(?:Header\.Get|headers?\.get|get_header|headers\[)\(?\s*["']Origin|AllowAnyOrigin\(\)|SetIsOriginAllowed\(\s*\w*\s*=>\s*true\s*\)|CORS_ALLOW_ALL_ORIGINS\s*=\s*True|CORS_ORIGIN_ALLOW_ALL\s*=\s*True|allowedOriginPatterns\(\s*"\*"\s*\)`)

// weakHash is a password hash's work factor at its floor.
var weakHash = mustRx(`(?i)bcrypt\.MinCost|GenerateFromPassword\([^,)]*,\s*[1-9]\s*\)|\bbcrypt\.(?:hash|genSalt|gensalt)(?:Sync)?\([^)]*\b(?:rounds\s*=\s*)?[1-9]\s*\)|\bgensalt\(\s*(?:rounds\s*=\s*)?[1-9]\s*\)|BCrypt\.HashPassword\([^,)]*,\s*[1-9]\s*\)|(?:iterations|rounds|cost|work_?factor)\s*[:=]\s*[1-9]\d{0,2}\b[^\n]*(?:pbkdf2|bcrypt|hash|argon)|pbkdf2\w*\([^)]*,\s*[1-9]\d{0,3}\s*[,)]`)

// webAccessCode returns why the added lines open cross-origin access or
// lower a hash's cost that the removed lines did not, or "".
func webAccessCode(plus, minus []string) string {
	old := strings.Join(minus, "\n")
	for _, l := range plus {
		if anyOrigin.MatchString(l) && !anyOrigin.MatchString(old) {
			return "cross-origin requests allowed from any site (" + clipText(l, 60) + ")"
		}
		if weakHash.MatchString(l) && !weakHash.MatchString(old) {
			return "a password hash's work factor lowered to its floor (" + clipText(l, 60) + ")"
		}
	}
	return ""
}

// ssrfCall is an outbound request whose first argument follows.
var ssrfCall = mustRx(`(?i)(?:\bhttp\.(?:Get|Head|Post|PostForm)|\bhttp\.NewRequest(?:WithContext)?|\b(?:client|c|hc|httpClient)\.(?:Get|Head|Post)|\brequests\.(?:get|post|put|head|request)|\bhttpx\.(?:get|post|request)|\burlopen|\burllib\.request\.urlopen|\baxios(?:\.(?:get|post|request))?|(?:^|[^.\w])fetch|\breqwest::get|\bNet::HTTP\.get(?:_response)?|\bURI\.open|\bHttpClient\(\)\.(?:get|post)|\bGetAsync|\bGetStringAsync|\bcurl_init|\bfile_get_contents)\s*\(\s*(?:ctx\s*,\s*|["'](?:GET|POST|HEAD|PUT)["']\s*,\s*)?`)

// ssrfSink reports whether l makes an outbound request to a URL the
// request names: its first argument is input (not a literal or a template
// that begins with a fixed host or path).
func ssrfSink(l string, fromInput func(string) bool) bool {
	loc := ssrfCall.FindStringIndex(l)
	if loc == nil {
		return false
	}
	arg := l[loc[1]:]
	if arg == "" {
		return false
	}
	switch arg[0] {
	case '"', '\'':
		return false // a literal URL, or one that begins with a fixed part
	case '`':
		// a template: what decides the host is its first part
		if !strings.HasPrefix(arg[1:], "${") {
			return false
		}
		end := strings.IndexByte(arg, '}')
		if end < 0 {
			return false
		}
		return fromInput(arg[3:end])
	case ')':
		return false
	}
	end := strings.IndexAny(arg, ",)")
	if end < 0 {
		end = len(arg)
	}
	return fromInput(arg[:end])
}

// boolSetting is a key set to a boolean on a line: YAML, TOML, JSON,
// INI, XML attributes, PHP define(), a property.
var boolSetting = mustRx(`(?i)(?:define\(\s*["']|^|[\s{,;(])["']?([A-Za-z_][\w:.-]{1,60})["']?\s*(?:=|:|=>|,)\s*["']?(true|false|yes|no|on|off|1|0)["']?\s*(?:[,;)}\s]|$)`)

// guardKeyWords name a setting that guards when it is true (a prevention:
// clean-disabled, DISALLOW_FILE_EDIT, private, explicit, readonly);
// riskKeyWords one that exposes when it is true (allowBackup,
// allow-plugins, usesCleartextTraffic, exported, insecure).
var (
	guardKeyWords = mustRx(`disabled?$|^disable|disallow|^deny|forbid|prevent|readonly|read_only|^private$|^explicit$|^locked$|frozen|immutable|^(?:no|block)_?`)
	riskKeyWords  = mustRx(`^allow_?(?:backup|plugins?|insecure|all|any|http|cleartext|root|privilege|unauthenticated|anonymous|external|remote|unsigned|untrusted|write|origins?|credentials|downgrade|uploads?|registration|signup)|insecure|unsafe|cleartext|trust_?all|^skip_?(?:verify|tls|ssl|auth|checks?)|bypass|^exported$|auto_?approve|^anonymous`)
)

// boolSwitched returns why an edit flips a guarding setting off or an
// exposing one on, reading both sides' boolean settings by key; "".
func boolSwitched(p string, plus, minus []string) string {
	if len(plus) == 0 || len(minus) == 0 {
		return ""
	}
	base := strings.ToLower(p[strings.LastIndexByte(p, '/')+1:])
	if strings.HasPrefix(base, "tsconfig") || strings.HasPrefix(base, "jsconfig") {
		return "" // compiler options (allowJs) are not exposures
	}
	was := map[string]string{}
	for _, l := range minus[:min(len(minus), 128)] {
		for _, m := range boolSetting.FindAllStringSubmatch(l, 4) {
			was[strings.ToLower(m[1])] = boolOf(m[2])
		}
	}
	if len(was) == 0 {
		return ""
	}
	for _, l := range plus[:min(len(plus), 128)] {
		for _, m := range boolSetting.FindAllStringSubmatch(l, 4) {
			k := strings.ToLower(m[1])
			o, had := was[k]
			n := boolOf(m[2])
			if !had || o == n || o == "" || n == "" {
				continue
			}
			leaf := k
			if i := strings.LastIndexAny(k, ":."); i >= 0 {
				leaf = k[i+1:]
			}
			norm := strings.ReplaceAll(leaf, "-", "_")
			switch {
			case o == "true" && n == "false" && guardKeyWords.MatchString(norm):
				return "turns the guard " + m[1] + " off (" + clipText(l, 60) + ")"
			case o == "false" && n == "true" && riskKeyWords.MatchString(norm) && !compilerOption[norm]:
				return "turns " + m[1] + " on (" + clipText(l, 60) + ")"
			}
		}
	}
	return ""
}

// compilerOption are switches that let a compiler accept a construct,
// not exposures (C#'s unsafe blocks).
var compilerOption = setOf("allowunsafecode", "allowunsafeblocks", "allow_unsafe_code", "allow_unsafe_blocks", "unsafe_code")

func boolOf(v string) string {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return "true"
	case "false", "no", "off", "0":
		return "false"
	}
	return ""
}

var (
	// a comparison that takes constant time (a secret compared safely)
	constTimeCmp = mustRx(`hash_equals\(|constant_time_(?:eq|compare)|compare_digest\(|timingSafeEqual\(|ConstantTimeCompare\(|hmac\.Equal\(|MessageDigest\.isEqual\(|secure_compare\(|FixedTimeEquals\(|CryptographicOperations\.FixedTimeEquals|ct_eq\(`)
	// a condition made constant: if true or …, if (false && …), || true)
	constGuard = mustRx(`\bif\s*\(?\s*(?:(?i:true)\s*(?:\|\||\bor\b)|(?i:false)\s*(?:&&|\band\b)|1\s*(?:\|\||\bor\b)|0\s*(?:&&|\band\b))|(?:\|\||\bor\b)\s*(?i:true)\s*\)|\bunless\s+false\b`)
	// a lifetime made unbounded
	infiniteLife = mustRx(`(?i)\b(?:max_?age|ttl|expires?(?:_?in)?|lifetime|timeout|validity)\s*[:=]\s*(?::infinity|infinity|Infinity|math\.MaxInt\w*|Number\.MAX_SAFE_INTEGER|float\(["']inf["']\)|-1\b)`)
)

// looseCmp is a comparison that is not constant-time, or not whole.
var looseCmp = mustRx(`==|!=|\bstarts_?[wW]ith\b|\bHasPrefix\(|\bContains\(|\bcontains\(|\bincludes\(|\.equals\(|\bstrcmp\(|\bEqual\(|\beq\(`)

// verifyArgEmptied is a verification call given an empty argument where
// the removed line gave it a value (idtoken.Validate(ctx, raw, "")).
var verifyArgEmptied = mustRx(`(?i)\b\w*(?:verify|validate|check|parse)\w*\([^)\n]*,\s*(?:""|''|nil|None|null|undefined)\s*[,)]`)

// matchWidened is an exemption or allowance test made looser: a prefix or
// exact match replaced by a substring one.
var (
	exactMatch = mustRx(`\bHasPrefix\(|\bstartsWith\(|\bstart_with\?|\bstartswith\(|\bstarts_with\(|\bHasSuffix\(|\bendsWith\(|===?\s*["']`)
	subMatch   = mustRx(`\bContains\(|\bincludes\(|\binclude\?|\bcontains\(|\bin\s+\w+(?:\.\w+)*\b|\bstrings\.Contains\(|\bindexOf\(`)
)

// authWords are what an exemption's test names when it skips a check.
var authWords = mustRx(`(?i)health|public|anon|skip|exempt|allow|auth|internal|admin|method|path|url|route|origin|host`)

// guardsLoosened returns why added code compares a secret unsafely where
// the removed code did it in constant time, makes a guard's condition
// constant, or makes a lifetime unbounded; "".
func guardsLoosened(plus, minus []string) string {
	if len(plus) == 0 {
		return ""
	}
	old := strings.Join(minus, "\n")
	if constTimeCmp.MatchString(old) {
		if added := strings.Join(plus, "\n"); looseCmp.MatchString(added) && !constTimeCmp.MatchString(added) {
			return "a constant-time comparison of a secret replaced by a plain one (" + clipText(plus[0], 60) + ")"
		}
	}
	for i, l := range plus {
		if verifyArgEmptied.MatchString(l) && i < len(minus) && !verifyArgEmptied.MatchString(old) && !strings.Contains(old, `""`) {
			return "a verification given an empty argument where it had a value (" + clipText(l, 60) + ")"
		}
		if i < len(minus) && exactMatch.MatchString(minus[i]) && !exactMatch.MatchString(l) && subMatch.MatchString(l) && authWords.MatchString(l+minus[i]) {
			return "an exemption's match widened from a prefix or exact test to a substring (" + clipText(l, 60) + ")"
		}
		if constGuard.MatchString(l) && !constGuard.MatchString(old) {
			return "a guard's condition made constant (" + clipText(l, 60) + ")"
		}
		if infiniteLife.MatchString(l) && !infiniteLife.MatchString(old) {
			return "a token's or session's lifetime made unbounded (" + clipText(l, 60) + ")"
		}
	}
	return ""
}

var (
	// URL schemes that reach files, other protocols or scripts
	riskyScheme = mustRx(`["'](?:file|gopher|dict|ftp|ldap|jar|javascript|data|php|expect|netdoc)(?::|://)["']`)
	// a validator of input on a line
	validatorCall = mustRx(`\.(?:regex|max|min|length|email|uuid|url|nonempty|trim|int|positive|safe|matches|pattern|maxLength|minLength|ip|cuid|datetime)\(|@(?:Pattern|Size|Email|Max|Min|NotBlank|Length)\b|\bvalidators?\s*=|MaxLength\(|RegularExpression\(|validates?\s+:|\bmax_length\s*=|\bvalidate_\w+\(`)
	// an account's or a token's standing checked in a condition
	statusConjunct = mustRx(`(?i)(?:&&|\band\b)\s*!?\s*[\w.?]*\b(?:suspended|disabled|banned|blocked|locked|deleted|revoked|expired|deactivated|is_active|active|verified|approved|confirmed|enabled)\b[\w.()?]*`)
)

// inputGuardsDropped returns why an edit widens what input is accepted:
// a URL allowlist given schemes that reach files or other protocols, a
// field's validators removed from its line, an account's standing dropped
// from a condition; "".
func inputGuardsDropped(plus, minus []string) string {
	old := strings.Join(minus, "\n")
	for _, l := range plus {
		if m := riskyScheme.FindString(l); m != "" && !strings.Contains(old, m) && (strings.Contains(old, `"https:"`) || strings.Contains(old, `'https:'`) || strings.Contains(old, "https")) {
			return "a URL allowlist now accepts " + m + " (" + clipText(l, 60) + ")"
		}
	}
	for _, o := range minus[:min(len(minus), 64)] {
		head, _, ok := strings.Cut(o, "=")
		if !ok || len(head) < 4 {
			continue
		}
		for _, n := range plus[:min(len(plus), 64)] {
			if !strings.HasPrefix(n, head+"=") {
				continue
			}
			if validatorCall.MatchString(o) && !validatorCall.MatchString(n) {
				return "a field's validation removed (" + clipText(n, 60) + ")"
			}
		}
	}
	for _, o := range minus[:min(len(minus), 64)] {
		m := statusConjunct.FindString(o)
		if m == "" {
			continue
		}
		rest := strings.Replace(o, m, "", 1)
		for _, n := range plus[:min(len(plus), 64)] {
			if strings.Join(strings.Fields(n), "") == strings.Join(strings.Fields(rest), "") {
				return "a condition no longer checks " + strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(m), "&andAND")) + " (" + clipText(n, 60) + ")"
			}
		}
	}
	return ""
}
