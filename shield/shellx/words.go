package shellx

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// words expands w into the words the shell makes of it: brace
// expansion, then each part's value, then field splitting of unquoted
// expansions. A brace expansion of more than maxBraceWords words gives one
// Dynamic word as written.
func (p *parser) words(w *syntax.Word, c *ctx) []Word {
	if !p.spend(len(w.Parts)) {
		return []Word{{Text: p.written(w, c), Dynamic: true}}
	}
	asWritten := p.written(w, c)
	variants := [][]syntax.WordPart{w.Parts}
	// SplitBraces rewrites the word it is given; the syntax tree is
	// kept intact (positions of brace expansions can panic).
	split := &syntax.Word{Parts: w.Parts}
	if syntax.SplitBraces(split) && hasBraceExp(split.Parts) {
		var ok bool
		variants, ok = expandBraces(split.Parts, maxBraceWords)
		if !ok {
			p.collect(w)
			return []Word{{Text: asWritten, Dynamic: true, Glob: strings.ContainsAny(asWritten, "*?[")}}
		}
	}
	if len(variants) > 1 && !p.spend(len(variants)) {
		return []Word{{Text: asWritten, Dynamic: true}}
	}
	var out []Word
	for _, parts := range variants {
		b := wordBuilder{p: p, c: c, split: true}
		b.parts(parts, false, true)
		out = append(out, b.finish()...)
	}
	return out
}

// word expands w as one word, the way assignment values and redirection
// targets are: no field splitting, no brace expansion.
func (p *parser) word(w *syntax.Word, c *ctx) Word {
	if w == nil {
		return Word{}
	}
	if !p.spend(len(w.Parts)) {
		return Word{Text: p.written(w, c), Dynamic: true}
	}
	b := wordBuilder{p: p, c: c}
	b.parts(w.Parts, false, true)
	fs := b.finish()
	if len(fs) == 0 {
		return Word{}
	}
	return fs[0]
}

// written is node's source text, as written.
func (p *parser) written(n syntax.Node, c *ctx) string {
	return slice(c.src, n.Pos(), n.End())
}

func slice(src string, from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if !from.IsValid() || !to.IsValid() || a < 0 || b > len(src) || a > b {
		return ""
	}
	return src[a:b]
}

// wordBuilder builds the fields of one word.
type wordBuilder struct {
	p *parser
	c *ctx
	// split: unquoted expansions are split into fields.
	split bool
	// hdoc: the text is a here-document body (backslash escapes " too
	// only in double quotes).
	hdoc    bool
	fields  []Word
	cur     strings.Builder
	dyn     bool
	glob    bool
	started bool
}

func (b *wordBuilder) lit(s string) {
	b.started = true
	if len(s) > 64 && !b.p.spend(len(s)/16) {
		// Values copied over and over (X=$X$X...; echo $X $X ...)
		// are paid for by the byte.
		b.dyn = true
		return
	}
	if b.cur.Len()+len(s) > maxWordBytes {
		s = s[:max(0, maxWordBytes-b.cur.Len())]
		b.dyn = true
	}
	b.cur.WriteString(s)
}

func (b *wordBuilder) dynamic(s string) {
	b.lit(s)
	b.dyn = true
}

func (b *wordBuilder) end() {
	if b.started {
		b.fields = append(b.fields, Word{Text: b.cur.String(), Dynamic: b.dyn, Glob: b.glob})
	}
	b.cur.Reset()
	b.dyn, b.glob, b.started = false, false, false
}

func (b *wordBuilder) finish() []Word {
	b.end()
	return b.fields
}

// expanded adds the value of an expansion: split into fields and
// globbed when unquoted.
func (b *wordBuilder) expanded(v string, quoted bool) {
	if quoted || !b.split {
		b.lit(v)
		return
	}
	if ifs, ok := b.c.sc.vars["IFS"]; ok && (!ifs.known || ifs.text != " \t\n") {
		// A line that sets IFS splits on other characters: the
		// fields cannot be told, the value stays one Dynamic word.
		b.dynamic(v)
		return
	}
	if strings.ContainsAny(v, "*?[") {
		b.glob = true
	}
	for i := 0; i < len(v); {
		j := strings.IndexAny(v[i:], " \t\n")
		if j < 0 {
			b.lit(v[i:])
			return
		}
		if j > 0 {
			b.lit(v[i : i+j])
		}
		b.end()
		i += j + 1
	}
}

