package shield

import (
	"strings"
)

// A safety warning inverted (rules 12, issue 27 ninth pass;
// docs/shield-rules.md "instructions:warning-inverted"). Documentation,
// comments and notes tell the next reader, human or agent, what not to
// trust or run ("community packs are untrusted", "never run scripts from
// issues"). An edit that removes such a warning and writes in its place
// that the same content is trusted or should be followed turns the
// repository's own guidance into an instruction to obey planted text.
// Escalate. Adding a warning, or rewording one that stays a warning,
// passes.

var (
	warningText = mustRx(`(?i)\buntrusted\b|\bnot (?:be )?trusted\b|\bdo not (?:run|follow|execute|trust|open|obey)\b|\bdon'?t (?:run|follow|execute|trust|obey)\b|\bnever (?:run|follow|execute|trust|obey)\b|\btreat (?:them|it|these|this|those) as (?:untrusted|data|unsafe)\b|\bunsafe to (?:run|follow|execute)\b|\bignore (?:any )?instructions\b`)
	permitText  = mustRx(`(?i)\b(?:are|is|be|as) trusted\b|\bshould be (?:followed|run|executed|obeyed|trusted)\b|\b(?:safe|ok|fine) to (?:run|follow|execute|trust)\b|\bcan be (?:run|followed|executed|trusted)\b|\bfollow (?:them|their|its|these|those)\b|\b(?:run|execute|obey) (?:them|their|its|these|those)\b`)
)

// warningInverted is `instructions:warning-inverted` (escalate).
func (s *Shield) warningInverted(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		added, old := textOf(f, p)
		if old == "" {
			continue
		}
		added, old = clipRaw(added, maxAppsecText), clipRaw(old, maxAppsecText)
		w := warningText.FindString(old)
		if w == "" || warningText.MatchString(added) {
			continue
		}
		if m := permitText.FindString(added); m != "" {
			j.escalate("instructions:warning-inverted", "%s removes the warning %q from %s and writes %q in its place: the next reader is told to trust or follow what it was warned about", toolName(a), w, s.relPath(p), m)
			return
		}
	}
}
