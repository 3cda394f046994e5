package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// What flows between commands: the paths a producer lists (for xargs,
// find -exec and command substitutions used as paths), the code a shell
// runs from a pipe or a substitution (Execs), and the files a request
// sends.

// netTools fetch from or send to the network.
var netTools = map[string]bool{
	"curl": true, "wget": true, "fetch": true, "http": true, "https": true, "xh": true, "aria2c": true,
	"nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "ssh": true, "scp": true,
	"sftp": true, "ftp": true, "tftp": true, "lftp": true, "lynx": true, "w3m": true, "links": true,
	"openssl": true, "git": false, "iwr": true, "httpie": true,
}

// peelName returns the program a command runs and its arguments, past
// wrappers, without judging anything.
func peelName(c *shellx.Command) (string, []shellx.Word) {
	args := c.Args
	for n := 0; len(args) > 0 && n < 8; n++ {
		if args[0].Dynamic {
			return "", nil
		}
		name := progName(args[0].Text)
		if wrappers[name] == nil || name == "xargs" {
			return name, args[1:]
		}
		args = args[1:]
		skip := 0
		if name == "timeout" || name == "chrt" || name == "taskset" {
			skip = 1
		}
		for len(args) > 0 && (strings.HasPrefix(args[0].Text, "-") || isAssign(args[0].Text)) {
			args = args[1:]
		}
		for ; skip > 0 && len(args) > 0; skip-- {
			args = args[1:]
		}
	}
	return "", nil
}

// cwdOf is the working directory command j runs in.
func (m *model) cwdOf(j int) string {
	if j < m.cur {
		return m.at[j]
	}
	return m.dir(m.a.Commands[j].Via).dir
}

// filterOpts are the options with which a filter passes on whole lines
// of its input, unchanged (a subset or a reordering): any other option
// (head -c, grep -o, uniq -c, cat -n) changes the text, and what the
// lines name is then unknown. "=" marks an option taking a value.
var filterOpts = map[string]string{
	"cat":   "-u",
	"tac":   "",
	"tee":   "-a --append -i --ignore-interrupts -p",
	"sort":  "-b -d -f -g -h -i -M -n -r -R -s -u -V -c -C --ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort --month-sort --numeric-sort --reverse --random-sort --stable --unique --version-sort -k= --key= -t= --field-separator= -S= --buffer-size= -T= --temporary-directory= --parallel=",
	"uniq":  "-d -u -i --repeated --unique --ignore-case -f= -s= -w= --skip-fields= --skip-chars= --check-chars=",
	"shuf":  "-n= --head-count= -r --repeat --random-source=",
	"head":  "-n= --lines= -q --quiet --silent",
	"tail":  "-n= --lines= -q --quiet --silent",
	"grep":  "-i -v -w -x -F -E -G -P -s -a -I -U --ignore-case --invert-match --word-regexp --line-regexp --fixed-strings --extended-regexp --basic-regexp --perl-regexp --no-messages --text --binary --color= --colour= -e= --regexp= -f= --file= -m= --max-count=",
	"rg":    "-i -v -w -x -F -s -S -P -a -N --ignore-case --invert-match --word-regexp --line-regexp --fixed-strings --case-sensitive --smart-case --pcre2 --text --no-line-number --color= -e= --regexp= -f= --file= -m= --max-count=",
	"egrep": "", "fgrep": "", // as grep
}

// filterSpecs are filterOpts as specs, and the options each allows.
var filterSpecs = map[string]*spec{}
var filterAllowed = map[string]map[string]bool{}

func init() {
	for name, o := range filterOpts {
		if name == "egrep" || name == "fgrep" {
			o = filterOpts["grep"]
		}
		var valued []string
		ok := map[string]bool{}
		for _, f := range strings.Fields(o) {
			n, v := strings.CutSuffix(f, "=")
			if v {
				valued = append(valued, n)
			}
			ok[n] = true
		}
		filterSpecs[name] = newSpec(strings.Join(valued, " "))
		filterAllowed[name] = ok
	}
}

