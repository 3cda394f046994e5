package shellx

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// maxStatic caps the text a static output may hold.
const maxStatic = MaxLineBytes

// subst is a command or process substitution met in a word, kept so a
// payload word holding it can be resolved to its output when that output
// is known statically (eval "$(echo ... | base64 -d)").
type subst struct {
	stmts []*syntax.Stmt
	c     *ctx
}

// register records a substitution under its text as written and returns
// that text.
func (p *parser) register(n syntax.Node, stmts []*syntax.Stmt, c *ctx) string {
	text := p.written(n, c)
	if p.substs == nil {
		p.substs = map[string]subst{}
	}
	if _, ok := p.substs[text]; !ok && len(p.substs) < MaxCommands {
		cc := *c
		p.substs[text] = subst{stmts: stmts, c: &cc}
	}
	return text
}

// resolve is the text a payload word stands for: its Text when literal,
// the output of the substitution it consists of when that is known
// (static true, chain naming the decoders), else its Text as written.
func (p *parser) resolve(w Word) (text, chain string, static bool) {
	if !w.Dynamic {
		return w.Text, "", true
	}
	if s, ok := p.substs[w.Text]; ok {
		if out := p.staticStmts(s.stmts, s.c); out.known {
			return out.text, out.chain, true
		}
	}
	return w.Text, "", false
}

// staticStmts is the output of a list of statements when it is known:
// one simple command or one pipeline of simple commands, each a known
// producer (echo, printf, cat of a here-document, a decoder).
func (p *parser) staticStmts(stmts []*syntax.Stmt, c *ctx) staticOut {
	if len(stmts) != 1 || !p.spend(1) {
		return staticOut{}
	}
	var chain []*syntax.Stmt
	var flatten func(s *syntax.Stmt) bool
	flatten = func(s *syntax.Stmt) bool {
		switch x := s.Cmd.(type) {
		case *syntax.CallExpr:
			chain = append(chain, s)
			return len(chain) < 16
		case *syntax.BinaryCmd:
			if x.Op != syntax.Pipe {
				return false
			}
			return flatten(x.X) && flatten(x.Y)
		}
		return false
	}
	if !flatten(stmts[0]) {
		return staticOut{}
	}
	p.quiet++
	defer func() { p.quiet-- }()
	var out staticOut
	for _, s := range chain {
		ce := s.Cmd.(*syntax.CallExpr)
		var args []Word
		for _, w := range ce.Args {
			args = append(args, p.words(w, c)...)
		}
		rs := p.redirects(s.Redirs, c)
		out = p.produce(args, p.stdinOf(out, rs))
		if !out.known {
			return out
		}
	}
	return out
}

// stdinOf is what a command reads: its here-document or here-string, else
// what is piped into it.
func (p *parser) stdinOf(piped staticOut, rs []Redirect) staticOut {
	for _, r := range rs {
		if r.Fd != "" && r.Fd != "0" {
			continue
		}
		switch r.Op {
		case "<<", "<<-":
			return staticOut{text: r.Target.Text, known: !r.Target.Dynamic}
		case "<<<":
			return staticOut{text: r.Target.Text + "\n", known: !r.Target.Dynamic}
		case "<", "<>":
			// < <(echo ...): a process substitution with a known output.
			if text, chain, static := p.resolve(r.Target); static && r.Target.Dynamic {
				return staticOut{text: text, known: true, chain: chain}
			}
			return staticOut{}
		}
	}
	return piped
}

