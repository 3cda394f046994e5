package shield

import (
	"path"
	"strings"
)

// Security settings in more file kinds (rules 12, issue 27 ninth pass;
// docs/shield-rules.md "appsec:control-weakened", "(rules 12)"). The
// concept mechanism of rules 10 and 11 reads key = value settings; these
// kinds spell a setting otherwise, and each is read into the same
// settings and judged by concept:
//
//   - Kconfig fragments and defconfigs (prj.conf, sdkconfig.defaults,
//     *_defconfig, .config): CONFIG_X=y|n, "# CONFIG_X is not set" as off,
//     and a choice moved between siblings (…_MODE_RELEASE=y replaced by
//     …_MODE_DEVELOPMENT=y, …_CONSOLE_NONE=y by another console);
//   - C and C++ defines (#define NAME VALUE) and compiler defines in
//     build flags (-DNAME, -DNAME=VALUE: an added -DX_PROTECT_DISABLE);
//   - "key value" lines of tool configuration (bindto 0.0.0.0) and VDF or
//     similar quoted pairs ("Key" "Value");
//   - code that configures a sandbox (a Lua, JavaScript or Python
//     environment table): a dangerous capability handed in (os, io, load,
//     require, process, __import__), a library given whole where a subset
//     was, a sandbox preset widened, its budget removed.
//
// Concepts: a protection (secure boot, stack protection, downgrade or
// rollback prevention, signature verification, encryption, pairing,
// integrity) turned off; a debug or management access (JTAG, serial
// recovery, a shell, factory test commands, device management, a switch
// that allows HTTP, unsigned or downgraded images) turned on; a security
// level lowered; a scanning or checking interval made twenty times
// longer; an https address replaced by plain http; grants widened (read to
// write, a root or admin policy), workloads moved from a container to the
// host; a release channel promoted from internal to public; an exclusion
// of secrets or debug symbols dropped from what ships, or what ships
// widened to a parent directory.

