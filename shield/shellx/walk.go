package shellx

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// push records a substitution for the command being built to walk after
// it is listed.
func (p *parser) push(stmts []*syntax.Stmt, label string) {
	if p.quiet > 0 || len(stmts) == 0 {
		return
	}
	if p.pushed[stmts[0]] {
		return // the same substitution, met again through brace expansion
	}
	if p.pushed == nil {
		p.pushed = map[*syntax.Stmt]bool{}
	}
	p.pushed[stmts[0]] = true
	p.pending = append(p.pending, pending{stmts: stmts, label: label})
}

// collect pushes every substitution within n (words taken as written).
func (p *parser) collect(n syntax.Node) {
	if p.quiet > 0 || n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if !p.spend(1) {
			return false
		}
		switch x := n.(type) {
		case *syntax.BraceExp:
			// syntax.Walk does not know brace expansions.
			for _, e := range x.Elems {
				p.collect(e)
			}
			return false
		case *syntax.CmdSubst:
			label := "$()"
			if x.Backquotes {
				label = "``"
			}
			p.push(x.Stmts, label)
			return false
		case *syntax.ProcSubst:
			label := "<()"
			if x.Op == syntax.CmdOut {
				label = ">()"
			}
			p.push(x.Stmts, label)
			return false
		}
		return true
	})
}

// drain walks the substitutions pushed since mark.
func (p *parser) drain(mark int, c *ctx) {
	if mark >= len(p.pending) {
		return
	}
	pend := append([]pending(nil), p.pending[mark:]...)
	p.pending = p.pending[:mark]
	for _, pd := range pend {
		// Walked now; met again (an unrolled loop), listed again.
		delete(p.pushed, pd.stmts[0])
	}
	// What a substitution holds reads no pipe of the command holding it.
	hasPipe := p.hasPipe
	p.hasPipe = false
	defer func() { p.hasPipe = hasPipe }()
	for _, pd := range pend {
		in := c.with(pd.label)
		c.sc.branch(func() { p.stmts(pd.stmts, in) })
	}
}

// stmts walks a statement list; it returns the first and last simple
// commands listed at this level (-1 if none).
func (p *parser) stmts(list []*syntax.Stmt, c *ctx) (first, last int) {
	first, last = -1, -1
	for _, s := range list {
		f, l := p.stmt(s, c)
		first, last = span(first, last, f, l)
	}
	return first, last
}

func span(first, last, f, l int) (int, int) {
	if first < 0 {
		first = f
	}
	if l >= 0 {
		last = l
	}
	return first, last
}

// stmt walks one statement.
func (p *parser) stmt(s *syntax.Stmt, c *ctx) (first, last int) {
	if s == nil || !p.spend(1) {
		return -1, -1
	}
	if ce, ok := s.Cmd.(*syntax.CallExpr); ok {
		i := p.call(s, ce, c)
		return i, i
	}
	if len(s.Redirs) > 0 {
		// A compound command's (or a bare) redirections: listed as a
		// command of redirections only, before what it holds.
		mark := len(p.pending)
		cmd := Command{PipeIn: -1, Via: c.via, Depth: c.depth, Redirects: p.redirects(s.Redirs, c)}
		cmd.Line = p.stmtLine(s, c)
		p.add(cmd)
		p.drain(mark, c)
	}
	first, last = -1, -1
	sc := c.sc
	switch x := s.Cmd.(type) {
	case nil:
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt, syntax.OrStmt:
			first, last = p.stmt(x.X, c)
			sc.branch(func() {
				f, l := p.stmt(x.Y, c)
				first, last = span(first, last, f, l)
			})
		default: // | and |&
			sc.branch(func() { first, last = p.stmt(x.X, c) })
			sc.branch(func() {
				p.pipeFrom, p.hasPipe = last, last >= 0
				f, l := p.stmt(x.Y, c)
				p.hasPipe = false
				first, last = span(first, last, f, l)
			})
		}
	case *syntax.Subshell:
		// Its own nesting, numbered: a cd inside ( ) does not leave it,
		// nor reach the next ( ).
		p.subshells++
		sub := c.with("(" + strconv.Itoa(p.subshells) + ")")
		sc.branch(func() { first, last = p.stmts(x.Stmts, sub) })
	case *syntax.Block:
		first, last = p.stmts(x.Stmts, c)
	case *syntax.IfClause:
		sc.branch(func() {
			for cl := x; cl != nil; cl = cl.Else {
				f, l := p.stmts(cl.Cond, c)
				first, last = span(first, last, f, l)
				f, l = p.stmts(cl.Then, c)
				first, last = span(first, last, f, l)
			}
		})
	case *syntax.WhileClause:
		sc.branch(func() {
			first, last = p.stmts(x.Cond, c)
			f, l := p.stmts(x.Do, c)
			first, last = span(first, last, f, l)
		})
	case *syntax.ForClause:
		first, last = p.forClause(x, c)
	case *syntax.CaseClause:
		mark := len(p.pending)
		p.word(x.Word, c)
		for _, it := range x.Items {
			for _, pat := range it.Patterns {
				p.collect(pat)
			}
		}
		p.drain(mark, c)
		sc.branch(func() {
			for _, it := range x.Items {
				f, l := p.stmts(it.Stmts, c)
				first, last = span(first, last, f, l)
			}
		})
	case *syntax.FuncDecl:
		// A function's body is listed once, where it is defined, Via
		// "function NAME"; a call of it is listed as the command NAME.
		name := ""
		if x.Name != nil {
			name = x.Name.Value
		}
		if len(p.funcs) > 0 && name != "" {
			// listed where it is called (callFunction), or at the end of
			// its shell if never
			fs := p.funcs[len(p.funcs)-1]
			if _, seen := fs.decls[name]; !seen {
				fs.order = append(fs.order, name)
			}
			fs.decls[name] = funcDecl{body: x.Body, c: c}
			break
		}
		in := c.with("function " + name)
		sc.branch(func() { p.stmt(x.Body, in) })
	case *syntax.ArithmCmd:
		p.walkNested(x, c)
		p.forgetArithm(x, c)
	case *syntax.TestClause:
		p.walkNested(x, c)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			p.walkNested(e, c)
			p.forgetArithm(e, c)
		}
	case *syntax.DeclClause:
		i := p.decl(s, x, c)
		return i, i
	case *syntax.TimeClause:
		first, last = p.stmt(x.Stmt, c)
	case *syntax.CoprocClause:
		sc.branch(func() { first, last = p.stmt(x.Stmt, c) })
	default:
		p.walkNested(s.Cmd, c)
	}
	return first, last
}

