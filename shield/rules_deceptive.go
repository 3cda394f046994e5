package shield

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that reads one way to a human and another to a compiler or a
// later agent (text:bidi-control, text:mixed-script): the "Trojan Source"
// bidirectional overrides and isolates (CVE-2021-42574), which reorder
// what an editor shows of a line without changing what the compiler
// reads, and words that mix Latin letters with Cyrillic or Greek ones
// (authz.Cаn beside authz.Can, registry.npmjs.оrg), which look like a
// word they are not. Judged on the text as written, before it is
// normalized (NFKC keeps both).

// deceptiveText escalates text the action writes, stores or sends that
// holds a bidirectional override or isolate, or a word of mixed scripts.
func (s *Shield) deceptiveText(f *Facts, j *judgement) {
	if j.set || j.inner {
		return
	}
	for _, t := range f.Texts {
		if literalSource(t.Source) || t.Source == "stdin" {
			continue
		}
		body := t.Body
		if len(body) > maxTextJudged {
			body = body[:maxTextJudged]
		}
		if r, ok := bidiControl(body); ok {
			j.escalate("text:bidi-control", "the %s holds a bidirectional control (U+%04X): what an editor shows of the line is not what a compiler or agent reads", textName(t.Source), r)
			return
		}
		if seq, ok := concealedANSI(body); ok {
			j.escalate("text:concealed", "the %s holds %q, a terminal escape that hides the text after it: cat and less show a line without what an agent reads", textName(t.Source), seq)
			return
		}
		if w, ok := mixedScriptWord(body); ok {
			j.escalate("text:mixed-script", "the %s holds %q, a word that mixes Latin letters with Cyrillic or Greek ones: it looks like a word it is not", textName(t.Source), w)
			return
		}
	}
}

// deceptiveCommand is text:mixed-script and text:bidi-control for a
// command line itself (rules 15): `composer require 'symfоny/http-client'`
// with a Cyrillic о names a package, a host or a path that looks like
// another. A line is short: judged whole.
func (s *Shield) deceptiveCommand(a *Action, j *judgement) {
	if j.set || j.inner || a.Command == "" {
		return
	}
	line := clip(a.Command, maxTextJudged)
	if r, ok := bidiControl(line); ok {
		j.escalate("text:bidi-control", "the command line holds a bidirectional control (U+%04X): what is shown of it is not what runs", r)
		return
	}
	if w, ok := mixedScriptWord(line); ok {
		j.escalate("text:mixed-script", "the command line holds %q, a word that mixes Latin letters with Cyrillic or Greek ones: it names something that looks like what it is not", w)
	}
}

// bidiControl returns the first bidirectional override or isolate in s:
// LRE, RLE, PDF, LRO, RLO (U+202A–U+202E) and LRI, RLI, FSI, PDI
// (U+2066–U+2069). The plain marks (LRM, RLM, ALM) are how right-to-left
// text is written and are not.
func bidiControl(s string) (rune, bool) {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 {
			return r, true
		}
		i += n
	}
	return 0, false
}

// mixedScriptWord returns the first word of s (a run of letters, digits
// and _) that holds both Latin letters and Cyrillic or Greek ones. A word
// of one script (Russian text, a Greek formula) is not; nor is a Latin
// word beside a Cyrillic one.
func mixedScriptWord(s string) (string, bool) {
	start, latin, other := -1, false, false
	for i := 0; i <= len(s); {
		var r rune = ' '
		n := 1
		if i < len(s) {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, latin, other = i, false, false
			}
			switch {
			case r < utf8.RuneSelf:
				latin = latin || unicode.IsLetter(r)
			case unicode.Is(unicode.Latin, r):
				latin = true
			case unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r):
				other = true
			}
		} else if start >= 0 {
			if latin && other {
				return s[start:i], true
			}
			start = -1
		}
		i += n
		if i > len(s) {
			break
		}
	}
	return "", false
}

// ansiCSI is a terminal control sequence (CSI … final byte), written as
// the escape byte itself or as a shell or language spells it in a string
// (\033[, \x1b[, \e[, \u001b[): printf and echo -e turn those into the byte.
var ansiCSI = mustRx(`(?:\x1b|\\033|\\x1[bB]|\\[eE]|\\u001[bB])\[([0-9;]{0,32})[A-Za-z]`)

// stripANSI returns s without terminal control sequences (a space for
// each), as a reader of the text sees it; s itself when it has none.
func stripANSI(s string) string { return ansiCSI.ReplaceAllString(s, " ") }

// concealedANSI returns a select-graphic-rendition sequence that
// conceals text (parameter 8; rules 16), or false: a terminal shows
// nothing of what follows it, an agent reading the file reads all of it.
func concealedANSI(s string) (string, bool) {
	for _, m := range ansiCSI.FindAllStringSubmatch(s, 64) {
		if !strings.HasSuffix(m[0], "m") {
			continue
		}
		for _, p := range strings.Split(m[1], ";") {
			if p == "8" || p == "08" {
				return m[0], true
			}
		}
	}
	return "", false
}
