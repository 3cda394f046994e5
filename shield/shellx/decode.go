package shellx

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// minEncoded is the shortest word or literal tried as base64 or hex.
const minEncoded = 16

// decodeBase64 decodes s (standard or URL alphabet, padded or not,
// whitespace ignored) when the result is printable text.
func decodeBase64(s string) (string, bool) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if s == "" || len(s) > 2*maxStatic {
		return "", false
	}
	trimmed := strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(trimmed)
		if err == nil && printable(b) {
			return string(b), true
		}
	}
	return "", false
}

// decodeHex decodes a hex string (whitespace ignored) when the result is
// printable text.
func decodeHex(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), "")
	if len(s) > 2*maxStatic {
		return "", false
	}
	b, err := hex.DecodeString(s)
	if err != nil || !printable(b) {
		return "", false
	}
	return string(b), true
}

// printable says b is non-empty UTF-8 text without control characters
// other than whitespace.
func printable(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r == '\n' || r == '\t' || r == '\r' {
			continue
		}
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// encoded adds a Literal for s when it is long base64 or hex decoding to
// printable text, and returns the decoded text ("" if none).
func (p *parser) encoded(s string) string {
	if len(s) < minEncoded || len(s) > 2*maxStatic {
		return ""
	}
	hexOnly, b64 := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isHex(c) {
			hexOnly = false
		}
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '+' || c == '/' || c == '-' || c == '_' || c == '=') {
			b64 = false
			break
		}
	}
	if !b64 {
		return ""
	}
	if hexOnly && len(s)%2 == 0 {
		if t, ok := decodeHex(s); ok {
			p.literal("hex", t)
			return t
		}
	}
	if i := strings.IndexByte(s, '='); i >= 0 && strings.Trim(s[i:], "=") != "" {
		return "" // padding only at the end
	}
	if t, ok := decodeBase64(s); ok && len(t) >= 4 {
		p.literal("base64", t)
		return t
	}
	return ""
}