// wholeLines reports whether command c (name args) passes on whole lines
// of its standard input unchanged.
func wholeLines(c *shellx.Command, name string, args []shellx.Word) bool {
	sp := filterSpecs[name]
	if sp == nil || c.PipeIn < 0 {
		return false
	}
	opts, ops := sp.parse(args)
	for _, o := range opts {
		n := o.name
		if (name == "head" || name == "tail") && len(n) == 2 && n[1] >= '0' && n[1] <= '9' {
			continue // head -5
		}
		if !filterAllowed[name][n] || o.val.Dynamic {
			return false
		}
	}
	pattern := 0
	if (name == "grep" || name == "egrep" || name == "fgrep" || name == "rg") && !has(opts, "-e", "--regexp", "-f", "--file") {
		pattern = 1 // the pattern, not a file
	}
	// An operand is a file read instead of the input.
	return len(ops) == pattern && !(pattern == 1 && ops[0].Dynamic)
}

var (
	grepSpec   = newSpec("-e -f -m -A -B -C -d -D --include --exclude --exclude-dir --regexp --file --max-count --context --after-context --before-context --label --devices --directories --binary-files --color --colour")
	rgSpec     = newSpec("-e -f -g -t -T -m -A -B -C -j -M -r -E --regexp --file --glob --iglob --type --type-not --type-add --max-count --max-depth --maxdepth --context --after-context --before-context --threads --max-columns --replace --encoding --sort --sortr --color --colors --pre --pre-glob --ignore-file --path-separator --max-filesize")
	findValued = map[string]bool{
		"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true, "-regex": true, "-iregex": true,
		"-type": true, "-xtype": true, "-size": true, "-mtime": true, "-atime": true, "-ctime": true, "-mmin": true, "-amin": true, "-cmin": true,
		"-newer": true, "-anewer": true, "-cnewer": true, "-user": true, "-group": true, "-perm": true, "-maxdepth": true, "-mindepth": true,
		"-printf": true, "-lname": true, "-ilname": true, "-samefile": true, "-links": true, "-inum": true, "-uid": true, "-gid": true,
		"-fstype": true, "-context": true, "-regextype": true, "-used": true, "-newermt": true, "-newerct": true, "-newerat": true, "-files0-from": true,
	}
)

// listed returns the paths command j writes to its standard output, as
// far as they can be known (see CommandFacts): Refs with Tree for what a
// lister walks. An empty list is not known: the output may still name
// paths (printf's format, a lister's output through a filter that
// changes it), so what uses it is unknown.
func (m *model) listed(j int) ([]Ref, bool) {
	refs, ok := m.listedBy(j)
	if !ok || len(refs) == 0 {
		return nil, false
	}
	return refs, true
}

