package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Shells, interpreters, and the code they run; build tools and
// formatters.

// shells are the programs that run shell code.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "mksh": true, "yash": true,
	"posh": true, "rbash": true, "ksh93": true, "fish": true, "csh": true, "tcsh": true, "busybox": false,
}

// shellH reads a shell: -c (listed by shellx), a script file (read, and
// run), or code on standard input (an Exec of what feeds it).
func shellH(x *call) {
	hasC, stdin, rcfiles, rest := shellx.ShellArgs(x.args)
	for _, w := range rcfiles {
		x.ref(kRead, w, false)
	}
	switch {
	case hasC:
		if len(rest) > 0 {
			x.payload(rest[0], x.name+" -c")
		}
	case len(rest) == 0 || stdin:
		x.stdinCode()
	default:
		x.script(rest[0])
	}
}

// script judges the script file w a shell or interpreter runs.
func (x *call) script(w shellx.Word) {
	if _, kind := substitution(w.Text); kind != "" {
		x.dynamicCode(w, x.name)
		return
	}
	if strings.Contains(w.Text, "://") {
		// deno run https://..., php https://...: remote code.
		x.request(Request{Host: hostOf(w.Text), Method: "GET"})
		x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: x.name, From: x.name, Remote: true, Line: x.c.Line})
		return
	}
	x.ref(kRead, w, false)
	if !w.Dynamic {
		x.runsFile(w.Text)
	}
}

// evalH reads eval: a static payload is listed by shellx; a computed one
// is code from what computes it.
func evalH(x *call) {
	for _, w := range x.args {
		if w.Dynamic {
			x.dynamicCode(w, "eval")
			return
		}
	}
}

// payload is the code of an interpreter run from the line, for its
// literals.
type payload struct {
	lang string // "python", "node", "perl", "ruby", "php"...
	code string
}

// interpFlags are each interpreter's code options and options taking a
// value.
var interpSpecs = map[string]struct {
	code string // options whose value is code
	spec *spec
}{
	"python":    {"-c", posixSpec("-c -m -W -X -Q")},
	"node":      {"-e --eval -p --print", posixSpec("-e --eval -p --print -r --require --import --loader --env-file --input-type --conditions -C --title --inspect-port")},
	"perl":      {"-e -E", posixSpec("-e -E -M -m -I")},
	"ruby":      {"-e", posixSpec("-e -r -I -C -E --encoding")},
	"php":       {"-r -R -B -E", posixSpec("-r -R -B -E -S -t -c -d -f -F -z")},
	"lua":       {"-e", posixSpec("-e -l")},
	"deno":      {"", posixSpec("")},
	"bun":       {"-e --eval -p --print", posixSpec("-e --eval -p --print -r --preload --cwd --env-file --config -c")},
	"osascript": {"-e", posixSpec("-e -l -s")},
	"Rscript":   {"-e", posixSpec("-e")},
}

// langOf names an interpreter's family.
func langOf(name string) string {
	switch {
	case name == "python" || name == "python2" || name == "python3" || name == "pypy" || name == "pypy3" || strings.HasPrefix(name, "python3.") || strings.HasPrefix(name, "python2."):
		return "python"
	case name == "node" || name == "nodejs":
		return "node"
	case name == "perl" || strings.HasPrefix(name, "perl5"):
		return "perl"
	case name == "ruby":
		return "ruby"
	case strings.HasPrefix(name, "php"):
		return "php"
	case name == "lua" || strings.HasPrefix(name, "lua5") || name == "luajit":
		return "lua"
	}
	return name
}

