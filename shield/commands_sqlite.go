package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// sqlite3: its dot-commands and SQL functions that reach files and programs.

// sqliteSpec are sqlite3's options that take a value.
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
