package shield

import (
	"path"
	"strconv"
	"strings"
)

// Rules 21, code (session 26, after holdout28's and holdout29's measures;
// docs/shield-rules.md "Rules 21"): edits that loosen a check in code or
// in a policy language without touching a setting — a domain matched by
// its suffix without the dot, a comparison's bound multiplied, a cookie's
// Secure or HttpOnly dropped, a policy rule's condition removed or made
// false, a resource in a policy widened to a prefix's wildcard — and what
// a build tool's files switch off (a test tagged manual, another module
// registry, the lockfile check).

var (
	// a suffix match on a domain written without its leading dot
	suffixDomain = mustRx(`(?:endsWith|HasSuffix|end_with\?|endswith|EndsWith|str_ends_with|hasSuffix)\s*\(\s*(?:[\w.\[\]()]+\s*,\s*)?["']([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+)["']`)
	// a number a comparison's bound was multiplied by
	multiplied = mustRx(`^\s*\*\s*\(?\s*(\d[\d_]*)\s*\)?\s*$`)
	// cookie attributes, in a line that sets a cookie
	cookieLine = mustRx(`(?i)samesite|set-cookie|path=/|cookie`)
	cookieFlag = mustRx(`(?i)\b(HttpOnly|Secure)\b`)
	// a policy language's files
	policyExt = map[string]bool{".rego": true, ".cedar": true, ".sentinel": true, ".polar": true}
	// a comparison flipped
	flipOps = [][2]string{{"!=", "=="}, {"==", "!="}}
	// quoted literals
	quotedLit = mustRx(`"([^"\s]{3,200})"|'([^'\s]{3,200})'`)
	// files and text about who may do what
	grantContext = mustRx(`(?i)polic|iam|rbac|acl|role|grant|permission|access|authz|scope`)
	// a Bazel test target tagged so `bazel test //...` skips it
	manualTag = mustRx(`tags\s*=\s*\[[^\]]*["'](?:manual|no-ci|noci|skip|disabled)["']`)
	// a bazelrc flag redirecting the module registry or turning the lockfile off
	bazelRegistry = mustRx(`--registry[= ](\S+)`)
	bazelLockOff  = mustRx(`--lockfile_mode[= ](?:off|update|refresh)\b|--noenable_bzlmod_lockfile|--experimental_check_external_repository_files=false|--nocheck_direct_dependencies`)
)

// codeLoosened returns how an edit of code or of a policy loosens a check,
// or "".
func codeLoosened(p, added, old string) string {
	ext := strings.ToLower(path.Ext(p))
	plus, minus := diffLinesKept(added, old, func(l string) bool { return !commentLine(l) }, maxLines20)
	for _, l := range plus {
		if m := suffixDomain.FindStringSubmatch(l); m != nil && !strings.Contains(old, m[0]) {
			return "matches " + m[1] + " as a suffix without its dot: attacker-" + m[1] + " matches too (" + clipText(l, 60) + ")"
		}
	}
	for _, m := range minus {
		for _, l := range plus {
			if why := boundMultiplied(m, l); why != "" {
				return why
			}
			if cookieLine.MatchString(m) && cookieLine.MatchString(l) {
				for _, f := range cookieFlag.FindAllString(m, 2) {
					if !cookieFlag.MatchString(l) || !strings.Contains(strings.ToLower(l), strings.ToLower(f)) {
						return "drops " + f + " from a cookie (" + clipText(l, 60) + "): scripts or plain HTTP reach it"
					}
				}
			}
		}
	}
	if why := rules22Code(plus, minus); why != "" {
		return why
	}
	if policyExt[ext] {
		if len(plus) == 0 && len(minus) > 0 {
			return "removes " + quote(clipText(minus[0], 60)) + " from the policy: what it required no longer holds"
		}
		for _, l := range plus {
			if l == "false" && !strings.Contains(old, "\n"+l) {
				return "adds a bare false to a rule: it never holds, and what it denied passes"
			}
		}
		for _, m := range minus {
			for _, l := range plus {
				for _, op := range flipOps {
					if strings.Count(m, op[0]) == 1 && strings.Replace(m, op[0], op[1], 1) == l {
						return "inverts " + quote(clipText(m, 60)) + " (" + op[0] + " → " + op[1] + ")"
					}
				}
			}
		}
	}
	if grantContext.MatchString(p + "\n" + old) {
		// the added lines' literals, read once
		var lits []string
		for _, l := range plus {
			for _, nm := range quotedLit.FindAllStringSubmatch(l, 8) {
				lits = append(lits, nm[1]+nm[2])
			}
		}
		for _, m := range minus {
			for _, om := range quotedLit.FindAllStringSubmatch(m, 8) {
				ol := om[1] + om[2]
				// rules 22: a scope that already ends in a wildcard or
				// names each identity (${iot:ClientId}) is compared by
				// what comes before them
				scope, perIdentity := ol, false
				if i := strings.Index(scope, "${"); i >= 0 {
					scope, perIdentity = scope[:i], true
				} else if strings.HasSuffix(scope, "*") || strings.HasSuffix(scope, "#") {
					scope = strings.TrimRight(scope, "*#")
					if strings.HasSuffix(scope, "/") || strings.HasSuffix(scope, ":") {
						continue // already everything beneath
					}
				}
				for _, nl := range lits {
					pre, ok := strings.CutSuffix(nl, "*")
					if !ok {
						pre, ok = strings.CutSuffix(nl, "#")
					}
					if ok && len(pre) >= 2 && strings.HasPrefix(scope, pre) && (len(pre) < len(scope) || perIdentity) && strings.Contains(pre, "/") {
						return "widens " + quote(ol) + " to " + quote(nl) + ": the grant covers everything beneath"
					}
				}
			}
		}
	}
	return ""
}