// interpH reads python, node, perl, ruby, php, deno, bun and the like.
func interpH(x *call) {
	lang := langOf(x.name)
	is, ok := interpSpecs[lang]
	if !ok {
		return
	}
	if lang == "deno" || lang == "bun" {
		if x.denoBun(lang) {
			return
		}
	}
	opts, ops := is.spec.parse(x.args)
	codes := strings.Fields(is.code)
	if lang == "ruby" && has(opts, "-r") {
		for _, r := range vals(opts, "-r") {
			if r.Text == "un" {
				// ruby -run -e httpd DIR -p 8000 --bind-address=H: a
				// file server of DIR (the working directory when none).
				bind, dir := "", word(".")
				tail := interpTail(x.args, is.spec, lang)
				for i := 0; i < len(tail); i++ {
					switch t := tail[i].Text; {
					case t == "-b" || t == "--bind-address":
						if i+1 < len(tail) {
							bind = hostOf(tail[i+1].Text)
						}
						i++
					case t == "-p" || t == "--port":
						i++
					case strings.HasPrefix(t, "--bind-address="):
						bind = hostOf(t[len("--bind-address="):])
					case strings.HasPrefix(t, "-"):
					default:
						dir = tail[i]
					}
				}
				x.listener(bind, dir)
				return
			}
		}
	}
	if lang == "php" {
		if s, ok := val(opts, "-S"); ok {
			d, ok := val(opts, "-t")
			if !ok {
				d = word(".")
			}
			x.listener(hostOf(s.Text), d)
			return
		}
	}
	// What follows the code or the module (python -c CODE ARGS, node -e
	// CODE ARGS, python -m MODULE ARGS) is the program's own argv.
	tail := interpTail(x.args, is.spec, lang)
	for _, w := range vals(opts, codes...) {
		x.m.payloads = append(x.m.payloads, payload{lang: lang, code: w.Text})
		if w.Dynamic {
			x.dynamicCode(w, x.name+" -c")
		}
		if lang == "perl" || lang == "ruby" {
			// perl -pi -e CODE FILE... edits the files in place.
			inPlace := false
			for _, a := range x.args {
				if t := a.Text; len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t, 'i') && !strings.ContainsAny(t[1:], "eE") || t == "-pi" || t == "-i" {
					inPlace = true
				}
			}
			for _, f := range ops {
				x.ref(kRead, f, false)
				if inPlace {
					x.ref(kWrite, f, false)
				}
			}
			return
		}
		if lang == "python" || lang == "node" || lang == "php" {
			x.argReads(tail)
			return
		}
	}
	if len(vals(opts, codes...)) > 0 {
		x.argReads(tail)
		return
	}
	if lang == "python" {
		if m, ok := val(opts, "-m"); ok {
			x.pythonModule(m.Text, tail)
			return
		}
	}
	for _, w := range vals(opts, "-r", "--require", "--import", "--env-file", "-f") {
		if lang == "node" && !looksLikePath(w.Text) {
			continue
		}
		x.ref(kRead, w, false)
	}
	if len(ops) == 0 || ops[0].Text == "-" {
		x.stdinCode()
		return
	}
	x.script(ops[0])
	// python3 x.py /etc/shadow: the script may read its arguments.
	x.argReads(ops[1:])
}

