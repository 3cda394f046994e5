package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Editors and make: the commands of their own languages (ex commands,
// make --eval).

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
// a computed text is unknown, and so is a SHELL given on the command
// line (every recipe runs through it).
func makeH(x *call) {
	args := x.args
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		if strings.HasPrefix(t, "SHELL=") || strings.HasPrefix(t, ".SHELLFLAGS=") || strings.HasPrefix(t, "MAKESHELL=") {
			// Every recipe runs through it.
			x.m.unknown(x.name + " runs its recipes with " + clipText(t, 120))
		}
		if (t == "-f" || t == "--file" || t == "--makefile") && i+1 < len(args) {
			// The makefile is a substitution (make -f <(curl URL)):
			// its recipes are code produced at run time.
			if _, kind := substitution(args[i+1].Text); kind != "" {
				x.dynamicCode(args[i+1], x.name)
			}
		}
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
