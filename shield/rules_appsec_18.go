package shield

import (
	"path"
	"strconv"
	"strings"
)

// Rules 18 (session 23, after holdout17's measure; docs/shield-rules.md
// "Rules 18: application code and the database"). holdout17 (Elixir,
// Electron, a browser extension, Workers, Supabase) let through changes
// whose hole is in what the code or the database will do, written in
// languages and platforms the earlier sinks did not name. Each judge
// below reads the lines a change adds (and removes) and names a class,
// not a file:
//
//   - data evaluated as code or run as a shell (Code.eval_string, eval,
//     exec, new Function, vm.runInContext, :os.cmd, System.shell) when
//     the argument is not a literal; terms decoded from outside input
//     without :safe (binary_to_term);
//   - redirects to an address the caller gives (Phoenix's external:);
//   - a renderer's bridge handing web content the raw IPC channel;
//   - a condition guarding a dangerous call removed (if (…) X → X), a
//     path-traversal check dropped;
//   - a page's cookies, storage or whole document collected into a
//     value; every request's headers or the whole environment logged;
//   - a client switched from the caller's rights to a service role;
//   - a number that bounds a security check (a signature's tolerance, a
//     token's leeway, an attempt limit) raised tenfold or more;
//   - in SQL (files and migrations): functions that run SQL built from
//     their arguments (with their owner's rights or not), privileges
//     granted to the anonymous or public role, row policies that admit
//     every row for writing (or for reading where a revoke was), row
//     security switched off, scheduled database jobs that reach the
//     network, accounts and keys inserted.
//   - after holdout18's measure: an event filter that drops every event
//     or drops what it passed on, an error reporter switched off where it
//     is set up; an accept added at the top of an existing check; an
//     Elixir plug clause passing requests untouched; a call-style switch
//     flipped weak (fastlane's readonly); the caller's identity taken
//     from the request's data; a collection the request names; access
//     rules files (Firebase) that let anyone write or read.
//
// Tests, fixtures and examples are not judged (testSource).

// appsec18 returns why the change to p (added text, and old: the text it
// replaces) opens a hole of one of the classes above, or "".
func appsec18(p, added, old string) string {
	ext := strings.ToLower(path.Ext(p))
	if ext == ".rules" || strings.HasSuffix(p, "database.rules.json") {
		return accessRulesOpened(added, old)
	}
	sql := ext == ".sql" || migrationPath(p)
	code := codeExt18[ext] || rubyDSL[path.Base(p)]
	if !sql && !code {
		return ""
	}
	plus, minus := diffLines(added, old)
	if len(plus) == 0 && len(minus) == 0 {
		return ""
	}
	if sql {
		if why := sqlOpened(plus, minus); why != "" {
			return why
		}
	}
	if !code {
		return ""
	}
	for _, l := range plus {
		if why := sinkLine18(l); why != "" {
			return why
		}
	}
	if why := ipcExposed(p, plus, old); why != "" {
		return why
	}
	if why := filterDropsAll(added, plus); why != "" {
		return why
	}
	if why := earlyAccept(added, old, plus); why != "" {
		return why
	}
	if why := clausePasses(p, plus); why != "" {
		return why
	}
	if why := guardDropped(plus, minus); why != "" {
		return why
	}
	if why := traversalDropped(plus, minus); why != "" {
		return why
	}
	if why := callFlipped(plus, minus); why != "" {
		return why
	}
	if why := callerFromRequest(plus, minus); why != "" {
		return why
	}
	if why := eventDropped(p, plus, minus); why != "" {
		return why
	}
	if why := roleSwitched(plus, minus); why != "" {
		return why
	}
	if why := boundRaised(p, plus, minus); why != "" {
		return why
	}
	return ""
}