func (m *model) listedBy(j int) ([]Ref, bool) {
	for hops := 0; j >= 0 && j < len(m.a.Commands) && hops < 16; hops++ {
		c := &m.a.Commands[j]
		name, args := peelName(c)
		cwd := m.cwdOf(j)
		switch name {
		case "find":
			if printsText(args) {
				return nil, false
			}
			return findSelected(m.s, cwd, args), true
		case "ls", "exa", "eza", "lsd", "tree", "fd", "fdfind", "du":
			if printsText(args) {
				return nil, false
			}
			var refs []Ref
			for _, w := range args {
				if strings.HasPrefix(w.Text, "-") || name == "fd" && len(refs) == 0 && !strings.Contains(w.Text, "/") {
					continue
				}
				if r, ok := staticRef(m.s, cwd, w, true); ok {
					refs = append(refs, r)
				} else {
					return nil, false
				}
			}
			if cwd == "" {
				return refs, false
			}
			return append(refs, Ref{Path: cwd, Tree: true}), true
		case "git":
			// Paths of the repository, relative: beneath it. What
			// else git prints (a file's content, commit messages,
			// matching lines) is anyone's text: unknown.
			sub, rest, _ := subcommand(gitSpec, args)
			names := false
			switch sub {
			case "ls-files", "ls-tree", "status":
				names = true
			case "diff", "show", "log", "grep", "whatchanged":
				for _, w := range rest {
					switch w.Text {
					case "--name-only", "--name-status":
						names = true
					case "-l", "-L", "--files-with-matches", "--files-without-match":
						names = names || sub == "grep"
					}
				}
			}
			if !names || cwd == "" {
				return nil, false
			}
			return []Ref{{Path: cwd, Tree: true}}, true
		case "echo", "printf":
			out, ok := echoOutput(name, args)
			if !ok {
				return nil, false
			}
			var refs []Ref
			for _, f := range strings.Fields(out) {
				r, ok := staticRef(m.s, cwd, shellx.Word{Text: f, Glob: strings.ContainsAny(f, "*?[")}, false)
				if !ok {
					return nil, false
				}
				refs = append(refs, r)
			}
			return refs, true
		case "mktemp":
			// A new name in the temporary directory (or -p DIR).
			dir := "/tmp"
			for k, w := range args {
				if (w.Text == "-p" || w.Text == "--tmpdir") && k+1 < len(args) {
					if r, ok := staticRef(m.s, cwd, args[k+1], false); ok {
						dir = r.Path
					}
				} else if d, ok := strings.CutPrefix(w.Text, "--tmpdir="); ok {
					if r, ok := staticRef(m.s, cwd, word(d), false); ok {
						dir = r.Path
					}
				}
			}
			return []Ref{{Path: path.Join(dir, "*"), Glob: true, Tree: true}}, true
		case "locate", "plocate", "mlocate", "slocate":
			return []Ref{{Path: "/", Tree: true}}, true
		case "grep", "egrep", "fgrep", "rg", "ag", "ack":
			sp := grepSpec
			if name == "rg" || name == "ag" || name == "ack" {
				sp = rgSpec
			}
			opts, ops := sp.parse(args)
			if !has(opts, "-e", "--regexp", "-f", "--file") && len(ops) > 0 {
				ops = ops[1:]
			}
			lists := has(opts, "-l", "-L", "--files-with-matches", "--files-without-match", "--files")
			if !lists {
				if wholeLines(c, name, args) {
					j = c.PipeIn
					continue
				}
				return nil, false
			}
			var refs []Ref
			for _, w := range ops {
				r, ok := staticRef(m.s, cwd, w, true)
				if !ok {
					return nil, false
				}
				refs = append(refs, r)
			}
			if len(ops) == 0 {
				if cwd == "" {
					return nil, false
				}
				refs = append(refs, Ref{Path: cwd, Tree: true})
			}
			return refs, true
		}
		if wholeLines(c, name, args) {
			j = c.PipeIn
			continue
		}
		return nil, false
	}
	return nil, false
}

// printsText reports whether a lister's arguments make it print text of
// their own or a command's rather than names: find -printf, -ls, -exec;
// fd -x and --format; ls --time-style=+FORMAT (whose format is any text).
func printsText(args []shellx.Word) bool {
	for _, w := range args {
		t := w.Text
		switch {
		case t == "-printf" || t == "-fprintf" || t == "-ls" || t == "-fls" || t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			return true
		case t == "-x" || t == "-X" || t == "--exec" || t == "--exec-batch" || strings.HasPrefix(t, "--format"):
			return true
		case strings.HasPrefix(t, "--time-style") && (strings.Contains(t, "+") || t == "--time-style"):
			return true
		}
	}
	return false
}

// echoOutput is what echo or printf writes, as far as it is known
// statically: echo's words, printf's output as printfText renders it. A
// computed word, a printf that printfText does not model, or an output
// cut at maxTextJudged (what follows is not known) is not known.
func echoOutput(name string, args []shellx.Word) (string, bool) {
	for _, w := range args {
		if w.Dynamic {
			return "", false
		}
	}
	if name == "echo" {
		return echoText(name, args), true
	}
	out, ok := printfText(args)
	if !ok || len(out) > maxTextJudged {
		return "", false
	}
	return out, true
}

// staticRef resolves a word known statically.
func staticRef(s *Shield, cwd string, w shellx.Word, tree bool) (Ref, bool) {
	if w.Dynamic || w.Text == "" {
		return Ref{}, false
	}
	p, ok := resolveIn(s, cwd, w.Text)
	if !ok {
		return Ref{}, false
	}
	return Ref{Path: p, Glob: w.Glob, Tree: tree}, true
}

