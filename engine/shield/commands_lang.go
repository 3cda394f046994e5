package shield

import (
	"strings"

	"github.com/opx-dev/opx/engine/shield/shellx"
)

// Programs with a command language of their own (sed, awk, sqlite3): the
// commands of it that run programs, read or write files are judged as
// such; a script Shield cannot read is unknown.

var sedSpec = newSpec("-e -f -l --expression --file --line-length")

// sedH reads sed: the script's e, r, R, w and W commands and the s
// command's e and w flags (see sedScript), files read, or read and
// written with -i.
func sedH(x *call) {
	opts, ops := sedSpec.parse(x.args)
	inPlace := has(opts, "-i", "--in-place")
	for _, w := range vals(opts, "-f", "--file") {
		x.ref(kRead, w, false)
		if w.Text != "-" || x.c.PipeIn >= 0 {
			x.m.unknown(x.name + " runs a script from " + w.Text + ", which is not read")
		}
	}
	if inPlace && len(ops) > 0 && ops[0].Text == "" {
		ops = ops[1:] // BSD sed -i ''
	}
	scripts := vals(opts, "-e", "--expression")
	if !has(opts, "-e", "--expression", "-f", "--file") && len(ops) > 0 {
		scripts = append(scripts, ops[0])
		ops = ops[1:]
	}
	for _, sc := range scripts {
		x.m.f.Texts = append(x.m.f.Texts, Text{Source: "sed", Body: sc.Text})
		if sc.Dynamic {
			x.m.unknown(x.name + " runs a script computed at run time: " + clipText(sc.Text, 120))
			continue
		}
		x.sedScript(sc.Text)
	}
	for _, w := range ops {
		x.ref(kRead, w, false)
		if !inPlace {
			continue
		}
		x.ref(kWrite, w, false)
		// What the edit writes into the file, for the rules that
		// judge a file's content by its kind (a Makefile recipe, a
		// workflow step).
		if p, ok := x.abs(w.Text); ok && !w.Dynamic {
			for _, sc := range scripts {
				x.m.f.Texts = append(x.m.f.Texts, Text{Source: "content:" + p, Body: unescape(sc.Text)})
			}
		}
	}
}

// sedScript judges the commands of a sed script that reach outside the
// text: e CMD (runs CMD; a bare e runs the pattern space), r/R FILE
// (read), w/W FILE (written), s///e (runs the result) and s///w FILE. A
// script it cannot read is unknown.
func (x *call) sedScript(s string) {
	restOfLine := func(i int) (string, int) {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s[i:], len(s)
		}
		return s[i : i+j], i + j
	}
	// delimited skips a delimited part starting at i (the delimiter at
	// s[i-1]) and returns the index after its closing delimiter.
	delimited := func(i int, d byte) int {
		for ; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == d || d != '\n' && s[i] == '\n' {
				return i + 1
			}
		}
		return -1
	}
	file := func(i int, k int) int {
		f, j := restOfLine(i)
		f = strings.TrimSpace(f)
		if f != "" && f != "/dev/stdout" && f != "/dev/stderr" && f != "/dev/stdin" {
			x.ref(k, word(f), false)
		}
		return j
	}
	for i, n := 0, 0; i < len(s) && n < 4096; n++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!':
			i++
			continue
		case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
			i++
			continue
		case c == '/' || c == '\\':
			// An address /RE/ or \cREc.
			if c == '\\' {
				if i+1 >= len(s) {
					return
				}
				i++
			}
			j := delimited(i+1, s[i])
			if j < 0 {
				x.m.unknown(x.name + " script cannot be read: " + clipText(s, 120))
				return
			}
			i = j
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			continue
		}
		i++
		switch c {
		case 's', 'y':
			if i >= len(s) {
				x.m.unknown(x.name + " script cannot be read: " + clipText(s, 120))
				return
			}
			d := s[i]
			j := delimited(i+1, d)
			if j >= 0 {
				j = delimited(j, d)
			}
			if j < 0 {
				x.m.unknown(x.name + " script cannot be read: " + clipText(s, 120))
				return
			}
			i = j
			if c == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
				switch s[i] {
				case 'e':
					x.m.unknown(x.name + " runs the text it substitutes as a command: " + clipText(s, 120))
				case 'w':
					i = file(i+1, kWrite)
					continue
				}
				i++
			}
		case 'e':
			cmd, j := restOfLine(i)
			i = j
			if cmd = strings.TrimSpace(cmd); cmd == "" {
				x.m.unknown(x.name + " runs the text it reads as a command")
				continue
			}
			x.payload(word(cmd), x.name+" e")
		case 'r', 'R':
			i = file(i, kRead)
		case 'w', 'W':
			i = file(i, kWrite)
		case 'a', 'i', 'c':
			// Text to the end of the line (continued by a backslash).
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				i++
			}
		case 'q', 'Q', 'l', 'L', 'F', 'z', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', '#':
			if c == '#' {
				_, i = restOfLine(i)
			}
		default:
			x.m.unknown(x.name + " script cannot be read: " + clipText(s, 120))
			return
		}
	}
}

