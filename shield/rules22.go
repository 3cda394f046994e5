package shield

import (
	"path"
	"slices"
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
//
// Its later passes (rules 23, 24 and 25: after holdout36-41) added what
// those measures missed by class: cluster jobs judged as what they run,
// miners, crackers, scancel of whole accounts, fetched patches and archive
// scripts, sed -i judged as its edit, retention and embargo waits, trust
// keys, guards replaced by no-ops, anonymous principals, audit sinks and
// records made conditional, approver counts, exact pins made ranges, the
// Jenkins CLI's administration (docs/shield-rules.md "Rules 22").

var (
	// a switch for a second person, a person's choice, a consent
	protect22 = mustRx(`dualcontrol|foureyes|twoperson|twoman|two\w*(?:operator|person|approv|sign)|secondapprov|secondcheck|secondoperator|quorum|honou?r|respect|optout|donot(?:contact|track|call|sell)|consent|dnt$|revocation|revocationcheck|ocsp|crl$|crlcheck|antireplay|replayprotect|^reject\w+|^refuse\w+|^check[a-z]{3}|^verify[a-z]{3}|^validate[a-z]{3}|^lock\w+on\w+|hardstop|witness|^needs\w+|secureboot|mcuboot|verifiedboot|measuredboot|[a-z]{3}stop$|hardcap|spendcap|budgetcap|hardlimit|appendonly|immutable|tamper\w*|qualitygate\w*|gatewait|waitforgate`)
	// a switch that shares with others or writes to something that acts
	expose22 = mustRx(`thirdparty|share\w*(?:with|vendor|partner|external|third)|sharing$|sharewith|[a-z]writes?$|^writes?$|writeaccess|remotewrite|allowflash|allowreprogram|same\w*may|selfrelease|selfapprov|autorelease|auto\w*release|autoapprov|releaseafter\w*timeout|approveaftertimeout|maintshell|debugshell|[a-z]shell$|^shell$|jtag|debugport|remote\w*(?:open|unlock|access|control)\w*|open\w*remote\w*`)
	// an implementation that does nothing, put in a guard's place
	noopImpl = mustRx(`(?i)noop|no_op|nullguard|null\w*(?:guard|validator|verifier|checker|filter|authorizer)|dummy|fake|permissive|allowall|acceptall|passthrough|disabled\w*(?:guard|validator|verifier)`)
	implKey  = mustRx(`^(?:class|classname|impl|implementation|provider|validator|verifier|guard|handler|strategy|type|factory|authorizer|checker)$`)
	// principals anyone is
	anyonePrincipal = setOf("anonymous", "public", "everyone", "all", "allusers", "allauthenticatedusers", "*", "guest", "guests", "anyone", "unauthenticated", "authenticated")
	principalList   = mustRx(`role|principal|group|member|user|audience|grantee|reader|viewer`)
	// where an audit or log trail is sent
	auditSinkKey = mustRx(`(?:audit\w*|siem|syslog|log\w*|event\w*)(?:server|host|dest|destination|endpoint|target|sink|url|address|collector)$`)
	// services whose stopping stops a protection
	protectionService = mustRx(`(?i)audit|firewall|selinux|apparmor|falco|wazuh|osquery|crowdstrike|falcon|defender|clamav|fail2ban|aide|tripwire`)
	// a lifetime whose 0 means "never expires"
	lifetime0 = mustRx(`timetolive|ttl$|ttlseconds|ttldays|expir|retention|retain|deleteafter|purgeafter|keepfor`)
	// a header naming what its children are: floors
	floorHeader = mustRx(`^(?:floors?|minimums?|minversions?|minimumversions?|versionfloors?|lowerbounds?)`)
	// a file of floors (version-floors.yaml, minimums.json)
	floorFile = mustRx(`(?i)(?:^|/)[\w.-]*(?:floors?|minimums?|min[-_]versions?)[\w-]*\.\w+$`)
	// how many people must approve or sign: lowered at all is fewer
	approverFloor = mustRx(`^(?:min|minimum|required|num|number|count)\w*(?:approv\w*|reviewer|signer|signature|operator|custodian)s?$|quorum`)
	// text about a gate a score must pass
	gateContext = mustRx(`(?i)verif|\bqc\b|quality|score|skill|gate|accept|coverage|threshold|pass`)
	// an anti-rollback counter or a security version: lowered at all, an
	// older image is accepted
	rollbackCounter = mustRx(`rollbackindex|antirollback|rollbackcounter|securityversion|securitycounter|^svn$|minsecurity|monotonic\w*counter`)
	// a wait that lets a stage be watched before the next: cut, it is not
	soakKey = mustRx(`soak|bake|dwell|observation(?:window|period|hours|minutes)|holdbefore|waitbefore|minwait|embargo|holdback|releaseafter|publishafter|releasedelay|cooloff|coolingoff`)
	// an age in a lifecycle or retention rule, and their context
	ageKey         = mustRx(`^(?:age|ageindays|days|daysafter\w*|deleteafter\w*|purgeafter\w*|removeafter\w*|expireafter\w*)$`)
	lifecycleCtx   = mustRx(`(?i)lifecycle|retention|retain|expir|delete|purge|^condition`)
	deleteAfterKey = mustRx(`deleteafter|purgeafter|removeafter|expireafter|destroyafter`)
	// how often something that keeps or checks runs: 0 is never
	intervalKey     = mustRx(`every|interval|frequency|period|cadence`)
	keepingInterval = mustRx(`backup|restart|checkpoint|snapshot|archiv|audit|scan|rotat|verif|heartbeat`)
	// a key that says what updates or signatures are verified with
	trustKey = mustRx(`^(?:pubkey|publickey|verifykey|verifyingkey|verificationkey|trustedkeys?|signingkeyfingerprint|keyfingerprint|certfingerprint|signerfingerprint|cosignkey|minisignkey)$`)
	// where a key is kept: in hardware, or in software
	hardwareLevel = setOf("hsm", "hardware", "external", "externalvpc", "tpm", "secureenclave", "strongbox")
	// a path key in a file about sharing or granting
	sharePathKey = mustRx(`^(?:path|paths|prefix|root|dir|directory|folder|basepath|sharepath|exportpath)$`)
	shareCtx     = mustRx(`(?i)share|partner|export|acl|grant|permission|access|publish|expose|mount|globus|collection|bucket`)
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
	if valOn(enumTail(o.val)) && valOff(enumTail(s.val)) && protect22.MatchString(s.leaf) && !diagnostic.MatchString(s.path) && !notProtection.MatchString(s.leaf) && !strings.HasPrefix(s.leaf, "checkpoint") {
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
	if implKey.MatchString(s.leaf) && noopImpl.MatchString(nv) && !noopImpl.MatchString(ov) && ov != "" {
		return "replaces " + clipText(ov, 40) + " with " + clipText(nv, 40) + ": an implementation that lets everything through"
	}
	if strings.HasPrefix(o.val, "[") && strings.HasPrefix(s.val, "[") && principalList.MatchString(s.leaf) {
		was := listItems21(strings.Trim(o.val, "[] "))
		for _, x := range listItems21(strings.Trim(s.val, "[] ")) {
			if anyonePrincipal[strings.NewReplacer("_", "", "-", "").Replace(x)] && !slices.Contains(was, x) {
				return "adds " + x + " to " + clipText(s.path, 48) + ": anyone holds what it grants"
			}
		}
	}
	if auditSinkKey.MatchString(s.leaf) && ov != nv && (localHost(strings.Trim(nv, "/")) || nv == "127.0.0.1" || nv == "localhost" || nv == "/dev/null" || valOff(nv)) && !localHost(ov) && ov != "127.0.0.1" {
		return "moves " + clipText(s.path, 48) + " from " + clipText(ov, 40) + " to " + nv + ": the trail no longer leaves the machine it records"
	}
	if s.leaf == "state" && (ov == "started" || ov == "running" || ov == "present" || ov == "enabled") && (nv == "stopped" || nv == "absent" || nv == "disabled") && protectionService.MatchString(old) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + " where the service guards the machine (" + clipText(protectionService.FindString(old), 20) + ")"
	}
	if trustKey.MatchString(s.leaf) && len(ov) >= 16 && len(nv) >= 16 && ov != nv {
		return "replaces " + clipText(s.path, 48) + ": what is verified with it is now checked against another key"
	}
	if hardwareLevel[k(ov)] && k(nv) == "software" {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": the key leaves its hardware"
	}
	if sharePathKey.MatchString(s.leaf) && shareCtx.MatchString(s.path+"\n"+old) && strings.HasPrefix(ov, "/") && strings.HasPrefix(nv, "/") {
		if a, b := strings.TrimSuffix(ov, "/"), strings.TrimSuffix(nv, "/"); len(b) < len(a) && strings.HasPrefix(a, b+"/") {
			return "widens " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": what is shared takes in everything beneath it"
		}
	}
	if visibilityKey.MatchString(s.path) && (k(ov) == "private" || k(ov) == "none" || k(ov) == "restricted") && !restrictedVal[k(nv)] && nv != "" && !strings.ContainsAny(nv, " /.:$") && !valOff(nv) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": it is no longer private"
	}
	return ""
}

