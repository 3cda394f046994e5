package shield

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text is judged as a reader sees it, not as its bytes spell it: every
// tier 1 rule that reads text reads it through normalizeText, once per
// text (runRules normalizes Facts.Texts before the rules run; the
// command line and MCP results are normalized where they are searched).
//
//   - Format characters (Unicode category Cf: zero-width space, joiner
//     and non-joiner, word joiner, BOM, bidi controls, soft hyphen) are
//     invisible: "ign\u200bore" is read as "ignore".
//   - Tag characters (U+E0020..U+E007E) spell ASCII invisibly ("ASCII
//     smuggling"): they are read as the ASCII they spell.
//   - NFKC folds compatibility forms: fullwidth "ｉｇｎｏｒｅ" is
//     "ignore", ligatures and circled digits their plain letters.
//
// Pure ASCII text (nearly all of it) is returned as is, without a copy.

// normalizeText returns s as the text rules read it, and whether it hid
// something: a format character inside a Latin word (between two letters
// or digits of the Latin script, as "ign\u200bore"), or tag characters
// spelling text. A joiner between emoji, a non-joiner inside a Persian
// word, bidi marks around Hebrew or Arabic, a BOM at the start are
// ordinary typography, and hide nothing. Text beyond maxTextJudged is
// kept as is (the rules judge only that much, and tooLargeToJudge asks
// about the rest).
func normalizeText(s string) (string, bool) {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s, false
	}
	if len(s) > maxTextJudged {
		head, hidden := normalizeFrom(s[:maxTextJudged], i)
		return head + s[maxTextJudged:], hidden
	}
	return normalizeFrom(s, i)
}

// normalizeResult is normalizeText over a whole tool result (bounded by
// JudgeResult's maxResultJudged).
func normalizeResult(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	out, _ := normalizeFrom(s, i)
	return out
}

// normalizeFrom normalizes head, whose first i bytes are ASCII.
func normalizeFrom(head string, i int) (string, bool) {
	var b strings.Builder
	b.Grow(len(head))
	b.WriteString(head[:i])
	hidden := false
	for j := i; j < len(head); {
		r, n := utf8.DecodeRuneInString(head[j:])
		switch {
		case r >= 0xE0020 && r <= 0xE007E:
			if !afterFlag(head[:j]) {
				hidden = true
				b.WriteByte(byte(r - 0xE0000))
			}
		case r >= 0xE0000 && r <= 0xE007F, unicode.Is(unicode.Cf, r):
			// A soft hyphen inside a word is typography (a break hint
			// in German or Dutch text), not a hiding place.
			if !hidden && r != 0xAD && latinAround(head, j, j+n) {
				hidden = true
			}
		default:
			b.WriteString(head[j : j+n])
		}
		j += n
	}
	return norm.NFKC.String(b.String()), hidden
}

// latinAround reports whether the format character at s[i:k] sits
// between two Latin letters or digits (other format characters skipped).
func latinAround(s string, i, k int) bool {
	var prev, next rune
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		if !unicode.Is(unicode.Cf, r) {
			prev = r
			break
		}
		j -= n
	}
	for j := k; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !unicode.Is(unicode.Cf, r) {
			next = r
			break
		}
		j += n
	}
	// rules 12 (k27g): beside a name's punctuation too (a host's dot, a
	// path's slash: "example\u200b.com" reads as example.com and is not)
	return latinWordRune(prev) && latinWordRune(next) ||
		latinWordRune(prev) && nameJoint(next) || nameJoint(prev) && latinWordRune(next) ||
		asciiGraphic(prev) && asciiGraphic(next) || // rules 19: inside any ASCII token ("contracts/\u200b=lib/")
		// rules 21: at the end of an ASCII token, before a blank, a line's
		// end or the text's (a flag "--all\u200b" is another argument
		// than "--all")
		asciiGraphic(prev) && prev != '.' && (next == 0 || next == ' ' || next == '\t' || next == '\n' || next == '\r') && !isBidi(s[i:k])
}

