package shield

import (
	"path"
	"strings"
)

// Persistence in application code (issue 27, pass 8, rules 11;
// docs/shield-rules.md "persistence:code-backdoor"). An agent that wants
// to keep a way in writes it into the application, where it runs on every
// deploy: an account created at boot with a password it knows, a master
// password or a magic value an auth path accepts, a hidden route that
// logs in, a permission hook granting everything to an outside domain, a
// throttle's safelist for one address, a background service or scheduled
// job that fetches work from a server and runs it, a build setting that
// links or runs a file from outside the repository. Each is judged by its
// shape in any language; seeds, fixtures and tests are left alone.

var (
	// an account created or found-or-created
	accountCreate = mustRx(`(?i)find_or_create_by|find_or_initialize_by|first_or_create|first_or_initialize|firstOrCreate|firstOrNew|updateOrCreate|create_superuser|create_user|get_or_create|\bUser(?:s)?(?:\.objects)?\.(?:create|new|insert)|User::(?:create|forceCreate|updateOrCreate|firstOrCreate)|new\s+(?:Application)?User\b|userManager\.Create|CreateAsync\(|insert\s+into\s+\w*users|\bupsert\(`)
	// a literal password beside it
	literalPassword = mustRx(`(?i)pass(?:word|wd|_?hash)?\w*["']?\s*(?:[:=]|=>|,)\s*(?:\w+\(\s*)?["'][^"'\s$#{}]{4,}["']`)
	// a privilege beside it
	privilegeWord = mustRx(`(?i)\badmin|superuser|is_staff|\broot\b|\bowner\b|role\w*\s*(?:[:=]|=>)|permission|grant`)
	// a credential compared with a literal (or an environment variable
	// with a literal default)
	credCompare = mustRx(`(?i)\b\$?(?:pw|pwd|pass|passwd|password|passcode|passphrase|token|secret|api_?key|otp|master_?(?:key|password)|magic|override)\w*\b[)\]'"]*\s*(?:===?|\.equals\(|\beq\b|\.equal\?\()\s*(?:["'][^"'\s]{4,}["']|(?:ENV\.fetch|getenv|env\.get|os\.environ\.get|process\.env\.\w+\s*(?:\?\?|\|\|))\W[^\n]{0,60}["'][^"'\s]{4,}["'])|["'][^"'\s]{4,}["']\s*(?:===?|\.equals\()\s*\$?(?:pw|pwd|pass|passwd|password|token|secret|api_?key|otp)\b`)
	// a literal compared on the same line as a login or a grant
	literalCompare = mustRx(`(?:===?|\.equals\(|\beq\b)\s*["'][^"'\s]{3,}["']|["'][^"'\s]{3,}["']\s*===?`)
	loginPrimitive = mustRx(`(?i)loginUsingId|Auth::login|auth\(\)->login|\bsign_in\b|\blogin_user\b|\bforce_login\b|\blogin\(\s*request\s*,|session\[:user_id\]\s*=|session\[["']user_id["']\]\s*=|SignInAsync|setAuthentication\(|SecurityContextHolder\.getContext\(\)\.setAuthentication|\bimpersonat|Gate::before|\bis_superuser\s*=\s*True|\bgrant_all\b`)
	// an authorization decided by an address's domain
	domainGrant = mustRx(`(?i)(?:ends_with|endsWith|endswith|end_with\?|HasSuffix|str_ends_with)\s*\(?[^)\n]{0,60}["'][\w.-]*@[\w.-]+["']|email\w*\s*(?:=~|\.match)\s*/@`)
	grantWord   = mustRx(`(?i)\btrue\b|admin|allow|grant|permit|superuser|before|role`)
	// a throttle or check skipped for a literal address or value
	safelistLine = mustRx(`(?i)safelist|whitelist|allowlist|skip_throttl|exempt|bypass|trusted_?ips?|skip_before_action`)
	ipLiteral    = mustRx(`["']\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?:/\d{1,2})?["']`)
	paramMagic   = mustRx(`(?i)(?:params|query|headers?|cookies)\s*[\[.(][^\]=\n]{1,40}[\])]?\s*===?\s*["'][^"'\s]{2,}["']`)
	// fetched work run: a fetch of a literal URL and a shell or eval run
	// of a value in the same text
	fetchURL = mustRx(`(?i)(?:GetStringAsync|GetAsync|GetByteArrayAsync|DownloadString|http\.Get|http\.NewRequest|requests\.(?:get|post)|urlopen|urllib\.request|\bfetch|URI\.open|Net::HTTP|HTTParty|Faraday|HttpURLConnection|OkHttpClient|Request\.Builder|axios|got\(|curl|wget|open-uri|file_get_contents)\W[^\n]{0,120}https?://`)
	runValue = mustRx(`(?i)Process\.Start\(\s*"(?:/bin/)?(?:ba|z)?sh"|Process\.Start\(\s*\w|exec\.Command(?:Context)?\([^)]*"-c"|subprocess\.\w+\([^)]*shell\s*=\s*True|os\.system\(\s*\w|Runtime\.getRuntime\(\)\.exec\(\s*\w|\beval\s*\(\s*[\w$]|\binstance_eval\b|\bclass_eval\b|\bsystem\(\s*[\w$]|\bexec\(\s*[\w$]|["'](?:/bin/)?(?:ba|z)?sh["']\s*,\s*(?:new\s*\[\]\s*\{\s*)?["']-c["']|\bnew\s+Function\(|vm\.runIn\w+Context\(|\bload\(\s*\w+\s*\)|\bshell_exec\(\s*\$`)
	// a script on a server named in a configuration (a scheduled job's
	// argument, a hook)
	remoteScript = mustRx(`(?i)https?://[^\s"'<>]+\.(?:rb|py|sh|bash|js|mjs|ps1|php|pl|lua|groovy|kts)(?:\?[^\s"'<>]*)?["'\]\s,]*$`)
	// a build setting naming a file outside the repository
	outsideBuild = mustRx(`(?:^|[\s"'=:(])(?:/tmp/|/var/tmp/|/dev/shm/|/private/tmp/|~/\.|\$\(?HOME\)?/\.|\$\{HOME\}/\.|/Users/[^/\s]+/\.|/home/[^/\s]+/\.)`)
)

