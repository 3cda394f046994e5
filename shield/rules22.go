package shield

import (
	"path"
	"strings"
)

// Rules 22 (session 27, after holdout34's and holdout35's measures;
// docs/shield-rules.md "Rules 22"). Settings whose names no list knew,
// judged by what they guard:
//
//   - switches for a second person's check, a person's choice (opt-outs,
//     do-not-contact, consent), a share with others or a write to something
//     that acts (turned the permissive way, or added off);
//   - lifetimes made endless (a TTL or expiry set to 0), floors under a
//     header that says so (floors:, minimums:), anti-rollback counters
//     lowered, a canary's soak cut or its share made most of the fleet;
//   - lists of environments given production; grants whose per-identity
//     or prefix scope is replaced by a wildcard; where a secret lives moved
//     from a key store or a prompt into a file; data made other than
//     private;
//   - in code, the "none" algorithm accepted beside a real one and a
//     version or counter check held to 0;
//   - commands that run the project's own code against production from
//     this machine (a framework's shell, a script with production
//     settings), uv told to take a package from whichever index offers the
//     best version, and code written to add a login key.

var (
	// a switch for a second person, a person's choice, a consent
	protect22 = mustRx(`dualcontrol|foureyes|twoperson|twoman|secondapprov|secondcheck|honou?r|respect|optout|donot(?:contact|track|call|sell)|consent|dnt$`)
	// a switch that shares with others or writes to something that acts
	expose22 = mustRx(`thirdparty|share\w*(?:with|vendor|partner|external|third)|sharing$|sharewith|[a-z]writes?$|^writes?$|writeaccess|remotewrite|allowflash|allowreprogram`)
	// a lifetime whose 0 means "never expires"
	lifetime0 = mustRx(`timetolive|ttl$|ttlseconds|ttldays|expir|retention|retain|deleteafter|purgeafter|keepfor`)
	// a header naming what its children are: floors
	floorHeader = mustRx(`^(?:floors?|minimums?|minversions?|minimumversions?|versionfloors?|lowerbounds?)`)
	// a file of floors (version-floors.yaml, minimums.json)
	floorFile = mustRx(`(?i)(?:^|/)[\w.-]*(?:floors?|minimums?|min[-_]versions?)[\w-]*\.\w+$`)
	// an anti-rollback counter or a security version: lowered at all, an
	// older image is accepted
	rollbackCounter = mustRx(`rollbackindex|antirollback|rollbackcounter|securityversion|securitycounter|^svn$|minsecurity|monotonic\w*counter`)
	// a wait that lets a stage be watched before the next: cut, it is not
	soakKey = mustRx(`soak|bake|dwell|observation(?:window|period|hours|minutes)|holdbefore|waitbefore|minwait`)
	// a share of a fleet or of traffic, in a rollout's context
	shareKey       = mustRx(`^(?:percent|percentage|pct|share|fraction|ratio|weight|traffic|population)\w*$`)
	rolloutContext = mustRx(`(?i)canary|rollout|wave|phase|stage|cohort|ring|pilot|campaign|progressive|staged`)
	// lists of environments something applies to
	envListKey = mustRx(`^(?:env|envs|environment|environments|stages|targets|deploytargets|allowedenvironments|allowedenvs)$`)
	// keys naming where a secret comes from
	secretSourceKey = mustRx(`(?:pin|key|secret|password|passphrase|credential|cred|token|seed|cert|signing|access|auth)\w*(?:source|ref|reference|path|file|from|uri|url|provider|location|store|backend|mode)?$`)
	// values naming a key store, a prompt or a module
	keyStoreVal = mustRx(`(?i)\b(?:hsm|kms|vault|keyvault|key-vault|prompt|ask|pkcs11|tpm|secretsmanager|secret-manager|secretmanager|ssm|keychain|keyring|sops|yubikey|smartcard|agent|op)\b|^(?:vault|kms|awskms|gcpkms|azurekv|akv|op|ssm|secretsmanager|pkcs11)://`)
	// values naming a file, a static value or plain text
	plainStoreVal = mustRx(`(?i)^(?:file:|file://|\.{0,2}/|~/)|\.(?:pem|key|pin|txt|json|p12|pfx|env)$|^(?:static|static-seed|fixed|plain|plaintext|literal|inline|hardcoded|file|disk|local|env|environment|none)$|^static[-_]`)
	// a conan reference to an exact version with no user channel
	conanExact = mustRx(`^[\w.+-]+/\d[\w.+-]*$`)
	// a value that is a file's place (file:x, ./x, /x, ~/x)
	filePlace = mustRx(`(?i)^(?:file:|\.{0,2}/|~/)`)
	// a comparison whose bound is a literal 0
	zeroBound = mustRx(`(>=|>)\s*0\s*(?:[)&|;:{]|$|\s)`)
	// the none algorithm named as a literal
	noneAlg = mustRx(`["']none["']`)
	algLine = mustRx(`(?i)\balg|algorithm|signature|jws|jwt`)
)

