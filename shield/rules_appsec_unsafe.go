package shield

import (
	"strings"
)

// Code made unsafe by small edits (rules 13; docs/shield-rules.md
// "appsec:control-weakened"), in any language:
//
//   - a safe variant replaced by its plain counterpart on an otherwise
//     equal line: an identifier whose segment begins with "safe"
//     (safeTransferFrom, yaml.safe_load, safe_join, SafeConstructor)
//     losing it (transferFrom, yaml.load, join). "safe" as a suffix or a
//     filter (html_safe, mark_safe, |safe) marks content trusted, the
//     opposite, and is the raw-HTML rule's;
//   - a guard modifier taken from a function that keeps its signature
//     (Solidity's nonReentrant, onlyOwner, onlyRole(…), whenNotPaused);
//   - a guard's condition narrowed: require/assert/ensure/precondition
//     keeping some of its conjuncts and dropping others;
//   - tx.origin put where msg.sender authenticated (a contract called by
//     any other contract acts for whoever started the transaction).

// unsafeEdit returns why the edit's lines make code unsafe, or "".
func unsafeEdit(plus, minus []string) string {
	if len(plus) == 0 || len(minus) == 0 {
		return ""
	}
	plus, minus = plus[:min(len(plus), 128)], minus[:min(len(minus), 128)]
	norm := func(l string) string { return strings.Join(strings.Fields(l), " ") }
	added := map[string]bool{}
	for _, l := range plus {
		added[norm(l)] = true
	}
	for _, m := range minus {
		lm := norm(m)
		// a safe variant replaced
		if strings.Contains(strings.ToLower(lm), "safe") {
			if plain := dropSafePrefix(lm); plain != lm && addedFold(added, plain) {
				return "replaces a safe variant with its plain one (" + clipText(strings.TrimSpace(m), 80) + ")"
			}
		}
		// a guard modifier taken
		for _, mod := range guardModifiers {
			if i := strings.Index(lm, mod); i >= 0 && strings.Contains(lm, "function") {
				without := norm(lm[:i] + lm[i+len(mod):])
				if added[without] {
					return "takes " + strings.TrimSpace(mod) + " from " + clipText(strings.TrimSpace(m), 80)
				}
			}
		}
		// a guard's condition narrowed
		if name, conds, rest, ok := guardCall(lm); ok && len(conds) > 1 {
			for _, l := range plus {
				n2, c2, r2, ok2 := guardCall(norm(l))
				if ok2 && n2 == name && r2 == rest && len(c2) < len(conds) && subset(c2, conds) {
					return "narrows the guard " + clipText(strings.TrimSpace(m), 80) + " to " + clipText(strings.TrimSpace(l), 60)
				}
			}
		}
		// a bound lifted to its type's maximum
		if k, v, ok := boundLine(lm); ok && isNumberWord(v) {
			for _, l := range plus {
				if k2, v2, ok2 := boundLine(norm(l)); ok2 && k2 == k && unboundedValue.MatchString(v2) {
					return "lifts the bound " + clipText(k, 40) + " from " + clipText(v, 20) + " to " + clipText(v2, 30)
				}
			}
		}
		// a pipeline's manual approval gate removed
		if manualGate.MatchString(lm) {
			kept := false
			for _, l := range plus {
				kept = kept || manualGate.MatchString(l)
			}
			if !kept {
				for _, l := range plus {
					if autoGate.MatchString(l) {
						return "removes a pipeline's manual approval (" + clipText(strings.TrimSpace(m), 40) + " → " + clipText(strings.TrimSpace(l), 40) + ")"
					}
				}
			}
		}
		// tx.origin where msg.sender was
		if strings.Contains(lm, "msg.sender") && addedFold(added, strings.ReplaceAll(lm, "msg.sender", "tx.origin")) {
			return "authenticates by tx.origin where msg.sender was (" + clipText(strings.TrimSpace(m), 60) + ")"
		}
	}
	return ""
}

// guardModifiers are Solidity's guard modifiers, as written in a
// function's signature.
var guardModifiers = []string{" nonReentrant", " onlyOwner", " whenNotPaused", " onlyAdmin", " onlyGovernance", " requiresAuth", " onlyRole("}

