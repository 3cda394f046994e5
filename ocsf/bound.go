package ocsf

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger/event"
)

// Field size bounds. Recorded content is outside input (a model chose
// the command, a source chose its host name), so every string copied
// into an event is cut to one of these, at a rune boundary.
const (
	// MaxName bounds names: tools, rules, hosts, models, ids.
	MaxName = 256
	// MaxText bounds free text: reasons, errors, paths.
	MaxText = 1024
	// MaxCmdLine bounds a shell command line.
	MaxCmdLine = 4096
	// MaxFileEvents bounds the File System Activity events one
	// execution yields; the rest are counted in the call's event
	// (unmapped.opx.more_files).
	MaxFileEvents = 64
)

// clip returns s made safe for a SIEM and cut to at most n bytes:
// invalid UTF-8, control characters other than tab and newline, and the
// bidirectional overrides (which make a line read otherwise than it is)
// become U+FFFD. It reports whether anything was cut. encoding/json then
// escapes what is left that a line could not hold (newlines, U+2028),
// so an event is always one line.
func clip(s string, n int) (string, bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c >= 0x7f {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			switch {
			case r == '\t' || r == '\n':
				return r
			case r == utf8.RuneError, unicode.IsControl(r), r == '\u2028' || r == '\u2029',
				r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
				return '\uFFFD'
			}
			return r
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// withheld reports whether a recorded value is an off-the-record
// commitment (it carries no content, and is never copied out).
func withheld(s string) bool { return strings.HasPrefix(s, event.WithheldPrefix) }