var awkSpec = newSpec("-f -v -F -i -l -E --file --assign --field-separator --include --load --exec")

// awkH reads awk: the program's system(), print and printf redirections,
// getline from files and commands (see awkProgram); a program file is not
// read, so what it does is unknown.
func awkH(x *call) {
	opts, ops := awkSpec.parse(x.args)
	for _, w := range vals(opts, "-f", "--file", "-E", "--exec") {
		x.ref(kRead, w, false)
		x.m.unknown(x.name + " runs a program from " + w.Text + ", which is not read")
	}
	inPlace := false
	for _, w := range vals(opts, "-i", "--include") {
		if w.Text == "inplace" {
			inPlace = true
			continue
		}
		x.m.unknown(x.name + " includes " + w.Text + ", which is not read")
	}
	if len(vals(opts, "-l", "--load")) > 0 {
		x.m.unknown(x.name + " loads an extension")
	}
	if !has(opts, "-f", "--file", "-E", "--exec") && len(ops) > 0 {
		prog := ops[0]
		x.m.f.Texts = append(x.m.f.Texts, Text{Source: "awk", Body: prog.Text})
		if prog.Dynamic {
			x.m.unknown(x.name + " runs a program computed at run time: " + clipText(prog.Text, 120))
		} else {
			x.awkProgram(prog.Text)
		}
		ops = ops[1:]
	}
	for _, w := range ops {
		if isAssign(w.Text) {
			continue
		}
		x.ref(kRead, w, false)
		if inPlace {
			x.ref(kWrite, w, false)
		}
	}
}