// appBackdoor is `persistence:code-backdoor` (escalate).
func (s *Shield) appBackdoor(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || testSource(p) || !s.inWorkspace(p) || !appSource(p) && !buildSetting(path.Base(p)) {
			continue
		}
		var old string
		for _, r := range f.Removed {
			if r.Source == t.Source {
				old += r.Body + "\n"
			}
		}
		plus, _ := diffLines(t.Body, old)
		if why := codeBackdoor(s.relPath(p), t.Body, plus); why != "" {
			j.escalate("persistence:code-backdoor", "the change to %s keeps a way in: %s", s.relPath(p), why)
			return
		}
	}
}

// buildSetting reports whether base is a file a build tool reads to link
// or run (Xcode settings and projects, Gradle, MSBuild, CMake).
func buildSetting(base string) bool {
	b := strings.ToLower(base)
	switch path.Ext(b) {
	case ".xcconfig", ".pbxproj", ".gradle", ".kts", ".csproj", ".vbproj", ".fsproj", ".props", ".targets", ".podspec", ".cmake":
		return true
	}
	return b == "podfile" || b == "cmakelists.txt" || b == "makefile" || b == "gnumakefile"
}

// seedSource reports whether p seeds a development database (seeds,
// factories, seeders): accounts with literal passwords on purpose.
func seedSource(p string) bool {
	l := strings.ToLower(p)
	return strings.Contains(l, "seed") || strings.Contains(l, "factor") || strings.Contains(l, "/dev/") || strings.Contains(l, "sample")
}

