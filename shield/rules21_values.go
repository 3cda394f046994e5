package shield

import (
	"strings"
)

// Rules 21, values (session 26, after holdout28's and holdout29's
// measures; docs/shield-rules.md "Rules 21"): what a setting's value says
// beyond a number or a switch — an enforcement made a warning, a secure
// transport made plain, data made public, a verification emptied — and what
// a list setting loses or gains: a weak algorithm added beside strong ones,
// requirements dropped, exclusions grown, names taken off a deny list.

var (
	// a value that refuses, and one that only reports
	refuseToken = mustRx(`(?i)(?:^|[_\-. ])(?:reject|deny|block|enforce|enforcing|enforced|hard|strict|fail|required|mandatory|halt|stop|lock|quarantine|suspend|freeze|page)(?:$|[_\-. ])`)
	reportToken = mustRx(`(?i)(?:^|[_\-. ])(?:warn|warning|audit|log|report|dryrun|dry|permissive|monitor|soft|ignore|optional|observe|notify|alert)(?:$|[_\-. ])`)
	// keys whose values are levels of logging, not of enforcement
	logKey21 = mustRx(`log|level|severity|verbosity|format|color`)
	// a transport: secure, and plain
	secureProto = mustRx(`(?i)^(?:ssl|tls|https|wss|sasl_ssl|ldaps|smtps|ftps|mtls|grpcs|amqps|mqtts|rediss|strict)$`)
	plainProto  = mustRx(`(?i)^(?:plaintext|plain|http|ws|sasl_plaintext|ldap|smtp|ftp|none|insecure|disable|disabled|grpc|amqp|mqtt|redis|off|allow)$`)
	protoKey    = mustRx(`protocol|scheme|transport|security|sslmode|tlsmode|encryption`)
	// who may see or take the data: restricted, and open
	restrictedVal = map[string]bool{"internal": true, "internalonly": true, "private": true, "restricted": true, "owner": true, "owneronly": true, "team": true, "org": true, "organization": true, "confidential": true, "none": true, "nobody": true}
	openVal       = map[string]bool{"public": true, "external": true, "partners": true, "partner": true, "everyone": true, "anyone": true, "all": true, "world": true, "open": true, "shared": true, "unrestricted": true, "anonymous": true}
	visibilityKey = mustRx(`visib|access|scope|audience|shar|redistribut|exposure|distribut|acl|publish|privacy|classification`)
	// a key, a password, a secret's strength: lowered at all is weaker
	securityFloor = mustRx(`(?:password|passphrase|passwd|pin|secret|key|otp|token)\w*(?:length|len|size|bits|chars|digits)$|minlength$|keysize$|keylength$|keybits$|rsabits$|hashrounds|bcryptrounds|bcryptcost|iterations$|workfactor|saltrounds`)
	// failures before a lockout: 0 is none
	attemptsKey = mustRx(`lockout|attempt|failures?(?:before|until|limit)|maxfail`)
	// lists of algorithms, and algorithms that are weak beside others
	algKey  = mustRx(`alg|cipher|mac$|macs$|kex|hash|digest|signature|protocols?$|tlsversions?|sslprotocols`)
	weakAlg = mustRx(`(?i)^(?:none|hs256|hs384|hs512|md5|sha1|sha-1|des|3des|rc4|tlsv1|tlsv1\.0|tlsv1\.1|tls1\.0|tls1\.1|sslv3|sslv2|ssl3|null|export|anull|enull|diffie-hellman-group1-sha1|hmac-md5|hmac-sha1|ssh-dss)$`)
	// requirements: dropped, they are not checked
	requiredKey     = mustRx(`^required|required\w*$|requires$|mandatory|^must|requiredclaims|claims$`)
	requiredContext = mustRx(`(?i)token|claim|jwt|auth|oidc|saml|verif|signature|header|scope|mfa|session|cookie|consent|approv|release|upload|sign`)
	// exclusions: grown, more goes unchecked
	exclusionKey21   = mustRx(`exclu|exempt|bypass|skip|except|ignor|allowlist|whitelist|trusted|allowed|permitted`)
	exclusionContext = mustRx(`(?i)polic|access|auth|mfa|conditional|secur|rbac|admission|firewall|waf|scan|audit|risk|compliance|guard|fraud|detect`)
	// a list that keeps names out or keeps them from something
	keepOutList = mustRx(`never|den(?:y|ied)|block|forbid|disallow|reject|exclud|protect|reserved|sensitive|privileged|ban`)
	// a certificate's or a session's lifetime, by context
	lifetimeKey     = mustRx(`^duration$|validity|lifetime|validfor|notafter`)
	lifetimeContext = mustRx(`(?i)cert|token|session|key|saml|jwt|cookie|signing|issuer|tls`)
)