// boundMultiplied reports how line now multiplies the bound a comparison
// holds a value to (was: x > band; now: x > band * 40), fourfold or more.
func boundMultiplied(was, now string) string {
	i, ins, ok := inserted(was, now)
	if !ok {
		return ""
	}
	m := multiplied.FindStringSubmatch(ins)
	if m == nil {
		return ""
	}
	prefix := was[:i]
	k := strings.LastIndexAny(prefix, "<>")
	if k < 0 || prefix[k] != '>' || strings.Contains(prefix[k:], "->") {
		return ""
	}
	n, err := strconv.Atoi(strings.ReplaceAll(m[1], "_", ""))
	if err != nil || n < 4 {
		return ""
	}
	return "multiplies the bound of " + quote(clipText(strings.TrimSpace(was), 60)) + " by " + m[1] + ": the check fires " + m[1] + " times later"
}

// inserted reports whether now is was with text inserted at one place (no
// other change), where (i, in was) and what (ins).
func inserted(was, now string) (i int, ins string, ok bool) {
	for i < len(was) && i < len(now) && was[i] == now[i] {
		i++
	}
	j := 0
	for j < len(was)-i && j < len(now)-i && was[len(was)-1-j] == now[len(now)-1-j] {
		j++
	}
	if len(was)-i-j != 0 {
		return 0, "", false
	}
	return i, now[i : len(now)-j], true
}

// buildSwitchedOff returns what a write to a build tool's file switches
// off: a test target tagged manual (BUILD), another module registry or
// the lockfile's check (a bazelrc), or "".
func buildSwitchedOff(p string, plus []string, old string) (rule, why string) {
	base := path.Base(p)
	switch {
	case base == "BUILD" || base == "BUILD.bazel":
		for _, l := range plus {
			if manualTag.MatchString(l) && !manualTag.MatchString(old) && strings.Contains(old, "_test(") {
				return "evasion:check-loosened", "tags a test target " + quote(clipText(l, 40)) + ": bazel test //... skips it"
			}
		}
	case strings.HasSuffix(base, "bazelrc"):
		for _, l := range plus {
			if m := bazelRegistry.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], "bcr.bazel.build") && !strings.Contains(old, m[1]) {
				return "supply-chain:source", "sets Bazel's module registry to " + m[1] + ": modules resolve from there"
			}
			if m := bazelLockOff.FindString(l); m != "" && !strings.Contains(old, m) {
				return "supply-chain:source", "turns Bazel's lockfile check off (" + m + "): modules resolve without their recorded hashes"
			}
		}
	}
	return "", ""
}