func (b *wordBuilder) parts(parts []syntax.WordPart, quoted, first bool) {
	for i, part := range parts {
		switch x := part.(type) {
		case *syntax.Lit:
			switch {
			case quoted:
				b.lit(unescapeDouble(x.Value, b.hdoc))
			case first && i == 0 && strings.HasPrefix(x.Value, "~"):
				b.tilde(x.Value)
			default:
				b.unquoted(x.Value)
			}
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v = decodeANSIC(v)
			}
			if b.c.dyn && strings.Contains(v, dynPlaceholder) {
				v = strings.ReplaceAll(v, dynPlaceholder, "")
				b.dyn = true
			}
			b.lit(v)
		case *syntax.DblQuoted:
			b.started = true
			b.parts(x.Parts, true, false)
		case *syntax.ParamExp:
			b.param(x, quoted)
		case *syntax.CmdSubst:
			label := "$()"
			if x.Backquotes {
				label = "``"
			}
			b.p.push(x.Stmts, label)
			b.dynamic(b.p.register(x, x.Stmts, b.c))
		case *syntax.ProcSubst:
			label := "<()"
			if x.Op == syntax.CmdOut {
				label = ">()"
			}
			b.p.push(x.Stmts, label)
			b.dynamic(b.p.register(x, x.Stmts, b.c))
		case *syntax.ArithmExp:
			b.p.collect(x)
			b.dynamic(b.p.written(x, b.c))
		case *syntax.ExtGlob:
			if !quoted {
				b.glob = true
			}
			b.lit(b.p.written(x, b.c))
		case *syntax.BraceExp:
			// Not expanded (words expands them all): unknown.
			b.p.collect(x)
			b.dynamic("{...}")
		default:
			b.p.collect(x)
			b.dynamic(b.p.written(x, b.c))
		}
	}
}

// unquoted adds an unquoted literal: backslashes quote the next byte, and
// unescaped *, ? and [...] make the word a glob.
func (b *wordBuilder) unquoted(v string) {
	if !strings.ContainsAny(v, "\\*?[") {
		b.lit(v)
		return
	}
	var s strings.Builder
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch ch {
		case '\\':
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					s.WriteByte(v[i])
				}
				continue
			}
		case '*', '?':
			b.glob = true
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				b.glob = true
			}
		}
		s.WriteByte(ch)
	}
	b.lit(s.String())
}

// tilde adds a literal that starts the word with ~: "~" and "~/..." are
// the home ("~", for the caller to map); ~user, ~+ and ~- are Dynamic.
func (b *wordBuilder) tilde(v string) {
	prefix := v
	if i := strings.IndexByte(v, '/'); i >= 0 {
		prefix = v[:i]
	}
	switch home, set := b.c.sc.vars["HOME"]; {
	case prefix != "~":
		b.dyn = true
		b.lit(prefix)
	case set && home.known:
		// HOME=/etc; cat ~/shadow reads /etc/shadow.
		b.lit(home.text)
	case set:
		b.dynamic(prefix)
	default:
		b.lit(prefix)
	}
	b.unquoted(v[len(prefix):])
}

// param adds a parameter expansion.
func (b *wordBuilder) param(x *syntax.ParamExp, quoted bool) {
	asWritten := b.p.written(x, b.c)
	b.p.collect(x)
	if x.Param == nil || x.Excl || x.Length || x.Width || x.Index != nil || x.Slice != nil ||
		x.Repl != nil || x.Names != 0 || x.NestedParam != nil || x.Flags != nil || len(x.Modifiers) > 0 {
		b.dynamic(asWritten)
		return
	}
	name := x.Param.Value
	if name == dynName && b.c.dyn {
		b.dyn = true
		b.started = true
		return
	}
	v := b.c.sc.get(name)
	if x.Exp == nil {
		if !v.known {
			b.dynamic(asWritten)
			return
		}
		if v.glob {
			b.glob = true
		}
		b.expanded(v.text, quoted)
		return
	}
	arg := func() (Word, bool) {
		if x.Exp.Word == nil {
			return Word{}, true
		}
		b.p.quiet++
		w := b.p.word(x.Exp.Word, b.c)
		b.p.quiet--
		return w, !w.Dynamic
	}
	switch op := x.Exp.Op; op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		colon := op == syntax.DefaultUnsetOrNull || op == syntax.AssignUnsetOrNull
		if v.known && (v.text != "" || !colon) {
			b.expanded(v.text, quoted)
			return
		}
		// Unknown (or known empty): the default. When the variable is
		// unknown the environment may set it, so the word is Dynamic
		// but carries the default, the likeliest value.
		w, _ := arg()
		if !v.known || w.Dynamic {
			b.dyn = true
		}
		b.expanded(w.Text, quoted)
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if !v.known {
			b.dynamic(asWritten)
			return
		}
		if v.text == "" && op == syntax.AlternateUnsetOrNull {
			b.started = true
			return
		}
		w, _ := arg()
		if w.Dynamic {
			b.dyn = true
		}
		b.expanded(w.Text, quoted)
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		w, ok := arg()
		if !v.known || !ok || strings.ContainsAny(w.Text, "*?[") {
			b.dynamic(asWritten)
			return
		}
		t := v.text
		if op == syntax.RemSmallPrefix || op == syntax.RemLargePrefix {
			t = strings.TrimPrefix(t, w.Text)
		} else {
			t = strings.TrimSuffix(t, w.Text)
		}
		b.expanded(t, quoted)
	case syntax.UpperAll, syntax.LowerAll:
		if !v.known || x.Exp.Word != nil {
			b.dynamic(asWritten)
			return
		}
		t := strings.ToUpper(v.text)
		if op == syntax.LowerAll {
			t = strings.ToLower(v.text)
		}
		b.expanded(t, quoted)
	default:
		b.dynamic(asWritten)
	}
}