// awkProgram judges what an awk program does beyond its text: print and
// printf to "FILE" (written) or | "CMD" (run), getline < "FILE" (read),
// "CMD" | getline and system("CMD") (run). A target that is not a string
// literal is unknown.
func (x *call) awkProgram(p string) {
	if strings.Contains(p, "@load") {
		x.m.unknown(x.name + " loads an extension")
	}
	// literal returns the string literal at the start of s, if any.
	literal := func(s string) (string, bool) {
		s = strings.TrimLeft(s, " \t(")
		if s == "" || s[0] != '"' {
			return "", false
		}
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '"':
				rest := strings.TrimLeft(s[i+1:], " \t)")
				// "a" b: a concatenation is computed.
				if rest != "" && strings.IndexByte(";}\n|&>,", rest[0]) < 0 && !strings.HasPrefix(rest, "getline") {
					return "", false
				}
				return b.String(), true
			default:
				b.WriteByte(s[i])
			}
		}
		return "", false
	}
	// literalBefore returns the string literal that ends s, if any.
	literalBefore := func(s string) (string, bool) {
		s = strings.TrimRight(s, " \t")
		if !strings.HasSuffix(s, `"`) {
			return "", false
		}
		k := strings.LastIndexByte(s[:len(s)-1], '"')
		for k > 0 && s[k-1] == '\\' {
			k = strings.LastIndexByte(s[:k-1], '"')
		}
		if k < 0 {
			return "", false
		}
		before := strings.TrimRight(s[:k], " \t(")
		if before != "" && strings.IndexByte(";{}\n(=", before[len(before)-1]) < 0 {
			return "", false // "a" "b" or x "b": computed
		}
		return s[k+1 : len(s)-1], true
	}
	// Outside string literals: find the operators that reach out.
	inStr := false
	stmt := 0 // where the current statement starts
	printing := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == ';' || c == '{' || c == '}' || c == '\n':
			stmt, printing = i+1, false
		case awkWord(p, i, "print") || awkWord(p, i, "printf"):
			printing = true
		case awkWord(p, i, "system"):
			if cmd, ok := literal(p[i+len("system"):]); ok {
				x.payload(word(cmd), x.name)
			} else {
				x.m.unknown(x.name + " runs a command computed at run time")
			}
		case awkWord(p, i, "getline"):
			rest := strings.TrimLeft(p[i+len("getline"):], " \t")
			// getline [var] < FILE
			if k := strings.IndexAny(rest, "<;}\n)"); k >= 0 && rest[k] == '<' {
				if f, ok := literal(rest[k+1:]); ok {
					x.ref(kRead, word(f), false)
				} else {
					x.m.unknown(x.name + " reads a file computed at run time")
				}
			}
			// CMD | getline
			before := strings.TrimRight(p[stmt:i], " \t")
			if cmd, ok := strings.CutSuffix(before, "|"); ok {
				if lit, ok := literalBefore(cmd); ok {
					x.payload(word(lit), x.name)
				} else {
					x.m.unknown(x.name + " runs a command computed at run time")
				}
			}
		case printing && (c == '>' || c == '|'):
			if c == '|' && i+1 < len(p) && p[i+1] == '|' {
				i++ // ||
				continue
			}
			if c == '>' && i+1 < len(p) && p[i+1] == '>' {
				i++
			}
			target := p[i+1:]
			if c == '|' && strings.HasPrefix(strings.TrimLeft(target, " \t"), "getline") {
				continue
			}
			lit, ok := literal(target)
			switch {
			case !ok && c == '|':
				x.m.unknown(x.name + " pipes to a command computed at run time")
			case !ok:
				x.m.unknown(x.name + " writes a file computed at run time")
			case c == '|':
				x.payload(word(lit), x.name)
			case lit != "/dev/stdout" && lit != "/dev/stderr" && lit != "-":
				x.ref(kWrite, word(lit), false)
			}
		}
	}
}

// awkWord reports whether the awk keyword kw starts at p[i] as a word.
func awkWord(p string, i int, kw string) bool {
	if !strings.HasPrefix(p[i:], kw) {
		return false
	}
	if i > 0 && isWordByte(p[i-1]) {
		return false
	}
	j := i + len(kw)
	return j == len(p) || !isWordByte(p[j])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sqliteOpts are sqlite3's options that take a value.
var sqliteSpec = goSpec("-cmd -init -separator -nullvalue -newline -mmap -pagecache -lookaside -heap -maxsize -vfs -escape")

// sqliteH reads sqlite3 DB [SQL|.cmd]...: the database read (and written
// unless every statement only reads), the dot-commands and SQL functions
// that reach outside it (see sqliteCommand). A script read from standard
// input or a file is unknown unless its text is in the line.
func sqliteH(x *call) {
	var args []shellx.Word
	for _, w := range x.args {
		if strings.HasPrefix(w.Text, "--") {
			w.Text = w.Text[1:] // --cmd is -cmd
		}
		args = append(args, w)
	}
	opts, ops := sqliteSpec.parse(args)
	for _, o := range opts {
		switch o.name {
		case "-A", "-archive", "-ar", "-zip", "-append", "-deserialize", "-memtrace", "-safe-no":
			x.m.unknown(x.name + " " + o.name + " is not modelled")
		}
	}
	var cmds []shellx.Word
	cmds = append(cmds, vals(opts, "-cmd")...)
	for _, w := range vals(opts, "-init") {
		x.ref(kRead, w, false)
		x.m.unknown(x.name + " runs the commands of " + w.Text + ", which are not read")
	}
	var db shellx.Word
	hasDB := false
	if len(ops) > 0 {
		db, hasDB = ops[0], true
		cmds = append(cmds, ops[1:]...)
	}
	if len(ops) <= 1 {
		// The commands come from standard input.
		if body, ok := x.stdinText(); ok {
			for _, l := range strings.Split(body, "\n") {
				cmds = append(cmds, word(l))
			}
		} else if x.stdinUsed() {
			x.m.unknown(x.name + " runs commands from its input, which are not read")
		}
	}
	writes := false
	for _, c := range cmds {
		if c.Dynamic {
			x.m.unknown(x.name + " runs commands computed at run time: " + clipText(c.Text, 120))
			continue
		}
		if x.sqliteCommand(c.Text) {
			writes = true
		}
	}
	if hasDB && db.Text != ":memory:" && db.Text != "" {
		x.ref(kRead, db, false)
		if writes {
			x.ref(kWrite, db, false)
		}
	}
}

// stdinText is the text the current command reads on its standard input
// when the line holds it: a here-document or here-string, or the output
// of echo or printf piped in.
func (x *call) stdinText() (string, bool) {
	for _, r := range x.c.Redirects {
		if (r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<") && !r.Target.Dynamic {
			return r.Target.Text, true
		}
	}
	if j := x.c.PipeIn; j >= 0 && j < len(x.m.a.Commands) {
		name, args := peelName(&x.m.a.Commands[j])
		if name == "echo" || name == "printf" {
			return echoOutput(name, args)
		}
	}
	return "", false
}

// stdinUsed reports whether the current command's standard input is fed
// by the line (a pipe or a redirection).
func (x *call) stdinUsed() bool {
	if x.c.PipeIn >= 0 {
		return true
	}
	for _, r := range x.c.Redirects {
		if r.Op == "<" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" || r.Op == "<>" {
			return true
		}
	}
	return false
}

