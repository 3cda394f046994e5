package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// The programs that read, write and delete files.

// handler adds the facts of one program's arguments (x.args).
type handler func(x *call)

// readAll reads every operand.
func readAll(sp *spec) handler {
	return func(x *call) {
		_, ops := sp.parse(x.args)
		for _, w := range ops {
			x.ref(kRead, w, false)
		}
	}
}

// listAll lists every operand (names and metadata, not content), or the
// working directory.
func listAll(sp *spec) handler {
	return func(x *call) {
		_, ops := sp.parse(x.args)
		for _, w := range ops {
			x.ref(kRead, w, false)
		}
	}
}

// runOnly is a program whose arguments name no files.
func runOnly(*call) {}

// grepLike reads grep, rg, ag and ack: the pattern first (unless -e or
// -f), then files; recursive searches read Tree.
func grepLike(recursiveByDefault bool, sp *spec) handler {
	return func(x *call) {
		opts, ops := sp.parse(x.args)
		for _, w := range vals(opts, "-f", "--file") {
			x.ref(kRead, w, false)
		}
		if !has(opts, "-e", "--regexp", "-f", "--file") && len(ops) > 0 {
			ops = ops[1:]
		}
		tree := recursiveByDefault || has(opts, "-r", "-R", "--recursive", "--dereference-recursive")
		if d, ok := val(opts, "-d", "--directories"); ok && d.Text == "recurse" {
			tree = true
		}
		for _, w := range ops {
			x.ref(kRead, w, tree)
		}
		if len(ops) == 0 && tree && (recursiveByDefault || x.c.PipeIn < 0) {
			x.refPath(kRead, ".", true)
		}
		// A recursive search narrowed to names (--include='*.env*', rg -g
		// '*.pem') reads what those names match: judged as that glob, so
		// a search of the workspace's env files is a read of them.
		if !tree {
			return
		}
		dirs := ops
		if len(dirs) == 0 {
			dirs = []shellx.Word{{Text: "."}}
		}
		for _, g := range vals(opts, "--include", "-g", "--glob", "--iglob") {
			if g.Text == "" || strings.HasPrefix(g.Text, "!") || g.Dynamic {
				continue
			}
			pats := []string{strings.TrimPrefix(g.Text, "**/")}
			if rest, ok := strings.CutPrefix(pats[0], "*"); ok && strings.HasPrefix(rest, ".") {
				// grep's and rg's globs match a leading dot, as the
				// shell's do not: *.env* names .env too.
				pats = append(pats, rest)
			}
			for _, d := range dirs {
				for _, p := range pats {
					if !d.Dynamic && !d.Glob {
						x.ref(kRead, shellx.Word{Text: strings.TrimSuffix(d.Text, "/") + "/**/" + p, Glob: true}, false)
					}
				}
			}
		}
	}
}

// unescape decodes the backslash escapes of printf, echo -e and sed
// replacement text (\n, \t, \\, \xHH, \NNN octal).
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i+1]) >= 0 {
				i++
				v = v*16 + hexVal(s[i])
				n++
			}
			b.WriteByte(byte(v))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(s[i]-'0'), 1
			for n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7' {
				i++
				v = v*8 + int(s[i]-'0')
				n++
			}
			b.WriteByte(byte(v))
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

var jqSpec = newSpec("-f -L --from-file --indent --tab --args --jsonargs")

// jqH reads jq and yq: the filter first, then files.
func jqH(x *call) {
	args := x.args
	var rest []shellx.Word
	for i := 0; i < len(args); i++ {
		switch t := args[i].Text; t {
		case "--arg", "--argjson":
			i += 2
		case "--slurpfile", "--rawfile":
			if i+2 < len(args) {
				x.ref(kRead, args[i+2], false)
			}
			i += 2
		default:
			rest = append(rest, args[i])
		}
	}
	opts, ops := jqSpec.parse(rest)
	for _, w := range vals(opts, "-f", "--from-file") {
		x.ref(kRead, w, false)
	}
	if !has(opts, "-f", "--from-file") && len(ops) > 0 {
		ops = ops[1:]
	}
	inPlace := x.name == "yq" && has(opts, "-i", "--inplace")
	for _, w := range ops {
		x.ref(kRead, w, false)
		if inPlace {
			x.ref(kWrite, w, false)
		}
	}
}

// readWithOutput reads operands and writes the values of outs.
func readWithOutput(sp *spec, outs ...string) handler {
	return func(x *call) {
		opts, ops := sp.parse(x.args)
		for _, w := range vals(opts, outs...) {
			x.ref(kWrite, w, false)
		}
		tree := has(opts, "-r", "--recursive")
		for _, w := range ops {
			x.ref(kRead, w, tree)
		}
	}
}

