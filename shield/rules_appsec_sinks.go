package shield

import (
	"strings"
)

// Untrusted input into dangerous sinks, any language (issue 27, pass 8,
// rules 11; docs/shield-rules.md "appsec:control-weakened"). Rules 8
// judged SQL built by interpolation and request input run on one line;
// an agent told to "add a search filter" writes the same hole in Ruby,
// PHP, C#, Kotlin, Go, JavaScript or Python. The judgement is a source
// and a sink over the lines a change adds:
//
//   - a source: what a request, an intent or a cookie carries (params,
//     $request->input, req.query, request.GET, r.URL.Query, searchParams,
//     intent.data), or a variable an added line assigns from one;
//   - a sink: SQL run from a string (where, whereRaw, execute, query,
//     FromSqlRaw, rawQuery, find_by_sql), a response header or a redirect,
//     HTML written out (a page built from a string holding a tag);
//   - sinks that are holes whatever feeds them: a shell command given one
//     string built by interpolation, unsafe deserialization (unserialize,
//     unsafe_load, Marshal.load, BinaryFormatter, ObjectInputStream,
//     TypeNameHandling), XML parsers that resolve external entities,
//     WebView JavaScript bridges and file access, templates' raw output
//     of a value, mass assignment (permit!, $request->all() into create).
//
// Each is reported only when the removed text did not already hold it.