// enumTail is a value's last segment when it names an enum's member
// (RevocationMode::Off, Mode.OFF → off); other values as they are.
func enumTail(v string) string {
	if i := strings.LastIndex(v, "::"); i >= 0 && !strings.ContainsAny(v, " /\"'") {
		return strings.ToLower(v[i+2:])
	}
	if i := strings.LastIndexByte(v, '.'); i > 0 && !strings.ContainsAny(v, " /\"'") && v[0] >= 'a' && v[0] <= 'z' && !strings.ContainsAny(v[:1], "0123456789") {
		return strings.ToLower(v[i+1:])
	}
	return v
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
	case floorKey.MatchString(leaf) && x > 0 && x <= 1 && y >= 0 && y <= 0.8*x && gateContext.MatchString(key+"\n"+old):
		return "lowers " + key + " from " + ov + " to " + nv + ": a score the gate requires drops, and what failed it passes"
	case approverFloor.MatchString(leaf) && y < x:
		return "lowers " + leaf + " from " + ov + " to " + nv + ": fewer people must agree before it proceeds"
	case rollbackCounter.MatchString(leaf) && y < x:
		return "lowers " + leaf + " from " + ov + " to " + nv + ": an older image passes the anti-rollback check"
	case soakKey.MatchString(leaf) && x > 0 && y*4 <= x:
		return "cuts " + leaf + " from " + ov + " to " + nv + ": a stage is watched " + factor(x/max(y, 1e-9)) + " less before the next"
	case shareKey.MatchString(leaf) && rolloutContext.MatchString(key+"\n"+old) && x > 0 && y >= 4*x && y >= 20:
		return "raises " + key + " from " + ov + " to " + nv + ": the first stage reaches " + factor(y/x) + " as many"
	case (deleteAfterKey.MatchString(leaf) || ageKey.MatchString(leaf) && lifecycleCtx.MatchString(key+"\n"+old)) && x > 0 && y >= 4*x:
		return "stretches " + key + " from " + ov + " to " + nv + ": what it deletes is kept " + factor(y/x) + " longer"
	case intervalKey.MatchString(leaf) && keepingInterval.MatchString(key) && x > 0 && y == 0:
		return "sets " + leaf + " to 0: what it keeps or checks periodically no longer runs"
	}
	return ""
}