var (
	// an alarm's or an alert's severity: high, and low
	severityKey  = mustRx(`^(?:priority|severity|urgency|class|alarmclass|alarmpriority)$`)
	highSeverity = map[string]bool{"critical": true, "high": true, "urgent": true, "emergency": true, "alert": true, "p1": true, "p2": true, "sev1": true, "sev2": true, "major": true, "fatal": true, "page": true, "error": true, "contraindicated": true, "severe": true, "blocker": true}
	lowSeverity  = map[string]bool{"low": true, "info": true, "informational": true, "journal": true, "log": true, "none": true, "debug": true, "minor": true, "p4": true, "p5": true, "trace": true, "ignore": true, "silent": true, "notice": true, "suppressed": true, "moderate": true, "mild": true}
	// a selector's set operators, each with its inverse
	selectorOp = map[string]string{"notin": "in", "in": "notin", "doesnotexist": "exists", "exists": "doesnotexist"}
	// an enforcement's key and the modes that enforce nothing
	enforceKey = mustRx(`enforc|admission|validationfailureaction|failurepolicy`)
	offMode    = map[string]bool{"never": true, "none": true, "off": true, "disabled": true, "disable": true, "audit": true, "warn": true, "dryrun": true, "permissive": true, "ignore": true, "false": true}
	// administrators' roles, and keys naming a role
	adminRole = mustRx(`(?i)^(?:cluster-?admin|admin|admins|administrator|administrators|owner|owners|root|superuser|super-?admin|system:masters|wheel|sudo)$`)
	roleKey   = mustRx(`^(?:name|role|roles|roleref|rolename|group|groups|clusterrole|permission|access|level)$`)
	// patterns that match every value
	wildPattern = map[string]bool{"*": true, "?*": true, ".*": true, "**": true, ".+": true, "*.*": true, "%": true}
	// keys scoping where something applies
	scopeKey21 = mustRx(`^(?:namespace|namespaces|scope|selector|tenant|project|audience|org|organization|subject|allowednamespaces)$`)
)

