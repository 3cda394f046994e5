package shellx

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds below the exported Limits: they keep the work on any line linear
// in its size and small in absolute terms.
const (
	// maxNesting is how deep parentheses, braces and backquotes may nest
	// in one text before it is refused without parsing: the syntax
	// parser recurses once per level.
	maxNesting = 256
	// maxOperators caps the | and & in one text: pipelines and && lists
	// nest one level per operator in the syntax tree.
	maxOperators = 2 * MaxCommands
	// maxWork is the budget of work units (AST nodes visited, bytes of
	// payload parsed, words built) for one Parse.
	maxWork = 4 << 20
	// maxWordBytes caps the text of one word or variable value; a longer
	// one is cut and marked Dynamic.
	maxWordBytes = 64 << 10
	// maxBraceWords caps one word's brace expansion.
	maxBraceWords = 64
	// maxUnroll caps how many times a loop body is listed (for loops over
	// literal words); nested loops multiply.
	maxUnroll = 16
	// maxErrs caps how many errors Analysis.Err joins.
	maxErrs = 4
)

// Parse reads line. See Analysis.
func Parse(line string) Analysis {
	p := &parser{work: maxWork}
	if len(line) > MaxLineBytes {
		p.fail(fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(line), MaxLineBytes))
		return p.a
	}
	p.shell(line, &ctx{sc: newScope()}, "")
	return p.a
}

// parser holds one Parse's result and budgets.
type parser struct {
	a    Analysis
	errs []error
	work int
	// pending are the command and process substitutions met while
	// building a command's words; the command walks them after it is
	// listed (nested commands come after the one holding them).
	pending []pending
	// pipeFrom is the index of the command whose output the next simple
	// command listed reads (-1: none).
	pipeFrom int
	hasPipe  bool
	// out holds, per listed command, its standard output when it is
	// known statically (echo of literals, base64 -d of known text...).
	out []staticOut
	// substs are the substitutions met so far, by their text.
	substs map[string]subst
	// quiet > 0 drops substitutions instead of listing them (words
	// evaluated twice, or only to compute a static output).
	quiet int
	// stop is set once a limit is reached: nothing more is listed.
	stop bool
}

// pending is a substitution to walk after its command is listed.
type pending struct {
	stmts []*syntax.Stmt
	label string // "$()", "``", "<()", ">()"
}

// staticOut is what a command writes to its standard output, when known.
type staticOut struct {
	text  string
	known bool
	// chain names the decoders the text went through ("base64"), for Via.
	chain string
}

// ctx is where a statement is: the text it was parsed from, what it is
// nested in, and its variables.
type ctx struct {
	src   string
	via   string
	depth int
	sc    *scope
	// mult is how many times the enclosing loops are already unrolled.
	mult int
	// dyn marks a text built from an interpreter's string concatenation:
	// dynPlaceholder in it stands for the unknown parts.
	dyn bool
}

func (c *ctx) with(via string) *ctx {
	n := *c
	n.via = joinVia(c.via, via)
	return &n
}

func joinVia(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "":
		return outer
	}
	return outer + " > " + inner
}

// fail records err (the first maxErrs are kept).
func (p *parser) fail(err error) {
	for _, e := range p.errs {
		if e.Error() == err.Error() {
			return
		}
	}
	if len(p.errs) < maxErrs {
		p.errs = append(p.errs, err)
		if len(p.errs) == 1 {
			p.a.Err = err
		} else {
			p.a.Err = errors.Join(p.errs...)
		}
	}
}

// spend takes n units of work; it reports false (and stops the parse)
// when the budget is spent.
func (p *parser) spend(n int) bool {
	if p.stop {
		return false
	}
	p.work -= n
	if p.work < 0 {
		p.stop = true
		p.fail(fmt.Errorf("%w: the line needs more than %d units of work", ErrTooMuchWork, maxWork))
		return false
	}
	return true
}

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// shell parses text as bash and walks every statement in it, in ctx c;
// what names the payload in errors ("" for the line itself).
func (p *parser) shell(text string, c *ctx, what string) {
	if p.stop {
		return
	}
	if c.depth > MaxDepth {
		p.fail(errTooDeep(c.via, ""))
		return
	}
	if !p.spend(len(text) + 1) {
		return
	}
	if n := nesting(text); n > maxNesting {
		p.fail(fmt.Errorf("%w: %sparentheses, braces or quotes nested %d deep, more than %d", ErrTooDeep, errWhere(what), n, maxNesting))
		return
	}
	if n := strings.Count(text, "|") + strings.Count(text, "&"); n > maxOperators {
		p.fail(fmt.Errorf("%w: %s%d | and & operators, more than %d", ErrTooDeep, errWhere(what), n, maxOperators))
		return
	}
	c.src = text
	sp := parsers.Get().(*syntax.Parser)
	defer parsers.Put(sp)
	err := sp.Stmts(strings.NewReader(text), func(s *syntax.Stmt) bool {
		p.stmt(s, c)
		return !p.stop
	})
	if err != nil {
		p.fail(fmt.Errorf("%w: %s%s", ErrSyntax, errWhere(what), describeSyntaxErr(err)))
	}
}

func errWhere(what string) string {
	if what == "" {
		return ""
	}
	return what + " payload: "
}

func describeSyntaxErr(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d col %d: %s", pe.Pos.Line(), pe.Pos.Col(), pe.Text)
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return fmt.Sprintf("line %d col %d: %s", le.Pos.Line(), le.Pos.Col(), le.Error())
	}
	return err.Error()
}

// nesting is a cheap over-estimate of how deep text nests brackets and
// backquotes (quotes are ignored: a bracket inside quotes counts too). The
// syntax parser recurses per level, so a deep text is refused before it
// is parsed.
func nesting(text string) int {
	depth, most, tick := 0, 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		case '`':
			tick ^= 1
			if tick == 1 {
				depth++
			} else if depth > 0 {
				depth--
			}
		case '\\':
			// \` nests backquotes one level deeper.
			if i+1 < len(text) && text[i+1] == '`' {
				depth++
				i++
			}
		}
		if depth > most {
			most = depth
		}
	}
	return most
}

// add lists cmd and returns its index, or -1 once MaxCommands is reached.
func (p *parser) add(cmd Command) int {
	if p.stop {
		return -1
	}
	if len(p.a.Commands) >= MaxCommands {
		p.stop = true
		p.fail(fmt.Errorf("%w: more than %d commands", ErrTooMany, MaxCommands))
		return -1
	}
	p.a.Commands = append(p.a.Commands, cmd)
	p.out = append(p.out, staticOut{})
	return len(p.a.Commands) - 1
}

// literal lists a literal.
func (p *parser) literal(source, text string) {
	if p.stop || text == "" {
		return
	}
	if len(p.a.Literals) >= MaxLiterals {
		p.stop = true
		p.fail(fmt.Errorf("%w: more than %d literals", ErrTooMany, MaxLiterals))
		return
	}
	if !p.spend(len(text)) {
		return
	}
	for _, l := range p.a.Literals {
		if l.Source == source && l.Text == text {
			return
		}
	}
	p.a.Literals = append(p.a.Literals, Literal{Source: source, Text: text})
}

// dynName is the variable standing for the unknown parts of a text built
// by string concatenation in interpreter code; dynPlaceholder is how it
// is written into that text.
const (
	dynName        = "__shellx_dynamic__"
	dynPlaceholder = "${" + dynName + "}"
)
