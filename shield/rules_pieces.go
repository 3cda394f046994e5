package shield

import (
	"strings"
)

// Code built from pieces (rules 15, session 20; docs/shield-rules.md
// "obfuscation:pieces"). A name that would be read for what it is —
// Invoke-Expression, child_process, os.system, DownloadString — written
// as short literals joined at run time ('Invoke-' + 'Expression', `$a =
// 'Invoke-'; $b = 'Expression'; & ($a + $b)`, 'child_' + 'process') says
// its author did not want it read. Written text whose adjacent short
// literals, two to four of them, spell such a name, when none spells it
// alone, is asked (escalate).

// piecedName is a name worth hiding.
var piecedName = mustRx(`(?i)^(?:invoke-expression|iex|invoke-webrequest|invoke-restmethod|downloadstring|downloadfile|downloaddata|frombase64string|start-process|eval|exec|execsync|execfile|system|popen|spawn|spawnsync|child_process|subprocess|os\.system|os\.popen|shell_exec|passthru|proc_open|runtime\.getruntime|getruntime|processbuilder|process\.start|/bin/sh|/bin/bash|bash -c|sh -c|powershell|cmd\.exe|__import__|importlib|ctypes|curl|wget|nc -e|base64 -d|invoke-command|add-type|reflection\.assembly|loadlibrary|dlopen)$`)

// pieceLit is a short quoted literal.
var pieceLit = mustRx(`'([^'\n\\]{1,24})'|"([^"\n\\]{1,24})"`)

// maxPieces bounds the literals read of one text.
const maxPieces = 512

// piecedCode returns the name text spells from pieces, or "".
func piecedCode(text string) string {
	locs := pieceLit.FindAllStringSubmatchIndex(clipRaw(text, maxAppsecText), maxPieces)
	lit := func(k int) string {
		m := locs[k]
		if m[2] >= 0 {
			return text[m[2]:m[3]]
		}
		return text[m[4]:m[5]]
	}
	for i := range locs {
		if piecedName.MatchString(strings.TrimSpace(lit(i))) {
			continue
		}
		joined := lit(i)
		for k := i + 1; k < len(locs) && k <= i+3; k++ {
			if locs[k][0]-locs[k-1][1] > 120 {
				break // pieces stand close together
			}
			if piecedName.MatchString(strings.TrimSpace(lit(k))) {
				break
			}
			joined += lit(k)
			if piecedName.MatchString(joined) {
				return joined
			}
		}
	}
	return ""
}

// piecedWritten is `obfuscation:pieces` (escalate) for written text.
func (s *Shield) piecedWritten(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok && t.Source != "content" {
			continue
		}
		if ok && testSource(p) {
			continue
		}
		if name := piecedCode(t.Body); name != "" {
			j.escalate("obfuscation:pieces", "%s spells %s from short literals joined when it runs: a name written so that it is not read", textWhere(t.Source), name)
			return
		}
	}
}
