package shield

import (
	"path"
	"strconv"
	"strings"
)

// Security settings by concept, wider (issue 27, pass 8, rules 11;
// docs/shield-rules.md "appsec:control-weakened"). Rules 10 read settings
// as key = value in any language; these concepts need more than one
// key's value to move:
//
//   - transport security: certificate pins removed with none in their
//     place, user-installed or no certificate authorities trusted, a trust
//     evaluator disabled, an SSL error let through (plist keys are read as
//     <key>K</key><true/>; cleartext and arbitrary loads are exposures);
//   - secret storage: a keychain item readable while the device is locked
//     or synchronized off it, a secret moved from secure storage to plain
//     preferences;
//   - logging: a level raised to fatal, critical or off where it recorded
//     information; whole request bodies logged outside debug builds; a
//     redaction list losing a password, token or card entry; an audit
//     channel dropped from a list of channels; Ansible's no_log removed;
//     retention cut in a logging file;
//   - abuse protection: a limit, burst or attempt count raised more than
//     tenfold where the line or file is about throttling;
//   - host hardening: an audit, firewall or intrusion daemon stopped or
//     disabled by configuration management; sshd's switches read as
//     "Key value" lines (PasswordAuthentication, PermitRootLogin,
//     StrictHostKeyChecking); an SSH public key installed.