// sqliteCommand judges one sqlite3 dot-command or SQL text; it reports
// whether it may change the database.
func (x *call) sqliteCommand(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return false
	}
	if t[0] != '.' {
		return x.sqliteSQL(t)
	}
	fields := strings.Fields(t[1:])
	if len(fields) == 0 {
		return false
	}
	cmd, rest := fields[0], strings.TrimSpace(strings.TrimPrefix(t[1:], fields[0]))
	arg := func() (shellx.Word, bool) {
		for _, f := range strings.Fields(rest) {
			if strings.HasPrefix(f, "-") {
				continue
			}
			return word(strings.Trim(f, `"'`)), true
		}
		return shellx.Word{}, false
	}
	// pipe judges a "|CMD" file argument, which runs CMD.
	pipe := func() bool {
		r := strings.TrimLeft(rest, " ")
		for strings.HasPrefix(r, "-") {
			_, r, _ = strings.Cut(r, " ")
			r = strings.TrimLeft(r, " ")
		}
		r = strings.Trim(r, `"'`)
		if c, ok := strings.CutPrefix(r, "|"); ok {
			x.payload(word(c), x.name+" ."+cmd)
			return true
		}
		return false
	}
	switch cmd {
	case "shell", "system":
		x.payload(word(strings.Trim(rest, `"'`)), x.name+" ."+cmd)
	case "output", "once", "log", "trace", "backup", "save", "clone", "excel":
		if strings.Contains(rest, "-e") || strings.Contains(rest, "-x") || cmd == "excel" {
			x.m.unknown(x.name + " ." + cmd + " opens the output in another program")
		}
		if pipe() {
			return false
		}
		if w, ok := arg(); ok && w.Text != "stdout" && w.Text != "stderr" && w.Text != "off" && w.Text != "on" {
			x.ref(kWrite, w, false)
		}
	case "import":
		if pipe() {
			return true
		}
		if w, ok := arg(); ok {
			x.ref(kRead, w, false)
		}
		return true
	case "read":
		if pipe() {
			return true
		}
		if w, ok := arg(); ok {
			x.ref(kRead, w, false)
		}
		x.m.unknown(x.name + " .read runs commands from a file, which are not read")
		return true
	case "open", "restore", "recover":
		if w, ok := arg(); ok {
			x.ref(kRead, w, false)
			x.ref(kWrite, w, false)
		}
		return true
	case "dump", "schema", "tables", "table", "indexes", "indices", "headers", "header", "mode", "help", "quit", "exit", "show", "stats",
		"timer", "width", "nullvalue", "separator", "print", "databases", "dbinfo", "fullschema", "eqp", "explain", "changes", "bail", "echo",
		"limit", "prompt", "version", "timeout", "lint", "sha3sum", "selftest", "scanstats", "crnl", "testctrl", "dbconfig", "expert",
		"progress", "vfsinfo", "vfslist", "vfsname", "width\t":
	default:
		// .load, .cd, .edit, .archive, .connection and the rest.
		x.m.unknown(x.name + " ." + cmd + " is not modelled")
		return true
	}
	return false
}