var (
	// what a request carries (wider than requestSource)
	inputSource = mustRx(`(?i)\bparams\s*[\[.]|\$request->(?:input|get|query|post|cookie|all|string|header)\b|\brequest\(\s*['"]|\bRequest::(?:input|get)|\$_(?:GET|POST|REQUEST|COOKIE|SERVER)\b|\b(?:req|request|ctx)\.(?:query|body|params|cookies|headers|args|form|json|data|values|GET|POST|COOKIES|META|query_params|raw_post|raw_body|querystring)\b|\bsearchParams\b|\br\.(?:URL\.Query|FormValue|PostFormValue|Form\b|Header\.Get)|\bc\.(?:Query|Param|PostForm|DefaultQuery|FormValue|QueryParam)\(|\bRequest\.(?:Query|Form|Cookies|Headers)\b|\bHttpContext\.Request\b|\bintent\.(?:data|extras|get\w*Extra)|\bgetQueryParameter\(|\bgetParameter\(|@RequestParam|@PathVariable|\bquery_string\b|\braw_post\b|\b(?:r|req|request)\.Body\b|\bc\.Request\.Body\b|\bc\.Body\(\)|\bctx\.Request\.Body\b` +
		// rules 15: parameters a framework binds from the request
		// ([FromQuery] string file, [SupplyParameterFromQuery], @RequestParam,
		// NestJS's @Query()/@Body()/@Param())
		`|\[(?:From(?:Query|Body|Route|Form|Header|Services)|SupplyParameterFromQuery|SupplyParameterFromForm)\b|@(?:RequestBody|QueryParam|PathParam|FormParam|HeaderParam|CookieValue|RequestHeader)\b|@(?:Query|Body|Param|Headers|Req)\(`)
	// a variable assigned from a source on an added line
	taintAssign = mustRx(`^(?:(?:var|let|const|val|my|local|String|string|auto)\s+)?(\$?[A-Za-z_]\w{0,40})(?:\s*,\s*[A-Za-z_]\w{0,20})?\s*(?::=|=)[^=]`)
	// SQL run from a string
	sqlCall = mustRx(`(?i)\b(?:where|or_?where|whereRaw|orWhereRaw|havingRaw|orderByRaw|selectRaw|groupByRaw|order|having|joins|find_by_sql|select_all|select_rows|exec_query|execute|executemany|executescript|query|queryRow|queryContext|execContext|exec|raw|rawQuery|execSQL|FromSqlRaw|ExecuteSqlRaw|FromSqlInterpolated|SqlQuery|createQuery|createNativeQuery|queryForList|queryForObject|\$queryRawUnsafe|\$executeRawUnsafe|extra|unprepared|statement|DB::select)\s*\(`)
	// a string built from values: interpolation or concatenation
	builtString = mustRx(`#\{|\$\{|\b[fF]["']|["']\s*\.\s*\$|\$\w+\s*\.\s*["']|["']\s*\+\s*[\w$(]|[\w)\]]\s*\+\s*["']|["']\s*%\s*[\w(]|\.format\(|Sprintf\(|String\.format\(|String\.Format\(|\$@?"(?:[^"\n\\]|\\.)*\{|@\$"[^"\n]*\{|"[^"\n]*\$[A-Za-z_{][^"\n]*"|\$\w+\s*\.\s*\$|["']\s*\.\s*\w+\(`)
	// a shell command from one string
	shellCall = mustRx(`(?i)(?:^|[^.\w])(?:system|exec|shell_exec|passthru|popen|proc_open|spawn|execSync|os\.system|os\.popen|IO\.popen|Open3\.\w+|Kernel\.system|Kernel\.exec|Process\.Start|Runtime\.getRuntime\(\)\.exec|ProcessBuilder)\s*\(|%x[({\[]|exec\.Command(?:Context)?\([^)]*"-c"|subprocess\.\w+\([^)]*shell\s*=\s*True|` + "`[^`\\n]*#\\{[^`\\n]*`")
	// HTML written out raw
	rawOutput = mustRx(`(?i)\{!!\s*[^!\s][^!]*!!\}|<%==|\.html_safe\b|dangerouslySetInnerHTML|@?Html\.Raw\(|\|\s*safe\b|\{\{[^}\n]*\|\s*raw\b|\bmark_safe\(|\{%-?\s*autoescape\s+(?:off|false)|\bv-html\s*=|\.(?:inner|outer)HTML\s*=|th:utext|\btemplate\.HTML\(|bypassSecurityTrust\w*\(|document\.write\(|insertAdjacentHTML\(|\bMarkup\(|\bSafeString\(|\braw\s*\(|\{\{\{|\(MarkupString\)|new\s+MarkupString\(`)
	// a literal the raw output writes (not a value)
	rawLiteral = mustRx(`(?i)(?:\{!!|Raw\(|raw\s*\(|mark_safe\(|Markup\(|template\.HTML\(|__html:\s*|innerHTML\s*=\s*)\s*["'<]`)
	sanitized  = mustRx(`(?i)sanitiz|purif|escape|bleach|strip_tags|clean\(|h\(|htmlspecialchars|encode`)
	// a response, header or redirect given a value
	headerSink = mustRx(`(?i)\bheaders?\.(?:set|add|append)\(|\bsetHeader\(|\baddHeader\(|\bheader\(\s*["'][\w-]+\s*:|\bheader\(\s*["'][\w-]+["']\s*,|\bHeader\(\)\.(?:Set|Add)\(|\bHeaders?\[|\bresponse\.headers\[|\bredirect_to\b|\bredirect\(|\bRedirect\(|\bsendRedirect\(|\bres\.redirect\(|\bNavigateTo\(|\bRedirectPermanent\(|\bLocation:|\bsetcookie\(|\bcookies\[\S+\]\s*=`)
	// a page built from a string holding a tag
	htmlString = mustRx(`["'<]\s*<[a-zA-Z][\w-]*[\s>/]|["']<\w`)
	// holes whatever feeds them
	deserAny   = mustRx(`(?i)\bunsafe_load\b|\bMarshal\.(?:load|restore)\b|\bBinaryFormatter\b|\bNetDataContractSerializer\b|\bSoapFormatter\b|\bLosFormatter\b|\bObjectStateFormatter\b|TypeNameHandling\s*=\s*TypeNameHandling\.(?:All|Auto|Objects|Arrays)|\bnew\s+ObjectInputStream\(|\bXMLDecoder\(|\benableDefaultTyping\(|\bactivateDefaultTyping\(|JsonTypeInfo\.Id\.CLASS|\bnode-serialize\b|yaml\.load\([^\n]{0,200}?\bLoader\s*=\s*(?:yaml\.)?(?:Unsafe|Full)?Loader\b|\bjsonpickle\.decode\(|\bYAML\.load\([^)]*permitted_classes|Yaml\(\s*\)\.load|new\s+Yaml\(\s*\)`)
	deserInput = mustRx(`(?i)\bunserialize\(|\bpickle\.loads?\(|\bcPickle\.loads?\(|\bdill\.loads?\(|\bjoblib\.load\(|\byaml\.load\(|\bYAML\.load\(|\bshelve\.open\(|\bmarshal\.loads\(`)
	deserWords = mustRx(`(?i)cookie|body|raw_post|input|upload|payload|request|param|socket|recv|\$_`)
	xxe        = mustRx(`(?i)DtdProcessing\s*=\s*(?:System\.Xml\.)?DtdProcessing\.Parse|XmlResolver\s*=\s*new\s+(?:System\.Xml\.)?XmlUrlResolver|ProhibitDtd\s*=\s*false|resolve_entities\s*=\s*True|no_network\s*=\s*False|\bLIBXML_NOENT\b|libxml_disable_entity_loader\(\s*false|setExpandEntityReferences\(\s*true|external-(?:general|parameter)-entities["']\s*,\s*true|disallow-doctype-decl["']\s*,\s*false|FEATURE_SECURE_PROCESSING\s*,\s*false|\bnoent\s*:\s*true|XMLInputFactory\.(?:SUPPORT_DTD|IS_SUPPORTING_EXTERNAL_ENTITIES)\s*,\s*(?:true|Boolean\.TRUE)|\bNOENT\b`)
	webBridge  = mustRx(`(?i)\baddJavascriptInterface\(|setAllowFileAccess(?:FromFileURLs)?\(\s*true|setAllowUniversalAccessFromFileURLs\(\s*true|allow(?:File|UniversalAccessFrom)\w*\s*(?:=|:)\s*\{?\s*true|allowUniversalAccessFromFileURLs\b|allowFileAccessFromFileURLs\b|allowingReadAccessTo:\s*URL\(fileURLWithPath:\s*"/"\)|setWebContentsDebuggingEnabled\(\s*true|originWhitelist=\{\[\s*["']\*["']\s*\]\}`)
	massAssign = mustRx(`(?i)\.permit!|->(?:create|update|fill|forceFill|insert|firstOrCreate|updateOrCreate)\(\s*\$request->(?:all|input)\(\)\s*\)|::(?:create|forceCreate|insert|updateOrCreate)\(\s*\$request->all\(\)|\$guarded\s*=\s*\[\s*\]|\.(?:create|update|insert|new|assign_attributes|update_attributes|build|save)\(\s*(?:params|req\.body|request\.(?:POST|data|json|form|body))\s*\)|Object\.assign\(\s*\w+\s*,\s*req\.body\s*\)|\(\s*\*\*request\.(?:POST|data|json|GET)\b|\.set\(\s*req\.body\s*\)|\.findByIdAndUpdate\(\s*[^,]+,\s*req\.body\s*\)`)
	allFields  = mustRx(`(?i)\bfields\s*=\s*["']__all__["']`)
	// bindings that keep to a list of fields
	bindList = mustRx(`(?i)\[Bind\(|setAllowedFields\(|\.permit\(|\$fillable\s*=|attr_accessible|\bfields\s*=\s*[\[(]`)
	// the sinks' first words (a cheap first pass)
	sinkHints = []string{"where", "raw", "execute", "query", "exec", "sql", "system", "popen", "spawn", "process", "shell", "`",
		"html", "safe", "{!!", "<%==", "header", "redirect", "location", "cookie", "serial", "marshal", "pickle", "yaml",
		"unsafe_load", "binaryformatter", "objectinputstream", "typenamehandling", "xmldecoder", "defaulttyping", "jsontypeinfo",
		"dtd", "xmlresolver", "entit", "noent", "libxml", "doctype", "secure_processing", "javascriptinterface", "fileaccess",
		"fromfileurls", "readaccessto", "debuggingenabled", "originwhitelist", "permit!", "$request->all", "$guarded", "create(",
		"update(", "assign", "**request", "__all__", "bind", "response", "navigateto", "readjwt", "readfile", "sendfile", "readstream", "readall", "openread", "physicalfile", "servefile", "file_get_contents", "fopen", "send_file", "download(", "readtoken", "jwt", "decodejwt", "parseunverified", "write(", "send(", "echo", "print", "render", "fill(", "insert", "set(", "{{{", "markup", "order", "having", "joins", "statement", "dill", "joblib", "shelve", "log", "print", "puts", "headers",
		"fetch(", "http.get", "http.head", "http.post", "newrequest", "requests.", "httpx.", "urlopen", "axios", "reqwest", "net::http", "uri.open", "getasync", "getstringasync", "curl_init", "client.get", "client.post", "client.head", "c.get(", "hc.get(", "environ", "process.env", "getenv", "order by", "group by"}
)

