package shield

import (
	"path"
	"strings"
)

// Protections neutered without being removed (issue 27, pass 7, rules
// 10; docs/shield-rules.md "appsec:control-weakened"). A function that
// masks, redacts, hashes, encrypts or anonymizes data keeps its name and
// call sites while its body stops protecting: the transform replaced by
// the value itself, a return placed before the work, the list of what to
// protect emptied. And a check made to fail open: its condition guarded by
// the presence of the very credential it checks, so a request without one
// passes. Judged by the shape of the edit, in any language or template.

// protectWords name code that protects data, in a path or a definition.
var protectWords = mustRx(`(?i)pii|mask|redact|anonymi[sz]|pseudonymi[sz]|privacy|gdpr|sanitiz|scrub|hash|encrypt|crypt|dlp|tokeniz|obfuscat|de-?identif`)

// protectDef is a definition of a function or macro whose name says it
// protects data.
var protectDef = mustRx(`(?i)(?:\bdef|\bfunc|\bfunction|\bfn|macro|\bsub|\bprivate|\bpublic|\bstatic|\bconst|\blet)\s+(?:\([^)]*\)\s*)?\w*(?:pii|mask|redact|anonymi[sz]|pseudonymi[sz]|sanitiz|scrub|hash|encrypt|tokeniz|obfuscat|deidentif)\w*`)

// protectOp is a line that transforms data to protect it.
var protectOp = mustRx(`(?i)\b\w*(?:md5|sha\d*|hash|hmac|digest|encrypt|crypt|argon2|blake2?|mask|redact|anonymi[sz]|pseudonym|tokeniz|scrub|sanitiz|obfuscat|protect|seal)\w*\s*\(|regexp_replace|\*\*\*|'x+'|"x+"|\bnull\s+as\b`)

// passThroughLine is a line that hands its input back unchanged: a
// template's variable, a bare name, a return of a name.
var passThroughLine = mustRx(`^(?:\{\{-?\s*[\w.]+\s*-?\}\}|return\s+[\w.]+\s*;?|[\w.]+\s*;?|select\s+[\w.]+(?:\s+as\s+\w+)?)$`)

// protectList is an assignment or setting of what to protect.
var protectList = mustRx(`(?i)^\s*(?:const\s+|let\s+|var\s+|final\s+|static\s+)*["']?(\w*(?:pii|sensitive|mask|redact|confidential|personal|private|protected|secret)\w*)["']?\s*(?::[^=\n]{0,60})?(?:=|:)\s*(.*?)\s*[,;]?$`)

// emptyCollection is a collection literal with nothing in it.
var emptyCollection = mustRx(`^(?:\(\s*\)|\[\s*\]|\{\s*\}|\[\]\*?[\w.]+\{\s*\}|map\[[^\]]{1,40}\][\w.*]+\{\s*\}|(?:new\s+)?\w+\[\]\s*\{\s*\}|Array\(\s*\)|%[wi]\[\s*\]|set\(\s*\)|tuple\(\s*\)|frozenset\(\s*\)|list\(\s*\)|new\s+\w+(?:<[^>]*>)?\(\s*\)|\w+\.(?:of|empty\w*)\(\s*\)|None|null|nil)$`)

// neutered returns why an edit of p stops a protection from protecting
// (added, old: the new and old text), or "".
func neutered(p, added, old string, plus, minus []string) string {
	if old == "" {
		return ""
	}
	protective := protectWords.MatchString(path.Base(path.Dir(p))+"/"+path.Base(p)) || protectDef.MatchString(clipRaw(old, maxAppsecText))
	if protective {
		// The transform replaced by the value itself.
		transform := ""
		for _, l := range minus {
			if protectOp.MatchString(l) {
				transform = l
				break
			}
		}
		if transform != "" {
			restored := false
			for _, l := range plus {
				if protectOp.MatchString(l) {
					restored = true
					break
				}
			}
			if !restored {
				for _, l := range plus {
					if passThroughLine.MatchString(l) {
						return "a data protection made a pass-through: " + clipText(transform, 60) + " replaced by " + clipText(l, 40)
					}
				}
			}
		}
		// A return placed before the work.
		if why := earlyReturnAdded(added, old); why != "" {
			return why
		}
	}
	// The list of what to protect emptied.
	oldVals := map[string]string{}
	for _, l := range minus {
		if !strings.ContainsAny(l, "=:") {
			continue
		}
		if m := protectList.FindStringSubmatch(l); m != nil {
			oldVals[strings.ToLower(m[1])] = m[2]
		}
	}
	for _, l := range plus {
		if len(oldVals) == 0 {
			break
		}
		if m := protectList.FindStringSubmatch(l); m != nil && emptyCollection.MatchString(m[2]) {
			if ov, ok := oldVals[strings.ToLower(m[1])]; ok && !emptyCollection.MatchString(ov) && ov != "" {
				return "empties " + clipText(m[1], 40) + ", the list of what is protected (" + clipText(l, 60) + ")"
			}
		}
	}
	return failOpen(plus, minus)
}