// codeExt18 are the languages the code judges read.
var codeExt18 = setOf(".ex", ".exs", ".erl", ".hrl", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts",
	".py", ".rb", ".php", ".go", ".java", ".kt", ".cs", ".rs", ".lua", ".pl", ".vue", ".svelte", ".astro", ".swift", ".dart",
	".scala", ".groovy", ".heex", ".eex", ".sol", ".vy", ".move", ".cairo", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp")

// rubyDSL are Ruby files named without an extension (fastlane's, Bundler's,
// CocoaPods', rake's, Danger's).
var rubyDSL = setOf("Fastfile", "Matchfile", "Appfile", "Pluginfile", "Deliverfile", "Snapfile", "Gymfile", "Scanfile",
	"Podfile", "Gemfile", "Rakefile", "Dangerfile", "Brewfile", "Vagrantfile", "Guardfile", "Berksfile")

// migrationPath reports whether p is a database migration (a directory
// named migrations, or migrate).
func migrationPath(p string) bool {
	l := strings.ToLower(p)
	return strings.Contains(l, "/migrations/") || strings.HasPrefix(l, "migrations/") || strings.Contains(l, "/migrate/") || strings.HasPrefix(l, "migrate/")
}

var (
	// data evaluated as code: the argument does not start with a quote
	evalData = mustRx(`\bCode\.(?:eval_string|eval_quoted|eval_file|compile_string|compile_quoted)\(\s*[^"'\s)]|:erl_eval\.\w+\(|\bvm\.(?:runIn\w*Context|compileFunction)\(|\bnew\s+vm\.Script\(|(?:^|[^.\w$])(?:eval|exec)\(\s*[^"'\s)]|\bnew\s+Function\(\s*[^"'\s)]|\b(?:instance_eval|class_eval|module_eval)\(\s*[^"'\s)]|\bloadstring\(|\bString\.to_existing_atom\b.*\bapply\(`)
	// a shell from a value (Erlang's os:cmd, Elixir's System.shell, sh -c)
	shellData = mustRx(`:os\.cmd\(\s*[^'~\s)]|\bos:cmd\(\s*[^'"\s)]|\bSystem\.shell\(\s*[^"\s)]|\bSystem\.cmd\(\s*"(?:sh|bash|zsh|/bin/sh|/bin/bash)"`)
	// terms decoded from outside input
	termDecode = mustRx(`\bbinary_to_term\(`)
	// a redirect to an address the caller gives (not a literal, not a
	// verified path ~p)
	externalRedirect = mustRx(`\bredirect\([^\n]*\bexternal:\s*(?:params\b|conn\.(?:params|query_params|path_params|body_params)\b|(?:next|return_?to|redirect_?(?:to|uri|url)?|url|to|target|dest\w*|continue|back|goto|location|return_?url|callback\w*)\s*[,)\n]|(?:next|return_?to|redirect_?(?:to|uri|url)?|url|to|target)\s*$)`)
	// collected: a page's cookies as a value in an object, a call or a
	// list (not read into a variable: cookie helpers do that), a store or
	// the document whole
	pageCollected = mustRx(`[:(,\[]\s*document\.cookie\s*[,})\]]|JSON\.stringify\(\s*(?:window\.)?(?:localStorage|sessionStorage)\s*\)|\.\.\.(?:window\.)?(?:localStorage|sessionStorage)\b|Object\.(?:entries|keys|values|assign)\(\s*(?:\{\}\s*,\s*)?(?:window\.)?(?:localStorage|sessionStorage)\s*\)|\bdocument\.documentElement\.(?:outer|inner)HTML\b|\b(?:chrome|browser)\.cookies\.getAll\(`)
	// a log call given every header, every cookie or the whole environment
	logCall18 = mustRx(`(?i)(?:\bconsole\.\w+|\blog(?:ger)?\.\w+|\bLogger\.\w+|\bslog\.\w+|\bprint(?:ln|f)?\b|\bputs\b|\bIO\.inspect\b|\bfmt\.Print\w*|\bRails\.logger\.\w+|\bwarn\b)\s*\(?`)
	logsWhole = mustRx(`\b(?:req|request|r|ctx|conn|event|c|context)\.(?:headers|req_headers|Header|cookies|raw_headers|META)\s*(?:[,)}\]]|\.entries\(\)|\.items\(\)|\)\))|Object\.fromEntries\(\s*[\w.]*headers\s*\)|\[\s*\.\.\.\s*[\w.]*headers|JSON\.stringify\(\s*(?:process\.env|[\w.]*headers)\s*\)|\bprocess\.env\s*[,)]|\bos\.environ\s*[,)]|\bSystem\.get_env\(\s*\)|\binspect\(\s*conn\.req_headers|\bdict\(\s*request\.headers\s*\)|\bENV\.to_h\b`)
)

// sinkLine18 returns why one added line is a hole whatever feeds it, or "".
func sinkLine18(l string) string {
	if len(l) > 2000 {
		l = l[:2000]
	}
	if evalData.MatchString(l) && !strings.Contains(l, "literal_eval") {
		return "evaluates data as code (" + clipText(l, 80) + ")"
	}
	if shellData.MatchString(l) {
		return "runs a shell command built from a value (" + clipText(l, 80) + ")"
	}
	if termDecode.MatchString(l) && !strings.Contains(l, ":safe") && !strings.Contains(l, "non_executable_binary_to_term") {
		return "decodes an Erlang term from outside input without :safe (atoms and functions it names are created) (" + clipText(l, 80) + ")"
	}
	if callerCollection.MatchString(l) {
		return "the request names the collection or table the server's own rights read (" + clipText(l, 80) + ")"
	}
	if externalRedirect.MatchString(l) {
		return "redirects to an address the caller gives (" + clipText(l, 80) + ")"
	}
	if pageCollected.MatchString(l) && !strings.Contains(l, "document.cookie =") {
		return "collects the page's cookies, storage or whole document into a value (" + clipText(l, 80) + ")"
	}
	if logCall18.MatchString(l) && logsWhole.MatchString(l) {
		return "writes every request header (credentials with them) or the whole environment to the logs (" + clipText(l, 80) + ")"
	}
	return ""
}

var (
	ipcRaw     = mustRx(`(?:[:=,(]\s*ipcRenderer\s*[,;})]?\s*$)|exposeInMainWorld\([^\n]*,\s*ipcRenderer\s*\)`)
	ipcChannel = mustRx(`\bipcRenderer\.(?:send|sendSync|invoke|on|once|postMessage)\(\s*[a-z_]\w*\s*[,)]`)
)

// ipcExposed returns why a preload script hands web content the raw IPC
// channel (ipcRenderer itself, or a send/invoke whose channel the page
// chooses), or "".
func ipcExposed(p string, plus []string, old string) string {
	if !strings.Contains(strings.ToLower(p), "preload") && !strings.Contains(old, "contextBridge") && !anyContains(plus, "contextBridge") {
		return ""
	}
	for _, l := range plus {
		if ll := strings.ToLower(l); strings.Contains(ll, "allow") || strings.Contains(ll, "includes(") || strings.Contains(ll, ".has(") || strings.Contains(ll, "valid") {
			return "" // the channel is checked against a list
		}
	}
	for _, l := range plus {
		if ipcRaw.MatchString(l) || ipcChannel.MatchString(l) {
			return "the preload script gives web content the IPC channel itself, any channel it names (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

func anyContains(ls []string, s string) bool {
	for _, l := range ls {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

var (
	ifStart     = mustRx(`^(?:\}\s*else\s+)?if\s*\(`)
	postfixIf   = mustRx(`^(\S.*?)\s+(?:if|unless)\s+\S.*$`)
	guardedSink = mustRx(`(?i)\bopenExternal\(|\bloadURL\(|\bloadFile\(|\bredirect(?:_to)?\b|\bexec\w*\(|\bspawn\w*\(|\beval\(|\bunlink\w*\(|\brm(?:Sync|dir|_rf|_f)?\(|\bwriteFile\w*\(|\bsend_?[fF]ile\(|\bFile\.(?:write|rm|rm_rf)\b|\bnavigate\w*\(|\bsystem\(|\bpopen\(|\binnerHTML\b|\bsetHeader\(|\bSystem\.cmd\b`)
)

// guardDropped returns why a removed line's condition guarded a
// dangerous call that an added line now makes unconditionally, or "".
func guardDropped(plus, minus []string) string {
	if len(minus) == 0 {
		return ""
	}
	added := map[string]bool{}
	for _, l := range plus {
		added[strings.TrimSuffix(l, ";")] = true
	}
	for _, m := range minus {
		var body string
		if loc := ifStart.FindStringIndex(m); loc != nil {
			body = afterParens(m[loc[1]-1:])
		} else if g := postfixIf.FindStringSubmatch(m); g != nil {
			body = g[1]
		}
		body = strings.TrimSuffix(strings.TrimSpace(body), ";")
		if body != "" && added[body] && guardedSink.MatchString(body) {
			return "the condition that guarded " + clipText(body, 60) + " is removed: it now runs whatever the value"
		}
	}
	return ""
}

var (
	// an event filter's header (Sentry's before_send, a scrubber)
	filterHeader = mustRx(`(?i)\b(?:def|defp|func|function|fn|async\s+function)\s+\(?[\w.*\s)]*?\b(\w*(?:scrub|before_?send|filter_?event|sanitize_?event|before_?breadcrumb|redact_?event)\w*)\s*\(`)
	filterNilDef = mustRx(`(?i)\bdefp?\s+\w*(?:scrub|before_send|filter_event|sanitize_event|before_breadcrumb|redact_event)\w*\([^)]*\)\s*,\s*do:\s*nil\s*$`)
	returnsNone  = mustRx(`^(?:return\s+(?:nil|null|None|undefined)\s*;?|nil|None)$`)
	// a check's header: its name says it verifies, validates or allows
	checkHeader = mustRx(`(?i)\b(?:def|func|function|fn|bool|boolean|static\s+\w+|public\s+\w+|private\s+\w+)\s+\(?[\w.*\s)]*?\b(\w*(?:verif|valid|check_?sig|authori[sz]|authenticat|is_?allowed|can_?access|permit|trusted)\w*)\s*\(`)
	acceptLine  = mustRx(`^(?:return\s+(?:true|Ok\(\(\)\)|True)\s*;?|true|Ok\(\(\)\))\s*(?://.*|#.*)?$`)
)

// filterDropsAll returns why an event filter (Sentry's before_send, a
// scrubber) now returns nothing for every event, or "".
func filterDropsAll(text string, plus []string) string {
	for _, l := range plus {
		if filterNilDef.MatchString(l) {
			return "the event filter drops every event (" + clipText(l, 80) + "): errors are no longer reported"
		}
	}
	lines := strings.SplitN(clipRaw(text, 64<<10), "\n", 2000)
	var added map[string]bool // plus as a set, made once it is needed
	for i, l := range lines {
		if !filterHeader.MatchString(l) {
			continue
		}
		if added == nil {
			added = setOf(plus...)
		}
		for k := i + 1; k < len(lines) && k <= i+2; k++ {
			t := strings.TrimSpace(lines[k])
			if t == "" {
				continue
			}
			if returnsNone.MatchString(t) && added[t] {
				return "the event filter returns nothing first (" + clipText(strings.TrimSpace(l), 60) + "): every event is dropped"
			}
			break
		}
	}
	return ""
}

// earlyAccept returns why an existing check (its name says it verifies,
// validates or authorizes; its header is in the text replaced) gets an
// accept among its first lines, or "".
func earlyAccept(added, old string, plus []string) string {
	if old == "" {
		return ""
	}
	lines := strings.SplitN(clipRaw(added, 64<<10), "\n", 2000)
	var addedLines, had map[string]bool // made once a header is seen
	for i, l := range lines {
		if !checkHeader.MatchString(l) || strings.Contains(l, "test") || strings.Contains(l, "Test") {
			continue
		}
		if had == nil {
			had, addedLines = lineSet(old), setOf(plus...)
		}
		if !had[strings.TrimSpace(l)] {
			continue
		}
		for k := i + 1; k < len(lines) && k <= i+4; k++ {
			t := strings.TrimSpace(lines[k])
			if acceptLine.MatchString(t) && addedLines[t] {
				return "the check accepts early (" + clipText(strings.TrimSpace(l), 50) + " … " + t + "): what follows no longer decides"
			}
		}
	}
	return ""
}

var (
	// a collection, table or document path the request names
	callerCollection = mustRx(`\.(?:collection|collectionGroup|doc|ref|from|table)\(\s*(?:String\(\s*)?(?:req|request|ctx\.request)\.(?:query|body|params|data)\b`)
	// Firebase and other rules languages: access granted unconditionally
	allowAlways = mustRx(`\ballow\s+([a-z, ]+?)\s*:\s*if\s+true\s*;?|"\.(read|write)"\s*:\s*(?:true|"true")`)
	allowLine   = mustRx(`\ballow\s+([a-z, ]+?)\s*:\s*if\s+(.+?)\s*;?$`)
	// who the caller is, from the request's own data rather than its
	// authentication
	uidFromRequest = mustRx(`(?i)\b(?:req|request|ctx|event|input|args?|params)\s*\.\s*(?:data|body|query|params|args)\s*\??\.\s*\??\s*\[?["']?(?:uid|user_?id|userId|owner(?:_?id|Id)?|account_?id|accountId|tenant_?id|tenantId|customer_?id|customerId)\b`)
	uidFromAuth    = mustRx(`(?i)\bauth\b|\bsession\b|current_?user|currentUser|\bclaims\b|\bprincipal\b|\bidentity\b|\bjwt\b|\btoken\b`)
	// an event filter passing an event on, and dropping it
	returnsEvent = mustRx(`^return\s+(?:event|evt|ev|e|breadcrumb|crumb|report)\s*;?$`)
	// a monitoring client switched off where it is set up
	monitorOff  = mustRx(`(?i)^["']?(?:enabled|enable|collectionEnabled|crashlyticsCollectionEnabled|autoSessionTracking)["']?\s*[:=]\s*false\b`)
	monitorFile = mustRx(`(?i)sentry|crashlytics|bugsnag|rollbar|datadog|newrelic|telemetry|monitor|logging|observab|honeybadger|raygun|airbrake`)
)

// accessRulesOpened returns why a change to a rules file (Firebase's
// firestore.rules, storage.rules, database.rules.json) lets everyone
// write, or lets in more than the rule it replaces did, or "".
func accessRulesOpened(added, old string) string {
	plus, minus := diffLines(added, old)
	for _, l := range plus {
		if m := allowAlways.FindStringSubmatch(l); m != nil {
			ops := m[1] + m[2]
			if strings.Contains(ops, "write") || strings.Contains(ops, "create") || strings.Contains(ops, "update") || strings.Contains(ops, "delete") {
				return "the rules let anyone write (" + clipText(l, 60) + ")"
			}
			if len(minus) > 0 {
				return "the rules let anyone read where a condition stood (" + clipText(l, 60) + ")"
			}
		}
	}
	// a write that was refused (if false) now allowed on a condition
	refused := false
	for _, m := range minus {
		if g := allowLine.FindStringSubmatch(m); g != nil && strings.Contains(g[1], "write") && strings.TrimSpace(g[2]) == "false" {
			refused = true
		}
	}
	if refused {
		for _, l := range plus {
			if g := allowLine.FindStringSubmatch(l); g != nil && strings.Contains(g[1], "write") && strings.TrimSpace(g[2]) != "false" {
				return "the rules let callers write where writes were refused (" + clipText(l, 60) + ")"
			}
		}
	}
	return ""
}

// callerFromRequest returns why the change takes who the caller is (a
// user, an account, a tenant) from the request's own data where it came
// from its authentication, or "".
func callerFromRequest(plus, minus []string) string {
	fromAuth := false
	for _, m := range minus {
		if uidFromAuth.MatchString(m) {
			fromAuth = true
			break
		}
	}
	if !fromAuth {
		return ""
	}
	for _, l := range plus {
		if uidFromRequest.MatchString(l) {
			return "who the caller is comes from the request's data, not its authentication (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// eventDropped returns why an error reporter's filter now drops what it
// passed on (return event → return null), or the reporter is switched
// off where it is set up, or "".
func eventDropped(p string, plus, minus []string) string {
	for _, m := range minus {
		if !returnsEvent.MatchString(m) {
			continue
		}
		for _, l := range plus {
			if returnsNone.MatchString(l) {
				return "the event filter drops what it passed on (" + m + " → " + l + ")"
			}
		}
		break // one removed pass-on is enough to look for
	}
	if monitorFile.MatchString(path.Base(p)) {
		removed := setOf(minus...)
		for _, l := range plus {
			if monitorOff.MatchString(l) && !removed[l] {
				return "the error reporter is switched off where it is set up (" + clipText(l, 60) + ")"
			}
		}
	}
	return ""
}

// callRe is a switch set by a call: readonly(true), verify_ssl(false).
var callRe = mustRx(`\b([A-Za-z_]\w*)\(\s*(true|false)\s*\)`)

// callFlipped returns why a switch set by a call (fastlane's
// readonly(true)) is flipped to its weak side, or "".
func callFlipped(plus, minus []string) string {
	before := map[string]string{}
	for _, m := range minus {
		for _, c := range callRe.FindAllStringSubmatch(m, 8) {
			before[normKey(c[1])] = c[2]
		}
	}
	if len(before) == 0 {
		return ""
	}
	for _, l := range plus {
		for _, c := range callRe.FindAllStringSubmatch(l, 8) {
			k := normKey(c[1])
			was, ok := before[k]
			if !ok || was == c[2] {
				continue
			}
			if c[2] == "false" && (k == "readonly" || matchesAny(k, strongWhenOn)) || c[2] == "true" && matchesAny(k, weakWhenOn) {
				return "sets " + c[1] + " to " + c[2] + " (" + clipText(l, 60) + ")"
			}
		}
	}
	return ""
}

func matchesAny(k string, words []string) bool {
	for _, w := range words {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// afterParens returns what follows the balanced parentheses s starts
// with ("(a(b)) x" gives "x"), or "".
func afterParens(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return strings.TrimSpace(s[i+1:])
			}
		}
	}
	return ""
}

var (
	clauseWhen = mustRx(`^\S.*\bwhen\b.*(?:conn\.(?:method|request_path|path_info|host|query_string|params|req_headers|query_params)|\bparams\b|get_req_header).*->\s*(?:conn\s*)?$`)
	headPass   = mustRx(`\bdef\s+call\(\s*%(?:Plug\.Conn)?\{[^}]*\b(?:method|request_path|path_info|host)\b[^}]*\}\s*=\s*conn\b[^\n]*\bdo:\s*conn\s*$`)
	clauseDeny = mustRx(`\bhalt\b|\bsend_resp\b|\b40[13]\b|\braise\b|\bunauthori[sz]ed\b|\bforbidden\b`)
)

// clausePasses returns why an Elixir check (a plug, an auth module) gets
// a clause that returns the connection untouched on a condition the
// caller controls (its method, its path, a parameter), or "".
func clausePasses(p string, plus []string) string {
	if e := path.Ext(p); (e != ".ex" && e != ".exs") || !securityFile(p) && !strings.Contains(strings.ToLower(p), "plug") {
		return ""
	}
	for i, l := range plus {
		if strings.Contains(l, `"OPTIONS"`) {
			continue // a CORS preflight carries no credentials
		}
		if headPass.MatchString(l) {
			return "a clause lets requests through untouched on what the caller chooses (" + clipText(l, 80) + ")"
		}
		if !clauseWhen.MatchString(l) {
			continue
		}
		if next := i + 1; next < len(plus) && clauseDeny.MatchString(plus[next]) || clauseDeny.MatchString(l) {
			continue
		}
		return "a clause lets requests through untouched on what the caller chooses (" + clipText(l, 80) + ")"
	}
	return ""
}

var traversalCheck = mustRx(`["'\x60]\.\.["'\x60/\\]|["'\x60]\.\./|\\\.\\\.|\bParentDir\b|\bdotdot\b|["']\.\.\\\\`)

// traversalDropped returns why the change removes a check for "..",
// leaving nothing in its place, or "".
func traversalDropped(plus, minus []string) string {
	for _, m := range minus {
		if !traversalCheck.MatchString(m) {
			continue
		}
		for _, l := range plus {
			if ll := strings.ToLower(l); strings.Contains(l, "..") || sanitized.MatchString(l) || strings.Contains(ll, "normaliz") || strings.Contains(ll, "resolve") ||
				strings.Contains(ll, "safe") || strings.Contains(ll, "valid") || strings.Contains(ll, "check") || strings.Contains(ll, "assert") {
				return ""
			}
		}
		return "the check for \"..\" in a path is removed (" + clipText(m, 80) + ")"
	}
	return ""
}

var (
	serviceRole = mustRx(`(?i)service[_-]?role|SERVICE_KEY\b|\bserviceRoleKey\b`)
	callerRole  = mustRx(`(?i)\banon[_-]?key\b|\banonKey\b|\bAuthorization\b|\bPUBLISHABLE`)
)

// roleSwitched returns why a client that acted with the caller's rights
// (an anonymous key, the caller's Authorization header) now acts with a
// service role that row security does not bind, or "".
func roleSwitched(plus, minus []string) string {
	caller := false
	for _, m := range minus {
		if callerRole.MatchString(m) && !serviceRole.MatchString(m) {
			caller = true
			break
		}
	}
	if !caller {
		return ""
	}
	for _, l := range plus {
		if serviceRole.MatchString(l) {
			return "a client that acted with the caller's rights now uses the service role, which row security does not bind (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

var (
	boundWords = mustRx(`(?i)toleran|leeway|skew|max_?age|\bttl\b|expir|attempt|replay|window|construct_?event|signature|rate_?limit` +
		// rules 19: a guard that refuses past a limit (if (fee > 50) revert …; require(x <= MAX))
		`|\bif\s*\(?[^)\n]*[<>]=?\s*[\d_]+\)?\s*(?:revert|throw|raise|return\s+err|panic)\b|\brequire\s*\([^)\n]*[<>]=?\s*[\d_]+`)
	boundSkip = mustRx(`(?i)timeout|pool|page|batch|buffer|size|width|height|retries|iteration|rounds|cost|length|bits|entropy|\bmin`)
	numExpr   = mustRx(`\d[\d_]*(?:\.\d+)?(?:\s*\*\s*\d[\d_]*(?:\.\d+)?)*`)
)

// boundRaised returns why a line that bounds a security check (a
// signature's tolerance, a token's leeway, an attempts limit) has its
// number raised tenfold or more, the rest of the line unchanged, or "".
func boundRaised(p string, plus, minus []string) string {
	if len(minus) == 0 || len(minus) > 16 {
		return ""
	}
	sec := securityFile(p)
	for _, m := range minus {
		if !sec && !boundWords.MatchString(m) || boundSkip.MatchString(m) {
			continue
		}
		ms := numExpr.FindAllString(m, 8)
		skel := numExpr.ReplaceAllString(m, "#")
		for _, l := range plus {
			if numExpr.ReplaceAllString(l, "#") != skel {
				continue
			}
			ls := numExpr.FindAllString(l, 8)
			if len(ls) != len(ms) {
				continue
			}
			for i := range ms {
				a, b := evalProduct(ms[i]), evalProduct(ls[i])
				if a > 0 && b >= a*10 {
					return "a bound of a security check raised from " + strings.TrimSpace(ms[i]) + " to " + strings.TrimSpace(ls[i]) + " (" + clipText(l, 80) + ")"
				}
			}
		}
	}
	return ""
}

// evalProduct reads "300", "86_400 * 365" as a number (0 when not one).
func evalProduct(s string) float64 {
	out := 1.0
	for _, f := range strings.Split(s, "*") {
		v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(f), "_", ""), 64)
		if err != nil {
			return 0
		}
		out *= v
	}
	return out
}

var (
	sqlDefiner  = mustRx(`(?i)\bsecurity\s+definer\b`)
	sqlDynamic  = mustRx(`(?i)\bexecute\s+(?:format\s*\(|[a-z_]\w*\s*(?:;|\busing\b|\|\||$)|'[^']*'\s*\|\|)|\bexecute\s+format\s*\([^;]*%s`)
	sqlBuiltArg = mustRx(`(?i)\bexecute\s+format\s*\([^;]*%s|\bexecute\s+'[^']*'\s*\|\||\bexecute\s+[a-z_]\w*\s*(?:;|$)`)
	sqlGrant    = mustRx(`(?i)\bgrant\s+([^;]*?)\s+to\s+([^;]*)`)
	sqlPolicy   = mustRx(`(?i)\bcreate\s+policy\b[^;]*?(?:\busing\s*\(\s*true\s*\)|\bwith\s+check\s*\(\s*true\s*\))`)
	sqlPolicyRW = mustRx(`(?i)\bfor\s+(?:all|insert|update|delete)\b`)
	sqlPolicyRO = mustRx(`(?i)\bfor\s+select\b`)
	sqlRLSOff   = mustRx(`(?i)\bdisable\s+row\s+level\s+security\b|\bno\s+force\s+row\s+level\s+security\b|\brow_security\s*=\s*off\b`)
	sqlAuditOff = mustRx(`(?is)\b(?:server|database)\s+audit(?:\s+specification)?\b[^;]{0,400}?\bstate\s*=\s*off\b|\bpgaudit\.log\s*=\s*'?none\b|\baudit_trail\s*=\s*'?none\b`)
	sqlCron     = mustRx(`(?i)\bcron\.schedule\w*\s*\(`)
	sqlNet      = mustRx(`(?i)\bhttp_(?:post|get|put|patch|delete|request)\b|\bnet\.http_\w+|\bhttp\s*\(\s*\(|\bdblink\w*\(|\bcopy\b[^;]*\bprogram\b|\bpg_net\b|\bsys_exec\b`)
	sqlAccount  = mustRx(`(?i)\binsert\s+into\s+["\w.]*?\b(?:users|accounts|members|memberships|admins|api_tokens|api_keys|access_tokens|tokens|credentials|user_roles|auth\.users)\b[^;]*`)
	sqlAdmin    = mustRx(`(?i)'(?:admin|owner|superuser|superadmin|root|staff|service_role)'|\b(?:api_tokens|api_keys|access_tokens|tokens|credentials)\b|\bis_?admin\b[^;]*\btrue\b`)
)

// sqlOpened returns why SQL the change adds opens the database, or "".
func sqlOpened(plus, minus []string) string {
	text := strings.Join(plus, "\n")
	if len(text) > maxAppsecText {
		text = text[:maxAppsecText]
	}
	low := strings.ToLower(text)
	if strings.Contains(low, "execute") {
		if sqlDefiner.MatchString(text) && sqlDynamic.MatchString(text) {
			return "a function that runs SQL built from its arguments, with its owner's rights (security definer)"
		}
		if sqlBuiltArg.MatchString(text) {
			return "a function that runs SQL built from its arguments (" + clipText(sqlBuiltArg.FindString(text), 60) + ")"
		}
	}
	if strings.Contains(low, "grant") {
		for _, m := range sqlGrant.FindAllStringSubmatch(text, 16) {
			priv, to := strings.ToLower(m[1]), strings.ToLower(m[2])
			if strings.HasPrefix(strings.TrimSpace(priv), "usage on schema") {
				continue
			}
			for _, w := range strings.FieldsFunc(to, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == ';' }) {
				if w == "anon" || w == "public" {
					return "privileges granted to the " + w + " role, anyone who calls the database (" + clipText(m[0], 60) + ")"
				}
			}
		}
	}
	if strings.Contains(low, "policy") {
		for _, m := range sqlPolicy.FindAllString(text, 16) {
			if sqlPolicyRW.MatchString(m) || !sqlPolicyRO.MatchString(m) {
				return "a row policy that lets every caller write every row (" + clipText(m, 60) + ")"
			}
			if removedGuard := strings.ToLower(strings.Join(minus, "\n")); strings.Contains(removedGuard, "revoke") || strings.Contains(removedGuard, "policy") {
				return "a row policy that lets every caller read every row, where access was revoked (" + clipText(m, 60) + ")"
			}
		}
	}
	if m := sqlAuditOff.FindString(text); m != "" {
		return "a database audit switched off (" + clipText(m, 60) + ")"
	}
	if m := sqlRLSOff.FindString(text); m != "" {
		return "row security switched off (" + m + ")"
	}
	if sqlCron.MatchString(text) && sqlNet.MatchString(text) {
		return "a database job, scheduled to run for as long as the database does, that reaches the network (" + clipText(sqlNet.FindString(text), 40) + ")"
	}
	if m := sqlAccount.FindString(text); m != "" && sqlAdmin.MatchString(m) {
		return "an account or key written into the database (" + clipText(m, 60) + ")"
	}
	return ""
}