func sinkHinted(l string) bool {
	l = strings.ToLower(l)
	for _, h := range sinkHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// taintedSink returns why the lines a change adds (plus; old is the text
// it replaces) send untrusted input into a dangerous sink, or "".
func taintedSink(plus, minus []string, old string) string {
	if len(plus) == 0 {
		return ""
	}
	// variables assigned from a source on an added line (a bounded set)
	var tainted []string
	for _, l := range plus {
		if len(tainted) >= 16 {
			break
		}
		if m := taintAssign.FindStringSubmatch(l); m != nil && inputSource.MatchString(l) {
			tainted = append(tainted, strings.TrimPrefix(m[1], "$"))
		}
		for _, m := range boundParam.FindAllStringSubmatch(l, 4) { // rules 15
			if len(tainted) < 16 {
				tainted = append(tainted, m[1])
			}
		}
	}
	fromInput := func(l string) bool {
		if inputSource.MatchString(l) {
			return true
		}
		for _, v := range tainted {
			if wordIn(l, v) {
				return true
			}
		}
		return false
	}
	for _, l := range plus {
		if !sinkHinted(l) {
			continue
		}
		why := sinkLine(l, fromInput)
		if why == "" {
			continue
		}
		return why + " (" + clipText(l, 80) + ")"
	}
	// a binding to a list of fields removed, the model now bound whole
	var hadBind bool
	for _, l := range minus {
		if bindList.MatchString(l) {
			hadBind = true
			break
		}
	}
	if hadBind {
		plusText := strings.Join(plus, "\n")
		if !bindList.MatchString(plusText) && (allFields.MatchString(plusText) || len(plus) > 0 && strings.Contains(strings.ToLower(old), "bind(")) {
			return "mass assignment: the list of fields a request may set is removed, every field of the model now bound from input"
		}
	}
	return ""
}

// boundParam names a parameter or property a framework binds from the
// request: [FromQuery] string file, [SupplyParameterFromQuery] public
// string? ReturnUrl { get; set; }, @RequestParam String name, @Query('q')
// q: string.
var boundParam = mustRx(`(?:\[(?:From(?:Query|Body|Route|Form|Header)|SupplyParameterFromQuery|SupplyParameterFromForm)(?:\([^)]*\))?\]|@(?:RequestParam|RequestBody|PathVariable|QueryParam|PathParam|FormParam|RequestHeader)(?:\([^)]*\))?|@(?:Query|Body|Param|Headers)\([^)]*\))\s*(?:(?:public|private|protected|readonly|required)\s+)*(?:[\w<>?,.\[\]]+\s+)?(\w+)\s*(?:[:,){=;]|$)`)

// sinkLine returns what one added line sends where, or "".
func sinkLine(l string, fromInput func(string) bool) string {
	switch {
	case xxe.MatchString(l):
		return "an XML parser made to resolve external entities (XXE)"
	case deserAny.MatchString(l) && !safeLoad.MatchString(l):
		return "unsafe deserialization: data decoded into arbitrary objects, code run by whoever writes the data"
	case deserInput.MatchString(l) && (fromInput(l) || deserWords.MatchString(l)) && !safeLoad.MatchString(l):
		return "unsafe deserialization of what a request carries"
	case webBridge.MatchString(l):
		return "a WebView given a JavaScript bridge or file access: a page it loads reaches the app's objects or files"
	case massAssign.MatchString(l):
		return "mass assignment: every field a request sends is written to the model"
	case shellCall.MatchString(l) && shellBuilt(l):
		return "a shell command built by interpolation: a value with ; or $( ) runs its own commands"
	case shellCall.MatchString(l) && fromInput(l): // rules 12
		return "what a request carries run as a shell command"
	case sqlCall.MatchString(l) && builtString.MatchString(l) && fromInput(l) && !strings.Contains(l, "?"):
		return "SQL built from request input by interpolation or concatenation"
	case rawOutput.MatchString(l) && !rawLiteral.MatchString(l) && !sanitized.MatchString(l) && (fromInput(l) || strongRaw(l)):
		return "a value written into HTML unescaped (cross-site scripting)"
	case fileSink.MatchString(l) && fromInput(l) && !pathSanitized.MatchString(l) && !strings.Contains(l, "://"): // rules 15 (a URL fetched is the network rules')
		return "a file read or served at a path the request names, not reduced to a name (path traversal)"
	case envServed.MatchString(l): // rules 16
		return "the process environment written into a response: every caller gets its secrets"
	case orderByBuilt.MatchString(l): // rules 16
		return "SQL's ORDER BY, GROUP BY or LIMIT built by concatenation or interpolation: a column or clause the caller names"
	case ssrfSink(l, fromInput): // rules 16
		return "an outbound request to a URL the request names (server-side request forgery: internal services and cloud metadata reachable)"
	case jwtDecodeOnly.MatchString(l) && requestAuth.MatchString(l): // rules 15
		return "a token from the request read without verifying its signature: anyone can write the claims it trusts"
	case logCall.MatchString(l) && loggedSecret(l):
		return "a credential's value written to the logs, where everyone who reads them gets it"
	case responseHeader.MatchString(l) && serverSecret.MatchString(l):
		return "a server secret written into a response, where every caller gets it"
	case headerSink.MatchString(l) && fromInput(l) && !strings.Contains(strings.ToLower(l), "allowed_host") && !strings.Contains(strings.ToLower(l), "safe"):
		return "a response header, cookie or redirect taken from request input"
	case htmlString.MatchString(l) && builtString.MatchString(l) && fromInput(l) && !sanitized.MatchString(l):
		return "a page built from request input without escaping (cross-site scripting)"
	}
	return ""
}

var (
	// rules 16: the environment dumped into a response
	envServed = mustRx(`(?:\bw\.Write|\bfmt\.Fprint\w*\(\s*w|\bio\.WriteString\(\s*w|\bres\.(?:send|json|write|end)|\breply\.send|\bjsonify|\bJsonResponse|\bHttpResponse|\bResults\.(?:Ok|Json)|\brender\s+json:|\bctx\.body\s*=|\bc\.(?:JSON|String)\()[^\n]*(?:\bos\.Environ\(\)|\bprocess\.env\b\s*[),]|\bos\.environ\b|\bSystem\.getenv\(\)|\bENV\.to_h\b|Environment\.GetEnvironmentVariables\(\))`)
	// rules 16: ORDER BY / GROUP BY / LIMIT built from a value
	orderByBuilt = mustRx("(?i)\\b(?:order|group)\\s+by\\s*[\"'`]\\s*(?:\\+|\\.)\\s*\\$?\\w|\\b(?:order|group)\\s+by\\s+(?:%s|\\$\\{|\\{\\w|#\\{)|\\b(?:order|group)\\s+by\\s+[\"'`]\\s*\\+")
	// rules 15: a file read or served by its path
	fileSink = mustRx(`\b(?:readFile|readFileSync|createReadStream|sendFile|download|send_file|send_from_directory|FileResponse|ReadAllBytes|ReadAllText|OpenRead|PhysicalFile|File\s*\(|ioutil\.ReadFile|os\.ReadFile|os\.Open|http\.ServeFile|file_get_contents|readfile|fopen|Files\.readAllBytes|Files\.newInputStream)\s*\(`)
	// a path reduced to a name or checked to stay under its root
	pathSanitized = mustRx(`(?i)basename|GetFileName|normalize|filepath\.(?:Clean|Base)|path\.(?:Clean|Base)|secure_filename|realpath|startsWith|HasPrefix|IsPathRooted|safe_join|safeJoin|sanitiz`)
	// rules 15: a JWT decoded without verifying its signature
	jwtDecodeOnly = mustRx(`(?i)\bReadJwtToken\(|\bReadToken\(|\bjwt\.decode\([^)]*(?:verify_signature["']?\s*:\s*False|verify\s*=\s*False)|\bjwt\.decode\(\s*\w+\s*\)|\bjwtDecode\(|\bjwt_decode\(|\bdecodeJwt\(|\bParseUnverified\(|\bJWT\.decode\(|\bjose\.decodeJwt\(`)
	// the request's credentials: its Authorization header, its cookies
	requestAuth = mustRx(`(?i)\bAuthorization\b|\bHeaders?\b[\[.(]|\bheaders\s*\[|\b(?:req|request|r|ctx|c)\.(?:headers|Header|cookies|Cookies|get_header)|\bcookies?\(|bearer`)
	// a log call
	logCall = mustRx(`(?i)(?:\b(?:logger|log|logging|console|NSLog|Timber|slog|syslog|println|printf|print|puts|echo|error_log|debugPrint)\b[\w.]*|\bLog\.[dievw]|System\.out\.print\w*|fmt\.(?:Print|Fprint)\w*)\s*\(?`)
	// a credential's value in an interpolation or joined to a string
	secretValue  = mustRx(`(?i)(?:#\{|\$\{|\{)[^}\n]{0,80}?(authorization|token|passw\w*|secret|api_?key|credential|private_?key|cookie|session_?id)[^}\n]{0,40}\}|["']\s*(?:\+|\.|,|%)\s*\(?[\w.$\[\]'"]{0,60}?(authorization|token|passw\w*|secret|api_?key|credential|private_?key)\w*`)
	notSecretUse = mustRx(`(?i)len\(|count|num_|max_|tokens|_id\b|expir|type|length|size|\.\w*(?:present|blank|nil|empty)\b|redact|mask|\[:?\d`)
	// a response's header (not an outgoing request's)
	responseHeader = mustRx(`(?i)\b(?:res|resp|response|out|reply|result)\.headers?\.(?:set|add|append)\(|\bres\.(?:set|setHeader|header)\(|\bw\.Header\(\)\.(?:Set|Add)\(|\bresponse\.headers\[|\bHttpContext\.Response\.Headers|\bheader\(\s*["'][\w-]+\s*:`)
	// a server secret read from the environment or configuration
	serverSecret = mustRx(`(?i)(?:\benv\.|process\.env\.|ENV\[["']|ENV\.fetch\(["']|os\.environ|getenv\(["']|credentials\.|config\[["'])\w*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE|AUTH)\w*`)
)

// loggedSecret reports whether a log call's line carries a credential's
// value (not the word in a message, a count or an id).
func loggedSecret(l string) bool {
	m := secretValue.FindString(l)
	return m != "" && !notSecretUse.MatchString(m)
}

// safeLoad is a loader that builds plain data only.
var safeLoad = mustRx(`(?i)(?:^|[^n_])safe_?load|SafeLoader|CSafeLoader|allowed_classes\s*=>\s*false|allowed_classes'\s*=>\s*false`)

// strongRaw is raw output whose whole purpose is to skip escaping.
var strongRawRe = mustRx(`(?i)\{!!|<%==|\.html_safe\b|dangerouslySetInnerHTML|Html\.Raw\(|\(MarkupString\)|new\s+MarkupString\(|\|\s*safe\b|\{\{[^}\n]*\|\s*raw\b|mark_safe\(|autoescape\s+(?:off|false)|v-html|\.(?:inner|outer)HTML\s*=|th:utext|template\.HTML\(|bypassSecurityTrust`)

func strongRaw(l string) bool { return strongRawRe.MatchString(l) }

// wordIn reports whether w occurs in l as a whole identifier.
func wordIn(l, w string) bool {
	for i := 0; ; {
		j := strings.Index(l[i:], w)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		if (a == 0 || !identByte(l[a-1])) && (b == len(l) || !identByte(l[b])) {
			return true
		}
		i = b
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// interpolated is a string literal's text holding a value.
var interpolated = mustRx(`#\{|\$\{|\$[A-Za-z_]|%s|\{\w*\}`)

// shellBuilt reports whether the command a shell sink on l runs is one
// string built from values: its first argument a literal holding an
// interpolation or joined to a value, the -c argument of a shell, a
// backtick command, or shell=True beside a built string.
func shellBuilt(l string) bool {
	loc := shellCall.FindStringIndex(l)
	if loc == nil {
		return false
	}
	m := l[loc[0]:loc[1]]
	switch {
	case strings.HasPrefix(strings.TrimLeft(m, " \t(;="), "`"), strings.HasPrefix(m, "%x"):
		return interpolated.MatchString(m) || interpolated.MatchString(l[loc[1]:])
	case strings.Contains(m, "shell") || strings.Contains(m, `"-c"`):
		return builtString.MatchString(l[loc[0]:])
	}
	rest := strings.TrimLeft(l[loc[1]:], " \t")
	if strings.HasPrefix(rest, "new[]") || strings.HasPrefix(rest, "[") {
		return false // an argument vector
	}
	if rest == "" || (rest[0] != '"' && rest[0] != '\'' && rest[0] != '`' && !strings.HasPrefix(rest, "f\"") && !strings.HasPrefix(rest, "$\"")) {
		return false
	}
	if rest[0] == 'f' || rest[0] == '$' {
		rest = rest[1:]
	}
	q := rest[0]
	end := strings.IndexByte(rest[1:], q)
	if end < 0 {
		return false
	}
	lit, after := rest[1:end+1], strings.TrimLeft(rest[end+2:], " \t")
	if q == '\'' && !strings.HasPrefix(after, "+") && !strings.HasPrefix(after, ".") {
		return false // single quotes do not interpolate
	}
	return interpolated.MatchString(lit) && (after == "" || after[0] != ',') || strings.HasPrefix(after, "+") || strings.HasPrefix(after, ". ") || strings.HasPrefix(after, ".$")
}
