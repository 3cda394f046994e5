package shield

import (
	"strings"

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