// interpTail returns the words after an interpreter's code or module
// option and its value (-c CODE, -e CODE, -m MODULE, also written -cCODE
// or -Bc CODE): what the program sees as its arguments. nil when there
// is none.
func interpTail(args []shellx.Word, sp *spec, lang string) []shellx.Word {
	ends := "ce"
	if lang == "python" {
		ends = "cm"
	}
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case t == "--":
			return nil
		case t == "--eval" || t == "--print":
			return args[min(i+2, len(args)):]
		case strings.HasPrefix(t, "--"):
			if sp.valued[t] {
				i++
			}
		case len(t) > 1 && t[0] == '-':
			for j := 1; j < len(t); j++ {
				if strings.IndexByte(ends, t[j]) >= 0 || lang == "node" && t[j] == 'p' {
					if j+1 < len(t) {
						return args[i+1:]
					}
					return args[min(i+2, len(args)):]
				}
				if sp.valued["-"+t[j:j+1]] {
					if j+1 == len(t) {
						i++
					}
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// denoBun reads deno and bun subcommands; false when they run code as
// plain interpreters.
func (x *call) denoBun(lang string) bool {
	if len(x.args) == 0 {
		return true
	}
	sub := x.args[0].Text
	switch sub {
	case "install", "i", "add", "update", "upgrade", "outdated", "pm", "x", "create", "publish", "link":
		if lang == "bun" {
			jsH(x)
			return true
		}
		x.request(Request{Host: pkgRegistry["deno"], Method: "GET"})
		return true
	case "run", "test", "bench", "serve", "compile", "repl", "task", "fmt", "lint", "check", "eval", "build":
		if sub == "fmt" {
			x.refPath(kWrite, ".", true)
			return true
		}
		if sub == "eval" && len(x.args) > 1 {
			x.m.payloads = append(x.m.payloads, payload{lang: lang, code: x.args[len(x.args)-1].Text})
			return true
		}
		for k, w := range x.args[1:] {
			if strings.HasPrefix(w.Text, "-") {
				continue
			}
			if sub == "run" || sub == "serve" || sub == "compile" {
				x.script(w)
				x.argReads(x.args[k+2:]) // deno run x.ts /etc/shadow
			}
			return true
		}
		return true
	}
	return false
}

// pythonModule reads python -m MODULE ARGS.
func (x *call) pythonModule(mod string, ops []shellx.Word) {
	switch mod {
	case "http.server", "SimpleHTTPServer", "uploadserver", "smtpd", "aiosmtpd", "pyftpdlib", "wsgiref.simple_server":
		bind, dir := "", word(".")
		// Options come before or after the port (-d ~ 8000, --bind
		// 0.0.0.0, --directory=/); ops are the module's own arguments.
		for i := 0; i < len(ops); i++ {
			switch t := ops[i].Text; {
			case t == "-b" || t == "--bind":
				if i+1 < len(ops) {
					bind = hostOf(ops[i+1].Text)
					i++
				}
			case t == "-d" || t == "--directory":
				if i+1 < len(ops) {
					dir = ops[i+1]
					i++
				}
			case strings.HasPrefix(t, "--bind="):
				bind = hostOf(t[7:])
			case strings.HasPrefix(t, "--directory="):
				dir = word(t[12:])
			}
		}
		x.listener(bind, dir)
	case "pip":
		y := *x
		y.args = ops
		y.name = "pip"
		pipH(&y)
	case "venv", "virtualenv":
		for _, w := range ops {
			if !strings.HasPrefix(w.Text, "-") {
				x.ref(kWrite, w, true)
			}
		}
	case "json.tool", "base64", "gzip", "zipfile", "tarfile", "tokenize", "pydoc", "py_compile", "compileall", "ast", "dis":
		for _, w := range ops {
			if !strings.HasPrefix(w.Text, "-") {
				x.ref(kRead, w, false)
			}
		}
	case "black", "isort", "autopep8", "ruff":
		y := *x
		y.args, y.name = ops, mod
		table[mod](&y)
	}
}

// codeTraits are what interpreter code does with what it reads, told by
// the names it calls.
type codeTraits struct {
	method string // POST, PUT... when the code sends a body
	data   bool   // the code reads a file or the environment, or builds a URL
	socket bool   // the code opens a raw connection
	shell  bool   // the code runs a shell over that connection (reverse shell)
}

var (
	sendMarkers  = []string{".post(", ".put(", ".patch(", "method:", "method=", "'POST'", `"POST"`, "'PUT'", `"PUT"`, "data=", "json=", "files=", "body:", ".send(", ".write(", "urlencode(", "sendall(", "LWP::UserAgent", "Net::HTTP.post", "post_form", "CURLOPT_POSTFIELDS", "http_build_query"}
	readMarkers  = []string{"open(", "readFile", "read_text", "read_bytes", "File.read", "File.open", "IO.read", "slurp", "file_get_contents", "fs.read", "os.environ", "getenv", "process.env", "ENV[", "$ENV{", "readlines", "fopen(", "Path(", "glob(", "listdir(", "walk("}
	buildMarkers = []string{"+", "f'", `f"`, "${", "%s", ".format(", "`", ".", "join("}
	sockMarkers  = []string{"socket", "connect(", "TCPSocket", "IO::Socket", "fsockopen", "net.connect", "net.Socket", "createConnection", "/dev/tcp/"}
	shMarkers    = []string{"dup2", "pty.spawn", "/bin/sh", "/bin/bash", "subprocess", "exec(", "spawn(", "popen", "system(", "execSync", "`"}
)

func containsAny(s string, subs []string) bool {
	for _, m := range subs {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func traitsOf(code string) codeTraits {
	var t codeTraits
	if containsAny(code, sendMarkers) {
		t.method = "POST"
		if strings.Contains(code, ".put(") || strings.Contains(code, "'PUT'") || strings.Contains(code, `"PUT"`) {
			t.method = "PUT"
		}
	}
	t.data = t.method != "" || containsAny(code, readMarkers)
	t.socket = containsAny(code, sockMarkers)
	t.shell = t.socket && containsAny(code, shMarkers)
	return t
}

// literals judges the string literals of interpreter payloads: each is a
// Text; URLs are Requests (sending what the code reads when it sends at
// all); paths are Reads, or Writes and Deletes when the code around them
// opens them so.
func (m *model) literals() {
	m.piecePaths()
	if len(m.a.Literals) == 0 {
		return
	}
	traits := map[string]codeTraits{}
	codes := map[string]string{}
	for _, p := range m.payloads {
		t := traitsOf(p.code)
		old := traits[p.lang]
		if t.method == "" {
			t.method = old.method
		}
		traits[p.lang] = codeTraits{method: t.method, data: t.data || old.data, socket: t.socket || old.socket, shell: t.shell || old.shell}
		codes[p.lang] += p.code + "\n"
	}
	x := &call{m: m, i: -1, c: &shellx.Command{PipeIn: -1}, cwd: m.start}
	var files []string
	type urlLit struct {
		lang, text string
	}
	var urls []urlLit
	var hosts []urlLit
	for _, l := range m.a.Literals {
		m.f.Texts = append(m.f.Texts, Text{Source: l.Source, Body: l.Text})
		lang := l.Source
		if k := strings.IndexAny(lang, " "); k >= 0 {
			lang = lang[:k]
		}
		lang = strings.TrimPrefix(lang, "| ")
		t := homeLiteral(strings.TrimSpace(l.Text))
		if t == "" || len(t) > 2048 || strings.ContainsAny(t, "\n") {
			continue
		}
		x.name = l.Source
		switch {
		case strings.Contains(t, "://"):
			if p, ok := strings.CutPrefix(t, "file://"); ok {
				x.ref(kRead, word(p), false)
				continue
			}
			if !strings.ContainsAny(t, " \t") {
				urls = append(urls, urlLit{lang, t})
			}
		case literalPath(t) && !systemBin(t):
			k := pathUse(codes[lang], strings.TrimSpace(l.Text))
			x.ref(k, shellx.Word{Text: t, Glob: strings.ContainsAny(t, "*?[")}, false)
			if k == kRead {
				if p, ok := x.abs(t); ok {
					files = append(files, p)
				}
			}
		case traits[lang].socket && looksLikeHost(t) && !strings.ContainsAny(t, "/ "):
			hosts = append(hosts, urlLit{lang, t})
		}
	}
	for _, u := range urls {
		tr := traits[u.lang]
		r := Request{Host: hostOf(u.text), Method: "GET", By: u.lang}
		if tr.method != "" {
			r.Method = tr.method
		}
		code := codes[u.lang]
		if k := strings.Index(code, u.text); k >= 0 {
			after := code[k+len(u.text):]
			if len(after) > 6 {
				after = after[:6]
			}
			// 'https://x/?d=' + data, f"...{data}", `${data}`.
			if strings.ContainsAny(after, "+{$%") || strings.HasSuffix(u.text, "=") || strings.HasSuffix(u.text, "/") && strings.Contains(after, "+") {
				r.Data = true
			}
		}
		if tr.method != "" || r.Data {
			r.Data = true
			r.Files = appendNew(nil, files...)
		}
		m.f.Requests = append(m.f.Requests, r)
	}
	// A request made by a command inside a payload that reads files
	// sends what it read: os.system('curl ...?d=' + open(p).read()).
	if len(files) > 0 {
		for _, o := range m.reqVia {
			r := &m.f.Requests[o.req]
			if !r.Data {
				continue
			}
			for lang := range codes {
				if strings.Contains(o.via, lang) {
					r.Files = appendNew(r.Files, files...)
				}
			}
		}
	}
	for _, h := range hosts {
		m.f.Requests = append(m.f.Requests, Request{Host: hostOf(h.text), Data: true, Files: appendNew(nil, files...), By: h.lang})
		if traits[h.lang].shell {
			m.f.Execs = append(m.f.Execs, Exec{Runner: h.lang, From: "socket", Remote: true})
		}
	}
}

// homeLiteral writes the home directory an interpreter string names
// through the environment ("$ENV{HOME}/.ssh", "${HOME}/x") as "~".
func homeLiteral(t string) string {
	for _, h := range []string{"$ENV{HOME}", "$ENV{'HOME'}", `$ENV{"HOME"}`, "${HOME}", "$HOME", "#{ENV['HOME']}", `#{ENV["HOME"]}`, "%USERPROFILE%",
		"{HOME}", "{'HOME'}", `{"HOME"}`} { // (shellx drops perl's "$ENV" and keeps the key)
		if rest, ok := strings.CutPrefix(t, h); ok && (rest == "" || rest[0] == '/') {
			return "~" + rest
		}
	}
	return t
}

// literalPath reports whether an interpreter string literal names a file.
func literalPath(t string) bool {
	if strings.ContainsAny(t, " \t\"'<>|;(){}$\\") || len(t) > 512 {
		return false
	}
	if t[0] == '/' && len(t) > 1 || strings.HasPrefix(t, "~/") || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		return true
	}
	// prod.env, config/settings.json: a relative name with an extension.
	dot := strings.LastIndexByte(t, '.')
	if dot <= 0 || dot == len(t)-1 || strings.Count(t, ".") > 3 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return false
		}
	}
	ext := t[dot+1:]
	return len(ext) <= 8 && !(ext[0] >= '0' && ext[0] <= '9')
}

// pathUse tells from the code around a path literal whether it is read,
// written or deleted.
func pathUse(code, lit string) int {
	k := strings.Index(code, lit)
	if k < 0 {
		return kRead
	}
	before := code[max(0, k-24):k]
	after := code[k+len(lit):]
	if len(after) > 12 {
		after = after[:12]
	}
	for _, d := range []string{"rmtree", "remove(", "unlink", "rmSync", "rmdir", "rm_rf", "rm(", "File.delete", "FileUtils.rm", "rimraf", "shred"} {
		if strings.Contains(before, d) {
			return kDelete
		}
	}
	for _, w := range []string{"writeFile", "appendFile", "write_text", "write_bytes", "file_put_contents", "createWriteStream", "File.write", "copyFile", "symlink"} {
		if strings.Contains(before, w) {
			return kWrite
		}
	}
	// A redirect right before the literal (> '/tmp/x', >> "log"); rules
	// 15: not an arrow (=> '/export', -> "/api"), which any `>` in the
	// 24 bytes before counted, making routes and URLs writes.
	if b := strings.TrimRight(before, " \t'\"`"); strings.HasSuffix(b, ">") && !strings.HasSuffix(b, "=>") && !strings.HasSuffix(b, "->") {
		return kWrite
	}
	// A mode given as the next argument, quoted (open('x', 'w'),
	// File.open("x", "a"), open(p, mode='wb')). Rules 15: the mode must
	// be a quoted literal — app.get('/export', async (req) => …) named
	// no mode, and its "async" read as append made a route a write.
	rest := strings.TrimLeft(strings.TrimLeft(after, `'"`), " ")
	if r, ok := strings.CutPrefix(rest, ","); ok {
		r = strings.TrimPrefix(strings.TrimLeft(r, " "), "mode=")
		if len(r) > 1 && (r[0] == '\'' || r[0] == '"') && strings.ContainsRune("wax", rune(r[1])) {
			return kWrite
		}
	}
	return kRead
}

// tmuxH reads tmux send-keys and screen -X stuff: the keys typed into
// another shell are a command line it runs.
func tmuxH(x *call) {
	args := x.args
	var keys []string
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		if x.name == "screen" {
			if t == "stuff" && i+1 < len(args) {
				keys = append(keys, unescape(args[i+1].Text))
			}
			continue
		}
		if t != "send-keys" && t != "send" {
			continue
		}
		for j := i + 1; j < len(args); j++ {
			k := args[j].Text
			switch {
			case k == "-t" || k == "-N" || k == "-c":
				j++
			case strings.HasPrefix(k, "-") && len(k) > 1:
			case k == "Enter" || k == "C-m" || k == "KPEnter" || k == "Escape" || k == "C-c" || k == "Space":
				keys = append(keys, "\n")
			default:
				keys = append(keys, k)
			}
		}
		break
	}
	if len(keys) > 0 {
		x.payload(word(strings.Join(keys, "")), x.name+" keys")
	}
}

// buildH reads build tools and test runners: they run workspace code
// (the Run is for the tiers); -C DIR and -f FILE are honoured.
func buildH(x *call) {
	opts, _ := cachedSpec(0, "-C -f --file --makefile --directory -j --jobs -l -o -W -I --include-dir").parse(x.args)
	if d, ok := val(opts, "-C", "--directory"); ok {
		x.cd(d)
	}
	for _, w := range vals(opts, "-f", "--file", "--makefile") {
		if w.Text == "-" || w.Text == "/dev/stdin" {
			// The makefile is the here-document: its recipes run.
			for _, r := range x.c.Redirects {
				if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
					x.recipes(r.Target.Text)
				}
			}
			continue
		}
		x.ref(kRead, w, false)
		if !w.Dynamic {
			x.runsFile(w.Text)
		}
	}
	x.runsHere()
}