var (
	kconfigUnset = mustRx(`^#\s*([A-Z][A-Z0-9_]{2,80}) is not set$`)
	kconfigLine  = mustRx(`^([A-Z][A-Z0-9_]{2,80})=(.{0,200})$`)
	cDefine      = mustRx(`^#\s*define\s+([A-Za-z_]\w{0,80})\s+([^\s/][^/]{0,120}?)\s*(?://.*|/\*.*)?$`)
	buildDefine  = mustRx(`(?:^|[\s"'=,\[(])-D([A-Za-z_]\w{0,80})(?:=([^\s"',\])]{1,80}))?`)
	spacedKV     = mustRx(`^([a-z][\w-]{1,40})\s+([^\s{}]{1,120})$`)
	quotedPair   = mustRx(`^"([A-Za-z][\w.-]{0,60})"\s+"([^"]{0,200})"$`)

	// a protection: weak when turned off
	kindProtect = mustRx(`protection|prevention|secureboot|harden|stackprotector|stackcanar|fortify|aslr|seccomp|sandbox|isolation|integrity|tamper|antirollback|signatureverif|verifysignature|imageverif|validatesignature|flashencryption|encrypt|verif|validat|authenticat|authoriz|pairing|bonding|securitymanager|appprotect|readbackprotect|debugprotect|sigforce|requiresig|requiresigned|signedonly|enforcesign|sigverif|sigcheck|firewall|checkorigin|origincheck|hostcheck|checkhost|checkcert|certcheck|checksignature|signaturecheck|checkauth|authcheck|checkcsrf|csrfcheck|checkpermission|permissioncheck|checkintegrity|integritycheck|secure$`)
	// a debug or management access, or a switch that allows what a
	// protection refuses: weak when turned on
	kindExpose = mustRx(`jtag|swd$|kgdb|kdb$|debugger|gdbstub|gdbserver|swdio|debugport|debugaccess|debuginterface|factorytest|factorymode|serialrecovery|bootserial|mcumgr|telnet|remoteshell|remoteaccess|remotedebug|(?:^|config|enable|remote|debug|admin|root|uart|usb|ble|bt|net)shell$|usbdebug|developermode|devmode|engineeringmode|backdoor|allow(?:jtag|http|insecure|unsigned|downgrade|rollback|plaintext|cleartext|debug|root|unauth|anonymous|untrusted|unverified|selfsigned)|(?:disable|skip|bypass|ignore|no|without)(?:cert|hostname|commonname|pin|signature|sig|verif|valid|auth|check|protect|secure|ssl|tls|encrypt|integrity|smp|pairing)|(?:protect|protection|verif\w{0,8}|auth\w{0,8}|check|ssl|tls|signature|secure\w{0,8}|security|integrity|encryption)(?:disable|disabled|off|bypass|skip)$|insecure|unsigned|unverified|permissive`)
	// a security level
	kindSecLevel = mustRx(`sec(?:urity)?(?:level|lvl|mode)|protectionlevel|assurancelevel`)
	// an interval, and the kind of work whose interval matters
	kindInterval  = mustRx(`interval|period|frequency|cadence|every`)
	kindWatchWork = mustRx(`(?i)scan|check|audit|integrity|verif|guard|heartbeat|watchdog|cheat|monitor|tamper|detect`)
	// grants
	kindGrantKey   = mustRx(`^(?:policy|access|permission|permissions|mode|role|capabilities|capability|level|privilege|privileges)$`)
	kindGrantRead  = map[string]bool{"read": true, "readonly": true, "read-only": true, "ro": true, "deny": true, "list": true, "none": true, "view": true, "viewer": true, "reader": true}
	kindGrantWrite = map[string]bool{"write": true, "read-write": true, "readwrite": true, "rw": true, "admin": true, "owner": true, "manage": true, "full": true, "root": true, "sudo": true, "*": true, "all": true, "editor": true, "writer": true}
	kindRolesKey   = mustRx(`polic(?:y|ies)$|roles?$|groups$|permissions$|scopes$|serviceaccount$`)
	kindRootValue  = mustRx(`(?i)(?:^|[\["',\s])(?:root|admin|administrator|superuser|cluster-admin|owner|global-management|sudo|\*)(?:$|["',\]\s])`)
	// isolation
	kindIsoKey   = mustRx(`^(?:driver|runtime|runtimeclass|runtimeclassname|isolation|executor|sandbox|launcher|spawnstrategy|strategy|genrulestrategy)$`)
	kindIsolated = map[string]bool{"docker": true, "containerd": true, "podman": true, "runsc": true, "gvisor": true, "kata": true, "firecracker": true, "isolated": true, "sandbox": true, "sandboxed": true, "container": true, "hyperv": true,
		"linux-sandbox": true, "darwin-sandbox": true, "processwrapper-sandbox": true}
	kindUnconfine = map[string]bool{"raw_exec": true, "raw": true, "host": true, "none": true, "unconfined": true, "privileged": true, "local": true, "shell": true, "process": true, "standalone": true}
	// a setting naming the key or certificate that signs or verifies
	kindKeyRef = mustRx(`(?:sign|signing|signature|verif\w{0,8}|release|root|trust\w{0,4}|^ca|pinned)\w{0,12}(?:key|cert|certificate|pubkey|pem)(?:file|path)?$`)
	// a permission or guard list, what it required, and what lets anyone in
	kindPermKey    = mustRx(`permission|guard|authoriz|accesspolic|authpolic|policies$|requiredroles?$`)
	kindPermNeeds  = mustRx(`(?i)auth|admin|staff|owner|member|role|scope|signedin|loggedin|superuser|verified`)
	kindPermAnyone = mustRx(`(?i)allow_?any|allowall|permitall|public|anonymous|everyone|unauthenticated|\bnone\b|^\[\s*\]$|["'\[\s]\*["'\]\s]`)
	// release channels
	kindChannelKey = mustRx(`setlive|releasetrack|^track$|channel$|releasechannel|audience|rollout|visibility|publishstatus`)
	kindInternal   = map[string]bool{"internal": true, "alpha": true, "dev": true, "development": true, "staging": true, "test": true, "testing": true, "preview": true, "private": true, "draft": true, "qa": true, "nightly": true}
	kindPublic     = map[string]bool{"default": true, "public": true, "production": true, "prod": true, "live": true, "beta": true, "stable": true, "release": true, "general": true, "all": true, "everyone": true}
	// choices
	kindStrongSuffix = map[string]bool{"RELEASE": true, "PRODUCTION": true, "PROD": true, "SECURE": true, "STRICT": true, "ENFORCE": true, "ENFORCING": true, "REQUIRED": true, "FULL": true}
	kindWeakSuffix   = map[string]bool{"DEVELOPMENT": true, "DEV": true, "DEBUG": true, "INSECURE": true, "PERMISSIVE": true, "NONE": true, "DISABLED": true, "OFF": true, "TEST": true, "TESTING": true, "RELAXED": true, "LAX": true, "OPTIONAL": true, "UNSAFE": true}
	kindAccessPrefix = mustRx(`CONSOLE|SHELL|JTAG|DEBUG|TELNET|REMOTE|MGMT|MCUMGR`)
	// shipping
	kindExcludeKey = mustRx(`exclu|ignore|skip`)
	kindShipSecret = mustRx(`(?i)\.(?:pdb|map|dsym|sym|debug|env|pem|key|p12|pfx)\b|secret|credential|private`)
	kindPathKey    = mustRx(`path$|root$|dir$|source$|include$|files$|contentroot|localpath`)
	// an https address, and a plain http one
	kindHTTPS = mustRx(`https://([A-Za-z0-9.-]{3,253})`)
	kindHTTP  = mustRx(`http://([A-Za-z0-9.-]{3,253})`)
	// sandboxes: a capability handed into an environment (name = name,
	// name: name), a library given whole, presets, budgets
	kindSelfMap     = mustRx(`\b([A-Za-z_]\w{0,30})["']?\s*[=:]\s*([A-Za-z_][\w.]{0,40})\b`)
	kindDangerCap   = map[string]bool{"os": true, "io": true, "load": true, "loadstring": true, "dofile": true, "loadfile": true, "require": true, "debug": true, "getmetatable": true, "setmetatable": true, "rawset": true, "rawget": true, "rawequal": true, "package": true, "ffi": true, "collectgarbage": true, "process": true, "child_process": true, "eval": true, "Function": true, "globalThis": true, "__import__": true, "__builtins__": true, "builtins": true, "open": true, "exec": true, "compile": true, "subprocess": true, "ctypes": true, "Reflect": true, "Deno": true, "Bun": true, "fs": true, "system": true, "popen": true, "_G": true, "_ENV": true, "getfenv": true, "setfenv": true, "luajava": true}
	kindSandboxCtx  = mustRx(`(?i)sandbox|jail|safe_?env|safe_?globals|allowed_?globals|whitelist|allowlist|restricted|untrusted`)
	kindSandboxText = mustRx(`(?i)sandbox|jail|safe_?env|safe_?globals|allowed_?globals|untrusted`)
	kindBudget      = mustRx(`(?i)sethook|budget|quota|instruction_?limit|max_?instructions|memory_?limit|cpu_?limit|time_?limit|deadline|timeout`)
	kindPresetWeak  = mustRx(`(?i)complete|full|unrestricted|all|trusted|none|unsafe|default`)
	kindPresetGuard = mustRx(`(?i)sandbox|restricted|safe|minimal|soft|hard|strict|locked`)
	// a validation callback that accepts everything
	kindAcceptAll = mustRx(`(?i)\w*(?:cert|certificate|hostname|signature|token|auth|origin|ssl|tls|server|chain|peer|trust)\w*(?:valid|verif|check|accept)\w*\s*[=:]\s*(?:\([^)]{0,80}\)|[A-Za-z_]\w{0,20})\s*=>\s*(?:\{\s*return\s+)?true\b|\w*(?:valid|verif|check|trust)\w*\s*=\s*lambda\b[^:]{0,60}:\s*True\b`)
	// a bound on input size
	kindSizeCap = mustRx(`(?i)MaxBytesReader|LimitReader|LimitedReader|max_?body_?size|body_?limit|client_max_body_size|MAX_CONTENT_LENGTH|maxContentLength|max_?request_?size|maxRequestBodySize|MaxRequestBodySize|maxFileSize|max_upload_size|DATA_UPLOAD_MAX_MEMORY_SIZE|MaxReceiveMessageSize|maxPayload|max_payload`)
	// a deserializer that instantiates or runs what the data names, and a
	// safe reader it may replace
	kindUnsafeDecode = mustRx(`TypeNameHandling\s*=\s*(?:[\w.]*\.)?TypeNameHandling\.(?:All|Auto|Objects|Arrays)|\b(?:enable|activate)DefaultTyping\s*\(|\b(?:c?[Pp]ickle|dill|jsonpickle|joblib)\.(?:loads?|decode)\s*\(|\bshelve\.open\s*\(|\bMarshal\.load\s*\(|\bunserialize\s*\(|\bnew\s+ObjectInputStream\s*\(|\bXStream\s*\(\s*\)|\b(?:NetDataContractSerializer|SoapFormatter|LosFormatter|ObjectStateFormatter)\b|\byaml\.unsafe_load\s*\(|\bYAML\.load\s*\(|\beval\s*\(\s*[\w.]*\.read\s*\(`)
	kindSafeDecode   = mustRx(`(?i)\bjson\.loads?\s*\(|JSON\.parse\s*\(|JsonUtility\.|FromJson|DeserializeObject|JsonSerializer\.Deserialize|safe_load|json\.Unmarshal|serde_json|readValue\s*\(|ast\.literal_eval|toml\.load|msgpack|json_decode|JSON\.load|Oj\.load|JSON\.decode`)
	// protections whose removal weakens whatever value they held
	kindProtectRemoved = mustRx(`forcessl|forcehttps|hsts|sslredirect|requiressl|requirehttps|securebrowserheaders|protectfromforgery|contentsecuritypolicy|csrf`)
	// a protection named in a request pipeline (a plug, a middleware, a
	// filter, a guard)
	kindPipelineProtect = mustRx(`(?i)^\s*(?:plug|use|app\.use|router\.use|server\.use|before_action|before_filter|prepend_before_action|pipe_through|@UseGuards|MIDDLEWARE|middleware|add_middleware|app\.add_middleware)\b[^\n]{0,80}?(protect_from_forgery|csrf|secure_browser_headers|Plug\.SSL|helmet|authenticat\w*|require_auth\w*|ensure_auth\w*|login_required|rate_?limit\w*|throttl\w*|AuthGuard|RolesGuard|SecurityMiddleware|CsrfViewMiddleware|XFrameOptionsMiddleware)`)
	// a bare exit, and a result forced to success
	kindBareReturn     = mustRx(`^(?:return|return;|return\s+(?:true|True|0|nil|None|null|Ok\(\(\)\)|EXIT_SUCCESS);?)$`)
	kindPreproc        = mustRx(`^(?:#\s*(?:if|ifdef|ifndef|else|elif|endif)\b.*|\{|\}|end)$`)
	kindComputedReturn = mustRx(`^return\s+[A-Za-z_][\w.()\[\]]*[A-Za-z_)\]]\s*;?$`)
)