// sqliteFuncs are SQL functions of the sqlite3 shell that reach files or
// code: the argument index of the path, or -1 for "unknown".
var sqliteFuncs = map[string]int{"readfile": kRead, "writefile": kWrite, "fsdir": kRead, "load_extension": -1, "edit": -1}

// sqliteSQL judges SQL text: readfile('P'), writefile('P', ...), fsdir,
// load_extension, edit, ATTACH 'P' and VACUUM INTO 'P'. It reports whether
// the SQL may change a database.
func (x *call) sqliteSQL(t string) bool {
	lower := strings.ToLower(t)
	for fn, k := range sqliteFuncs {
		for off := 0; off < len(lower); {
			j := strings.Index(lower[off:], fn)
			if j < 0 {
				break
			}
			j += off
			off = j + len(fn)
			if j > 0 && isWordByte(lower[j-1]) {
				continue
			}
			rest := strings.TrimLeft(t[off:], " \t\n")
			if !strings.HasPrefix(rest, "(") {
				continue
			}
			if k < 0 {
				x.m.unknown(x.name + " " + fn + "() is not modelled")
				continue
			}
			if p, ok := sqlString(rest[1:]); ok {
				x.ref(k, word(p), k == kRead && fn == "fsdir")
			} else {
				x.m.unknown(x.name + " " + fn + "() of a path computed at run time")
			}
		}
	}
	for _, kw := range []string{"attach", "vacuum"} {
		if j := strings.Index(lower, kw); j >= 0 && (j == 0 || !isWordByte(lower[j-1])) {
			rest := strings.TrimLeft(t[j+len(kw):], " \t\n")
			if kw == "vacuum" {
				r, ok := cutFoldPrefix(rest, "into")
				if !ok {
					continue
				}
				rest = strings.TrimLeft(r, " \t\n")
			} else if r, ok := cutFoldPrefix(rest, "database"); ok {
				rest = strings.TrimLeft(r, " \t\n")
			}
			if p, ok := sqlString(rest); ok {
				if p != ":memory:" && p != "" {
					x.ref(kRead, word(p), false)
					x.ref(kWrite, word(p), false)
				}
			} else {
				x.m.unknown(x.name + " " + kw + " of a path computed at run time")
			}
		}
	}
	for _, kw := range []string{"insert", "update", "delete", "replace", "create", "drop", "alter", "vacuum", "reindex", "attach", "pragma"} {
		if j := strings.Index(lower, kw); j >= 0 && (j == 0 || !isWordByte(lower[j-1])) && (j+len(kw) == len(lower) || !isWordByte(lower[j+len(kw)])) {
			return true
		}
	}
	return false
}

// sqlString returns the SQL string literal at the start of s.
func sqlString(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t\n")
	if s == "" || s[0] != '\'' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			rest := strings.TrimLeft(s[i+1:], " \t\n")
			if strings.HasPrefix(rest, "||") {
				return "", false // concatenated: computed
			}
			return b.String(), true
		}
		b.WriteByte(s[i])
	}
	return "", false
}

func cutFoldPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// lineSets reports whether the line sets the variable name before or for
// the current command (NAME=v cmd, export NAME=v, declare NAME=v).
func (x *call) lineSets(name string) bool {
	for j := 0; j <= x.i && j < len(x.m.a.Commands); j++ {
		for _, a := range x.m.a.Commands[j].Assigns {
			if a.Name == name {
				return true
			}
		}
	}
	return false
}

