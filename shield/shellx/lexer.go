package shellx

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// token is one token of interpreter code, as lex reads it.
type token struct {
	kind tokKind
	// text: a string's value (escapes decoded, interpolations written as
	// dynPlaceholder), an identifier (dotted: os.system), or punctuation.
	text string
	dyn  bool // a string with interpolated (unknown) parts
	pos  int  // byte offset in the code
	end  int  // byte offset after the token
}

type tokKind uint8

const (
	tPunct tokKind = iota
	tIdent
	tStr
	tExec  // a string the code runs as a shell command (backquotes, qx{}, %x())
	tSpace // unused: whitespace is skipped, newlines are tPunct "\n"
)

// maxTokens caps the tokens read from one payload.
const maxTokens = 1 << 16

// lex tokenises code of a language family ("python", "node", "perl",
// "ruby", "php", "awk", "osascript") just enough to find its strings:
// comments are skipped, strings decoded, identifiers joined with their
// dots, everything else one byte of punctuation. It never fails: what it
// does not understand is punctuation.
func lex(fam, code string) []token {
	var toks []token
	n := len(code)
	for i := 0; i < n && len(toks) < maxTokens; {
		ch := code[i]
		start := i
		switch {
		case ch == '\n':
			toks = append(toks, token{kind: tPunct, text: "\n", pos: i, end: i + 1})
			i++
			continue
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
			continue
		case ch == '#' && (fam == "python" || fam == "perl" || fam == "ruby" || fam == "php" || fam == "awk") &&
			!(fam == "ruby" && i+1 < n && code[i+1] == '{'):
			i = skipLine(code, i)
			continue
		case ch == '/' && i+1 < n && code[i+1] == '/' && (fam == "node" || fam == "php"):
			i = skipLine(code, i)
			continue
		case ch == '/' && i+1 < n && code[i+1] == '*' && (fam == "node" || fam == "php"):
			if k := strings.Index(code[i+2:], "*/"); k >= 0 {
				i += k + 4
			} else {
				i = n
			}
			continue
		case ch == '-' && i+1 < n && code[i+1] == '-' && fam == "osascript":
			i = skipLine(code, i)
			continue
		case ch == '\'' || ch == '"' || ch == '`':
			t, next := lexString(fam, code, i, "")
			toks = append(toks, t)
			i = next
			continue
		case ch == '%' && fam == "ruby" && i+1 < n && strings.IndexByte("qQwWxi([{<|!/", code[i+1]) >= 0 &&
			(len(toks) == 0 || toks[len(toks)-1].kind == tPunct ||
				toks[len(toks)-1].kind == tIdent && code[i-1] == ' ' && i+2 < n && code[i+2] != ' '):
			t, next, ok := lexPercent(code, i)
			if ok {
				toks = append(toks, t)
				i = next
				continue
			}
		case isIdentStart(ch) || (ch == '$' || ch == '@') && (fam == "perl" || fam == "php" || fam == "node") ||
			ch == '%' && fam == "perl" && i+1 < n && isIdentStart(code[i+1]):
			j := i + 1
			for j < n {
				switch {
				case isIdentChar(code[j]):
					j++
					continue
				case code[j] == '.' && j+1 < n && isIdentStart(code[j+1]) && fam != "perl" && fam != "php":
					j += 2
					continue
				case code[j] == ':' && j+2 < n && code[j+1] == ':' && isIdentStart(code[j+2]):
					j += 3
					continue
				case code[j] == '-' && j+2 < n && code[j+1] == '>' && isIdentStart(code[j+2]):
					j += 3
					continue
				}
				break
			}
			word := code[i:j]
			if j < n && (code[j] == '\'' || code[j] == '"') && fam == "python" && len(word) <= 2 &&
				strings.Trim(strings.ToLower(word), "rbuf") == "" {
				t, next := lexString(fam, code, j, strings.ToLower(word))
				t.pos = start
				toks = append(toks, t)
				i = next
				continue
			}
			if fam == "perl" && (word == "q" || word == "qq" || word == "qx" || word == "qw") {
				if t, next, ok := lexPerlQuote(code, j, word); ok {
					t.pos = start
					toks = append(toks, t)
					i = next
					continue
				}
			}
			if fam == "node" && word == "$" && j < n && code[j] == '`' {
				t, next := lexString(fam, code, j, "")
				t.kind = tExec
				t.pos = start
				toks = append(toks, t)
				i = next
				continue
			}
			toks = append(toks, token{kind: tIdent, text: word, pos: i, end: j})
			i = j
			continue
		}
		if ch == '<' && i+1 < n && code[i+1] == '<' {
			toks = append(toks, token{kind: tPunct, text: "<<", pos: i, end: i + 2})
			i += 2
			continue
		}
		_, size := utf8.DecodeRuneInString(code[i:])
		toks = append(toks, token{kind: tPunct, text: code[i : i+size], pos: i, end: i + size})
		i += size
	}
	if fam == "awk" {
		awkPipes(toks)
	}
	return toks
}