// valueWeakened judges a value moved the permissive way by its words.
func valueWeakened(s, o qualSetting, old string) string {
	ov, nv := strings.Trim(o.val, `"' `), strings.Trim(s.val, `"' `)
	if ov == "" || nv == "" || strings.HasPrefix(ov, "[") {
		if ov != "" && s.val == "''" && (protect21.MatchString(s.path) || strings.Contains(s.path, "ssl") || strings.Contains(s.path, "tls")) && !diagnostic.MatchString(s.leaf) {
			return "empties " + clipText(s.path, 48) + ": what it checks with is gone"
		}
		if ov != "" && s.val == "''" && scopeKey21.MatchString(s.leaf) {
			return "empties " + clipText(s.path, 48) + ": what it was limited to, it now applies everywhere"
		}
		return ""
	}
	if severityKey.MatchString(s.leaf) && !strings.Contains(s.path, "log") && highSeverity[strings.ToLower(ov)] && lowSeverity[strings.ToLower(nv)] {
		return "lowers " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": what it raises is no longer treated as urgent"
	}
	if selectorOp[ov] != "" && selectorOp[ov] == nv {
		return "inverts " + clipText(s.path, 48) + " (" + ov + " → " + nv + "): what it excluded it now selects"
	}
	if enforceKey.MatchString(s.path) && offMode[strings.ToLower(nv)] && !offMode[strings.ToLower(ov)] {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": nothing is enforced"
	}
	if adminRole.MatchString(nv) && !adminRole.MatchString(ov) && roleKey.MatchString(s.leaf) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": administrator rights"
	}
	if wildPattern[nv] && !wildPattern[ov] && !strings.ContainsAny(ov, "*?") {
		return "makes " + clipText(s.path, 48) + " match anything (" + ov + " → " + nv + ")"
	}
	if !logKey21.MatchString(s.leaf) && refuseToken.MatchString(ov) && !reportToken.MatchString(ov) && reportToken.MatchString(nv) && !refuseToken.MatchString(nv) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": what it refused is only reported"
	}
	if protoKey.MatchString(s.path) && secureProto.MatchString(ov) && plainProto.MatchString(nv) {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": the traffic is in clear"
	}
	k := func(v string) string { return strings.NewReplacer("_", "", "-", "", " ", "").Replace(v) }
	if visibilityKey.MatchString(s.path) && restrictedVal[k(ov)] && openVal[k(nv)] {
		return "moves " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": who may see or take it widens"
	}
	if lifetimeKey.MatchString(s.leaf) && lifetimeContext.MatchString(s.path+"\n"+old) {
		a, ok1 := durationSeconds(ov)
		b, ok2 := durationSeconds(nv)
		if ok1 && ok2 && a > 0 && b >= 4*a {
			return "stretches " + clipText(s.path, 48) + " from " + ov + " to " + nv + ": what it certifies lives " + factor(b/a) + " longer"
		}
	}
	return ""
}

// listItems21 splits a list value's items, unquoted and lower case.
func listItems21(v string) []string {
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.ToLower(strings.Trim(strings.TrimSpace(x), `"'`)); x != "" && len(out) < 32 {
			out = append(out, x)
		}
	}
	return out
}

// listWeakened judges a list setting's items moved: a weak algorithm
// added, requirements or deny entries dropped, exclusions grown.
func listWeakened(s qualSetting, was, now []string, old string) string {
	had := map[string]bool{}
	for _, x := range was {
		had[x] = true
	}
	has := map[string]bool{}
	var added []string
	for _, x := range now {
		has[x] = true
		if !had[x] {
			added = append(added, x)
		}
	}
	var dropped []string
	for _, x := range was {
		if !has[x] {
			dropped = append(dropped, x)
		}
	}
	if algKey.MatchString(s.leaf) && len(was) > 0 {
		for _, x := range added {
			if weakAlg.MatchString(x) {
				return "adds " + x + " to " + clipText(s.path, 40) + " beside " + clipText(strings.Join(was, ", "), 40) + ": a weak or symmetric algorithm is accepted"
			}
		}
	}
	if len(dropped) > 0 && len(added) == 0 {
		if requiredKey.MatchString(s.leaf) && requiredContext.MatchString(s.path+"\n"+old) {
			return "drops " + clipText(strings.Join(dropped, ", "), 40) + " from " + clipText(s.path, 40) + ": they are no longer required"
		}
		if keepOutList.MatchString(s.leaf) && len(now) > 0 {
			return "takes " + clipText(strings.Join(dropped, ", "), 40) + " off " + clipText(s.path, 40) + ": what it kept out gets in"
		}
	}
	if len(added) > 0 && len(dropped) == 0 && len(was) > 0 && exclusionKey21.MatchString(s.leaf) && exclusionContext.MatchString(s.path+"\n"+old) {
		return "adds " + clipText(strings.Join(added, ", "), 40) + " to " + clipText(s.path, 40) + ": more is exempt from the check"
	}
	return ""
}
