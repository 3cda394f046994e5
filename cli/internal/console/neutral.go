package console

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger/event"
)

// ValueLimit is the most of one recorded value a page shows; the rest is
// a download away (the entry or the blob that holds it).
const ValueLimit = 64 << 10

// Neutral is recorded text made safe to look at: off-the-record members
// shown as withheld, ANSI escapes and other control characters shown as
// their control pictures (ESC as ␛), bidirectional and invisible
// formatting characters shown as \uXXXX, invalid UTF-8 as U+FFFD.
// html/template escapes the result; Neutral makes sure that what the
// escaped text says is what the reader sees (no reordering, no hidden
// characters, no terminal sequences for whoever copies it).
func Neutral(s string) string {
	s = event.DisplayText(s)
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune('\uFFFD')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␀..␟, ESC is ␛
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// plain says s is printable ASCII (plus newline and tab): nothing to do.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\n' && c != '\t') {
			return false
		}
	}
	return true
}

// invisible says r reorders or hides text: the bidirectional controls,
// zero-width and other format characters, line and paragraph separators.
func invisible(r rune) bool {
	switch {
	case r == 0x061c, r == 0x00ad, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2060 && r <= 0x206f:
		return true
	case r >= 0xfff9 && r <= 0xfffb:
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags
		return true
	}
	return false
}

// Clip is a value as a page shows it: Neutral, cut at ValueLimit bytes
// on a character boundary. Cut says whether anything was left out.
type Clip struct {
	Text  string
	Cut   bool
	Total int // bytes of the whole value
}

// clip neutralises s and cuts it to limit bytes of the original.
func clip(s string, limit int) Clip {
	c := Clip{Total: len(s)}
	if len(s) > limit {
		i := limit
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, c.Cut = s[:i], true
	}
	c.Text = Neutral(s)
	return c
}