// kindSource reports whether p is a file these readers apply to beyond
// appSource: Kconfig fragments and defconfigs, C and C++ sources and
// headers, Lua, VDF, tool configuration in .cfg/.tcl.
func kindSource(p string) bool {
	base := path.Base(p)
	switch strings.ToLower(path.Ext(base)) {
	case ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".ino", ".lua", ".luau", ".vdf", ".tcl", ".conf", ".cfg", ".ini", ".cmake", ".mk", ".gd",
		".nix", ".bzl", ".bazel", ".star", ".bazelrc":
		return true
	}
	return kconfigName(base) || base == ".bazelrc" || base == "bazel.rc"
}

// kconfigName reports whether base names a Kconfig fragment or defconfig
// (sdkconfig, sdkconfig.defaults, *_defconfig, .config).
func kconfigName(base string) bool {
	l := strings.ToLower(base)
	return strings.HasPrefix(l, "sdkconfig") || strings.HasPrefix(l, "kconfig") || strings.Contains(l, "defconfig") || l == ".config" || strings.HasSuffix(l, ".config")
}

// kindLines returns the trimmed lines of added that old lacks and of old
// that added lacks, keeping the comment-shaped lines these kinds give
// meaning to (# CONFIG_X is not set, #define).
func kindLines(added, old string) (plus, minus []string) {
	return diffLinesKept(added, old, func(l string) bool {
		return !commentLine(l) || kconfigUnset.MatchString(l) || strings.HasPrefix(l, "#define") || strings.HasPrefix(l, "# define")
	}, 256)
}