// walkNested lists the substitutions within n now.
func (p *parser) walkNested(n syntax.Node, c *ctx) {
	mark := len(p.pending)
	p.collect(n)
	p.drain(mark, c)
}

// forClause walks a for or select loop. A loop over literal words lists
// its body once per word, with the variable set to it, while the unrolled
// total stays within maxUnroll; otherwise the body is listed once with the
// variable unknown. A glob item sets the variable to the pattern, and
// words using it are Glob.
func (p *parser) forClause(x *syntax.ForClause, c *ctx) (first, last int) {
	first, last = -1, -1
	sc := c.sc
	wi, ok := x.Loop.(*syntax.WordIter)
	if !ok {
		p.walkNested(x.Loop, c)
		sc.branch(func() { first, last = p.stmts(x.Do, c) })
		return first, last
	}
	mark := len(p.pending)
	var items []Word
	for _, it := range wi.Items {
		items = append(items, p.words(it, c)...)
	}
	p.drain(mark, c)
	known := wi.InPos.IsValid() && len(items) > 0
	for _, it := range items {
		known = known && !it.Dynamic
	}
	mult := max(c.mult, 1)
	name := wi.Name.Value
	sc.branch(func() {
		if !known || mult*len(items) > maxUnroll {
			sc.set(name, value{})
			first, last = p.stmts(x.Do, c)
			return
		}
		in := *c
		in.mult = mult * len(items)
		for _, it := range items {
			sc.set(name, value{text: it.Text, known: true, glob: it.Glob})
			f, l := p.stmts(x.Do, &in)
			first, last = span(first, last, f, l)
		}
	})
	return first, last
}

// call lists a simple command, then what it holds: its substitutions,
// then its payloads.
func (p *parser) call(s *syntax.Stmt, ce *syntax.CallExpr, c *ctx) int {
	mark := len(p.pending)
	cmd := Command{PipeIn: -1, Via: c.via, Depth: c.depth}
	for _, a := range ce.Assigns {
		cmd.Assigns = append(cmd.Assigns, p.assign(a, c))
	}
	cmd.Args = make([]Word, 0, len(ce.Args))
	for _, w := range ce.Args {
		if t, ok := plainWord(w); ok {
			cmd.Args = append(cmd.Args, Word{Text: t})
			continue
		}
		cmd.Args = append(cmd.Args, p.words(w, c)...)
	}
	cmd.Redirects = p.redirects(s.Redirs, c)
	cmd.Line = p.stmtLine(s, c)
	if c.dyn {
		cmd.Line = strings.ReplaceAll(cmd.Line, dynPlaceholder, "…")
	}
	if len(ce.Args) == 0 {
		// NAME=value alone sets a shell variable; before a command it
		// is only that command's environment.
		for i, a := range cmd.Assigns {
			p.setVar(ce.Assigns[i], a, c)
		}
	}
	if len(cmd.Redirects) == 0 && !p.hasPipe && len(cmd.Assigns) == 0 && p.isFunction(&cmd) {
		// rules 17: a function the line defines runs its body, with
		// these arguments (a call with redirections or in a pipe is
		// listed as a command, as before)
		p.drain(mark, c)
		p.callFunction(&cmd, c)
		return -1
	}
	if p.hasPipe {
		cmd.PipeIn = p.pipeFrom
		p.hasPipe = false
	}
	i := p.add(cmd)
	p.drain(mark, c)
	if i >= 0 {
		p.payloads(i, c)
		p.promptCommand(cmd, c)
		p.assigned(cmd.Args, c)
	}
	return i
}