// produce is the output of argv given its input, when known statically.
func (p *parser) produce(args []Word, in staticOut) staticOut {
	if len(args) == 0 || args[0].Dynamic {
		return staticOut{}
	}
	for _, a := range args {
		if a.Dynamic {
			return staticOut{}
		}
	}
	name := base(args[0].Text)
	switch name {
	case "echo":
		return p.echo(args[1:])
	case "printf":
		return p.printf(args[1:])
	case "cat":
		for _, a := range args[1:] {
			if a.Text != "-" && !strings.HasPrefix(a.Text, "-") {
				return staticOut{}
			}
		}
		return in
	}
	if !in.known {
		return staticOut{}
	}
	var out staticOut
	switch name {
	case "base64", "openssl":
		if !decodesBase64(name, args[1:]) {
			return staticOut{}
		}
		text, ok := decodeBase64(in.text)
		if !ok {
			return staticOut{}
		}
		out = staticOut{text: text, known: true, chain: joinVia(in.chain, "base64")}
	case "xxd":
		if !hasFlag(args[1:], "-r") || !(hasFlag(args[1:], "-p") || hasFlag(args[1:], "-ps") || hasFlag(args[1:], "-plain")) {
			return staticOut{}
		}
		text, ok := decodeHex(in.text)
		if !ok {
			return staticOut{}
		}
		out = staticOut{text: text, known: true, chain: joinVia(in.chain, "hex")}
	case "rev":
		if len(args) > 1 {
			return staticOut{}
		}
		out = staticOut{text: reverseLines(in.text), known: true, chain: joinVia(in.chain, "rev")}
	case "tr":
		if len(args) != 3 || !isROT13(args[1].Text, args[2].Text) {
			return staticOut{}
		}
		out = staticOut{text: rot13(in.text), known: true, chain: joinVia(in.chain, "rot13")}
	default:
		return staticOut{}
	}
	p.literal(lastVia(out.chain), out.text)
	return out
}

func lastVia(chain string) string {
	if i := strings.LastIndex(chain, " > "); i >= 0 {
		return chain[i+3:]
	}
	return chain
}

// decodesBase64 says base64's or openssl's arguments decode stdin.
func decodesBase64(name string, args []Word) bool {
	if name == "openssl" {
		if len(args) == 0 {
			return false
		}
		sub := args[0].Text
		if sub != "base64" && !(sub == "enc" && (hasFlag(args, "-base64") || hasFlag(args, "-a"))) {
			return false
		}
		return hasFlag(args, "-d") && !hasFlag(args, "-in")
	}
	decode := false
	for _, a := range args {
		t := a.Text
		switch {
		case t == "--decode" || t == "-D":
			decode = true
		case strings.HasPrefix(t, "--"):
		case strings.HasPrefix(t, "-") && len(t) > 1:
			if strings.ContainsRune(t, 'd') {
				decode = true
			}
		default:
			if t != "" && !isDigits(t) {
				return false // a file operand: not stdin
			}
		}
	}
	return decode
}

func hasFlag(args []Word, flag string) bool {
	for _, a := range args {
		if a.Text == flag {
			return true
		}
	}
	return false
}