var lessSpec = newSpec("-b -h -j -k -o -O -p -P -t -T -x -y -z -# --buffers --max-back-scroll --jump-target --lesskey-file --log-file --LOG-FILE --pattern --prompt --tag --tag-file --tabs --max-forw-scroll --window --shift")

// lessH reads less and more: files read; a +CMD or -p whose command
// starts with ! runs a shell command; -o/-O write a log; LESSOPEN or
// LESSCLOSE set in the line run a command on every file.
func lessH(x *call) {
	opts, ops := lessSpec.parse(x.args)
	for _, w := range vals(opts, "-o", "-O", "--log-file", "--LOG-FILE") {
		x.ref(kWrite, w, false)
	}
	for _, w := range vals(opts, "-k", "--lesskey-file", "-T", "--tag-file") {
		x.ref(kRead, w, false)
	}
	for _, w := range ops {
		if c, ok := strings.CutPrefix(w.Text, "+"); ok {
			c = strings.TrimLeft(c, "+:")
			if strings.Contains(c, "!") {
				if k := strings.IndexByte(c, '!'); w.Dynamic {
					x.m.unknown(x.name + " runs a command computed at run time")
				} else {
					x.payload(word(c[k+1:]), x.name+" !")
				}
			}
			continue
		}
		x.ref(kRead, w, false)
	}
	for _, v := range []string{"LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSEDIT", "VISUAL", "EDITOR"} {
		if x.lineSets(v) {
			x.m.unknown(x.name + " runs what " + v + ", set in the line, names")
		}
	}
}

var manSpec = newSpec("-P --pager -C --config-file -M --manpath -S -s --sections -L --locale -m --systems -e --extension -p --preprocessor -H --html -T --troff-device -E --encoding -R --recode -l --local-file")

// manH reads man: -P/--pager and -p/--preprocessor, -H/--html (a browser)
// run commands; MANPAGER, PAGER, BROWSER or MANOPT set in the line too.
func manH(x *call) {
	opts, _ := manSpec.parse(x.args)
	for _, w := range vals(opts, "-P", "--pager", "-H", "--html") {
		x.payload(w, x.name+" -P")
	}
	for _, w := range vals(opts, "-C", "--config-file", "-l", "--local-file") {
		x.ref(kRead, w, false)
	}
	if has(opts, "-p", "--preprocessor") || has(opts, "-H", "--html") && len(vals(opts, "-H", "--html")) == 0 {
		x.m.unknown(x.name + " runs a preprocessor or browser it chooses")
	}
	for _, v := range []string{"MANPAGER", "PAGER", "BROWSER", "MANOPT", "MANROFFSEQ"} {
		if x.lineSets(v) {
			x.m.unknown(x.name + " runs what " + v + ", set in the line, names")
		}
	}
}

var editorSpec = newSpec("-c -S -s -u -U -i -T -w -W --cmd -l --load --eval --execute -f --funcall --script -x --rcfile")

// editorH reads vim and friends: files read and written; the ex commands
// given with -c, --cmd or +CMD (see exCommand), a script of ex commands
// from -S/-s or standard input (ex, vim -e, ed), emacs --eval and -l.
func editorH(x *call) {
	// vim -es and -Es are one option (silent Ex mode); in Ex mode -s
	// means silent, not a script.
	exMode := x.name == "ex"
	args := make([]shellx.Word, 0, len(x.args))
	for _, w := range x.args {
		switch w.Text {
		case "-es", "-Es", "-e", "-E":
			exMode = true
			args = append(args, word("-e"))
			continue
		}
		args = append(args, w)
	}
	if exMode {
		kept := args[:0]
		for _, w := range args {
			if w.Text != "-s" {
				kept = append(kept, w)
			}
		}
		args = kept
	}
	opts, ops := editorSpec.parse(args)
	cmds := vals(opts, "-c", "--cmd")
	for _, w := range ops {
		if strings.HasPrefix(w.Text, "+") {
			if len(w.Text) > 1 && !(w.Text[1] >= '0' && w.Text[1] <= '9') {
				cmds = append(cmds, shellx.Word{Text: w.Text[1:], Dynamic: w.Dynamic})
			}
			continue
		}
		if w.Text == "-" {
			continue
		}
		x.ref(kRead, w, false)
		x.ref(kWrite, w, false)
	}
	if x.name == "emacs" {
		for _, w := range vals(opts, "-l", "--load", "--script", "-x") {
			x.ref(kRead, w, false)
		}
		if has(opts, "-l", "--load", "--script", "-x", "--eval", "--execute", "-f", "--funcall") {
			x.m.unknown(x.name + " evaluates Lisp, which is not modelled")
		}
		return
	}
	for _, w := range vals(opts, "-S", "-s", "-u") {
		if w.Text == "NONE" || w.Text == "NORC" || w.Text == "DEFAULTS" {
			continue
		}
		x.ref(kRead, w, false)
		x.m.unknown(x.name + " runs the commands of " + w.Text + ", which are not read")
	}
	script := exMode || x.name == "ed"
	if script && x.stdinUsed() {
		if body, ok := x.stdinText(); ok {
			for _, l := range strings.Split(body, "\n") {
				cmds = append(cmds, word(l))
			}
		} else {
			x.m.unknown(x.name + " runs commands from its input, which are not read")
		}
	}
	for _, c := range cmds {
		if c.Dynamic {
			x.m.unknown(x.name + " runs a command computed at run time: " + clipText(c.Text, 120))
			continue
		}
		x.exCommand(c.Text, 0)
	}
}

