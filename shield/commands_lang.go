package shield

import "strings"

// Programs with a command language of their own (sed, awk; less and man
// run commands too; sqlite3, editors and make have files of their own): the
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
	for i, n := 0, 0; i < len(s); n++ {
		if n == 4096 {
			x.m.unknown(x.name + " script is too long to read")
			return
		}
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
	// Outside string literals: find the operators that reach out (a
	// bounded number of them: each looks back over its statement).
	inStr := false
	reaches := 0
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
		case (awkWord(p, i, "system") || awkWord(p, i, "getline") || printing && (c == '>' || c == '|')) && reaches >= 256:
			x.m.unknown(x.name + " program is too long to read")
			return
		case awkWord(p, i, "print") || awkWord(p, i, "printf"):
			printing = true
		case awkWord(p, i, "system"):
			reaches++
			if cmd, ok := literal(p[i+len("system"):]); ok {
				x.payload(word(cmd), x.name)
			} else {
				x.m.unknown(x.name + " runs a command computed at run time")
			}
		case awkWord(p, i, "getline"):
			reaches++
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
			reaches++
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