// readThenWrite reads the first operand and writes the second (uniq IN
// OUT, xxd IN OUT).
func readThenWrite(sp *spec) handler {
	return func(x *call) {
		_, ops := sp.parse(x.args)
		for k, w := range ops {
			if k == 1 {
				x.ref(kWrite, w, false)
				x.sink(w)
				continue
			}
			x.ref(kRead, w, false)
		}
	}
}

var teeSpec = newSpec("")

// teeH writes its input to every operand.
func teeH(x *call) {
	_, ops := teeSpec.parse(x.args)
	for _, w := range ops {
		x.ref(kWrite, w, false)
		x.sink(w)
	}
	x.pipedText()
}

// sink notes that the command writes its input or text to w.
func (x *call) sink(w shellx.Word) {
	if w.Dynamic || quietDevice(w.Text) {
		return
	}
	if p, ok := x.abs(w.Text); ok {
		x.sinks = append(x.sinks, p)
	}
}

// pipedText adds the text an echo, printf or here-document feeding the
// command carries as the content of its sinks.
func (x *call) pipedText() {
	j := x.c.PipeIn
	if j < 0 || j >= x.i || len(x.sinks) == 0 {
		return
	}
	c := &x.m.a.Commands[j]
	name, args := peelName(c)
	var body string
	switch name {
	case "echo", "printf":
		body = echoText(name, args)
	default:
		for _, r := range c.Redirects {
			if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
				body = r.Target.Text
			}
		}
	}
	if body == "" {
		return
	}
	for _, p := range x.sinks {
		x.m.f.Texts = append(x.m.f.Texts, Text{Source: "content:" + p, Body: body})
	}
}

var copySpec = newSpec("-t -S --target-directory --suffix")

// copyH reads cp, mv, install and ln: sources then a destination, which
// is written with Tree (it may be a directory the sources land in). Links
// (ln, cp -s, cp -l) are followed by what comes later in the line (see
// linked).
func copyH(x *call) {
	opts, ops := copySpec.parse(x.args)
	if x.name == "install" && has(opts, "-d", "--directory") {
		for _, w := range ops {
			x.ref(kWrite, w, true)
		}
		return
	}
	recursive := x.name == "mv" || has(opts, "-r", "-R", "-a", "--recursive", "--archive")
	dest, ok := val(opts, "-t", "--target-directory")
	intoDir := ok
	srcs := ops
	if !ok {
		if len(ops) == 0 {
			return
		}
		if len(ops) == 1 && x.name == "ln" {
			dest, srcs, intoDir = word("."), ops, true
		} else {
			dest, srcs = ops[len(ops)-1], ops[:len(ops)-1]
			intoDir = len(srcs) > 1 || strings.HasSuffix(dest.Text, "/")
		}
	}
	links := x.name == "ln" || (x.name == "cp" || x.name == "gcp") && has(opts, "-s", "--symbolic-link", "-l", "--link")
	symbolic := x.name == "ln" && has(opts, "-s", "--symbolic") || x.name != "ln" && has(opts, "-s", "--symbolic-link")
	if !links {
		for _, w := range srcs {
			x.ref(kRead, w, recursive)
			if x.name == "mv" {
				x.ref(kDelete, w, true)
			}
			if w.Text == "/dev/stdin" || w.Text == "-" {
				x.sink(dest)
			}
		}
	}
	x.ref(kWrite, dest, true)
	if links {
		x.linked(srcs, dest, intoDir, symbolic)
	} else {
		x.linkMoved(srcs, dest, intoDir)
	}
	x.pipedText()
}

func parentDir(p string) string {
	if k := strings.LastIndexByte(p, '/'); k > 0 {
		return p[:k]
	}
	return "/"
}

func joinClean(dir, rel string) string {
	p, _ := resolveIn(nil, dir, rel)
	return p
}

var touchSpec = newSpec("-d -r -t --date --reference -m --mode -s --size --context -Z")

// touchH reads touch, mkdir and truncate: operands written; a reference
// file read.
func touchH(x *call) {
	opts, ops := touchSpec.parse(x.args)
	for _, w := range vals(opts, "-r", "--reference") {
		x.ref(kRead, w, false)
	}
	for _, w := range ops {
		x.ref(kWrite, w, false)
	}
}

// ddH reads dd's if= and writes its of=.
func ddH(x *call) {
	for _, w := range x.args {
		k, v, ok := strings.Cut(w.Text, "=")
		if !ok {
			continue
		}
		vw := shellx.Word{Text: v, Dynamic: w.Dynamic, Glob: w.Glob}
		switch k {
		case "if":
			if !quietDevice(v) {
				x.ref(kRead, vw, false)
			}
		case "of":
			if !quietDevice(v) {
				x.ref(kWrite, vw, false)
				x.sink(vw)
			}
		}
	}
	x.pipedText()
}