// kindSettings reads the settings of lines in every spelling above, and
// the generic ones (settingsIn), at most n.
func kindSettings(lines []string, n int) []settingPair {
	var out []settingPair
	add := func(k, v, raw, line string) {
		if len(out) < n {
			out = append(out, settingPair{key: normKey(k), leaf: leafKey(k), val: settingVal(v), raw: raw, line: line})
		}
	}
	for _, l := range lines {
		if len(out) >= n {
			break
		}
		switch m := kconfigUnset.FindStringSubmatch(l); {
		case m != nil:
			add(m[1], "n", "n", l)
			continue
		}
		if m := kconfigLine.FindStringSubmatch(l); m != nil {
			add(m[1], m[2], m[2], l)
			continue
		}
		if m := cDefine.FindStringSubmatch(l); m != nil {
			add(m[1], strings.Trim(m[2], "() "), m[2], l)
			continue
		}
		if m := quotedPair.FindStringSubmatch(l); m != nil {
			add(m[1], m[2], m[2], l)
			continue
		}
		if strings.Contains(l, "-D") {
			for _, m := range buildDefine.FindAllStringSubmatch(l, 16) {
				v := m[2]
				if v == "" {
					v = "1"
				}
				add(m[1], v, v, "-D"+m[1])
			}
		}
		if m := spacedKV.FindStringSubmatch(l); m != nil && !strings.ContainsAny(l, "=:") {
			add(m[1], m[2], m[2], l)
			continue
		}
		for _, s := range settingsIn([]string{strings.TrimPrefix(l, ".")}, 8) {
			if len(out) < n {
				out = append(out, s)
			}
		}
	}
	return out
}