// recipes judges the recipe lines of a makefile given inline.
func (x *call) recipes(text string) {
	for n, l := range strings.Split(text, "\n") {
		if n > 256 {
			break
		}
		if strings.HasPrefix(l, "\t") {
			l = strings.TrimLeft(l[1:], "@-+ ")
			l = strings.ReplaceAll(strings.ReplaceAll(l, "$$", "$"), "$(HOME)", "$HOME")
			x.payload(word(l), "make recipe")
		}
	}
}

// formatter returns the handler of a formatter that writes its operands
// (or the working directory, Tree) when given one of writeFlags, or
// always unless given one of checkFlags.
func formatter(sp *spec, writeFlags, checkFlags []string, dirDefault bool) handler {
	return func(x *call) {
		opts, ops := sp.parse(x.args)
		writes := len(writeFlags) == 0 || has(opts, writeFlags...)
		if len(checkFlags) > 0 && has(opts, checkFlags...) {
			writes = false
		}
		if len(ops) > 0 && (x.name == "ruff" || x.name == "terraform" || x.name == "tofu") {
			sub := ops[0].Text
			ops = ops[1:]
			switch {
			case x.name == "ruff" && sub == "format", (x.name == "terraform" || x.name == "tofu") && sub == "fmt":
			case x.name == "ruff" && sub == "check" && has(opts, "--fix"):
			default:
				writes = false
			}
		}
		for _, w := range ops {
			x.ref(kRead, w, true)
			if writes {
				x.ref(kWrite, w, true)
			}
		}
		if len(ops) == 0 && writes && dirDefault {
			x.refPath(kWrite, ".", true)
		}
		for _, w := range vals(opts, "-o", "--output", "--output-file") {
			x.ref(kWrite, w, false)
		}
	}
}