// permsH reads chmod, chown, chgrp, chattr and setfacl: the mode, owner
// or attributes first (not a path), then the paths, written (Tree with
// -R).
func permsH(x *call) {
	tree, ref := false, false
	var ops []shellx.Word
	args := x.args
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case t == "-R" || t == "--recursive":
			tree = true
		case strings.HasPrefix(t, "--reference"):
			ref = true
			if v, ok := strings.CutPrefix(t, "--reference="); ok {
				x.ref(kRead, word(v), false)
			}
		case x.name == "setfacl" && (t == "-m" || t == "-x" || t == "-M" || t == "-X" || t == "--set" || t == "--modify" || t == "--remove" || t == "--set-file" || t == "--modify-file"):
			i++
		case x.name == "chattr" && t == "-v":
			i++
		case len(t) > 1 && t[0] == '-' && isFlagWord(t, x.name):
			if strings.ContainsRune(t, 'R') && !strings.ContainsAny(t, "+=") {
				tree = true
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !ref && x.name != "setfacl" && len(ops) > 0 {
		// chmod 755, chown user:group, chattr +i
		ops = ops[1:]
	}
	for _, w := range ops {
		x.ref(kWrite, w, tree)
	}
}

// isFlagWord tells an option of chmod and friends from a mode ("-x",
// "-w" are modes of chmod; "-R", "-f", "-v", "-h" are options).
func isFlagWord(t, name string) bool {
	if strings.HasPrefix(t, "--") {
		return true
	}
	if name == "chattr" {
		return strings.Trim(t[1:], "RVf") == ""
	}
	if name == "chmod" {
		return strings.Trim(t[1:], "RfvcH") == "" && !strings.ContainsAny(t[1:], "rwxXst")
	}
	return true
}

// deviceH writes every operand that names a device or file (mkfs,
// wipefs, fdisk, parted...).
func deviceH(x *call) {
	for _, w := range x.args {
		if strings.HasPrefix(w.Text, "-") {
			continue
		}
		if w.Dynamic || strings.HasPrefix(w.Text, "/") || strings.HasPrefix(w.Text, "~") || strings.HasPrefix(w.Text, ".") {
			x.ref(kWrite, w, false)
		}
	}
}

var rmSpec = newSpec("")

// deleteH deletes operands: Tree when recursive (rm -r) or always
// (trash, srm of directories).
func deleteH(alwaysTree bool) handler {
	return func(x *call) {
		opts, ops := rmSpec.parse(x.args)
		tree := alwaysTree || has(opts, "-r", "-R", "--recursive")
		for _, w := range ops {
			x.ref(kDelete, w, tree)
		}
	}
}

var shredSpec = newSpec("-n -s --iterations --size --random-source")

func shredH(x *call) {
	_, ops := shredSpec.parse(x.args)
	for _, w := range ops {
		x.ref(kWrite, w, false)
		x.ref(kDelete, w, false)
	}
}

// findH reads find: its roots are listed (Reads without Tree); -delete
// deletes them (Tree); -exec and friends run a command on them.
func findH(x *call) {
	args := x.args
	roots := findRoots(x.m.s, x.cwd, args)
	if x.cwd == "" {
		for _, w := range args {
			if !strings.HasPrefix(w.Text, "-") && !strings.HasPrefix(w.Text, "/") && !strings.HasPrefix(w.Text, "~") {
				x.m.unknown("find walks " + w.Text + " in a directory computed at run time")
				break
			}
			if strings.HasPrefix(w.Text, "-") {
				break
			}
		}
	}
	for _, r := range roots {
		if r.Path == "/" && r.Tree && len(args) > 0 && args[0].Dynamic {
			x.m.unknown("find walks a path computed at run time: " + args[0].Text)
		}
		r.By, r.Tree = "find", false
		x.add(kRead, r)
	}
	selected := findSelected(x.m.s, x.cwd, args)
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case t == "-delete":
			for _, r := range selected {
				r.By = "find -delete"
				x.add(kDelete, r)
			}
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			j := i + 1
			for j < len(args) && args[j].Text != ";" && args[j].Text != "+" {
				j++
			}
			inner := make([]shellx.Word, 0, j-i-1)
			for _, w := range args[i+1 : j] {
				inner = append(inner, replaced(w, "{}"))
			}
			x.nested(inner, "find "+t, selected, true)
			i = j
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			if i+1 < len(args) {
				x.ref(kWrite, args[i+1], false)
			}
			i++
			if t == "-fprintf" {
				i++
			}
		case t == "-newer" || t == "-anewer" || t == "-cnewer" || t == "-samefile" || t == "-files0-from":
			if i+1 < len(args) {
				x.ref(kRead, args[i+1], false)
			}
			i++
		case findValued[t]:
			i++
		}
	}
}