// earlyReturnAdded returns why the new text returns before code that
// follows at the same depth (the work made unreachable), where the old
// text did not, or "".
func earlyReturnAdded(added, old string) string {
	lines := strings.Split(clipRaw(added, maxAppsecText), "\n")
	var had map[string]bool
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "return") {
			continue
		}
		if had == nil {
			had = map[string]bool{}
			for o := range strings.SplitSeq(clipRaw(old, maxAppsecText), "\n") {
				had[strings.TrimSpace(o)] = true
			}
		}
		if had[t] {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		for _, n := range lines[i+1:] {
			nt := strings.TrimSpace(n)
			if nt == "" || commentLine(nt) {
				continue
			}
			nind := len(n) - len(strings.TrimLeft(n, " \t"))
			if nind == ind && !strings.HasPrefix(nt, "}") && !strings.HasPrefix(nt, "end") && !strings.HasPrefix(nt, "def ") &&
				!strings.HasPrefix(nt, "case ") && !strings.HasPrefix(nt, "default") && !strings.HasPrefix(nt, "else") && !strings.HasPrefix(nt, "elif") && !strings.HasPrefix(nt, "except") && !strings.HasPrefix(nt, "{%") {
				return "returns before the protection runs (" + clipText(t, 40) + " before " + clipText(nt, 40) + ")"
			}
			break
		}
	}
	return ""
}

var (
	// ifCond is a condition line: its condition without the keyword,
	// parentheses, a trailing colon or brace.
	ifCond = mustRx(`^(?:\}\s*)?(?:else\s+if|elif|elsif|if|unless)\s*\(?\s*(.+?)\s*\)?\s*(?:\{|:|then)?$`)
	// presence is a test that a value is there: a bare name, not None,
	// not null, not empty.
	presence = mustRx(`^(?:!!)?([\w.\[\]'"-]+)(?:\s+is\s+not\s+None|\s*!==?\s*(?:null|undefined|nil|None|""|'')|\s*\.present\?|\s*!=\s*""|\s*\.is_some\(\))?$`)
	// credentialWords name what a check compares.
	credentialWords = mustRx(`(?i)token|auth|bearer|key|secret|signature|hmac|digest|password|session|cookie|credential|verify|api`)
)

// maxFailOpenConds bounds the removed conditions failOpen compares each
// added condition with.
const maxFailOpenConds = 16

// failOpen returns why a check's condition now runs only when the value
// it checks is present (a request without it passes), or "".
func failOpen(plus, minus []string) string {
	var olds []string
	for _, l := range minus {
		if !condStart(l) {
			continue
		}
		if m := ifCond.FindStringSubmatch(l); m != nil && credentialWords.MatchString(m[1]) {
			olds = append(olds, m[1])
			if len(olds) == maxFailOpenConds {
				break
			}
		}
	}
	if len(olds) == 0 {
		return ""
	}
	for _, l := range plus {
		if !condStart(l) {
			continue
		}
		m := ifCond.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, c := range olds {
			i := strings.Index(m[1], c)
			if i <= 0 {
				continue
			}
			guard := strings.TrimSpace(m[1][:i])
			for _, op := range []string{"and", "&&"} {
				if g, ok := strings.CutSuffix(guard, op); ok {
					g = strings.TrimSpace(strings.Trim(strings.TrimSpace(g), "()"))
					if pm := presence.FindStringSubmatch(g); pm != nil && strings.Contains(c, pm[1]) {
						return "the check runs only when " + clipText(pm[1], 30) + " is present: a request without it passes (" + clipText(l, 80) + ")"
					}
				}
			}
		}
	}
	return ""
}

// condStart reports whether a line can open a condition (a cheap first
// pass before ifCond).
func condStart(l string) bool {
	l = strings.TrimLeft(l, "} ")
	return strings.HasPrefix(l, "if") || strings.HasPrefix(l, "el") || strings.HasPrefix(l, "unless")
}
