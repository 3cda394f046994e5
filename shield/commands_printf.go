package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// printfText is what printf FORMAT ARGS... writes (rules 11: the text a
// redirect of printf lands is judged as a file tool's content is): the
// format's escapes decoded, %s replaced by an argument as is, %b by an
// argument with its escapes decoded, %% by %, the format reused while
// arguments remain. ok is false when the format holds another
// conversion (%d, %x, a width): the caller judges the words joined.
func printfText(args []shellx.Word) (string, bool) {
	k := 0
	if k < len(args) && args[k].Text == "--" {
		k++
	}
	if k < len(args) && strings.HasPrefix(args[k].Text, "-v") {
		return "", false
	}
	if k >= len(args) {
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
					b.WriteString(unescape(format[i:j]))
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
					arg = unescape(arg)
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