// unescapeDouble removes the backslashes that quote inside double quotes
// (before $, `, ", \ and newline); in a here-document " is not quoted.
func unescapeDouble(v string, hdoc bool) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var s strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch n := v[i+1]; {
			case n == '\n':
				i++
				continue
			case n == '$' || n == '`' || n == '\\' || (n == '"' && !hdoc):
				s.WriteByte(n)
				i++
				continue
			}
		}
		s.WriteByte(v[i])
	}
	return s.String()
}

// decodeANSIC decodes the escapes of a $'...' string.
func decodeANSIC(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var s strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 >= len(v) {
			s.WriteByte(v[i])
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			s.WriteByte(7)
		case 'b':
			s.WriteByte(8)
		case 'e', 'E':
			s.WriteByte(27)
		case 'f':
			s.WriteByte(12)
		case 'n':
			s.WriteByte('\n')
		case 'r':
			s.WriteByte('\r')
		case 't':
			s.WriteByte('\t')
		case 'v':
			s.WriteByte(11)
		case '\\', '\'', '"', '?':
			s.WriteByte(e)
		case 'c':
			if i+1 < len(v) {
				i++
				s.WriteByte(v[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j < i+1+n && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				s.WriteByte('\\')
				s.WriteByte(e)
				continue
			}
			r, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				s.WriteByte(byte(r))
			} else if r <= utf8.MaxRune {
				s.WriteRune(rune(r))
			}
			i = j - 1
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(v) && j < i+3 && v[j] >= '0' && v[j] <= '7' {
					j++
				}
				r, _ := strconv.ParseUint(v[i:j], 8, 16)
				s.WriteByte(byte(r))
				i = j - 1
				continue
			}
			s.WriteByte('\\')
			s.WriteByte(e)
		}
	}
	return s.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hasBraceExp(parts []syntax.WordPart) bool {
	for _, part := range parts {
		if _, ok := part.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// expandBraces lists the part sequences a brace expansion makes, in
// order; false when there would be more than limit.
func expandBraces(parts []syntax.WordPart, limit int) ([][]syntax.WordPart, bool) {
	res := [][]syntax.WordPart{nil}
	for _, part := range parts {
		be, ok := part.(*syntax.BraceExp)
		if !ok {
			for i := range res {
				res[i] = append(res[i][:len(res[i]):len(res[i])], part)
			}
			continue
		}
		var alts [][]syntax.WordPart
		if be.Sequence {
			seq, ok := braceSequence(be, limit)
			if !ok {
				return nil, false
			}
			for _, s := range seq {
				alts = append(alts, []syntax.WordPart{&syntax.Lit{Value: s}})
			}
		} else {
			for _, elem := range be.Elems {
				sub, ok := expandBraces(elem.Parts, limit)
				if !ok || len(alts)+len(sub) > limit {
					return nil, false
				}
				alts = append(alts, sub...)
			}
		}
		if len(res)*len(alts) > limit {
			return nil, false
		}
		next := make([][]syntax.WordPart, 0, len(res)*len(alts))
		for _, r := range res {
			for _, a := range alts {
				n := make([]syntax.WordPart, 0, len(r)+len(a))
				n = append(append(n, r...), a...)
				next = append(next, n)
			}
		}
		res = next
	}
	return res, true
}

// braceSequence lists {x..y[..incr]}: integers or single letters.
func braceSequence(be *syntax.BraceExp, limit int) ([]string, bool) {
	if len(be.Elems) < 2 {
		return nil, false
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	incr := 1
	if len(be.Elems) > 2 {
		n, err := strconv.Atoi(be.Elems[2].Lit())
		if err != nil {
			return nil, false
		}
		incr = max(n, -n)
	}
	if incr == 0 {
		incr = 1
	}
	a, errA := strconv.Atoi(from)
	z, errZ := strconv.Atoi(to)
	letters := false
	if errA != nil || errZ != nil {
		if len(from) != 1 || len(to) != 1 {
			return nil, false
		}
		a, z, letters = int(from[0]), int(to[0]), true
	}
	n := (max(a, z)-min(a, z))/incr + 1
	if n > limit || n < 0 {
		return nil, false
	}
	width := 0
	if !letters && (len(from) > 1 && from[0] == '0' || len(to) > 1 && to[0] == '0') {
		width = max(len(from), len(to))
	}
	step := incr
	if z < a {
		step = -incr
	}
	out := make([]string, 0, n)
	for i, v := 0, a; i < n; i, v = i+1, v+step {
		if letters {
			out = append(out, string(rune(v)))
			continue
		}
		s := strconv.Itoa(v)
		for len(s) < width {
			s = "0" + s
		}
		out = append(out, s)
	}
	return out, true
}
