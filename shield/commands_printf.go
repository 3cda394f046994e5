package shield

import (
	"strings"
	"unicode/utf8"

	"github.com/opx-dev/opx/shield/shellx"
)

// printfText is what printf FORMAT ARGS... writes, the one reading of
// printf that both the text a redirect of printf lands (rules 11: judged
// as a file tool's content is) and printf's output read as data
// (echoOutput: names, a pipe's input) use: the format's escapes decoded
// in its literal runs only (\x25s is a literal %s, not a conversion), %s
// replaced by an argument as is, %b by an argument with its escapes
// decoded, %% by %, the format reused while arguments remain.
//
// ok is false for what it does not model: an option before any -- (-v
// VAR writes nothing; printf takes no other), no format, another
// conversion (%d, %x, a width or precision, however large) or a lone % at
// the end; the content caller then judges the words joined. It is
// bounded: it stops once the output passes maxTextJudged (a longer text
// is judged by its beginning and asked about), so a text longer than
// maxTextJudged was cut short.
func printfText(args []shellx.Word) (string, bool) {
	k := 0
	if k < len(args) && args[k].Text == "--" {
		k++
	}
	if k >= len(args) || (k == 0 && strings.HasPrefix(args[0].Text, "-")) {
		return "", false
	}
	format := args[k].Text
	rest := args[k+1:]
	var b strings.Builder
	for pass := 0; ; pass++ {
		used := 0
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' {
				if c == '\\' {
					// Escapes are decoded below, over the literal runs.
					j := i + 1
					for j < len(format) && format[j] != '%' {
						j++
					}
					b.WriteString(printfUnescape(format[i:j], false))
					i = j - 1
					continue
				}
				b.WriteByte(c)
				continue
			}
			if i+1 >= len(format) {
				return "", false
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b':
				arg := ""
				if used < len(rest) {
					arg = rest[used].Text
				}
				used++
				if format[i] == 'b' {
					arg = printfUnescape(arg, true)
				}
				b.WriteString(arg)
			default:
				return "", false
			}
			if b.Len() > maxTextJudged {
				return b.String(), true
			}
		}
		if used == 0 || used >= len(rest) {
			break
		}
		rest = rest[used:]
	}
	return b.String(), true
}

// printfUnescape decodes printf's escapes in s as bash does: those of
// unescape, and \uHHHH and \UHHHHHHHH as the character they name (so
// '\u0063url' is read as "curl"); in a %b argument (arg) \c ends the
// output there. An escaped backslash stays one.
func printfUnescape(s string, arg bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		switch c := s[i+1]; {
		case c == 'u' || c == 'U':
			max := 4
			if c == 'U' {
				max = 8
			}
			j, v := i+2, rune(0)
			for j < len(s) && j < i+2+max && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				v = v*16 + rune(hexVal(s[j]))
				j++
			}
			if j == i+2 {
				i++ // no digits: bash prints \u as it is
				continue
			}
			b.WriteString(unescape(s[start:i]))
			if !utf8.ValidRune(v) {
				v = utf8.RuneError
			}
			b.WriteRune(v)
			start, i = j, j-1
		case c == 'c' && arg:
			b.WriteString(unescape(s[start:i]))
			return b.String()
		default:
			i++ // another escape, decoded by unescape with its run
		}
	}
	b.WriteString(unescape(s[start:]))
	return b.String()
}