// assigned forgets the variables a builtin sets (read X, mapfile A,
// getopts o X, printf -v X, unset X) and, after source or . of a file,
// every variable: their values cannot be known.
func (p *parser) assigned(args []Word, c *ctx) {
	if len(args) == 0 || args[0].Dynamic {
		return
	}
	switch name := args[0].Text; name {
	case "read", "mapfile", "readarray", "getopts", "unset", "printf":
		if name == "read" {
			c.sc.set("REPLY", value{})
		}
		for k, a := range args[1:] {
			if isName(a.Text) && (name != "printf" || k > 0 && args[k].Text == "-v") {
				c.sc.set(a.Text, value{})
			}
		}
	case "source", ".":
		if p.spend(len(c.sc.vars)) {
			c.sc.forget()
		}
	case "eval":
		for _, a := range args[1:] {
			if a.Dynamic {
				if p.spend(len(c.sc.vars)) {
					c.sc.forget()
				}
				return
			}
		}
	}
}

// forgetArithm forgets the variables an arithmetic expression names (it
// may assign any of them).
func (p *parser) forgetArithm(n syntax.Node, c *ctx) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if !p.spend(1) {
			return false
		}
		switch x := n.(type) {
		case *syntax.Word:
			if t := x.Lit(); isName(t) {
				c.sc.set(t, value{})
			}
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.BraceExp:
			return false
		}
		return true
	})
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// plainWord is the text of a word that is one literal with nothing to
// expand or unquote (the common case, read without a wordBuilder).
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, "\\*?[{~") || len(l.Value) > maxWordBytes {
		return "", false
	}
	return l.Value, true
}

// setVar records an assignment in the scope.
func (p *parser) setVar(a *syntax.Assign, v Assign, c *ctx) {
	if a.Name == nil || a.Naked && a.Value == nil {
		return
	}
	if a.Index != nil || a.Array != nil {
		c.sc.set(v.Name, value{})
		return
	}
	val := value{text: v.Value.Text, known: !v.Value.Dynamic}
	if a.Append {
		old := c.sc.get(v.Name)
		val = value{text: old.text + val.text, known: old.known && val.known}
	}
	c.sc.set(v.Name, val)
}

// assign builds an Assign; an array value is Dynamic, as written.
func (p *parser) assign(a *syntax.Assign, c *ctx) Assign {
	var out Assign
	if a.Name != nil {
		out.Name = a.Name.Value
	}
	switch {
	case a.Array != nil:
		p.collect(a.Array)
		out.Value = Word{Text: p.written(a.Array, c), Dynamic: true}
	case a.Value != nil:
		out.Value = p.word(a.Value, c)
		out.Value.Glob = false // assignments are not globbed
	}
	if a.Index != nil {
		p.collect(a.Index)
	}
	return out
}