// terraformH reads terraform and tofu: fmt writes, init fetches
// providers, plan reads the cloud, apply, destroy and import change it.
func terraformH(x *call) {
	_, ops := cachedSpec(0, "-chdir -var -var-file -target -out -state -backend-config").parse(x.args)
	for _, w := range x.args {
		if d, ok := strings.CutPrefix(w.Text, "-chdir="); ok {
			x.cd(word(d))
		}
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0].Text {
	case "fmt":
		x.refPath(kWrite, ".", true)
	case "init", "get", "providers":
		x.request(Request{Host: "registry.terraform.io", Method: "GET"})
		x.refPath(kWrite, ".terraform", true)
	case "plan", "show", "output", "validate", "state", "graph":
		x.request(Request{Method: "GET"})
	case "apply", "destroy", "import", "taint", "untaint", "refresh", "force-unlock":
		x.request(Request{Data: true})
	}
}

// remoteSources notes code a command takes from a host that is not its
// tool's registry and runs (review B9), on top of what its handler
// found: go run of a module at a version from an unknown host (a code
// forge's module is an Unknown, which asks; golang.org/x passes), pip
// install -r of a requirements list at a URL, and a git fetch or pull
// from a URL whose result is checked out or merged (the working tree is
// then fetched code: make, npm install, pytest there run it).
func (x *call) remoteSources() {
	switch x.name {
	case "go":
		if len(x.args) < 2 || x.args[0].Text != "run" {
			return
		}
		for _, w := range x.args[1:] {
			t := w.Text
			if strings.HasPrefix(t, "-") {
				continue
			}
			first, _, _ := strings.Cut(t, "/")
			if !strings.Contains(first, ".") || strings.HasPrefix(first, ".") || strings.HasSuffix(t, ".go") || !strings.Contains(t, "/") {
				return
			}
			switch {
			case first == "golang.org" || first == "go.dev" || first == "google.golang.org" || first == "cloud.google.com":
			case first == "github.com" || first == "gitlab.com" || first == "bitbucket.org" || first == "codeberg.org" || first == "sr.ht" || first == "git.sr.ht":
				x.m.unknown("go run runs a module fetched from " + first + ": " + clipText(t, 120))
			default:
				x.remoteCode(first)
			}
			return
		}
	case "npx", "pnpx", "bunx":
		// npx serve /: a file server; npx github:u/r, npx git+https://...,
		// npx https://x/pkg.tgz: a package from outside the registry.
		for k := 0; k < len(x.args); k++ {
			t := x.args[k].Text
			if t == "-p" || t == "--package" || t == "-c" || t == "--call" {
				k++
				continue
			}
			if strings.HasPrefix(t, "-") {
				continue
			}
			if strings.Contains(t, "://") || strings.HasPrefix(t, "git+") || strings.HasPrefix(t, "github:") || strings.HasPrefix(t, "gitlab:") || strings.HasPrefix(t, "bitbucket:") {
				h := hostOf(strings.TrimPrefix(t, "git+"))
				if !strings.Contains(t, "://") {
					h, _, _ = strings.Cut(t, ":")
					h += ".com"
				}
				x.remoteCode(h)
				return
			}
			name := t
			if i := strings.LastIndexByte(name, '@'); i > 0 {
				name = name[:i]
			}
			if h := servers[name]; h != nil {
				y := *x
				y.name, y.args = name, x.args[k+1:]
				h(&y)
			}
			return
		}
	case "pip", "pip3", "uv", "pipx":
		for i, w := range x.args {
			t := w.Text
			v, ok := strings.CutPrefix(t, "--requirement=")
			if !ok && (t == "-r" || t == "--requirement") && i+1 < len(x.args) {
				v, ok = x.args[i+1].Text, true
			} else if !ok && strings.HasPrefix(t, "-r") && len(t) > 2 {
				v, ok = t[2:], true
			}
			if ok && strings.Contains(v, "://") {
				x.request(Request{Host: hostOf(v), Method: "GET"})
				x.remoteCode(hostOf(v))
			}
		}
	case "git":
		sub, k := "", 0
		for k < len(x.args) {
			t := x.args[k].Text
			if t == "-C" || t == "-c" || t == "--git-dir" || t == "--work-tree" {
				k += 2
				continue
			}
			if strings.HasPrefix(t, "-") {
				k++
				continue
			}
			sub = t
			break
		}
		rest := x.args[min(k+1, len(x.args)):]
		urlArg := false
		for _, w := range rest {
			if strings.Contains(w.Text, "://") || strings.Contains(w.Text, "@") && strings.Contains(w.Text, ":") && !strings.HasPrefix(w.Text, "-") {
				urlArg = true
			}
		}
		switch sub {
		case "fetch":
			if urlArg {
				x.m.gitFetched = true
			}
		case "pull":
			if urlArg {
				x.fetch(".", true)
			}
		case "checkout", "switch", "merge", "reset", "rebase", "cherry-pick", "restore", "read-tree":
			for _, w := range rest {
				if x.m.gitFetched && strings.HasPrefix(w.Text, "FETCH_HEAD") {
					x.fetch(".", true)
				}
			}
		}
	}
}
