package shield

import (
	"net/mail"
	"path"
	"strings"
)

// Infrastructure and framework configuration weakened (issue 27, pass 6;
// docs/shield-rules.md "appsec:control-weakened"). The same judgement as
// for application source, by the change's shape: in Terraform/HCL,
// Kubernetes/Helm YAML, framework config (Spring, cargo-deny, …) a
// setting's value moves down its ladder (deny → allow, restricted →
// privileged, COMPLIANCE → GOVERNANCE, an audit logger's level → OFF), a
// scope widens to everything (a list → "*", a network range →
// 0.0.0.0/0), administrator rights are granted whole (AdministratorAccess,
// an IAM action "*", a binding to cluster-admin), an audit record's write
// is removed or commented out, or SECURITY.md's contact moves to another
// domain. What a setting is called does not matter; its old and new value
// do.

// ladders are value scales, strong first: a setting whose old value is
// one of a ladder's strong values and whose new value is one of its weak
// values is weakened, whatever its key.
var ladders = []struct{ strong, weak []string }{
	// a policy's decision
	{[]string{"deny", "forbid", "reject", "block", "denied"}, []string{"allow", "allowed", "permit", "accept", "ignore", "skip", "warn", "none", "off"}},
	// an enforcement mode or level
	{[]string{"restricted", "baseline", "enforce", "enforcing", "enforced", "compliance", "strict", "required", "require", "mandatory", "verify-full", "verify-ca",
		// rules 20: a client certificate needed (Spring's client-auth: need)
		"need"},
		[]string{"privileged", "governance", "permissive", "disabled", "disable", "optional", "none", "off", "allow", "prefer", "dryrun", "dry-run", "audit", "warn", "unrestricted", "lax",
			// rules 16: GCS's public_access_prevention enforced → inherited
			"inherited", "unspecified",
			// rules 20: wanted, not needed; lenient locking
			"want", "lenient"}},
}

// auditKey is a setting's key naming an audit or security logger, whose
// level set to off silences it.
var auditKey = mustRx(`(?i)audit|security|access[._-]?log`)

// logLevels are a logger's levels that record something.
var logLevels = map[string]bool{"trace": true, "debug": true, "info": true, "warn": true, "warning": true, "error": true, "all": true, "notice": true}

// kvLine is one setting on a line: key, separator, value.
var kvLine = mustRx(`^["']?([\w.$/@\-\[\]]+)["']?\s*(?:=|:|=>)\s*(.+?)\s*,?$`)

// kv returns the key and value of a setting line (value without quotes
// or brackets, in lower case), or "", "".
func kv(l string) (key, val string) {
	m := kvLine.FindStringSubmatch(l)
	if m == nil {
		return "", ""
	}
	v := strings.ToLower(strings.Trim(m[2], ` "'[](){};`))
	return strings.ToLower(m[1]), v
}

func inList(v string, l []string) bool {
	for _, x := range l {
		if v == x {
			return true
		}
	}
	return false
}

// wildcardScope reports whether a value means everything: "*", a
// network range of the whole internet.
func wildcardScope(v string) bool {
	v = strings.Trim(v, ` "'`)
	return v == "*" || strings.Contains(v, "0.0.0.0/0") || strings.Contains(v, "::/0")
}

// settingFlip returns why a changed setting moved to a weaker value (its
// key set in both the removed and the added lines), or "".
func settingFlip(plus, minus []string) string {
	if len(minus) == 0 {
		return ""
	}
	old := map[string]string{}
	for _, l := range minus {
		if k, v := kv(l); k != "" {
			old[k] = v
		}
	}
	for _, l := range plus {
		k, v := kv(l)
		ov, ok := old[k]
		if k == "" || !ok || ov == v {
			continue
		}
		for _, ld := range ladders {
			if inList(ov, ld.strong) && inList(v, ld.weak) {
				return "moves " + clipText(k, 40) + " from " + ov + " to " + v + " (" + clipText(l, 80) + ")"
			}
		}
		if (v == "off" || v == "none") && logLevels[ov] && auditKey.MatchString(k) {
			return "silences the " + clipText(k, 40) + " logger (" + clipText(l, 80) + ")"
		}
		if wildcardScope(v) && !wildcardScope(ov) && ov != "" {
			return "widens " + clipText(k, 40) + " from " + clipText(ov, 30) + " to everything (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// adminGrant is configuration that grants administrator rights whole.
var adminGrant = mustRx(`(?i)policy/AdministratorAccess\b|["']?\b(Action|actions|NotResource)["']?\s*[:=]\s*\[?\s*["']\*["']|["']iam:\*["']|\broles/(owner|editor)\b`)

// grantWhole returns why added lines grant administrator rights, or "".
func grantWhole(plus []string, newText string) string {
	for _, l := range plus {
		if adminGrant.MatchString(l) {
			return "administrator rights granted whole (" + clipText(l, 80) + ")"
		}
		if k, v := kv(l); k == "name" && v == "cluster-admin" && strings.Contains(newText, "RoleBinding") {
			return "a binding to cluster-admin (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// auditWrite is code that writes an audit record.
var auditWrite = mustRx(`(?i)\baudit\w*\s*\.\s*(save|insert|write|log|record|emit|publish|append|add|create|send|put|info)\w*\s*\(|\b(insert\s+into|into)\s+["'\x60]?\w*audit|\.(save|insert|write|record|emit|publish|append)\w*\(\s*\w*audit`)

// uncommented is text without its comment lines.
func uncommented(text string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !commentLine(t) {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// auditRemoved returns why the change stops writing an audit record (the
// write removed or commented out, and no other written in its place), or
// "".
func auditRemoved(minus, plus []string) string {
	for _, l := range plus {
		if auditWrite.MatchString(l) {
			return ""
		}
	}
	for _, l := range minus {
		if auditWrite.MatchString(l) {
			return "stops writing an audit record (" + clipText(l, 80) + ")"
		}
	}
	return ""
}

// securityContact reports whether p is where a project says to report
// vulnerabilities.
func securityContact(p string) bool {
	b := strings.ToLower(path.Base(p))
	return b == "security.md" || b == "security.txt" || b == "security.rst"
}

var emailRe = mustRx(`[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+`)

// contactMoved returns why a change to a security policy sends reports to
// an address on a domain the old text never named, or "".
func contactMoved(added, old string) string {
	if old == "" {
		return ""
	}
	oldDomains := map[string]bool{}
	for _, e := range emailRe.FindAllString(clipRaw(old, maxAppsecText), 64) {
		if a, err := mail.ParseAddress(e); err == nil {
			oldDomains[strings.ToLower(a.Address[strings.LastIndexByte(a.Address, '@')+1:])] = true
		}
	}
	if len(oldDomains) == 0 {
		return ""
	}
	for _, e := range emailRe.FindAllString(clipRaw(added, maxAppsecText), 64) {
		d := strings.ToLower(e[strings.LastIndexByte(e, '@')+1:])
		if !oldDomains[d] {
			return "vulnerability reports sent to " + clipText(e, 60) + ", a domain the policy did not name"
		}
	}
	return ""
}