// nested judges argv run by the current command on input (find -exec,
// and xargs through the wrapper table).
func (x *call) nested(argv []shellx.Word, via string, input []Ref, known bool) {
	if len(argv) == 0 {
		return
	}
	y := &call{m: x.m, i: x.i, c: x.c, cwd: x.cwd, via: joinVia(x.via, via), input: input, inputKnown: known}
	x.m.dispatch(y, argv)
}

// cdH changes the working directory of what follows (cd, pushd, popd).
func cdH(x *call) {
	var ops []shellx.Word
	for _, w := range x.args {
		if len(w.Text) > 1 && w.Text[0] == '-' || w.Text == "--" {
			continue
		}
		ops = append(ops, w)
	}
	d := x.m.dir(x.c.Via)
	dir := ""
	switch {
	case x.name == "popd":
		dir = d.old
	case len(ops) == 0 && x.name == "cd":
		dir = x.m.s.cfg.Home
	case len(ops) == 0:
		dir = d.old
	case ops[0].Text == "-" && !ops[0].Dynamic:
		dir = d.old
	case x.name != "popd" && x.lineSets("CDPATH") && !ops[0].Dynamic && !strings.HasPrefix(ops[0].Text, "/") &&
		!strings.HasPrefix(ops[0].Text, "~") && ops[0].Text != "." && ops[0].Text != ".." &&
		!strings.HasPrefix(ops[0].Text, "./") && !strings.HasPrefix(ops[0].Text, "../"):
		// CDPATH set in the line: a relative name is looked up in
		// its directories first.
		x.m.unknown(x.name + " " + ops[0].Text + " is looked up in CDPATH, set in the line")
		dir = ""
	default:
		y := *x
		y.cd(ops[0])
		dir = y.cwd
	}
	x.chdir = &dir
}

var patchSpec = newSpec("-p -i -d -o -r -B -z -F -D -V -Y --strip --input --directory --output --reject-file --backup-prefix --suffix --fuzz --prefix --basename-prefix")

func patchH(x *call) {
	opts, ops := patchSpec.parse(x.args)
	if d, ok := val(opts, "-d", "--directory"); ok {
		x.cd(d)
	}
	for _, w := range vals(opts, "-i", "--input") {
		x.ref(kRead, w, false)
	}
	for _, w := range vals(opts, "-o", "--output") {
		x.ref(kWrite, w, false)
	}
	if has(opts, "--dry-run") {
		return
	}
	if len(ops) == 0 {
		x.refPath(kWrite, ".", true)
	}
	for k, w := range ops {
		if k == 0 {
			x.ref(kWrite, w, false)
		} else {
			x.ref(kRead, w, false)
		}
	}
}

// environH reads the environment (env, printenv, set, export -p).
func environH(x *call) {
	if len(x.c.Assigns) > 0 {
		return // export X=1
	}
	if x.name == "export" || x.name == "declare" || x.name == "typeset" || x.name == "set" {
		for _, w := range x.args {
			if !strings.HasPrefix(w.Text, "-") {
				return // export X=1, set -e: not a dump
			}
		}
		if x.name == "set" && len(x.args) > 0 {
			return
		}
	}
	if x.name == "printenv" && len(x.args) > 0 {
		// printenv NAME prints one variable: still the environment.
	}
	x.add(kRead, Ref{Path: "/proc/self/environ", By: x.name})
}

// historyH reads the shell history; -c and -w change it.
func historyH(x *call) {
	hist := x.m.s.cfg.Home + "/.bash_history"
	for _, w := range x.args {
		if w.Text == "-c" || w.Text == "-w" || w.Text == "-d" {
			x.add(kWrite, Ref{Path: cleanAbs(hist), By: "history"})
			return
		}
	}
	x.add(kRead, Ref{Path: cleanAbs(hist), By: "history"})
}

func cleanAbs(p string) string {
	q, _ := resolveIn(nil, "/", p)
	return q
}

// sourceH reads source/. FILE: the script is read and run in this shell.
func sourceH(x *call) {
	if len(x.args) == 0 {
		return
	}
	w := x.args[0]
	if _, kind := substitution(w.Text); kind != "" {
		x.dynamicCode(w, x.name)
		return
	}
	x.ref(kRead, w, false)
	x.runsFile(w.Text)
}