// echo is echo's output: its operands joined; -e decodes escapes.
func (p *parser) echo(args []Word) staticOut {
	newline, escapes := true, false
	for len(args) > 0 && len(args[0].Text) > 1 && args[0].Text[0] == '-' && strings.Trim(args[0].Text[1:], "neE") == "" {
		for _, ch := range args[0].Text[1:] {
			switch ch {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	var s strings.Builder
	for i, a := range args {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(a.Text)
	}
	text := s.String()
	if escapes && strings.Contains(text, "\\") {
		encoded := encodedEscapes(text)
		text, _ = decodeEcho(text)
		if encoded {
			p.literal("printf", text)
		}
	}
	if newline {
		text += "\n"
	}
	return staticOut{text: text, known: len(text) <= maxStatic}
}

// decodeEcho decodes echo -e's and printf %b's escapes; stop says \c
// ended the output.
func decodeEcho(v string) (out string, stop bool) {
	var s strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 >= len(v) {
			s.WriteByte(v[i])
			continue
		}
		switch e := v[i+1]; e {
		case 'c':
			return s.String(), true
		case '0':
			j := i + 2
			for j < len(v) && j < i+5 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint("0"+v[i+2:j], 8, 16)
			s.WriteByte(byte(n))
			i = j - 1
		default:
			// The rest match $'...' escapes: decode one.
			j := i + 2
			switch {
			case e == 'x':
				for j < len(v) && j < i+4 && isHex(v[j]) {
					j++
				}
			case e == 'u':
				for j < len(v) && j < i+6 && isHex(v[j]) {
					j++
				}
			case e == 'U':
				for j < len(v) && j < i+10 && isHex(v[j]) {
					j++
				}
			case e >= '1' && e <= '7':
				for j < len(v) && j < i+4 && v[j] >= '0' && v[j] <= '7' {
					j++
				}
			}
			s.WriteString(decodeANSIC(v[i:j]))
			i = j - 1
		}
	}
	return s.String(), false
}

// printf is printf's output: the format applied to the operands (%s, %b,
// %c, %d, %%; other conversions print the operand), its escapes decoded.
// printf -v NAME writes nothing.
func (p *parser) printf(args []Word) staticOut {
	if len(args) > 0 && args[0].Text == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0].Text, "-v") {
		return staticOut{}
	}
	format, ops := args[0].Text, args[1:]
	var s strings.Builder
	escaped := encodedEscapes(format)
	for round := 0; round < 64; round++ {
		used := 0
		for i := 0; i < len(format); i++ {
			ch := format[i]
			if ch == '\\' && i+1 < len(format) {
				j := i + 2
				switch e := format[i+1]; {
				case e == 'x':
					for j < len(format) && j < i+4 && isHex(format[j]) {
						j++
					}
				case e >= '0' && e <= '7':
					for j < len(format) && j < i+4 && format[j] >= '0' && format[j] <= '7' {
						j++
					}
				case e == 'u':
					for j < len(format) && j < i+6 && isHex(format[j]) {
						j++
					}
				}
				s.WriteString(decodeANSIC(format[i:j]))
				i = j - 1
				continue
			}
			if ch != '%' || i+1 >= len(format) {
				s.WriteByte(ch)
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
				j++
			}
			if j >= len(format) {
				s.WriteString(format[i:])
				break
			}
			conv := format[j]
			i = j
			if conv == '%' {
				s.WriteByte('%')
				continue
			}
			op := ""
			if used < len(ops) {
				op = ops[used].Text
			}
			used++
			switch conv {
			case 'b':
				d, _ := decodeEcho(op)
				escaped = escaped || encodedEscapes(op)
				s.WriteString(d)
			case 'c':
				if op != "" {
					r, _ := utf8.DecodeRuneInString(op)
					s.WriteRune(r)
				}
			case 'd', 'i', 'u':
				if op == "" {
					op = "0"
				}
				s.WriteString(op)
			default:
				s.WriteString(op)
			}
			if s.Len() > maxStatic {
				return staticOut{}
			}
		}
		if used == 0 || used >= len(ops) {
			break
		}
		ops = ops[used:]
	}
	text := s.String()
	if escaped {
		p.literal("printf", text)
	}
	return staticOut{text: text, known: len(text) <= maxStatic}
}

// encodedEscapes says s writes characters as codes (\x63, \143, \u0063):
// text hidden from a reader, listed as a Literal once decoded.
func encodedEscapes(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\\' {
			if e := s[i+1]; e == 'x' || e == 'u' || e == 'U' || e >= '0' && e <= '7' {
				return true
			}
			i++
		}
	}
	return false
}

func base(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func reverseLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		r := []rune(l)
		for a, z := 0, len(r)-1; a < z; a, z = a+1, z-1 {
			r[a], r[z] = r[z], r[a]
		}
		lines[i] = string(r)
	}
	return strings.Join(lines, "\n")
}

func isROT13(from, to string) bool {
	switch from + " " + to {
	case "A-Za-z N-ZA-Mn-za-m", "a-zA-Z n-za-mN-ZA-M", "A-Za-z N-ZA-Mn-za-m\n":
		return true
	}
	return false
}

func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}