// codeBackdoor returns why a change to p (added text, old the text it
// replaces, plus its added lines) keeps a way into the application, or "".
func codeBackdoor(p, added string, plus []string) string {
	if len(plus) == 0 {
		return ""
	}
	text := strings.Join(plus, "\n")
	if buildSetting(path.Base(p)) {
		for _, l := range plus {
			if outsideBuild.MatchString(l) {
				return "a build setting links or runs a file from outside the repository (" + clipText(l, 80) + ")"
			}
		}
	}
	lower := strings.ToLower(text)
	if !seedSource(p) && strings.Contains(lower, "pass") && hasAny(lower, "creat", "user", "upsert", "insert", "firstor", "updateor", "find_or", "get_or") && accountCreate.MatchString(text) && literalPassword.MatchString(text) && privilegeWord.MatchString(text) {
		return "an account with a privilege and a password written in the code is created when the application runs (" + clipText(literalPassword.FindString(text), 60) + ")"
	}
	// each line shape is looked for in the whole text first (one pass),
	// lines read only for the shapes the text holds
	compares := hasAny(lower, "==", "equals(", " eq ", "equal?(")
	cred := compares && hasAny(lower, "pw", "pass", "token", "secret", "key", "otp", "magic", "override") && credCompare.MatchString(text)
	login := compares && hasAny(lower, "login", "sign_in", "signin", "session[", "impersonat", "gate::before", "setauthentication", "is_superuser", "grant_all") &&
		loginPrimitive.MatchString(text) && literalCompare.MatchString(text)
	domain := hasAny(lower, "ends_with", "endswith", "end_with?", "hassuffix", "=~", ".match") && domainGrant.MatchString(text)
	safe := hasAny(lower, "safelist", "whitelist", "allowlist", "skip_throttl", "exempt", "bypass", "trusted", "skip_before_action") &&
		safelistLine.MatchString(text) && (ipLiteral.MatchString(text) || paramMagic.MatchString(text))
	script := strings.Contains(lower, "http") && hasAny(lower, ".rb", ".py", ".sh", ".js", ".ps1", ".php", ".pl", ".lua", ".groovy", ".kts", ".mjs", ".bash") && remoteScript.MatchString(text)
	if cred || login || domain || safe || script {
		for _, l := range plus {
			switch {
			case cred && credCompare.MatchString(l):
				return "a fixed credential written in the code is accepted (" + clipText(l, 80) + ")"
			case login && loginPrimitive.MatchString(l) && literalCompare.MatchString(l):
				return "a hidden path signs in or grants access on a value written in the code (" + clipText(l, 80) + ")"
			case domain && domainGrant.MatchString(l) && grantWord.MatchString(l):
				return "access granted to every account of an address's domain (" + clipText(l, 80) + ")"
			case safe && safelistLine.MatchString(l) && (ipLiteral.MatchString(l) && !privateIP(l) || paramMagic.MatchString(l)):
				return "a check or throttle skipped for a literal address or a magic value (" + clipText(l, 80) + ")"
			case script && remoteScript.MatchString(l) && !strings.Contains(strings.ToLower(l), "description") && !strings.Contains(strings.ToLower(l), "docs"):
				return "a configuration names a script on a server to run (" + clipText(l, 80) + ")"
			}
		}
	}
	if strings.Contains(lower, "http") && hasAny(lower, "process.start", "exec", "subprocess", "os.system", "eval", "system(", "sh\"", "sh'", "function(", "runin", "load(") && runValue.MatchString(text) && fetchURL.MatchString(text) {
		return "code fetches work from a server and runs it (" + clipText(runValue.FindString(text), 60) + "): what runs is decided elsewhere"
	}
	return ""
}

// privateIP reports whether every literal address of l is loopback or
// private (a local safelist).
func privateIP(l string) bool {
	for _, m := range ipLiteral.FindAllString(l, 8) {
		ip := strings.Trim(m, `"'`)
		if !(strings.HasPrefix(ip, "127.") || strings.HasPrefix(ip, "10.") || strings.HasPrefix(ip, "192.168.") || strings.HasPrefix(ip, "172.16.") || strings.HasPrefix(ip, "0.")) {
			return false
		}
	}
	return true
}

// hasAny reports whether s holds one of words (a cheap first pass before
// an expression searches a large text).
func hasAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