// weakKinds returns why a change to p (added and old texts) weakens a
// control by the readers and concepts above, or "".
func weakKinds(p, added, old string) string {
	if old == "" || len(added)+len(old) == 0 {
		return ""
	}
	plus, minus := kindLines(added, old)
	if len(plus)+len(minus) == 0 {
		return ""
	}
	addedS, removedS := kindSettings(plus, 96), kindSettings(minus, 96)
	before := map[string]settingPair{}
	for _, s := range removedS {
		if _, ok := before[s.key]; !ok {
			before[s.key] = s
		}
	}
	for _, s := range addedS {
		if why := kindMoved(p, s, before); why != "" {
			return why + " (" + clipText(s.line, 80) + ")"
		}
	}
	addedKeys := normKey(strings.Join(plus, " "))
	for _, r := range removedS {
		if kindProtectRemoved.MatchString(r.key) && !valOff(r.val) && !strings.Contains(addedKeys, r.key) {
			return "removes " + clipText(r.key, 40) + " (" + clipText(r.line, 80) + ") and nothing sets it again"
		}
	}
	if why := kindChoice(addedS, removedS); why != "" {
		return why
	}
	if why := kindDowngrade(plus, minus); why != "" {
		return why
	}
	if why := kindShipping(plus, minus, removedS); why != "" {
		return why
	}
	if why := kconfigDefault(p, plus, minus, added+"\n"+old); why != "" {
		return why
	}
	if why := kindChecks(p, plus, minus); why != "" {
		return why
	}
	return kindSandbox(p, plus, minus, old)
}

// securityNamed reports whether p's name or directory says it is a
// security component (securityTokens).
func securityNamed(p string) bool {
	toks := nameTokens(strings.TrimSuffix(path.Base(p), path.Ext(p)))
	toks = append(toks, nameTokens(path.Base(path.Dir(p)))...)
	for _, t := range toks {
		if securityTokens[t] {
			return true
		}
	}
	return false
}