// exRisky are what make an ex command reach beyond the buffer when they
// appear anywhere in it (functions and commands that run or touch files).
var exRisky = []string{"system(", "systemlist(", "writefile(", "readfile(", "delete(", "libcall", "job_start", "jobstart", "termopen", "rename(", "\\=", "exe", "norm", "call ", "py", "lua", "perl", "ruby", "term", "source", "redir", "!"}

// exCommand judges one ex command (vim -c, ed's commands): !CMD, r !CMD
// and w !CMD run CMD; r FILE reads, w FILE (w >> FILE, saveas) writes;
// e FILE reads; g/RE/CMD runs CMD on lines; commands separated by | each.
// What runs code it cannot read (:execute, :normal, :python, :source,
// system()) is unknown.
func (x *call) exCommand(t string, depth int) {
	if depth > 8 {
		x.m.unknown(x.name + " commands nested too deep")
		return
	}
	t = strings.TrimLeft(t, ": \t")
	// A range: 1,$ % . 'a /re/ ...
	for len(t) > 0 {
		c := t[0]
		switch {
		case c >= '0' && c <= '9' || strings.IndexByte(",.$%+-; \t", c) >= 0:
			t = t[1:]
			continue
		case c == '\'' && len(t) > 1:
			t = t[2:]
			continue
		}
		break
	}
	for _, mod := range []string{"silent!", "silent", "sil!", "sil", "keepjumps", "keepj", "noautocmd", "noa", "confirm", "conf", "vertical", "vert", "unsilent"} {
		if r, ok := strings.CutPrefix(t, mod); ok && (r == "" || r[0] == ' ') {
			t = strings.TrimLeft(r, " \t")
		}
	}
	if t == "" || t[0] == '"' {
		return
	}
	n := 0
	for n < len(t) && (t[n] >= 'a' && t[n] <= 'z' || t[n] >= 'A' && t[n] <= 'Z' || t[n] >= '0' && t[n] <= '9' && n > 0) {
		n++
	}
	name, rest := t[:n], t[n:]
	if n == 0 {
		name, rest = t[:1], t[1:]
	}
	force := strings.HasPrefix(rest, "!") && name != "!"
	if force {
		rest = rest[1:]
	}
	arg := strings.TrimSpace(rest)
	// next judges what follows a | (for commands that do not take it).
	next := func() string {
		if k := strings.IndexByte(arg, '|'); k >= 0 {
			x.exCommand(arg[k+1:], depth+1)
			return strings.TrimSpace(arg[:k])
		}
		return arg
	}
	switch name {
	case "!":
		x.payload(word(arg), x.name+" !")
	case "r", "re", "rea", "read":
		if c, ok := strings.CutPrefix(arg, "!"); ok {
			x.payload(word(c), x.name+" !")
		} else if f := next(); f != "" {
			x.ref(kRead, word(f), false)
		}
	case "w", "wr", "wri", "writ", "write", "wq", "x", "xi", "xit", "exi", "exit", "up", "upd", "update", "sav", "saveas", "wa", "wall", "wqa", "wqall", "xa", "xall", "W":
		if c, ok := strings.CutPrefix(arg, "!"); ok {
			x.payload(word(c), x.name+" !")
			return
		}
		f := strings.TrimSpace(strings.TrimPrefix(next(), ">>"))
		if f != "" && !strings.HasPrefix(name, "wa") && !strings.HasPrefix(name, "xa") && name != "wqa" && name != "wqall" {
			x.ref(kWrite, word(f), false)
		}
	case "e", "ed", "edi", "edit", "sp", "split", "vs", "vsplit", "new", "vne", "vnew", "tabe", "tabedit", "tabnew", "vi", "visual", "view", "sv", "sview", "badd", "bad", "arga", "argadd", "f", "file":
		if f := next(); f != "" && !strings.HasPrefix(f, "+") {
			x.ref(kRead, word(f), false)
		}
	case "g", "global", "v", "vglobal":
		// g/RE/CMD: the delimiter is the first character.
		if arg == "" {
			return
		}
		d := arg[0]
		i := 1
		for ; i < len(arg) && arg[i] != d; i++ {
			if arg[i] == '\\' {
				i++
			}
		}
		if i < len(arg) {
			x.exCommand(arg[i+1:], depth+1)
		}
	case "s", "su", "substitute", "&", "~":
		if strings.Contains(arg, "\\=") {
			x.m.unknown(x.name + " substitutes the result of an expression")
		}
	case "q", "qa", "qall", "quit", "quita", "quitall", "set", "se", "setl", "setlocal", "syntax", "sy", "syn", "filetype", "filet", "noh", "nohlsearch",
		"d", "de", "del", "delete", "y", "ya", "yank", "m", "mo", "move", "t", "co", "copy", "j", "jo", "join", "sort", "sor", "retab", "ret",
		"u", "un", "undo", "red", "redo", "le", "left", "ri", "right", "ce", "center", "p", "pu", "put", "nu", "number", "l", "list", "a", "i", "c",
		"n", "nex", "next", "N", "prev", "previous", "bn", "bnext", "bp", "bprevious", "b", "buffer", "ls", "files", "buffers", "h", "help", "diffupdate", "diffu",
		"k", "ma", "mark", "z", "=", ">", "<", "H", "P":
		if name == "a" || name == "i" || name == "c" {
			return // (ed's text follows on the next lines: text, not commands)
		}
		next()
	default:
		for _, r := range exRisky {
			if strings.Contains(t, r) {
				x.m.unknown(x.name + " command not modelled: " + clipText(t, 120))
				return
			}
		}
		next()
	}
}