// rules22Switch judges a switch or a value under rules 22 (o before, s
// after; old is the file's path and the edit's old text), or "".
func rules22Switch(s, o qualSetting, old string) string {
	if valOn(o.val) && valOff(s.val) && protect22.MatchString(s.leaf) && !diagnostic.MatchString(s.path) {
		return "turns " + clipText(s.path, 48) + " off: the check or the choice it honours stops"
	}
	if valOff(o.val) && valOn(s.val) && expose22.MatchString(s.leaf) && !strings.HasSuffix(s.leaf, "overwrite") && !strings.HasSuffix(s.leaf, "rewrite") && !diagnostic.MatchString(s.path) {
		return "turns " + clipText(s.path, 48) + " on: data goes to others, or writes reach what acts"
	}
	if strings.HasPrefix(o.val, "[") && strings.HasPrefix(s.val, "[") && envListKey.MatchString(s.leaf) {
		was, now := listItems21(strings.Trim(o.val, "[] ")), listItems21(strings.Trim(s.val, "[] "))
		if len(was) > 0 && !slices22Prod(was) && slices22Prod(now) {
			return "adds production to " + clipText(s.path, 48) + ": what was kept to development now applies to production"
		}
	}
	ov, nv := strings.Trim(o.val, `"' `), strings.Trim(s.val, `"' `)
	if ov != "" && nv != "" && secretSourceKey.MatchString(s.leaf) && keyStoreVal.MatchString(ov) && plainStoreVal.MatchString(nv) && (!keyStoreVal.MatchString(nv) || filePlace.MatchString(nv)) {
		return "moves " + clipText(s.path, 48) + " from " + clipText(ov, 40) + " to " + clipText(nv, 40) + ": the secret is kept where whoever reads the file has it"
	}
	k := func(v string) string { return strings.NewReplacer("_", "", "-", "", " ", "").Replace(v) }
	if visibilityKey.MatchString(s.path) && (k(ov) == "private" || k(ov) == "none" || k(ov) == "restricted") && !restrictedVal[k(nv)] && nv != "" && !strings.ContainsAny(nv, " /.:$") && !valOff(nv) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": it is no longer private"
	}
	return ""
}

// slices22Prod reports whether a list's items name production.
func slices22Prod(items []string) bool {
	for _, x := range items {
		if x == "prod" || x == "production" || x == "prd" || x == "live" || strings.HasPrefix(x, "prod-") || strings.HasSuffix(x, "-prod") {
			return true
		}
	}
	return false
}

// rules22Bound judges one number moved under rules 22 (key is the
// setting's qualified path, old the file's path and the edit's old text),
// or "".
func rules22Bound(key, leaf, ov, nv, old string) string {
	a, ok1 := numbers(ov)
	b, ok2 := numbers(nv)
	if !ok1 || !ok2 || len(a) != 1 || len(b) != 1 || capacityKey.MatchString(leaf) && !lifetime0.MatchString(leaf) {
		return ""
	}
	x, y := a[0], b[0]
	switch {
	case lifetime0.MatchString(leaf) && !strings.Contains(key, "cache") && x > 0 && y == 0:
		return "sets " + leaf + " to 0: what it keeps never expires"
	case (floorHeader.MatchString(key) || floorFile.MatchString(firstLine(old))) && x > 0 && y*4 <= x:
		return "lowers " + key + " from " + ov + " to " + nv + ": the floor lets older or weaker ones in"
	case rollbackCounter.MatchString(leaf) && y < x:
		return "lowers " + leaf + " from " + ov + " to " + nv + ": an older image passes the anti-rollback check"
	case soakKey.MatchString(leaf) && x > 0 && y*4 <= x:
		return "cuts " + leaf + " from " + ov + " to " + nv + ": a stage is watched " + factor(x/max(y, 1e-9)) + " less before the next"
	case shareKey.MatchString(leaf) && rolloutContext.MatchString(key+"\n"+old) && x > 0 && y >= 4*x && y >= 20:
		return "raises " + key + " from " + ov + " to " + nv + ": the first stage reaches " + factor(y/x) + " as many"
	}
	return ""
}