// kindChecks returns why an edit makes a check accept everything, drops
// a bound on input size, or makes a security component return before
// (or regardless of) its check, or "".
func kindChecks(p string, plus, minus []string) string {
	plusText := strings.Join(plus, "\n")
	for _, l := range plus {
		if kindAcceptAll.MatchString(l) && !kindAcceptAll.MatchString(strings.Join(minus, "\n")) {
			return "a validation callback that accepts everything (" + clipText(l, 80) + ")"
		}
	}
	if minusText := strings.Join(minus, "\n"); kindSafeDecode.MatchString(minusText) && !kindUnsafeDecode.MatchString(minusText) {
		for _, l := range plus {
			if m := kindUnsafeDecode.FindString(l); m != "" {
				return "replaces a safe reader with one that instantiates or runs what the data names (" + clipText(m, 60) + "): a crafted file runs code"
			}
		}
	}
	for _, l := range minus {
		if m := kindPipelineProtect.FindStringSubmatch(l); m != nil && !strings.Contains(strings.ToLower(plusText), strings.ToLower(m[1])) {
			return "removes " + m[1] + " from the request pipeline (" + clipText(l, 80) + ")"
		}
	}
	for _, l := range minus {
		if m := kindSizeCap.FindString(l); m != "" && !kindSizeCap.MatchString(plusText) {
			return "removes the bound on input size (" + clipText(l, 80) + "): one request can exhaust memory"
		}
	}
	if !securityNamed(p) {
		return ""
	}
	bare, other := false, false
	for _, l := range plus {
		switch {
		case kindBareReturn.MatchString(l):
			bare = true
		case kindPreproc.MatchString(l):
		default:
			other = true
		}
	}
	if bare && !other && len(minus) == 0 {
		return "the security component " + path.Base(p) + " returns before its check runs"
	}
	if bare {
		for _, l := range minus {
			if kindComputedReturn.MatchString(l) && !kindBareReturn.MatchString(l) {
				return "the security component " + path.Base(p) + " returns success where it returned its check's result (" + clipText(l, 60) + ")"
			}
		}
	}
	return ""
}

// kindMoved judges one added setting against the removed ones.
func kindMoved(p string, s settingPair, before map[string]settingPair) string {
	o, had := before[s.key]
	k, v := s.key, s.val
	if had && o.val == v {
		return ""
	}
	expose := kindExpose.MatchString(k)
	switch {
	case !expose && kindProtect.MatchString(k) && !diagnostic.MatchString(k) && valOff(v) && had && !valOff(o.val):
		return "turns " + clipText(k, 40) + " off"
	case expose && valOn(v) && (!had || valOff(o.val)):
		return "turns " + clipText(k, 40) + " on"
	case had && kindSecLevel.MatchString(k):
		if a, b := trailingNum(o.val), trailingNum(v); a > 0 && b >= 0 && b < a {
			return "lowers the security level " + clipText(k, 40) + " from " + o.val + " to " + v
		}
	case had && kindInterval.MatchString(k) && !strings.Contains(k, "health") && (kindWatchWork.MatchString(k) || kindWatchWork.MatchString(path.Base(p))):
		if a, b := leadNum(o.val), leadNum(v); a > 0 && b >= 100*a {
			return "makes " + clipText(k, 40) + " " + o.val + " → " + v + ": the check runs too rarely to protect"
		}
	case had && (k == "bindto" || bindConcept.MatchString(k)) && allInterfaces(v) && loopback(o.val):
		return "binds " + clipText(k, 40) + " to every interface where it was " + o.val
	case had && kindGrantKey.MatchString(k) && kindGrantRead[o.val] && kindGrantWrite[v]:
		return "widens the grant " + clipText(k, 40) + " from " + o.val + " to " + v
	case had && kindRolesKey.MatchString(k) && kindRootValue.MatchString(s.raw) && !kindRootValue.MatchString(o.raw):
		return "grants " + clipText(k, 40) + " a root or admin policy (" + clipText(s.raw, 40) + ")"
	case had && kindIsoKey.MatchString(k) && kindIsolated[o.val] && kindUnconfine[v]:
		return "moves " + clipText(k, 40) + " from " + o.val + " to " + v + ": the workload runs on the host without isolation"
	case had && kindKeyRef.MatchString(k) && o.val != "" && v != "" && o.val != v && !valOff(v) && !valOn(v):
		return "points " + clipText(k, 40) + " at another key (" + clipText(o.val, 40) + " → " + clipText(v, 40) + "): what is signed or trusted changes hands"
	case expose && strings.HasPrefix(strings.TrimSpace(s.raw), "[") && strings.Trim(s.raw, "[] \"'") != "" && (!had || strings.Trim(o.raw, "[] \"'") == ""):
		return "allows " + clipText(k, 40) + " " + clipText(s.raw, 40)
	case had && kindPermKey.MatchString(k) && kindPermNeeds.MatchString(o.raw) && kindPermAnyone.MatchString(s.raw) && !kindPermNeeds.MatchString(s.raw):
		return "widens " + clipText(k, 40) + " from " + clipText(o.raw, 40) + " to " + clipText(s.raw, 40) + ": anyone gets in"
	case had && kindChannelKey.MatchString(k) && kindInternal[o.val] && kindPublic[v]:
		return "promotes " + clipText(k, 40) + " from " + o.val + " to " + v + ": what was internal goes to everyone"
	case had && kindPathKey.MatchString(k) && climbs(v) > climbs(o.val) && strings.Contains(v, "*"):
		return "widens " + clipText(k, 40) + " from " + o.val + " to " + v + ": what ships reaches a parent directory"
	}
	return ""
}

