package textclip

import "unicode/utf8"

// Cut cuts s to at most n bytes (n >= 0) on a character boundary: when s
// is longer, it backs off from byte n to the nearest byte that starts a
// rune (utf8.RuneStart) and keeps what comes before it.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