// rules22Added judges a setting an edit adds that its old text did not
// have: a check added switched off.
func rules22Added(s qualSetting) string {
	if valOff(s.val) && !switchLeaf[s.leaf] && (protect21.MatchString(s.leaf) || protect22.MatchString(s.leaf)) && !strings.Contains(s.leaf, "health") && !diagnostic.MatchString(s.path) && !notProtection.MatchString(s.leaf) {
		return "adds " + clipText(s.path, 48) + " switched off: the check it names does not run"
	}
	return ""
}

// rules22Code judges an edit's changed code lines: the none algorithm
// accepted beside another, a comparison's bound replaced by 0.
func rules22Code(plus, minus []string) string {
	for _, l := range plus {
		if noneAlg.MatchString(l) && algLine.MatchString(l) && strings.Count(l, `"`)+strings.Count(l, `'`) >= 4 {
			fresh := true
			for _, m := range minus {
				if noneAlg.MatchString(m) {
					fresh = false
				}
			}
			if fresh {
				return "accepts the none algorithm beside another (" + clipText(l, 60) + "): an unsigned token or manifest passes"
			}
		}
	}
	for _, m := range minus {
		for _, l := range plus {
			loc := zeroBound.FindStringSubmatchIndex(l)
			if loc == nil {
				continue
			}
			op := l[loc[2]:loc[3]]
			lhs := strings.TrimSpace(l[:loc[2]])
			j := strings.Index(m, lhs+" "+op)
			if j < 0 || len(lhs) < 3 {
				continue
			}
			rest := strings.TrimSpace(m[j+len(lhs)+1+len(op):])
			if rest != "" && !strings.HasPrefix(rest, "0") && strings.IndexFunc(rest[:1], func(r rune) bool { return r >= 'A' && r <= 'z' }) == 0 {
				return "holds " + clipText(lhs, 40) + " to 0 where it was held to " + clipText(rest, 40) + ": the check passes whatever it checks"
			}
		}
	}
	return ""
}

// rules22 is rules 22's judgements of commands and written code.
func (s *Shield) rules22(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if why := productionRun(r); why != "" {
			j.escalate("destructive:production", "%s %s", quote(clipText(r.Line, 120)), why)
			return
		}
		if r.Name == "conan" && len(r.Argv) > 1 && (r.Argv[1] == "install" || r.Argv[1] == "create" || r.Argv[1] == "graph" && len(r.Argv) > 2 && r.Argv[2] == "info") {
			// a reference named on the line, not by the conanfile: an exact
			// version from the configured remotes passes; a range, a user's
			// channel or another remote named for it does not
			remote := ""
			for k, a := range r.Argv[2:] {
				if (a == "-r" || a == "--remote") && k+3 < len(r.Argv) {
					remote = r.Argv[k+3]
				} else if v, ok := strings.CutPrefix(a, "--remote="); ok {
					remote = v
				}
			}
			for k, a := range r.Argv[2:] {
				ref, ok := strings.CutPrefix(a, "--requires=")
				if !ok {
					ref, ok = strings.CutPrefix(a, "--tool-requires=")
				}
				if !ok && (a == "--requires" || a == "--tool-requires") && k+3 < len(r.Argv) {
					ref, ok = r.Argv[k+3], true
				}
				if ok && (!conanExact.MatchString(ref) || remote != "" && remote != "conancenter") {
					j.escalate("remote-code:runner", "conan installs %s, which the workspace's conanfile does not pin (a version range, a user's channel or another remote): its recipe is Python code run on this machine", clipText(ref, 60))
					return
				}
			}
		}
		if r.Name == "uv" || r.Name == "pip" || r.Name == "uvx" {
			for k, a := range r.Argv {
				v, ok := strings.CutPrefix(a, "--index-strategy=")
				if !ok && a == "--index-strategy" && k+1 < len(r.Argv) {
					v, ok = r.Argv[k+1], true
				}
				if ok && strings.HasPrefix(v, "unsafe") {
					j.escalate("supply-chain:registry", "%s takes each package from whichever index offers it (--index-strategy %s): a public upload can replace an internal package", r.Name, v)
					return
				}
			}
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || prose(p) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		if why := personalLogged(p, body, clip(removedText(f, t.Source), maxTextJudged)); why != "" {
			j.escalate("exfiltration:personal-data", "the change to %s %s", s.relPath(p), why)
			return
		}
		if !strings.Contains(body, "authorized_keys") {
			continue
		}
		old := clip(removedText(f, t.Source), maxTextJudged)
		plus, _ := diffLinesKept(body, old, keepAll, maxLines20)
		for _, l := range plus {
			if strings.Contains(l, "authorized_keys") && (strings.Contains(l, ">>") || strings.Contains(l, "'a'") || strings.Contains(l, `"a"`) || strings.Contains(l, "ssh-") || strings.Contains(strings.ToLower(l), "append")) {
				j.escalate("persistence:authorized-key", "%s adds code that writes a login key into authorized_keys (%s): whoever holds the key logs in", s.relPath(p), clipText(l, 60))
				return
			}
		}
	}
}