// findRoots are the starting points of find args (after the program).
func findRoots(s *Shield, cwd string, args []shellx.Word) []Ref {
	var refs []Ref
	for _, w := range args {
		t := w.Text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") || t == "-D" {
			continue
		}
		if strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" || t == "," {
			break
		}
		if r, ok := staticRef(s, cwd, w, true); ok {
			refs = append(refs, r)
		} else {
			refs = append(refs, Ref{Path: "/", Tree: true})
		}
	}
	if len(refs) == 0 {
		if cwd == "" {
			return []Ref{{Path: "/", Tree: true}}
		}
		refs = append(refs, Ref{Path: cwd, Tree: true})
	}
	return refs
}

// findSelected are the paths find's tests select beneath its roots: for a
// root in the workspace with -name or -iname patterns, "ROOT/**/PATTERN"
// (Glob; "**" is any number of segments, as in the rules' globs), else
// the root with Tree.
func findSelected(s *Shield, cwd string, args []shellx.Word) []Ref {
	roots := findRoots(s, cwd, args)
	var pats []string
	shallow := false
	for i := 0; i+1 < len(args); i++ {
		switch args[i].Text {
		case "-name", "-iname":
			if i > 0 && (args[i-1].Text == "!" || args[i-1].Text == "-not") || args[i+1].Dynamic || strings.Contains(args[i+1].Text, "/") {
				continue
			}
			pats = append(pats, args[i+1].Text)
		case "-maxdepth":
			shallow = args[i+1].Text == "1"
		case "-o", "-or":
			// An alternative without a name test selects anything.
			if i+1 < len(args) && args[i+1].Text != "-name" && args[i+1].Text != "-iname" {
				return roots
			}
		}
	}
	if len(pats) == 0 {
		return roots
	}
	var out []Ref
	for _, r := range roots {
		if !s.inWorkspace(r.Path) {
			// Outside the workspace a name test narrows little that
			// matters: judged as the whole tree.
			out = append(out, r)
			continue
		}
		for _, p := range pats {
			if shallow {
				out = append(out, Ref{Path: path.Join(r.Path, p), Glob: true})
			} else {
				out = append(out, Ref{Path: path.Join(r.Path, "**", p), Glob: true})
			}
		}
	}
	return out
}

// substitution returns the inner text and Via kind of a word that is
// exactly one command or process substitution.
func substitution(t string) (inner, kind string) {
	switch {
	case len(t) > 3 && (strings.HasPrefix(t, "<(") || strings.HasPrefix(t, ">(")) && t[len(t)-1] == ')':
		return t[2 : len(t)-1], t[:1] + "()"
	case len(t) > 3 && strings.HasPrefix(t, "$(") && !strings.HasPrefix(t, "$((") && t[len(t)-1] == ')':
		return t[2 : len(t)-1], "$()"
	case len(t) > 2 && t[0] == '`' && t[len(t)-1] == '`':
		return t[1 : len(t)-1], "``"
	}
	return "", ""
}

// substRefs returns the paths a word that is exactly a command
// substitution expands to, when the commands inside list paths; a process
// substitution used as a path names a pipe, which is no path at all.
func (m *model) substRefs(i int, t string) ([]Ref, bool) {
	inner, kind := substitution(t)
	switch kind {
	case "":
		return nil, false
	case "<()", ">()":
		return nil, true
	}
	if strings.Contains(inner, ")$(") || strings.Contains(inner, "` `") {
		return nil, false
	}
	j := m.lastInside(i, kind, inner)
	if j < 0 {
		return nil, false
	}
	name, args := peelName(&m.a.Commands[j])
	if name == "git" && len(args) >= 2 && args[0].Text == "rev-parse" && args[1].Text == "--show-toplevel" {
		return []Ref{{Path: m.s.cfg.Workspace, Tree: true}}, true
	}
	return m.listed(j)
}