// trailingNum is the number a value ends with (2 of BT_SECURITY_L2), or
// -1.
func trailingNum(v string) int {
	i := len(v)
	for i > 0 && i > len(v)-6 && v[i-1] >= '0' && v[i-1] <= '9' {
		i--
	}
	if i == len(v) {
		return -1
	}
	return leadNum(v[i:])
}

// climbs counts the parent steps (../ or ..\) a path value takes.
func climbs(v string) int {
	return strings.Count(strings.ReplaceAll(v, `\`, "/"), "../")
}

// kindChoice returns why a Kconfig choice moved between siblings (one
// removed =y, one added =y, a common prefix) weakens it, or "".
func kindChoice(added, removed []settingPair) string {
	for _, r := range removed {
		if !valOn(r.val) || !kconfigLine.MatchString(r.line) {
			continue
		}
		rk, _, _ := strings.Cut(r.line, "=")
		for _, a := range added {
			if !valOn(a.val) || !kconfigLine.MatchString(a.line) {
				continue
			}
			ak, _, _ := strings.Cut(a.line, "=")
			pre := commonUnderscorePrefix(rk, ak)
			if len(pre) < 8 {
				continue
			}
			rs, as := strings.TrimPrefix(rk, pre), strings.TrimPrefix(ak, pre)
			first := func(s string) string { f, _, _ := strings.Cut(s, "_"); return f }
			switch {
			case kindStrongSuffix[first(rs)] && kindWeakSuffix[first(as)]:
				return "moves the choice " + clipText(strings.TrimSuffix(pre, "_"), 50) + " from " + rs + " to " + as + " (" + clipText(a.line, 80) + ")"
			case kindAccessPrefix.MatchString(pre) && kindWeakSuffix[first(rs)] && !kindWeakSuffix[first(as)]:
				return "turns " + clipText(strings.TrimSuffix(pre, "_"), 50) + " on where it was " + rs + " (" + clipText(a.line, 80) + ")"
			}
		}
	}
	return ""
}

// commonUnderscorePrefix is the longest common prefix of a and b ending
// with "_".
func commonUnderscorePrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if i := strings.LastIndexByte(a[:n], '_'); i >= 0 {
		return a[:i+1]
	}
	return ""
}

// kindDowngrade returns why an edit replaces an https address with a
// plain http one (not loopback or private), or "".
func kindDowngrade(plus, minus []string) string {
	if len(minus) == 0 {
		return ""
	}
	p, m := strings.Join(plus, "\n"), strings.Join(minus, "\n")
	if !strings.Contains(m, "https://") || strings.Contains(p, "https://") || !strings.Contains(p, "http://") {
		return ""
	}
	for _, h := range kindHTTP.FindAllStringSubmatch(p, 8) {
		host := strings.ToLower(h[1])
		if loopback(host) || strings.HasPrefix(host, "10.") || strings.HasPrefix(host, "192.168.") || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".localhost") || host == "www.w3.org" {
			continue
		}
		return "an https address replaced by plain http (" + clipText(h[0], 60) + "): what it fetches or sends travels unencrypted and unauthenticated"
	}
	return ""
}

// kindShipping returns why an edit stops excluding secrets or debug
// symbols from what ships, or "".
func kindShipping(plus, minus []string, removed []settingPair) string {
	p := strings.ToLower(strings.Join(plus, "\n"))
	for _, s := range removed {
		if kindExcludeKey.MatchString(s.key) && kindShipSecret.MatchString(s.raw) && !strings.Contains(p, strings.ToLower(strings.Trim(s.raw, `"'`))) {
			return "stops excluding " + clipText(s.raw, 40) + " from what ships (" + clipText(s.line, 80) + ")"
		}
	}
	return ""
}