// awkPipes marks the strings awk runs: "cmd" | getline, print | "cmd".
func awkPipes(toks []token) {
	for i, t := range toks {
		if t.kind != tStr {
			continue
		}
		if i+2 < len(toks) && toks[i+1].text == "|" && toks[i+2].text == "getline" {
			toks[i].kind = tExec
		}
		if i > 0 && toks[i-1].text == "|" {
			toks[i].kind = tExec
		}
	}
}

func skipLine(code string, i int) int {
	if k := strings.IndexByte(code[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(code)
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

// lexString reads a quoted string at code[i] (', " or `, tripled in
// python); prefix holds python's string prefix letters.
func lexString(fam, code string, i int, prefix string) (token, int) {
	q := code[i]
	n := len(code)
	closeQ := string(q)
	j := i + 1
	if fam == "python" && i+2 < n && code[i+1] == q && code[i+2] == q {
		closeQ = strings.Repeat(string(q), 3)
		j = i + 3
	}
	raw := strings.Contains(prefix, "r")
	kind := tStr
	interp := ""
	switch {
	case fam == "python" && strings.Contains(prefix, "f"):
		interp = "{"
	case fam == "node" && q == '`':
		interp = "${"
	case (fam == "perl" || fam == "php") && q != '\'':
		interp = "$"
	case fam == "ruby" && q != '\'':
		interp = "#{"
	}
	if q == '`' && (fam == "perl" || fam == "ruby" || fam == "php") {
		kind = tExec
	}
	singleSimple := q == '\'' && (fam == "perl" || fam == "ruby" || fam == "php")
	var s strings.Builder
	dyn := false
	for j < n {
		if strings.HasPrefix(code[j:], closeQ) {
			return token{kind: kind, text: s.String(), dyn: dyn, pos: i, end: j + len(closeQ)}, j + len(closeQ)
		}
		c := code[j]
		if c == '\\' && j+1 < n && !raw {
			if singleSimple {
				if code[j+1] == '\\' || code[j+1] == q {
					s.WriteByte(code[j+1])
					j += 2
					continue
				}
				s.WriteByte('\\')
				j++
				continue
			}
			k := escapeEnd(code, j)
			s.WriteString(decodeEscape(code[j:k], fam))
			j = k
			continue
		}
		if c == '\\' && raw && j+1 < n {
			s.WriteString(code[j : j+2])
			j += 2
			continue
		}
		if interp != "" {
			if k, ok := interpolation(code, j, interp); ok {
				s.WriteString(dynPlaceholder)
				dyn = true
				j = k
				continue
			}
			if interp == "{" && strings.HasPrefix(code[j:], "{{") || strings.HasPrefix(code[j:], "}}") && interp == "{" {
				s.WriteByte(c)
				j += 2
				continue
			}
		}
		if s.Len() > maxWordBytes {
			j++
			continue
		}
		s.WriteByte(c)
		j++
	}
	return token{kind: kind, text: s.String(), dyn: dyn, pos: i, end: n}, n
}

// interpolation says code[j:] starts an interpolation of the given style
// and returns where it ends.
func interpolation(code string, j int, style string) (int, bool) {
	switch style {
	case "$":
		if code[j] != '$' && code[j] != '@' || j+1 >= len(code) {
			return 0, false
		}
		k := j + 1
		if code[k] == '{' {
			return matchBrace(code, k), true
		}
		if !isIdentStart(code[k]) {
			return 0, false
		}
		for k < len(code) && isIdentChar(code[k]) {
			k++
		}
		return k, true
	case "{":
		if code[j] != '{' || strings.HasPrefix(code[j:], "{{") {
			return 0, false
		}
		return matchBrace(code, j), true
	default: // "${", "#{"
		if !strings.HasPrefix(code[j:], style) {
			return 0, false
		}
		return matchBrace(code, j+1), true
	}
}

// matchBrace returns the index after the } matching code[k] == '{'.
func matchBrace(code string, k int) int {
	depth := 0
	for i := k; i < len(code); i++ {
		switch code[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(code)
}

// escapeEnd returns the index after the escape sequence at code[j] ('\\').
func escapeEnd(code string, j int) int {
	n := len(code)
	if j+1 >= n {
		return n
	}
	k := j + 2
	take := func(max int, ok func(byte) bool) {
		for k < n && k < j+2+max && ok(code[k]) {
			k++
		}
	}
	switch e := code[j+1]; {
	case e == 'x':
		if k < n && code[k] == '{' {
			if m := strings.IndexByte(code[k:], '}'); m >= 0 && m < 12 {
				return k + m + 1
			}
		}
		take(2, isHex)
	case e == 'u':
		if k < n && code[k] == '{' {
			if m := strings.IndexByte(code[k:], '}'); m >= 0 && m < 12 {
				return k + m + 1
			}
		}
		take(4, isHex)
	case e == 'U':
		take(8, isHex)
	case e >= '0' && e <= '7':
		k = j + 1
		take(3, func(c byte) bool { return c >= '0' && c <= '7' })
	}
	return k
}

// decodeEscape decodes one escape sequence esc ("\\n", "\\x41",
// "\\u{1F600}"...); an unknown one keeps its backslash in python and
// loses it elsewhere.
func decodeEscape(esc, fam string) string {
	if len(esc) < 2 {
		return esc
	}
	switch e := esc[1]; e {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case 'a':
		return "\a"
	case 'b':
		return "\b"
	case 'f':
		return "\f"
	case 'v':
		return "\v"
	case 'e':
		return "\x1b"
	case '\n':
		return ""
	case 'x', 'u', 'U':
		digits := strings.Trim(esc[2:], "{}")
		v, err := strconv.ParseUint(digits, 16, 32)
		if err != nil || digits == "" {
			return esc
		}
		if e == 'x' && v < 0x100 && !strings.Contains(esc, "{") {
			return string([]byte{byte(v)})
		}
		if v > utf8.MaxRune {
			return esc
		}
		return string(rune(v))
	default:
		if e >= '0' && e <= '7' {
			v, _ := strconv.ParseUint(esc[1:], 8, 16)
			return string([]byte{byte(v)})
		}
		if fam == "python" && e != '\\' && e != '\'' && e != '"' {
			return esc
		}
		return esc[1:]
	}
}

// lexPerlQuote reads q(), qq{}, qx//, qw[] at code[j] (after the word).
func lexPerlQuote(code string, j int, word string) (token, int, bool) {
	for j < len(code) && (code[j] == ' ' || code[j] == '\t') {
		j++
	}
	if j >= len(code) || isIdentChar(code[j]) || code[j] == ',' || code[j] == ';' || code[j] == '=' && word != "q" {
		return token{}, 0, false
	}
	body, next := delimited(code, j)
	t := token{kind: tStr, text: body, end: next}
	switch word {
	case "qx":
		t.kind = tExec
		fallthrough
	case "qq":
		t.text, t.dyn = interpolate(body, "$")
	case "qw":
		t.text = strings.Join(strings.Fields(body), " ")
	}
	return t, next, true
}

// lexPercent reads ruby's %q() %Q{} %x[] %w<> %() at code[i].
func lexPercent(code string, i int) (token, int, bool) {
	j := i + 1
	kind := byte('Q')
	if strings.IndexByte("qQwWxi", code[j]) >= 0 {
		kind = code[j]
		j++
	}
	if j >= len(code) || isIdentChar(code[j]) || code[j] == ' ' {
		return token{}, 0, false
	}
	body, next := delimited(code, j)
	t := token{kind: tStr, text: body, pos: i, end: next}
	switch kind {
	case 'x':
		t.kind = tExec
		t.text, t.dyn = interpolate(body, "#{")
	case 'Q', 'W':
		t.text, t.dyn = interpolate(body, "#{")
	}
	return t, next, true
}

// delimited reads text between code[j] and its closing delimiter (the
// matching bracket, nested, or the same character).
func delimited(code string, j int) (string, int) {
	open := code[j]
	closeCh := open
	switch open {
	case '(':
		closeCh = ')'
	case '[':
		closeCh = ']'
	case '{':
		closeCh = '}'
	case '<':
		closeCh = '>'
	}
	depth := 0
	for k := j + 1; k < len(code); k++ {
		switch c := code[k]; {
		case c == '\\':
			k++
		case c == closeCh && depth == 0:
			return unescapeSimple(code[j+1 : k]), k + 1
		case c == closeCh:
			depth--
		case c == open && open != closeCh:
			depth++
		}
	}
	return unescapeSimple(code[j+1:]), len(code)
}

func unescapeSimple(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			k := escapeEnd(s, i)
			b.WriteString(decodeEscape(s[i:k], ""))
			i = k - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// interpolate replaces the interpolations of body with dynPlaceholder.
func interpolate(body, style string) (string, bool) {
	var b strings.Builder
	dyn := false
	for j := 0; j < len(body); {
		if k, ok := interpolation(body, j, style); ok {
			b.WriteString(dynPlaceholder)
			dyn = true
			j = k
			continue
		}
		b.WriteByte(body[j])
		j++
	}
	return b.String(), dyn
}