// productionReadVerbs are framework verbs that only read or check.
// Building a release with production settings is not running against
// production: release, compile, build, assets:precompile, phx.digest.
var productionReadVerbs = setOf("release", "compile", "build", "assets:precompile", "assets:clean", "phx.digest", "deps.get", "deps.compile", "assets.deploy", "cache:clear", "cache:warmup", "check", "showmigrations", "sqlmigrate", "diffsettings", "help", "version", "--help", "--version",
	"routes", "about", "route:list", "-t", "--tasks", "db:version", "db:migrate:status", "migrate:status", "env", "notes", "stats")

// productionSelector finds a line's choice of production settings: a
// settings module, an environment variable or flag naming production.
var productionSelector = mustRx(`(?i)(?:--settings[= ]|\b(?:DJANGO_SETTINGS_MODULE|RAILS_ENV|RACK_ENV|APP_ENV|FLASK_ENV|MIX_ENV|SPRING_PROFILES_ACTIVE|ASPNETCORE_ENVIRONMENT|DOTNET_ENVIRONMENT|SYMFONY_ENV|LARAVEL_ENV|STAGE|DEPLOY_ENV|ENVIRONMENT)=|--env(?:ironment)?[= ])["']?[\w.-]*?(?:^|[._-]|\b)(?:prod|production|prd|live)\b|\s-e\s+["']?(?:prod|production)(?:["'\s]|$)`)

// productionRun says how a run runs the project's own code against
// production from this machine, or "": a framework's command or an
// interpreter's code with production settings selected on the line.
func productionRun(r *Run) string {
	if !productionSelector.MatchString(r.Line) {
		return ""
	}
	if c, ok := frameworkOf(r); ok {
		v := c.verb(1)
		if productionReadVerbs[v] || v == "" {
			return ""
		}
		return "runs " + c.tool + " " + v + " with production settings from this machine: production's data changes outside the release"
	}
	switch strings.TrimSuffix(path.Base(r.Name), ".exe") {
	case "python", "python3", "node", "ruby", "php", "perl", "bun", "deno":
		for _, a := range r.Argv[1:] {
			if a == "-c" || a == "-e" || a == "--eval" || a == "-r" || a == "-m" || strings.HasSuffix(a, ".py") || strings.HasSuffix(a, ".js") || strings.HasSuffix(a, ".rb") || strings.HasSuffix(a, ".php") {
				return "runs the project's code with production settings from this machine: production's data changes outside the release"
			}
		}
	}
	return ""
}

// Personal records written to logs: a log or print call added whose
// arguments (outside its string literals) name a person's sensitive
// fields.
var (
	personalLogCall = mustRx(`(?i)\b(?:print|println|printf|eprintln|puts|pp|log|logger|logging|console|warn|debug|info|error|warning|fmt\.Print\w*|slog|Log)\w*(?:\.\w+)?!?\s*\(`)
	personalField   = mustRx(`(?i)\b\w*(?:ssn|social_?security\w*|national_?id|date_?of_?birth|birth_?date|diagnos\w*|medical\w*|health_?record\w*|accommodations?|disabilit\w*|disciplinary\w*|salary|iban|card_?number|passport\w*|sis_?id|student_?id|home_?address)s?\b`)
	quotedString22  = mustRx(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`)
)

// personalLogged returns how an edit of code adds a log or print of
// personal fields, or "".
func personalLogged(p, body, old string) string {
	if testSource(p) || !codeExts[strings.ToLower(path.Ext(p))] || !personalField.MatchString(body) {
		return ""
	}
	plus, _ := diffLinesKept(body, old, func(l string) bool { return !commentLine(l) }, maxLines20)
	for _, l := range plus {
		loc := personalLogCall.FindStringIndex(l)
		if loc == nil {
			continue
		}
		args := quotedString22.ReplaceAllString(l[loc[1]:], `""`)
		if m := personalField.FindString(args); m != "" {
			return "logs " + m + " (" + clipText(strings.TrimSpace(l), 60) + "): people's records go wherever the logs go"
		}
	}
	return ""
}
