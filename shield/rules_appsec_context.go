package shield

import (
	"strings"
)

// Switches read in their context (rules 15, session 20; docs/shield-rules.md
// "Rules 15: switches in their context"). The settings rules read a key
// by its own name: `enabled: false` under `networkPolicy:`, `"Enabled":
// false` inside `"Audit": { … }`, `enabled: false` beside `categoryGroup:
// 'audit'` name nothing by themselves, and an XML element
// (<CentralPackageTransitivePinningEnabled>false</…>) had no separator to
// read. Here each side of an edit is read as keys qualified by their
// parents — a YAML block's indentation, an inline object's key, an XML
// element's name — and a switch turned off (true → false, on → off) whose
// qualified key, or the line around it, names a protection is a control
// weakened.

// genericSwitch are keys that say only whether something is on.
var genericSwitch = setOf("enabled", "enable", "isenabled", "active", "state", "on", "mode", "status", "value")

// ctxSwitch is a switch found in a text: its qualified key (parents
// joined by dots, lower case), its value, the line it stands on.
type ctxSwitch struct{ key, val, line string }

// xmlSetting is an element holding a value on one line: <Key>value</Key>.
var xmlSetting = mustRx(`<([A-Za-z][\w.-]{0,80})>\s*([^<\s]{1,40})\s*</([A-Za-z][\w.-]{0,80})>`)

// maxCtxLines bounds the lines read per side, maxCtxDepth the parents
// kept (a deeper block is read under its first maxCtxDepth parents), so
// the work per side stays linear whatever the text's shape.
const (
	maxCtxLines = 2000
	maxCtxDepth = 8
)

// contextSwitches reads text's switches with their parents' keys.
func contextSwitches(text string) []ctxSwitch {
	type parent struct {
		indent int
		key    string
	}
	var stack []parent
	var out []ctxSwitch
	n := 0
	for raw := range strings.SplitSeq(clipRaw(text, maxAppsecText), "\n") {
		if n++; n > maxCtxLines {
			break
		}
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimLeft(line, " \t-")
		if trimmed == "" || commentLine(trimmed) {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		prefix := ""
		for _, p := range stack {
			prefix += p.key + "."
		}
		for _, m := range xmlSetting.FindAllStringSubmatch(trimmed, 4) {
			if strings.EqualFold(m[1], m[3]) {
				out = append(out, ctxSwitch{key: prefix + strings.ToLower(m[1]), val: strings.ToLower(m[2]), line: trimmed})
			}
		}
		// A parent: "key:" alone (YAML), "key: {" or "key = {" opening
		// an object on this line or the next.
		if k, rest, ok := cutKey(trimmed); ok && (rest == "" || rest == "{" || rest == "|" || rest == ">") {
			if len(stack) < maxCtxDepth {
				stack = append(stack, parent{indent, k})
			}
			continue
		}
		// Inline objects: "Audit": { "Enabled": false } — a key whose
		// value opens a brace qualifies the pairs after it on the line.
		inline := ""
		for _, seg := range strings.SplitN(clipRaw(trimmed, 4096), "{", maxCtxDepth+1) {
			for _, m := range anySetting.FindAllStringSubmatch(seg, 8) {
				key := strings.ToLower(strings.Trim(m[1], `"'$`))
				v := strings.ToLower(strings.Trim(m[2], ` "'`))
				if v == "" {
					continue
				}
				out = append(out, ctxSwitch{key: prefix + inline + key, val: v, line: trimmed})
			}
			if k, _, ok := cutKey(strings.TrimSpace(lastField(seg))); ok {
				inline += k + "."
			}
		}
	}
	return out
}

// cutKey splits "key: rest" or "key = rest" (the key bare or quoted)
// and reports whether line is such a pair.
func cutKey(line string) (string, string, bool) {
	i := strings.IndexAny(line, ":=")
	if i <= 0 || i > 80 {
		return "", "", false
	}
	k := strings.Trim(strings.TrimSpace(line[:i]), `"'`)
	if k == "" || strings.ContainsAny(k, " \t(){}[]<>,;") {
		return "", "", false
	}
	return strings.ToLower(k), strings.TrimSpace(line[i+1:]), true
}

// lastField returns the text after the last comma of s (the key an
// inline object's brace belongs to).
func lastField(s string) string {
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		return s[i+1:]
	}
	return s
}

// switchedOffInContext returns why an edit (added replacing old) turns off
// a protection named by a switch's context, or "".
func switchedOffInContext(added, old string) string {
	if old == "" || added == "" {
		return ""
	}
	before := map[string]string{}
	for _, s := range contextSwitches(old) {
		if _, ok := before[s.key]; !ok {
			before[s.key] = s.val
		}
	}
	for _, s := range contextSwitches(added) {
		o, had := before[s.key]
		if !had || o == s.val || !valOff(s.val) || !valOn(o) {
			continue
		}
		parts := strings.Split(s.key, ".")
		leaf := normKey(parts[len(parts)-1])
		whole := normKey(strings.ReplaceAll(s.key, ".", ""))
		named := protectConcept.MatchString(leaf) && !diagnostic.MatchString(leaf)
		if !named && (genericSwitch[leaf] || strings.HasSuffix(leaf, "enabled") || strings.HasSuffix(leaf, "mode")) {
			named = (protectConcept.MatchString(whole) || ctxProtection.MatchString(whole) || ctxProtection.MatchString(strings.ToLower(s.line))) && !diagnostic.MatchString(whole)
		}
		if named {
			return "turns " + clipText(s.key, 60) + " off"
		}
	}
	return ""
}

// ctxProtection are protections named by a switch's parent or its line,
// beyond protectConcept: network policies, diagnostics that record
// audit events, transitive pins.
var ctxProtection = mustRx(`networkpolic|egress|ingress|audit|diagnostic|defender|securitycenter|policy|rbac|admission|podsecurity|seccomp|apparmor|transitivepinning|pinning|threatdetection|advancedthreat|vulnerabilityassessment|soft.?delete|purgeprotection|lockedmode|restorelocked|vulnerab|securityupdates|osvvulnerab`)