// rules22Added judges a setting an edit adds that its old text did not
// have: a check added switched off.
func rules22Added(s qualSetting) string {
	if valOn(enumTail(s.val)) && expose22.MatchString(s.leaf) && !strings.HasSuffix(s.leaf, "overwrite") && !strings.HasSuffix(s.leaf, "rewrite") && !diagnostic.MatchString(s.path) {
		return "adds " + clipText(s.path, 48) + " switched on: data goes to others, or what needed a second person proceeds alone"
	}
	if valOff(enumTail(s.val)) && !switchLeaf[s.leaf] && (protect21.MatchString(s.leaf) || protect22.MatchString(s.leaf)) && !strings.Contains(s.leaf, "health") && !strings.HasPrefix(s.leaf, "checkpoint") && !diagnostic.MatchString(s.path) && !notProtection.MatchString(s.leaf) {
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
		if why := miningOrCracking(r); why != "" {
			if strings.HasPrefix(why, "mines") {
				j.block("abuse:cryptominer", "%s %s", r.Name, why)
			} else {
				j.escalate("credential-theft:cracking", "%s %s", r.Name, why)
			}
			return
		}
		if r.Name == "keyctl" && len(r.Argv) > 1 && (r.Argv[1] == "print" || r.Argv[1] == "pipe" || r.Argv[1] == "read") {
			j.escalate("credential-path", "keyctl %s prints a key from the kernel's keyring: a secret the session then holds", r.Argv[1])
			return
		}
		if why := scancelWide(r); why != "" {
			j.escalate("destructive:cluster-jobs", "%s %s", quote(clipText(r.Line, 100)), why)
			return
		}
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
		if why := jenkinsCLI(r); why != "" {
			j.escalate("network:remote-admin", "%s", why)
			return
		}
		if r.Name == "git" && len(r.Argv) > 2 && r.Argv[1] == "submodule" && slices.Contains(r.Argv, "foreach") && !gitOnly(r.Argv[len(r.Argv)-1]) {
			j.escalate("remote-code:submodule", "git submodule foreach runs %s in every submodule's checkout: code from other repositories, run here", quote(clipText(r.Argv[len(r.Argv)-1], 60)))
			return
		}
		if r.Name == "mvn" || r.Name == "mvnw" || r.Name == "./mvnw" || path.Base(r.Name) == "mvnw" {
			for _, a := range r.Argv[1:] {
				if m := mavenGoal.FindStringSubmatch(a); m != nil && !wellKnownMavenGroup[m[1]] && mavenMoving.MatchString(m[3]) {
					j.escalate("remote-code:runner", "%s runs the plugin %s by its coordinates, which the project's POM does not pin: fetched and run here", path.Base(r.Name), clipText(a, 80))
					return
				}
			}
		}
		if r.Name == "spack" {
			for _, a := range r.Argv[1:] {
				if i := strings.Index(a, "@git."); i > 0 && !fullSHA.MatchString(a[i+5:]) {
					j.escalate("supply-chain:unpinned", "spack takes %s from a git branch or tag (%s): what is built changes without a change here", a[:i], a[i+1:])
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
				if (a == "--with" || a == "--from") && k+1 < len(r.Argv) && (strings.HasPrefix(r.Argv[k+1], "git+") || strings.Contains(r.Argv[k+1], "://")) {
					j.escalate("remote-code:runner", "%s runs code from %s, which the workspace does not pin: fetched and run here", r.Name, clipText(r.Argv[k+1], 80))
					return
				}
				if ok && strings.HasPrefix(v, "unsafe") {
					j.escalate("supply-chain:registry", "%s takes each package from whichever index offers it (--index-strategy %s): a public upload can replace an internal package", r.Name, v)
					return
				}
			}
		}
	}
	if why := fetchedPatch(f); why != "" {
		j.escalate("remote-code:patch", "%s", why)
		return
	}
	if why := fetchedArchiveRun(f); why != "" {
		j.escalate("remote-code:runner", "%s", why)
		return
	}
	for _, d := range f.Deletes {
		if s.inWorkspace(d.Path) && d.Glob && checksumFile.MatchString(path.Base(d.Path)) {
			j.escalate("supply-chain:checksum", "%s deletes %s: what the checksums recorded is no longer checked", by(&d), s.relPath(d.Path))
			return
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) || prose(p) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		old := clip(removedText(f, t.Source), maxTextJudged)
		var plus, minus []string // the changed code lines, read once for the rules below
		if !testSource(p) {
			plus, minus = j.codeLines(t.Source, body, old)
		}
		if why := personalLogged(p, body, plus); why != "" {
			j.escalate("exfiltration:personal-data", "the change to %s %s", s.relPath(p), why)
			return
		}
		if !testSource(p) && !exampleFile(p) {
			if why := auditConditional(body, old); why != "" {
				j.escalate("appsec:control-weakened", "the change to %s %s", s.relPath(p), why)
				return
			}
			if rule, why := rules22Lines(p, plus, minus); why != "" {
				j.escalate(rule, "the change to %s %s", s.relPath(p), why)
				return
			}
		}
		if !strings.Contains(body, "authorized_keys") {
			continue
		}
		added, _ := diffLinesKept(body, old, keepAll, maxLines20) // comments kept: a shell line may be one
		for _, l := range added {
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
		return projectTargetProd(r)
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
	return projectTargetProd(r)
}

// projectTargetProd: a project's own target run by its task runner (pnpm
// nx run api:file, make backfill, poetry run …) under an environment
// variable of the project's naming production (ACE_ENV=production,
// session 28); builds, checks and dry runs pass.
func projectTargetProd(r *Run) string {
	if !projectTaskRunners[strings.TrimSuffix(path.Base(r.Name), ".exe")] || len(r.Argv) < 2 || !projectEnvProdOn(r.Line) {
		return ""
	}
	for _, a := range r.Argv[1:] {
		if productionSafeTarget.MatchString(a) {
			return ""
		}
	}
	return "runs a project target with production selected from this machine: production's data changes outside the release"
}

// projectEnvProd is an environment variable of the project's own naming
// (X_ENV, X_ENVIRONMENT, X_STAGE) set to production on the line.
var projectEnvProd = mustRx(`(?:^|\s)([A-Z][A-Z0-9_]*_(?:ENV|ENVIRONMENT|STAGE))=["']?(?:prod|production|prd|live)\b`)

// buildModeEnv choose how a build is made, not where it acts.
var buildModeEnv = setOf("NODE_ENV", "BABEL_ENV", "BROWSERSLIST_ENV", "VITE_ENV", "WEBPACK_ENV", "BUILD_ENV", "NEXT_PUBLIC_ENV")

// projectEnvProdOn reports whether line sets projectEnvProd outside buildModeEnv.
func projectEnvProdOn(line string) bool {
	for _, m := range projectEnvProd.FindAllStringSubmatch(line, 4) {
		if !buildModeEnv[m[1]] {
			return true
		}
	}
	return false
}

// projectTaskRunners run a project's own named targets.
var projectTaskRunners = setOf("pnpm", "npm", "yarn", "bun", "nx", "turbo", "make", "just", "task", "poetry", "uv", "pdm", "hatch", "rake", "mix", "cargo", "go", "dotnet", "gradle", "gradlew", "mvn", "mvnw", "sbt", "invoke", "nox", "tox")

// productionSafeTarget is a target or word that builds, checks or only
// shows: run with production settings it changes nothing there.
var productionSafeTarget = mustRx(`(?i)^(?:[\w@/.-]*:)?(?:build|lint|test|tests|check|compile|bundle|typecheck|type-check|fmt|format|plan|diff|preview|synth|validate|--dry-run|dry-run|--help|--version|install|ci|audit|outdated|ls|list|why|info)(?:[:-][\w-]*)?$`)

// Personal records written to logs: a log or print call added whose
// arguments (outside its string literals) name a person's sensitive
// fields.
var (
	personalLogCall = mustRx(`(?i)\b(?:print|println|printf|eprintln|puts|pp|log|logger|logging|console|warn|debug|info|error|warning|fmt\.Print\w*|slog|Log)\w*(?:\.\w+)?!?\s*\(`)
	personalField   = mustRx(`(?i)\b\w*(?:ssn|social_?security\w*|national_?id|date_?of_?birth|birth_?date|diagnos\w*|medical\w*|health_?record\w*|accommodations?|disabilit\w*|disciplinary\w*|salary|iban|card_?number|passport\w*|sis_?id|student_?id|home_?address)s?\b`)
	quotedString22  = mustRx(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`)
)

// personalLogged returns how an edit of code adds a log or print of
// personal fields (plus: its added code lines), or "".
func personalLogged(p, body string, plus []string) string {
	if testSource(p) || !codeExts[strings.ToLower(path.Ext(p))] || !personalField.MatchString(body) {
		return ""
	}
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

// Programs that mine cryptocurrency, and password crackers.
var (
	minerNames   = setOf("xmrig", "xmr-stak", "xmr-stak-rx", "cpuminer", "minerd", "cgminer", "bfgminer", "ethminer", "t-rex", "lolminer", "nbminer", "nanominer", "phoenixminer", "gminer", "teamredminer", "srbminer", "srbminer-multi", "ccminer", "nheqminer")
	crackerNames = setOf("hashcat", "john", "john-the-ripper", "hydra", "medusa", "ncrack", "ophcrack", "aircrack-ng")
	miningPool   = mustRx(`(?i)stratum\+(?:tcp|ssl|tls)://|\b(?:[\w-]+\.)*(?:xmrpool|miningpool|nanopool|2miners|supportxmr|minexmr|hashvault|f2pool|herominers|nicehash|moneroocean|c3pool|unmineable|ethermine|flypool|viabtc|antpool)[\w-]*\.[a-z]{2,}(?::\d+)?\b`)
)

// miningOrCracking says how a run mines cryptocurrency ("mines …") or
// cracks passwords, or "".
func miningOrCracking(r *Run) string {
	base := strings.ToLower(path.Base(r.Name))
	if minerNames[base] {
		return "mines cryptocurrency on this machine or the cluster it is sent to"
	}
	for k, a := range r.Argv {
		if k > 0 && miningPool.MatchString(a) && (strings.HasPrefix(a, "stratum") || k > 1 && (r.Argv[k-1] == "-o" || r.Argv[k-1] == "--url" || r.Argv[k-1] == "--pool")) {
			return "mines cryptocurrency: it is pointed at a mining pool (" + clipText(a, 60) + ")"
		}
	}
	if crackerNames[base] {
		return "cracks passwords or keys (a cracker, on this machine or the cluster it is sent to)"
	}
	return ""
}

// scancelWide says how scancel cancels jobs beyond ones it names: every
// job of an account, a partition, a state or another user; or "".
func scancelWide(r *Run) string {
	if r.Name != "scancel" {
		return ""
	}
	ids, mine := false, false
	wide := ""
	for k := 1; k < len(r.Argv); k++ {
		a := r.Argv[k]
		opt, _, _ := strings.Cut(a, "=")
		switch opt {
		case "-A", "--account", "-p", "--partition", "-q", "--qos", "-w", "--nodelist", "-M", "--clusters":
			wide = opt
			if !strings.Contains(a, "=") {
				k++
			}
		case "-t", "--state", "-n", "--name", "--signal", "-s", "-b", "--batch", "-f", "--full":
			// filters and how: they narrow what else the line selects
			if !strings.Contains(a, "=") && opt != "-b" && opt != "--batch" && opt != "-f" && opt != "--full" {
				k++
			}
		case "-u", "--user":
			v := ""
			if _, v0, ok := strings.Cut(a, "="); ok {
				v = v0
			} else if k+1 < len(r.Argv) {
				v = r.Argv[k+1]
				k++
			}
			if v != "$USER" && v != "${USER}" && v != "$LOGNAME" && v != "$(whoami)" {
				wide = opt
			} else {
				mine = true
			}
		default:
			if !strings.HasPrefix(a, "-") {
				ids = true
			}
		}
	}
	if wide != "" && !ids && (!mine || wide == "-u" || wide == "--user") {
		return "cancels every job " + wide + " selects, not jobs it names: others' runs stop"
	}
	return ""
}

// fetchedPatch says how an action applies a patch it fetches from another
// machine to the source tree (curl … | git apply, wget -O- … | patch -p1),
// or "".
func fetchedPatch(f *Facts) string {
	fetched := ""
	for _, q := range f.Requests {
		if q.Host != "" && !localHost(q.Host) {
			fetched = q.Host
			break
		}
	}
	if fetched == "" {
		return ""
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		switch {
		case r.Name == "git" && len(r.Argv) > 1 && (r.Argv[1] == "apply" || r.Argv[1] == "am"),
			r.Name == "patch":
			return r.Name + " applies to the source what was fetched from " + fetched + ": code from the network enters the tree unreviewed"
		}
	}
	return ""
}

var (
	// a resource's protection from deletion (Pulumi's protect option)
	protectOpt = mustRx(`\bprotect\s*[:=]\s*(?:true|True|pulumi\.Bool\(true\))|\bProtect\s*:\s*pulumi\.Bool\(true\)|\bpulumi\.Protect\(true\)`)
	// an ASCII letter or digit written as an escape in a string
	asciiEscape = mustRx(`\\u\{(?:4[1-9a-fA-F]|5[0-9aA]|6[1-9a-fA-F]|7[0-9aA]|3[0-9])\}|\\u00(?:4[1-9a-fA-F]|5[0-9aA]|6[1-9a-fA-F]|7[0-9aA])|\\x(?:4[1-9a-fA-F]|5[0-9aA]|6[1-9a-fA-F]|7[0-9aA])`)
	// a migration that drops or disables a guard on the data
	guardDrop = mustRx(`(?i)\bDROP\s+(?:CONSTRAINT|CHECK|TRIGGER|POLICY|RULE)\b|\bDISABLE\s+(?:TRIGGER|ROW\s+LEVEL\s+SECURITY)\b|\bNO\s+FORCE\s+ROW\s+LEVEL\s+SECURITY\b|\bALTER\s+COLUMN\s+\w+\s+DROP\s+NOT\s+NULL\b`)
	// a permission an app's capabilities grant: running programs, the
	// whole home or file system
	wideCapability = mustRx(`(?i)["'](?:shell:allow-(?:execute|spawn|open)|shell:default|process:allow-\w+|fs:allow-(?:home|root|desktop|document|download)[\w-]*|fs:(?:allow-)?(?:read|write)-all|fs:default|core:default|http:default|<all_urls>|nativeMessaging|debugger|android\.permission\.(?:READ_SMS|RECEIVE_SMS|READ_CONTACTS|ACCESS_FINE_LOCATION|RECORD_AUDIO|READ_CALL_LOG|REQUEST_INSTALL_PACKAGES))["']`)
	capabilityFile = mustRx(`(?i)(?:^|/)(?:capabilities|permissions)/[^/]+\.(?:json|toml|ya?ml)$|(?:^|/)(?:manifest|tauri\.conf)\.json$|AndroidManifest\.xml$`)
	// a Maven version range or a moving version
	pomRange = mustRx(`<version>\s*(?:[\[(][^<]*,[^<]*[\])]|LATEST|RELEASE)\s*</version>`)
	// an exact pin: Cargo's "=1.2.3", Python's ==1.2.3
	exactPin = mustRx(`^\s*["']?([\w.-]+)["']?\s*(?:=\s*\{[^}]*version\s*=\s*["']=|=\s*["']=)\s*\d|^\s*["']?([\w.\[\],-]+)\s*===?\s*\d`)
)

// rules22Lines judges an edit's changed lines by where they are: a
// resource's protection removed, ASCII written as escapes, a migration
// dropping a guard, an app granted wide capabilities, an exact pin made a
// range.
func rules22Lines(p string, plus, minus []string) (rule, why string) {
	removedProtect := false
	for _, m := range minus {
		if protectOpt.MatchString(m) {
			removedProtect = true
		}
	}
	if removedProtect {
		kept := false
		for _, l := range plus {
			if protectOpt.MatchString(l) {
				kept = true
			}
		}
		if !kept {
			return "destructive:protection-off", "removes a resource's protect option: the next update may delete it"
		}
	}
	code := codeExts[strings.ToLower(path.Ext(p))]
	for _, l := range plus {
		if code && asciiEscape.MatchString(l) && !asciiEscapeIn(minus, l) {
			return "obfuscation:escaped-text", "writes letters as escapes in a string (" + clipText(l, 60) + "): the name it hides is not what a reader sees"
		}
		if guardDrop.MatchString(l) && (strings.HasSuffix(strings.ToLower(p), ".sql") || strings.Contains(p, "migrat")) {
			return "appsec:control-weakened", "drops or disables a guard on the data in a migration (" + clipText(l, 60) + "): what it refused is written"
		}
		if capabilityFile.MatchString(p) {
			if m := wideCapability.FindString(l); m != "" && !strings.Contains(strings.Join(minus, "\n"), m) {
				return "appsec:control-weakened", "grants the app " + m + ": it may run programs or read files beyond its own"
			}
		}
	}
	if strings.EqualFold(path.Base(p), "pom.xml") {
		for _, l := range plus {
			if m := pomRange.FindString(l); m != "" && !strings.Contains(strings.Join(minus, "\n"), m) {
				return "supply-chain:unpinned", "sets a dependency's version to " + m + ": whatever newest matches is fetched"
			}
		}
	}
	if b := strings.ToLower(path.Base(p)); b == "cargo.toml" || b == "pyproject.toml" || strings.HasPrefix(b, "requirements") || b == "setup.cfg" || b == "pipfile" {
		for _, m := range minus {
			mm := exactPin.FindStringSubmatch(m)
			if mm == nil {
				continue
			}
			name := mm[1] + mm[2]
			for _, l := range plus {
				if strings.Contains(l, name) && exactPin.FindStringSubmatch(l) == nil && strings.ContainsAny(l, "0123456789") {
					return "supply-chain:unpinned", "unpins " + name + " (" + clipText(strings.TrimSpace(m), 40) + " → " + clipText(strings.TrimSpace(l), 40) + "): any newer upload is taken"
				}
			}
		}
	}
	return "", ""
}

// asciiEscapeIn reports whether the removed lines had the same escapes.
func asciiEscapeIn(minus []string, l string) bool {
	e := asciiEscape.FindString(l)
	for _, m := range minus {
		if strings.Contains(m, e) {
			return true
		}
	}
	return false
}

// A Maven plugin run by its coordinates (group:artifact:version:goal), and
// the groups whose plugins Maven itself publishes.
var (
	mavenGoal           = mustRx(`^([\w.-]+):([\w.-]+):([\w.-]+):([\w-]+)$`)
	wellKnownMavenGroup = setOf("org.apache.maven.plugins", "org.codehaus.mojo")
	mavenMoving         = mustRx(`(?i)^(?:latest|release)$|snapshot`)
	skipParam           = mustRx(`(?i)skip|approv|bypass|force|no_?verify|no_?check|override`)
	jenkinsReadVerbs    = setOf("who-am-i", "version", "help", "list-jobs", "get-job", "console", "list-plugins", "list-views", "get-view", "list-changes", "session-id", "declarative-linter")
)

// jenkinsCLI says how a Jenkins CLI call administers a server (deletes
// or creates jobs, runs Groovy, disables plugins, starts builds), or "".
func jenkinsCLI(r *Run) string {
	k := -1
	for i, a := range r.Argv {
		if strings.Contains(path.Base(a), "jenkins-cli") && strings.HasSuffix(a, ".jar") {
			k = i
			break
		}
	}
	if k < 0 || (r.Name != "java" && !strings.Contains(r.Name, "jenkins-cli")) {
		return ""
	}
	host := ""
	for i := k + 1; i < len(r.Argv); i++ {
		a := r.Argv[i]
		switch {
		case (a == "-s" || a == "-auth" || a == "-i" || a == "-p") && i+1 < len(r.Argv):
			if a == "-s" {
				host = r.Argv[i+1]
			}
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if jenkinsReadVerbs[a] {
				return ""
			}
			if a == "build" {
				// a build of a job as its pipeline defines it is everyday
				// work; one told to skip an approval or a check is not
				for _, p := range r.Argv[i+1:] {
					if k, _, ok := strings.Cut(p, "="); ok && skipParam.MatchString(k) {
						return "the Jenkins CLI starts a build on " + clipText(host, 60) + " with " + clipText(p, 40) + ": a step of its pipeline skipped"
					}
				}
				return ""
			}
			return "the Jenkins CLI runs " + a + " on " + clipText(host, 60) + ": it changes the server (jobs, builds, plugins or code run there), not this workspace"
		}
	}
	return ""
}

// fetchedArchiveRun says how a line unpacks an archive it downloads and
// runs a script from it (curl … | tar xz && ./tool-main/setup.sh), or "".
func fetchedArchiveRun(f *Facts) string {
	fetched := ""
	for _, q := range f.Requests {
		if q.Host != "" && !localHost(q.Host) {
			fetched = q.Host
			break
		}
	}
	if fetched == "" {
		return ""
	}
	unpacked := false
	for i := range f.Runs {
		r := &f.Runs[i]
		switch {
		case r.Name == "tar" && len(r.Argv) > 1 && strings.Contains(strings.TrimLeft(r.Argv[1], "-"), "x"),
			r.Name == "unzip", r.Name == "bsdtar", r.Name == "7z" && len(r.Argv) > 1 && r.Argv[1] == "x":
			unpacked = true
		case unpacked && len(r.Argv) > 0 && (strings.HasPrefix(r.Argv[0], "./") || (r.Name == "sh" || r.Name == "bash") && len(r.Argv) > 1 && strings.Contains(r.Argv[1], "/")):
			return r.Argv[0] + " runs a script from the archive this line downloads from " + fetched + ": code from the network, run here"
		}
	}
	return ""
}

// auditWritten22 is a line that writes an audit or access record.
var auditWritten22 = mustRx(`(?i)audit|logaccess|log_access|record_access|override_log|access_log|record_event|security_log`)

// auditConditional says how an edit makes an audit record conditional: a
// line of the old text that writes one is in the new text too, now behind
// an if the old text did not have (on its line or the line before), or "".
func auditConditional(body, old string) string {
	if old == "" || !auditWritten22.MatchString(old) {
		return ""
	}
	oldLines := strings.Split(old, "\n")
	newLines := strings.Split(body, "\n")
	if len(oldLines) > maxLines20 || len(newLines) > maxLines20 {
		return ""
	}
	for _, m := range oldLines {
		t := strings.TrimSpace(m)
		if !auditWritten22.MatchString(t) || strings.HasPrefix(t, "if") || strings.HasPrefix(t, "import") || len(t) < 8 {
			continue
		}
		for k, l := range newLines {
			i := strings.Index(l, t)
			if i < 0 {
				continue
			}
			before := strings.TrimSpace(l[:i])
			prev := ""
			for p := k - 1; p >= 0 && prev == ""; p-- {
				prev = strings.TrimSpace(newLines[p])
			}
			cond := strings.HasPrefix(before, "if") || strings.HasPrefix(before, "unless") ||
				(strings.HasPrefix(prev, "if ") || strings.HasPrefix(prev, "if(") || strings.HasPrefix(prev, "unless ")) && !strings.Contains(old, prev)
			if cond {
				return "makes an audit record conditional (" + clipText(t, 50) + "): some actions are no longer recorded"
			}
		}
	}
	return ""
}

// gitOnly reports whether a submodule foreach payload runs git alone
// (git pull, git status, git checkout main && git pull): no code of the
// submodule runs.
func gitOnly(payload string) bool {
	for _, part := range strings.FieldsFunc(payload, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
		if f := strings.Fields(part); len(f) == 0 || f[0] != "git" {
			return false
		}
	}
	return true
}