// dropSafePrefix removes "safe" (and "safe_") where it begins an
// identifier or a method name: safeTransferFrom -> transferFrom,
// yaml.safe_load -> yaml.load, SafeConstructor -> Constructor.
func dropSafePrefix(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		seg := i == 0 || !isAlnum(l[i-1]) && l[i-1] != '_' // an identifier's start, or a method's after "." (not is_safe_path's middle)
		if seg && i+4 < len(l) && strings.EqualFold(l[i:i+4], "safe") {
			next := l[i+4]
			switch {
			case next == '_':
				i += 4 // safe_load -> load
				continue
			case next >= 'A' && next <= 'Z':
				// safeTransferFrom -> transferFrom
				b.WriteByte(next + 'a' - 'A')
				i += 4
				continue
			}
		}
		b.WriteByte(l[i])
	}
	return b.String()
}

// addedFold reports whether added holds l, without case.
func addedFold(added map[string]bool, l string) bool {
	if added[l] {
		return true
	}
	for a := range added {
		if strings.EqualFold(a, l) {
			return true
		}
	}
	return false
}

// guardCall reads "require(A && B, msg)" (and assert, ensure,
// precondition, invariant): the call's name, its condition's conjuncts,
// and what follows the condition in the call.
func guardCall(l string) (name string, conds []string, rest string, ok bool) {
	for _, g := range []string{"require(", "assert(", "ensure(", "precondition(", "invariant(", "guard("} {
		i := strings.Index(l, g)
		if i < 0 || i > 0 && isAlnum(l[i-1]) {
			continue
		}
		inner := l[i+len(g):]
		depth, end := 0, -1
		comma := -1
		for k := 0; k < len(inner) && end < 0; k++ {
			switch inner[k] {
			case '(':
				depth++
			case ')':
				if depth == 0 {
					end = k
				}
				depth--
			case ',':
				if depth == 0 && comma < 0 {
					comma = k
				}
			}
		}
		if end < 0 {
			return "", nil, "", false
		}
		cond := inner[:end]
		if comma >= 0 {
			cond, rest = inner[:comma], inner[comma:end]
		}
		for _, c := range strings.Split(strings.ReplaceAll(cond, " and ", "&&"), "&&") {
			if c = strings.TrimSpace(c); c != "" {
				conds = append(conds, c)
			}
		}
		return g, conds, rest, len(conds) > 0
	}
	return "", nil, "", false
}

func subset(a, b []string) bool {
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			return false
		}
	}
	return true
}

// boundKey is a key that bounds work or input; unboundedValue a value
// that lifts the bound (a type's maximum, infinity); manualGate and
// autoGate a CI job's manual approval and its automatic replacement.
var (
	boundKey       = mustRx(`(?i)max|limit|cap(?:acity)?$|bound|quota|entries|depth|size|len(?:gth)?$|count$|attempts|retries`)
	unboundedValue = mustRx(`(?i)^(?:max_int|maxint|int\.max|math\.maxint\d*|maxint\d*|integer\.max_value|long\.max_value|int\.max_value|sys\.maxsize|math\.inf|float\(["']inf["']\)|infinity|number\.(?:max_safe_integer|positive_infinity)|[ui](?:8|16|32|64|128|size)::max|usize::max|typemax\(\w+\)|\.inf|-1)[;,)]*$`)
	manualGate     = mustRx(`(?i)^\s*-?\s*(?:when:\s*manual|manual:\s*true|type:\s*approval|-\s*block:|block:\s*["']?\w)`)
	autoGate       = mustRx(`(?i)^\s*-?\s*when:\s*(?:always|on_success)\b`)
)

// boundLine reads "let key = v", "key: v", "const KEY = v" (a bound's key,
// by boundKey) as key and value.
func boundLine(l string) (string, string, bool) {
	i := strings.IndexAny(l, "=:")
	if i <= 0 || i == len(l)-1 {
		return "", "", false
	}
	key := strings.TrimSpace(l[:i])
	if j := strings.LastIndexAny(key, " \t"); j >= 0 {
		key = key[j+1:]
	}
	key = strings.Trim(key, `"'`)
	val := strings.TrimSpace(strings.TrimLeft(l[i+1:], "="))
	if j := strings.LastIndexByte(val, '='); j >= 0 { // "KEY: usize = 32" (a type between)
		val = strings.TrimSpace(val[j+1:])
	}
	if key == "" || len(key) > 60 || !boundKey.MatchString(key) {
		return "", "", false
	}
	return key, val, true
}

// isNumberWord reports whether v is a number (with _ or , separators, a
// trailing ; or ,).
func isNumberWord(v string) bool {
	v = strings.TrimRight(v, ";,")
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c == '_' || c == '.' && i > 0) {
			return false
		}
	}
	return true
}