var (
	plistPair = mustRx(`<key>\s*([A-Za-z][\w.-]{0,80})\s*</key>\s*<(true|false)\s*/>`)
	// sshd or ssh_config lines, and quoted ones (lineinfile's line:)
	wordSetting  = mustRx(`(?:^|["'])([A-Z][A-Za-z]{3,40})[ \t]+(yes|no|true|false|on|off|without-password|prohibit-password|forced-commands-only|accept-new)(?:$|["'])`)
	pinMarker    = mustRx(`(?i)<pin\b|pin-set|sha256/[A-Za-z0-9+/=]{20,}|CertificatePinner|PublicKeysTrustEvaluator|PinnedCertificatesTrustEvaluator|kTSKPublicKeyHashes|TrustKit|pinnedCertificates|certificatePins|ssl_?pinning|SslPinning|publicKeyHashes|pinned_?(?:keys|certs|hashes)`)
	trustWeak    = mustRx(`(?i)certificates\s+src=["']user|DisabledTrustEvaluator|DisabledEvaluator\(|badCertificateCallback\s*=\s*\([^)]*\)\s*(?:=>|\{)\s*(?:return\s+)?true|handler\.proceed\(\s*\)|\.proceed\(\s*\)\s*;?\s*\}?\s*$|allowsExpiredCertificates\s*=\s*true|validatesDomainName\s*=\s*false|allowInvalidCertificates\s*=\s*(?:YES|true)|NSExceptionAllowsInsecureHTTPLoads|InsecureSkipVerify:\s*true|NODE_TLS_REJECT_UNAUTHORIZED["']?\]?\s*=\s*["']?0`)
	keychainWeak = mustRx(`(?i)kSecAttrAccessibleAlways(?:ThisDeviceOnly)?\b|accessibility\(\s*\.always|KeychainAccessibility\.always|\.synchronizable\(\s*true|kSecAttrSynchronizable\s*:\s*(?:true|kCFBooleanTrue)|setUserAuthenticationRequired\(\s*false|MODE_WORLD_READABLE|accessible:\s*\.always|keychainAccessible:\s*["']?(?:always|AccessibleAlways)`)
	secureStore  = mustRx(`(?i)keychain|EncryptedSharedPreferences|SecureStore|flutter_secure_storage|FlutterSecureStorage|secure_storage|Keystore|EncryptedFile|react-native-keychain|SecItemAdd`)
	plainStore   = mustRx(`(?i)UserDefaults|SharedPreferences|AsyncStorage|localStorage|sessionStorage|getPreferences|NSUserDefaults|shared_preferences|MMKV`)
	secretWord   = mustRx(`(?i)token|password|secret|credential|session|api_?key|refresh|jwt`)
	lowLevel     = set("trace", "debug", "info", "information", "informational", "notice", "warn", "warning", "verbose", "all", "basic", "headers")
	highLevel    = set("fatal", "critical", "crit", "off", "none", "silent", "emergency", "emerg", "panic", "alert", "disabled", "quiet")
	levelKey     = mustRx(`level|severity|threshold|verbosity`)
	redactKey    = mustRx(`filter|redact|mask|scrub|sensitive|sanitiz|obfuscat|hidden|hide|denylist|blocklist|secret`)
	sensitiveIt  = mustRx(`(?i)passw|token|secret|key|card|cvv|cvc|ssn|otp|iban|auth|cookie|session|pin|credential|signature|private`)
	channelKey   = mustRx(`channel|handler|appender|sink|output|target|logger|stack|destination|exporter|transport|writer`)
	auditItem    = mustRx(`(?i)audit|siem|syslog|security|cloudtrail|splunk|datadog|sentry|elastic|loki|papertrail`)
	limitKey     = mustRx(`^(?:limit|max|maxrequests|maxattempts|maxretry|maxretries|burst|rate|ratelimit|requestsper\w*|rps|attempts|maxauthtries|points|capacity|permits|limitforperiod|maxloginattempts|loginattempts|failedattempts|lockoutthreshold|allowedattempts|requests|tokensperinterval|refillrate)$`)
	limitContext = mustRx(`(?i)throttl|ratelimit|rate_limit|rate-limit|attack|login|signin|sign_in|attempt|brute|limiter|lockout|fail2ban|slowapi|bucket|limit_req|MaxAuthTries|maxretry`)
	daemonName   = mustRx(`(?i)\bauditd\b|\bfail2ban|\bapparmor\b|\bselinux\b|\bfirewalld\b|\bufw\b|\bfalco\b|\bosqueryd?\b|\bwazuh|\bossec|falcon-sensor|\bclamav|\bclamd\b|\baide\b|\brsyslog\b|syslog-ng|\bjournald\b|\bsshguard\b|\bauditbeat\b|\bsysmon\b|\btripwire\b|\bnftables\b|\biptables\b|\bcrowdstrike`)
	serviceDown  = mustRx(`(?i)\bstate\s*[:=]\s*["']?(?:stopped|absent|disabled|permissive|masked)\b|\benabled\s*[:=]\s*["']?(?:false|no)\b|\bensure\s*=>\s*["']?(?:stopped|absent|false)|\benable\s*=>\s*["']?false|\baction\s+\[?:(?:stop|disable)|\bservice\.dead\b|\bservice\.disabled\b|systemctl\s+(?:stop|disable|mask)\b|\bmasked\s*[:=]\s*["']?(?:true|yes)|SELINUX\s*=\s*(?:disabled|permissive)`)
	sshPubKey    = mustRx(`\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)\s+AAAA[0-9A-Za-z+/]{20,}`)
	bodyLogging  = mustRx(`(?i)Level\.BODY\b|LogLevel\.(?:BODY|ALL)\b|EnableSensitiveDataLogging\(\s*(?:true)?\s*\)|logRequestBody\s*[:=]\s*true|log_?body\s*[:=]\s*(?:true|True)`)
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// weakConcept returns why a change to p weakens a security concept
// (above), or "". added and old are the whole texts, plus and minus their
// differing lines.
func weakConcept(p, added, old string, plus, minus []string) string {
	if len(plus)+len(minus) == 0 {
		return ""
	}
	plusText, minusText := strings.Join(plus, "\n"), strings.Join(minus, "\n")
	lp, lm := strings.ToLower(plusText), strings.ToLower(minusText)
	// an SSH key installed
	if m := sshPubKeyIn(plusText); m != "" && !strings.Contains(old, m) && !strings.HasSuffix(strings.ToLower(p), ".pub") {
		return "installs an SSH public key (" + clipText(m, 40) + "): its holder gets a login on every host this configures"
	}
	// transport
	if l := hintedMatch(plus, lp, trustWeak, "certificates", "trustevaluator", "disabledevaluator", "badcertificate", "proceed(", "expiredcert", "validatesdomain", "invalidcert", "insecurehttploads", "insecureskipverify", "reject_unauthorized"); l != "" && !trustWeak.MatchString(old) {
		return "TLS trust weakened: certificates not verified, user-installed authorities trusted or errors let through (" + clipText(l, 80) + ")"
	}
	if hasAny(lm, "pin", "sha256/", "trustkit", "kts") && pinMarker.MatchString(minusText) && !pinMarker.MatchString(plusText) && old != "" && !pinMarker.MatchString(cutLines(added, plus)) {
		return "removes certificate pinning with none in its place (" + clipText(firstMatch(minus, pinMarker), 80) + ")"
	}
	// secret storage
	if l := hintedMatch(plus, lp, keychainWeak, "ksecattr", "accessib", "synchronizable", "userauthenticationrequired", "world_readable"); l != "" && !keychainWeak.MatchString(old) {
		return "a secret kept where it can be read while the device is locked or copied off it (" + clipText(l, 80) + ")"
	}
	if hasAny(lm, "keychain", "secure", "keystore", "encrypted", "secitem") && secureStore.MatchString(minusText) && !secureStore.MatchString(plusText) && plainStore.MatchString(plusText) && secretWord.MatchString(plusText) {
		return "a secret moved from secure storage to plain preferences (" + clipText(firstMatch(plus, plainStore), 80) + ")"
	}
	// logging
	if l := hintedMatch(plus, lp, bodyLogging, "level.", "loglevel.", "sensitivedatalogging", "logrequestbody", "body"); l != "" && !bodyLogging.MatchString(old) && !strings.Contains(strings.ToLower(l), "debug") {
		return "whole requests and responses logged, tokens and personal data with them (" + clipText(l, 80) + ")"
	}
	// settings read in more spellings: plist pairs, "Key value" lines
	added2 := conceptSettings(added, plus)
	removed2 := conceptSettings(old, minus)
	removed := append(settingsIn(minus, 64), removed2...)
	before := map[string]settingPair{}
	for _, s := range removed {
		if _, ok := before[s.key]; !ok {
			before[s.key] = s
		}
	}
	after := map[string]bool{}
	for _, s := range append(settingsIn(plus, 64), added2...) {
		after[s.key] = true
		if why := conceptMoved(p, s, before, old != ""); why != "" {
			return why + " (" + clipText(s.line, 80) + ")"
		}
	}
	for _, s := range added2 {
		if why := settingMoved(s, before, old != ""); why != "" {
			return why + " (" + clipText(s.line, 80) + ")"
		}
	}
	for _, s := range removed {
		if s.key == "nolog" && valOn(s.val) && !after["nolog"] {
			return "removes no_log: the task's secrets are printed in its output and logs (" + clipText(s.line, 80) + ")"
		}
	}
	// host hardening: a security daemon stopped or disabled
	if l := hintedMatch(plus, lp, serviceDown, "state", "enable", "ensure", "action", "service.", "systemctl", "masked", "selinux"); l != "" && !serviceDown.MatchString(minusText) {
		if m := daemonName.FindString(near(added, l, 240)); m != "" {
			return "stops or disables " + m + ", a host's audit or protection service (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// conceptSettings returns the settings of text's plist pairs and "Key
// value" lines that lie on the changed lines (lines).
func conceptSettings(text string, lines []string) []settingPair {
	if text == "" || len(lines) == 0 {
		return nil
	}
	var out []settingPair
	changed := strings.Join(lines, "\n")
	for _, m := range plistPair.FindAllStringSubmatch(clipRaw(text, maxAppsecText), 64) {
		if strings.Contains(changed, "<"+m[2]) || strings.Contains(changed, m[1]) {
			out = append(out, settingPair{key: normKey(m[1]), leaf: normKey(m[1]), val: m[2], raw: m[2], line: strings.Join(strings.Fields(m[0]), " ")})
		}
	}
	for _, l := range lines {
		for _, m := range wordSetting.FindAllStringSubmatch(l, 4) {
			out = append(out, settingPair{key: normKey(m[1]), leaf: normKey(m[1]), val: strings.ToLower(m[2]), raw: m[2], line: l})
		}
	}
	return out
}

// conceptMoved returns why one added setting weakens a concept the
// generic settings rules do not read, or "".
func conceptMoved(p string, s settingPair, before map[string]settingPair, edit bool) string {
	o, had := before[s.key]
	k, v := s.key, s.val
	leafVal := v
	if i := strings.LastIndexByte(v, '.'); i >= 0 {
		leafVal = v[i+1:]
	}
	switch {
	case s.key == "nolog" && valOff(v) && (!had || valOn(o.val)):
		return "turns no_log off: the task's secrets are printed in its output and logs"
	case had && (levelKey.MatchString(k) || levelKey.MatchString(strings.ToLower(s.line))) && highLevel[leafVal] && lowLevel[lastDot(o.val)]:
		return "raises the log level from " + o.val + " to " + v + ": what happens is no longer recorded"
	case had && redactKey.MatchString(k):
		if it := lostItems(o.raw, s.raw, sensitiveIt); it != "" {
			return "stops redacting " + it + " from logs"
		}
	case had && channelKey.MatchString(k):
		if it := lostItems(o.raw, s.raw, auditItem); it != "" {
			return "drops the " + it + " channel: those logs are no longer recorded"
		}
	case had && (k == "days" || k == "maxfiles" || k == "rotate" || strings.HasSuffix(k, "days")) && strings.Contains(strings.ToLower(path.Base(p)), "log"):
		a, e1 := strconv.Atoi(o.val)
		b, e2 := strconv.Atoi(v)
		if e1 == nil && e2 == nil && b*2 < a {
			return "shortens log retention " + clipText(k, 40) + " from " + o.val + " to " + v
		}
	case had && (limitKey.MatchString(k) || limitKey.MatchString(s.leaf)) && (limitContext.MatchString(s.line) || limitContext.MatchString(p)):
		a, b := leadNum(o.val), leadNum(v)
		if a > 0 && b > 10*a {
			return "raises the limit " + clipText(k, 40) + " from " + o.val + " to " + v + ": the throttle no longer stops abuse"
		}
	}
	_ = edit
	return ""
}

func lastDot(v string) string {
	if i := strings.LastIndexByte(v, '.'); i >= 0 {
		return v[i+1:]
	}
	return v
}

// leadNum is the number a value starts with (5 of "5/m"), or 0.
func leadNum(v string) int {
	i := 0
	for i < len(v) && i < 12 && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(v[:i])
	return n
}

// lostItems returns the items of the list was that now does not hold and
// that match want, joined, or "".
func lostItems(was, now string, want *rx) string {
	items := func(s string) []string {
		s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(s, "%i"), "%w"), "%I")
		var out []string
		for _, f := range strings.FieldsFunc(s, func(r rune) bool {
			return r == ',' || r == ' ' || r == '[' || r == ']' || r == '(' || r == ')' || r == '\t'
		}) {
			if f = strings.ToLower(strings.Trim(f, `"':`)); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	have := set(items(now)...)
	var lost []string
	for _, it := range items(was) {
		if !have[it] && want.MatchString(it) && len(lost) < 4 {
			lost = append(lost, it)
		}
	}
	return strings.Join(lost, ", ")
}

// firstMatch returns the first line that re matches, or "" (the joined
// lines are searched once first: most texts hold none).
func firstMatch(lines []string, re *rx) string {
	if len(lines) > 8 && !re.MatchString(strings.Join(lines, "\n")) {
		return ""
	}
	for _, l := range lines {
		if re.MatchString(l) {
			return l
		}
	}
	return ""
}

// cutLines is text without the lines plus (what a change keeps).
func cutLines(text string, plus []string) string {
	drop := set(plus...)
	var b strings.Builder
	for l := range strings.SplitSeq(clipRaw(text, maxAppsecText), "\n") {
		if !drop[strings.TrimSpace(l)] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// near is the text within n bytes of line l's first place in text.
func near(text, l string, n int) string {
	i := strings.Index(text, l)
	if i < 0 {
		return l
	}
	a, b := max(0, i-n), min(len(text), i+len(l)+n)
	return text[a:b]
}

// hintedMatch is firstMatch when the lower-case joined lines lp hold one
// of hints, else "".
func hintedMatch(lines []string, lp string, re *rx, hints ...string) string {
	if !hasAny(lp, hints...) {
		return ""
	}
	return firstMatch(lines, re)
}

// sshPubKeyIn is the first SSH public key of text, or "".
func sshPubKeyIn(text string) string {
	if !strings.Contains(text, " AAAA") {
		return ""
	}
	return sshPubKey.FindString(text)
}