// lastInside returns the index of the last command of the substitution
// inner (of kind "$()", "“", "<()") in the arguments of command i, or -1.
func (m *model) lastInside(i int, kind, inner string) int {
	c := &m.a.Commands[i]
	via := joinVia(c.Via, kind)
	inner = strings.TrimRight(strings.TrimSpace(inner), ";")
	last := -1
	for j := i + 1; j < len(m.a.Commands) && j < i+256; j++ {
		d := &m.a.Commands[j]
		if d.Via == via && d.Line != "" && strings.HasSuffix(inner, d.Line) {
			last = j
		}
	}
	if last < 0 {
		// A loop variable over a substitution (for f in $(ls)) is
		// listed before the loop's body.
		for j := i - 1; j >= 0 && j > i-64; j-- {
			d := &m.a.Commands[j]
			if d.Via == via && d.Line != "" && strings.HasSuffix(inner, d.Line) {
				return j
			}
		}
	}
	return last
}

// producers returns the names of the commands inside the substitutions of
// text in command i's arguments (every one, nested included).
func (m *model) inside(i int, text string) []int {
	c := &m.a.Commands[i]
	var out []int
	for j := i + 1; j < len(m.a.Commands) && j < i+256; j++ {
		d := &m.a.Commands[j]
		if d.Depth < c.Depth || d.Via == c.Via || !strings.HasPrefix(d.Via, c.Via) {
			if d.Via == c.Via && d.Depth == c.Depth {
				break
			}
			continue
		}
		if d.Line != "" && strings.Contains(text, d.Line) {
			out = append(out, j)
		}
	}
	return out
}

// fetcherIn returns the name of the first network tool among commands js,
// or the last command's name.
func (m *model) fetcherIn(js []int) (string, bool) {
	from := ""
	for _, j := range js {
		name, _ := peelName(&m.a.Commands[j])
		if netTools[name] {
			return name, true
		}
		from = name
	}
	return from, false
}

// stdinFrom walks the pipeline feeding command i: the network tool in it,
// or the program right before i.
func (m *model) stdinFrom(i int) (string, bool) {
	from := ""
	for j, n := m.a.Commands[i].PipeIn, 0; j >= 0 && j < len(m.a.Commands) && n < 64; j, n = m.a.Commands[j].PipeIn, n+1 {
		name, _ := peelName(&m.a.Commands[j])
		if from == "" {
			from = name
		}
		if netTools[name] {
			return name, true
		}
		if name == "" && from == "" {
			from = "?"
		}
	}
	return from, false
}

// stdinReads are the paths the pipeline feeding command i reads.
func (m *model) stdinReads(i int) []string {
	var out []string
	for j, n := m.a.Commands[i].PipeIn, 0; j >= 0 && j < i && n < 64; j, n = m.a.Commands[j].PipeIn, n+1 {
		out = appendNew(out, m.reads[j]...)
	}
	return out
}

// dynamicCode judges code computed at run time that the current command
// runs (sh -c "$(curl URL)", eval "$X", bash <(wget -O- URL)).
func (x *call) dynamicCode(w shellx.Word, via string) {
	js := x.m.inside(x.i, w.Text)
	if len(js) == 0 {
		x.m.unknown(x.name + " runs code computed at run time: " + clipText(w.Text, 120))
		x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: "", Line: x.c.Line})
		return
	}
	from, remote := x.m.fetcherIn(js)
	x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: from, Remote: remote, Line: x.c.Line})
}

// stdinCode judges a shell or interpreter reading its program from
// standard input.
func (x *call) stdinCode() {
	if x.c.PipeIn < 0 {
		return
	}
	from, remote := x.m.stdinFrom(x.i)
	x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: from, Remote: remote, Line: x.c.Line})
	// shellx lists the code when the pipe's text is known statically
	// (echo ... | base64 -d | sh): else what runs cannot be known.
	for j := x.i + 1; j < len(x.m.a.Commands) && j < x.i+16; j++ {
		if strings.Contains(x.m.a.Commands[j].Via, "| ") {
			return
		}
	}
	x.m.unknown(x.name + " runs code " + from + " produces at run time")
}

// runsFile notes that the current command runs the script at p: one a
// network tool wrote earlier in the line is remote code.
func (x *call) runsFile(p string) {
	q, ok := x.abs(p)
	if !ok {
		return
	}
	for _, f := range x.m.fetched {
		if f.path == q || f.tree && strings.HasPrefix(q, f.path+"/") {
			x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: f.by, Remote: true, Line: x.c.Line})
			return
		}
	}
}