// decl lists declare, export, local, readonly, typeset and nameref as a
// command: Args hold the builtin and its flags, Assigns its NAME=value
// operands (and NAME alone, with an empty value). Literal values are
// recorded in the scope like plain assignments.
func (p *parser) decl(s *syntax.Stmt, x *syntax.DeclClause, c *ctx) int {
	mark := len(p.pending)
	cmd := Command{PipeIn: -1, Via: c.via, Depth: c.depth}
	cmd.Args = []Word{{Text: x.Variant.Value}}
	var named []*syntax.Assign
	for _, a := range x.Args {
		if a.Name == nil {
			if a.Value != nil {
				cmd.Args = append(cmd.Args, p.words(a.Value, c)...)
			}
			continue
		}
		cmd.Assigns = append(cmd.Assigns, p.assign(a, c))
		named = append(named, a)
	}
	cmd.Redirects = p.redirects(s.Redirs, c)
	cmd.Line = p.stmtLine(s, c)
	export := x.Variant.Value == "export"
	// Only -x (export), -r (read-only) and -g (global) keep a value as
	// written: -l and -u change its case, -i evaluates it, -a and -A make
	// an array, and -n makes the name a reference to another variable
	// (declare -n r=HOME; cat $r/x), so any other flag, or one computed
	// at run time, leaves the variable unknown. A reference (-n, or the
	// nameref builtin) may also assign any variable later: from there on
	// no variable of the scope is known.
	dynamic, nameref := false, x.Variant.Value == "nameref"
	for _, w := range cmd.Args[1:] {
		if strings.HasPrefix(w.Text, "-") && strings.Contains(w.Text, "x") {
			export = true
		}
		if w.Dynamic {
			dynamic = true
			continue
		}
		if f, ok := strings.CutPrefix(w.Text, "-"); ok || strings.HasPrefix(w.Text, "+") {
			if !ok {
				f = w.Text[1:]
			}
			for _, r := range f {
				if !strings.ContainsRune("xrg", r) {
					dynamic = true
				}
				if r == 'n' {
					nameref = true
				}
			}
		}
	}
	for i, a := range named {
		p.setVar(a, cmd.Assigns[i], c)
		if (dynamic || nameref) && a.Name != nil {
			c.sc.set(a.Name.Value, value{})
		}
		if export && a.Name != nil {
			c.sc.export(a.Name.Value)
		}
	}
	if nameref {
		if p.spend(len(c.sc.vars)) {
			c.sc.forget()
		}
		c.sc.aliased = true
	}
	if len(cmd.Redirects) == 0 && !p.hasPipe && len(cmd.Assigns) == 0 && p.isFunction(&cmd) {
		// rules 17: a function the line defines runs its body, with
		// these arguments (a call with redirections or in a pipe is
		// listed as a command, as before)
		p.drain(mark, c)
		p.callFunction(&cmd, c)
		return -1
	}
	if p.hasPipe {
		cmd.PipeIn = p.pipeFrom
		p.hasPipe = false
	}
	i := p.add(cmd)
	p.drain(mark, c)
	p.promptCommand(cmd, c)
	return i
}

// promptCommand parses the shell code an assignment to PROMPT_COMMAND
// holds (run before every prompt of an interactive shell that inherits
// it), Via "PROMPT_COMMAND".
func (p *parser) promptCommand(cmd Command, c *ctx) {
	for _, a := range cmd.Assigns {
		if a.Name == "PROMPT_COMMAND" && a.Value.Text != "" {
			p.payload(a.Value.Text, c, "PROMPT_COMMAND", true)
		}
	}
}

// redirects builds a statement's redirections.
func (p *parser) redirects(rs []*syntax.Redirect, c *ctx) []Redirect {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Redirect, 0, len(rs))
	for _, r := range rs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			rd.Target = p.heredoc(r, c)
		case syntax.WordHdoc:
			rd.Target = p.word(r.Word, c)
		default:
			rd.Target = p.word(r.Word, c)
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
			syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
			rd.Write = true
		case syntax.RdrIn:
			rd.Read = true
		case syntax.RdrInOut:
			rd.Read, rd.Write = true, true
		case syntax.DplOut, syntax.DplIn:
			// >&2 and <&0 name descriptors; >&file (bash) writes file.
			if t := rd.Target.Text; t != "-" && !isDigits(t) {
				rd.Write = r.Op == syntax.DplOut
				rd.Read = r.Op == syntax.DplIn
			}
		}
		out = append(out, rd)
	}
	return out
}

// heredoc is a here-document's body: as written when its delimiter is
// quoted, else expanded like a double-quoted string.
func (p *parser) heredoc(r *syntax.Redirect, c *ctx) Word {
	if r.Hdoc == nil {
		return Word{}
	}
	quoted := false
	for _, part := range r.Word.Parts {
		if l, ok := part.(*syntax.Lit); !ok || strings.Contains(l.Value, "\\") {
			quoted = true
		}
	}
	if quoted {
		var s strings.Builder
		for _, part := range r.Hdoc.Parts {
			if l, ok := part.(*syntax.Lit); ok {
				s.WriteString(l.Value)
			}
		}
		return Word{Text: s.String()}
	}
	b := wordBuilder{p: p, c: c, hdoc: true}
	b.parts(r.Hdoc.Parts, true, false)
	b.started = true
	return b.finish()[0]
}

// stmtLine is a statement's source text: its command and redirections
// (a here-document's body left out), without a trailing ; or &.
func (p *parser) stmtLine(s *syntax.Stmt, c *ctx) string {
	from, to := s.Pos(), s.Pos()
	if s.Cmd != nil {
		from, to = s.Cmd.Pos(), s.Cmd.End()
	}
	for _, r := range s.Redirs {
		if r.Pos().Offset() < from.Offset() {
			from = r.Pos()
		}
		if r.Word != nil && r.Word.End().Offset() > to.Offset() {
			to = r.Word.End()
		}
	}
	if s.Negated && s.Pos().Offset() < from.Offset() {
		from = s.Pos()
	}
	return slice(c.src, from, to)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