// makeH reads make: buildH, and the makefile text of -E/--eval, whose
// recipes run (a rule's "; recipe" and tab-led lines); $(shell ...) or
// a computed text is unknown.
func makeH(x *call) {
	args := x.args
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		var ev shellx.Word
		switch {
		case (t == "-E" || t == "--eval") && i+1 < len(args):
			ev = args[i+1]
			i++
		case strings.HasPrefix(t, "--eval="):
			ev = shellx.Word{Text: t[len("--eval="):], Dynamic: args[i].Dynamic}
		case strings.HasPrefix(t, "-E") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			ev = shellx.Word{Text: t[2:], Dynamic: args[i].Dynamic}
		default:
			continue
		}
		if ev.Dynamic || strings.Contains(ev.Text, "$(shell") || strings.Contains(ev.Text, "${shell") {
			x.m.unknown(x.name + " evaluates makefile text computed at run time: " + clipText(ev.Text, 120))
			continue
		}
		var b strings.Builder
		for _, l := range strings.Split(ev.Text, "\n") {
			if strings.HasPrefix(l, "\t") {
				b.WriteString(l + "\n")
			} else if k := strings.IndexByte(l, ';'); k >= 0 && strings.Contains(l[:k], ":") {
				b.WriteString("\t" + l[k+1:] + "\n")
			}
		}
		x.recipes(b.String())
	}
	buildH(x)
}