// isBidi reports whether t holds a direction control (bidiControl's:
// text:bidi-control judges it, not a hidden token's end).
func isBidi(t string) bool { _, ok := bidiControl(t); return ok }

// asciiGraphic reports whether r is a printable ASCII character other
// than a space.
func asciiGraphic(r rune) bool { return r > ' ' && r < 0x7f }

// nameJoint reports whether r joins the parts of a host, path or
// identifier.
func nameJoint(r rune) bool { return r == '.' || r == '/' || r == ':' || r == '@' || r == '_' }

// latinWordRune reports whether r is a letter or digit of the Latin
// script (fullwidth forms included).
func latinWordRune(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	case unicode.Is(unicode.Latin, r):
		return true
	}
	return 0xFF10 <= r && r <= 0xFF19
}

// afterFlag reports whether tag characters at the end of s continue an
// emoji tag sequence (a subdivision flag: U+1F3F4 then tags).
func afterFlag(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if r == 0x1F3F4 {
			return true
		}
		if r < 0xE0000 || r > 0xE007F {
			return false
		}
		s = s[:len(s)-n]
	}
	return false
}

// normalizedFacts returns f with its texts normalized (f itself when
// none changes), and the indexes of the texts that hid something.
func normalizedFacts(f *Facts) (*Facts, []int) {
	var out *Facts
	var hidden []int
	for i, t := range f.Texts {
		body, h := normalizeText(t.Body)
		if b, ok := jsonEscapedText(body); ok {
			// rules 28: letters spelled in \u escapes are hidden too
			body, h = b, true
		}
		if h {
			hidden = append(hidden, i)
		}
		if body == t.Body {
			continue
		}
		if out == nil {
			c := *f
			c.Texts = append([]Text(nil), f.Texts...)
			out = &c
		}
		out.Texts[i].Body = body
	}
	if out == nil {
		return f, hidden
	}
	return out, hidden
}

// hiddenCharacters is `text:hidden-characters`: text the action writes,
// stores or sends (a file's content, a memory note, a commit message, a
// request body; a command writing an agent's file) that hides letters
// from a human reader: invisible characters inside words, or tag
// characters spelling text. Text is what a later agent or reviewer reads;
// a soft hyphen, an emoji sequence or right-to-left marks are not hiding. The rules
// judged the text as normalized; what a reviewer would not see is asked
// about.
func (s *Shield) hiddenCharacters(a *Action, f *Facts, hidden []int, j *judgement) {
	// Rules 17: a name that is not what it shows (release\u202edm.sh
	// shows as releasehs.md), written, moved to or deleted.
	for _, refs := range [][]Ref{f.Writes, f.Deletes} {
		for i := range refs {
			if r := formatRune(refs[i].Path); r >= 0 {
				j.escalate("text:hidden-characters", "the path %q holds a character hidden from a human reader (U+%04X): the name is not what it shows", refs[i].Path, r)
				return
			}
		}
	}
	for _, i := range hidden {
		t := &f.Texts[i]
		// Any text the action writes, stores or sends: a file's content,
		// a memory note, a commit message, a request body. Code literals
		// and decoded data are judged as code.
		if literalSource(t.Source) || t.Source == "stdin" || t.Source == "url" {
			continue
		}
		j.escalate("text:hidden-characters", "the %s hides characters from a human reader (format or tag characters inside words)", textName(t.Source))
		return
	}
	if a.Command == "" || j.inner {
		return
	}
	if _, h := normalizeText(a.Command); !h {
		return
	}
	for i := range f.Writes {
		if p := f.Writes[i].Path; agentInstructions(p) || memoryFile(p) {
			j.escalate("text:hidden-characters", "the command writes %s, read by agents, with characters hidden from a human reader", p)
			return
		}
	}
}

// formatRune returns the first format character (Unicode Cf: zero-width
// characters, direction controls, tag characters) in p, or -1.
func formatRune(p string) rune {
	for _, r := range p {
		if r >= 0x80 && unicode.Is(unicode.Cf, r) {
			return r
		}
	}
	return -1
}