// runsHere notes that the current command runs code from its working
// directory (make, npm install, pip install .): a tree a network tool
// fetched earlier in the line is remote code.
func (x *call) runsHere() {
	if x.cwd == "" {
		return
	}
	for _, f := range x.m.fetched {
		if f.tree && (x.cwd == f.path || strings.HasPrefix(x.cwd, f.path+"/")) {
			x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: f.by, Remote: true, Line: x.c.Line})
			return
		}
	}
}

// remoteCode notes that the current command installs and runs code
// from host, which is not its registry's (pip install --index-url
// https://evil.example, pip install git+https://...).
func (x *call) remoteCode(host string) {
	x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: host, Remote: true, Line: x.c.Line})
}

type fetchedPath struct {
	path, by string
	tree     bool
}

// fetch notes a path a network tool writes.
func (x *call) fetch(p string, tree bool) {
	if q, ok := x.abs(p); ok {
		x.m.fetched = append(x.m.fetched, fetchedPath{path: q, by: x.name, tree: tree})
	}
}

// cd sets the working directory for the rest of the current command
// (sudo -D, env -C, git -C, make -C).
func (x *call) cd(w shellx.Word) {
	if w.Dynamic {
		if refs, ok := x.m.substRefs(x.i, w.Text); ok && len(refs) == 1 && !refs[0].Glob {
			x.cwd = refs[0].Path
			return
		}
		x.cwd = ""
		return
	}
	if p, ok := x.abs(w.Text); ok {
		x.cwd = p
	} else {
		x.cwd = ""
	}
}

// codeLoaders are runtimes and build tools that load a file named by an
// argument as code (java -javaagent:F, -jar F; gradle --init-script F;
// node --require F; ruby -r F).
var codeLoaders = map[string]bool{"java": true, "javaw": true, "kotlin": true, "scala": true, "groovy": true,
	"gradle": true, "gradlew": true, "mvn": true, "mvnw": true, "sbt": true, "ant": true, "node": true, "deno": true,
	"bun": true, "ruby": true, "python": true, "python3": true, "perl": true, "php": true, "dotnet": true, "pwsh": true}

// loadsFetched notes that a runtime or build tool is given a file a
// network tool wrote earlier in the line, as an argument or a flag's
// value (-javaagent:/tmp/a.jar, --init-script=/tmp/i.gradle): it runs
// what was fetched (runsFile).
func (x *call) loadsFetched() {
	if len(x.m.fetched) == 0 || !codeLoaders[x.name] {
		return
	}
	for _, w := range x.args {
		t := w.Text
		if strings.HasPrefix(t, "-") {
			// -javaagent:P=opts, --init-script=P, -Xbootclasspath/a:P
			if i := strings.IndexAny(t, ":="); i > 0 {
				t = t[i+1:]
				if j := strings.IndexByte(t, '='); j > 0 {
					t = t[:j]
				}
			} else {
				continue
			}
		}
		for _, p := range strings.Split(t, ":") {
			if p != "" {
				x.runsFile(p)
			}
		}
	}
}

// installWords are the words by which a package tool installs what it is
// given (gem install F, pip install F, npm i F, dpkg -i F, R CMD INSTALL F).
var installWords = setOf("install", "i", "add", "-i", "--install", "INSTALL", "localinstall", "reinstall", "upgrade", "-U", "--upgrade")

// installsFetched notes that a program installs a file a network tool
// wrote earlier in the line (curl -O …/x.gem && gem install ./x.gem,
// wget … && pip install ./x.whl, && dpkg -i x.deb): installing runs the
// package's hooks, so it runs what was fetched, whatever the installer
// (rules 13).
func (x *call) installsFetched() {
	if len(x.m.fetched) == 0 {
		return
	}
	verb := false
	for _, w := range x.args {
		if installWords[w.Text] {
			verb = true
			continue
		}
		if verb && !strings.HasPrefix(w.Text, "-") {
			x.runsFile(w.Text)
		}
	}
}