// kindSandbox returns why an edit to code that configures a sandbox
// widens it, or "".
func kindSandbox(p string, plus, minus []string, old string) string {
	ctx := kindSandboxCtx.MatchString(p) || kindSandboxText.MatchString(clipRaw(old, 4096))
	if !ctx {
		return ""
	}
	minusText := clipRaw(strings.Join(minus, "\n"), 16<<10)
	checks := 0 // self-maps judged, at most 64
	had := map[string]bool{}
	for _, l := range minus {
		for _, m := range kindSelfMap.FindAllStringSubmatch(l, 16) {
			had[m[1]+"="+m[2]] = true
		}
	}
	for _, l := range plus {
		for _, m := range kindSelfMap.FindAllStringSubmatch(l, 16) {
			name, val := m[1], m[2]
			if name != val && !strings.HasSuffix(val, "."+name) {
				continue
			}
			if checks++; checks > 64 {
				return ""
			}
			if kindDangerCap[name] && !had[name+"="+val] {
				return "hands " + name + " to the sandbox (" + clipText(l, 80) + "): sandboxed code reaches what it was kept from"
			}
			if subsetOf(minusText, name) {
				return "gives the sandbox the whole " + name + " library where a subset was (" + clipText(l, 80) + ")"
			}
		}
	}
	// a preset or mode widened on an otherwise unchanged line
	if len(plus) == 1 && len(minus) == 1 {
		a, b := minus[0], plus[0]
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		j := 0
		for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
			j++
		}
		was, now := a[i:len(a)-j], b[i:len(b)-j]
		if kindPresetGuard.MatchString(was) && kindPresetWeak.MatchString(now) && !kindPresetGuard.MatchString(now) {
			return "widens the sandbox from " + clipText(was, 30) + " to " + clipText(now, 30) + " (" + clipText(b, 80) + ")"
		}
	}
	// its budget removed
	plusText := strings.Join(plus, "\n")
	for _, l := range minus {
		if kindBudget.MatchString(l) && !kindBudget.MatchString(plusText) {
			return "removes the sandbox's budget (" + clipText(l, 80) + "): sandboxed code runs without limit"
		}
	}
	return ""
}

// subsetOf reports whether text gives name a table of its own (name = {
// or name: {): a subset of a library.
func subsetOf(text, name string) bool {
	for i := 0; i < 16; i++ {
		k := strings.Index(text, name)
		if k < 0 {
			return false
		}
		before := k == 0 || !isWordByte(text[k-1])
		rest := strings.TrimLeft(text[k+len(name):], " \t")
		if before && (strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ":")) && strings.HasPrefix(strings.TrimLeft(rest[1:], " \t"), "{") {
			return true
		}
		text = text[k+len(name):]
	}
	return false
}

// kconfigMeant is what a Kconfig symbol's prompt or help says it is for
// when it must stay off in what ships.
var kconfigMeant = mustRx(`(?i)debug|factory|test|insecure|unsafe|develop|never|backdoor|shell|jtag|bypass|disable\w* (?:security|verif|auth|sign)`)

// kconfigDefault returns why an edit of a Kconfig file turns on by
// default a symbol whose text says it is for debugging, testing or the
// factory, or "".
func kconfigDefault(p string, plus, minus []string, text string) string {
	if !strings.HasPrefix(path.Base(p), "Kconfig") {
		return ""
	}
	off, on := false, false
	for _, l := range minus {
		off = off || l == "default n" || strings.HasPrefix(l, "default n if")
	}
	for _, l := range plus {
		on = on || l == "default y" || strings.HasPrefix(l, "default y if")
	}
	if !off || !on {
		return ""
	}
	if m := kconfigMeant.FindString(clipRaw(text, 8192)); m != "" {
		return "turns on by default a symbol meant for " + strings.ToLower(m) + " (default n → default y): release images carry it"
	}
	return ""
}
