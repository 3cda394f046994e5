package shellx

import (
	"fmt"
	"slices"
	"strings"
)

func errTooDeep(via, label string) error {
	return fmt.Errorf("%w: payloads nested deeper than %d (%s)", ErrTooDeep, MaxDepth, joinVia(via, label))
}

// Interpreter payloads.
//
// The code an interpreter is given (python -c, node -e, perl -e, ruby -e,
// php -r, deno eval, bun -e, osascript -e, an awk program, or code fed on
// stdin) is not parsed as its language: it is tokenised just enough to
// find its string literals (lexer.go). Each literal is listed
// (Analysis.Literals, Source naming the payload, "python -c"). Literals
// that the code runs as shell commands are parsed as shell, one payload
// deeper, Via the same name:
//   - backquotes and qx{} (perl), %x() (ruby), backquotes (php);
//   - the first argument of an exec-like call (os.system, subprocess.*,
//     os.popen, child_process.exec*, spawn, system, exec, popen,
//     shell_exec, passthru, Runtime.exec, "do shell script"...): a string
//     (concatenations allowed: the unknown operands make the word they
//     fall in Dynamic, its Text ending where the literal ends) is parsed as
//     a shell command line; a list of strings (["curl", "-d", ...]), or a
//     program and a list (spawn("curl", [...])), or several strings
//     (perl's system LIST) becomes one Command with that argv;
//   - any other literal whose first word is a path or a well-known program
//     (knownPrograms) and which has arguments, when the code calls
//     something exec-like anywhere
//     (cmd = "curl ..."; os.system(cmd)).
// Code run as code (python exec/eval, js eval/Function, perl and ruby
// eval of a string) is read again as the same language, one payload
// deeper.

// isInterpreter names the language of an interpreter program ("" if it is
// none).
func isInterpreter(name string) string {
	switch {
	case name == "python" || name == "python2" || name == "python3" || name == "pypy" || name == "pypy3" ||
		strings.HasPrefix(name, "python3.") || strings.HasPrefix(name, "python2."):
		return "python"
	case name == "node" || name == "nodejs":
		return "node"
	case name == "deno":
		return "deno"
	case name == "bun":
		return "bun"
	case name == "perl" || strings.HasPrefix(name, "perl5"):
		return "perl"
	case name == "ruby" || name == "irb":
		return "ruby"
	case name == "php" || strings.HasPrefix(name, "php") && len(name) <= 6 && isDigits(strings.TrimPrefix(strings.ReplaceAll(name, ".", ""), "php")):
		return "php"
	case name == "osascript":
		return "osascript"
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		return "awk"
	}
	return ""
}

// interpreter finds the code an interpreter command runs and reads it.
func (p *parser) interpreter(lang string, args []Word, c *ctx, in input) {
	code, flag, found, stdin := interpCode(lang, args[1:])
	// One name per language: "node -e" for -e, -p and --eval alike.
	switch lang {
	case "python":
		flag = "-c"
	case "node", "bun", "perl", "ruby", "osascript":
		flag = "-e"
	case "php":
		flag = "-r"
	}
	label := strings.TrimSpace(lang + " " + flag)
	switch {
	case found:
	case stdin && in.out.known:
		code = in.out.text
		label = lang + " <<"
		if in.pipe {
			label = "| " + lang
		}
		label = joinVia(in.out.chain, label)
	default:
		return
	}
	p.code(lang, label, code, c)
}

// interpCode finds the code in an interpreter's arguments: the value of
// its code flag (-c, -e, -r...; perl, ruby and osascript join several with
// newlines), or says the code is read from stdin (no script operand, or
// "-").
func interpCode(lang string, args []Word) (code, flag string, found, stdin bool) {
	var codeFlags, withArg string
	switch lang {
	case "python":
		codeFlags, withArg = "c", "WXm"
	case "node", "bun":
		codeFlags, withArg = "ep", "r"
	case "perl", "ruby", "osascript":
		codeFlags, withArg = "eE", "IMmlx"
		if lang == "ruby" {
			withArg = "Irx"
		}
	case "php":
		codeFlags, withArg = "rBRFE", "cdfz"
	case "deno":
		if len(args) > 1 && args[0].Text == "eval" {
			return args[len(args)-1].Text, "eval", true, false
		}
		return "", "", false, false
	case "awk":
		rest := skipOptions(args, "Fvf", 0)
		for _, a := range args {
			if a.Text == "-f" || strings.HasPrefix(a.Text, "--file") {
				return "", "", false, false
			}
		}
		if len(rest) > 0 {
			return rest[0].Text, "", true, false
		}
		return "", "", false, false
	}
	var codes []string
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case t == "--eval" || t == "--print":
			if i+1 < len(args) {
				codes = append(codes, args[i+1].Text)
				flag = "-e"
				i++
			}
			continue
		case strings.HasPrefix(t, "--eval=") || strings.HasPrefix(t, "--print="):
			codes = append(codes, t[strings.IndexByte(t, '=')+1:])
			flag = "-e"
			continue
		case t == "-":
			return "", "", false, true
		case t == "--":
			return joinCode(codes), flag, len(codes) > 0, false
		case len(t) > 1 && t[0] == '-' && t[1] != '-':
			if k := strings.IndexAny(t[1:], codeFlags); k >= 0 {
				flag = "-" + string(t[1+k])
				if 1+k+1 < len(t) {
					codes = append(codes, t[k+2:])
				} else if i+1 < len(args) {
					codes = append(codes, args[i+1].Text)
					i++
				}
				if lang == "python" {
					return joinCode(codes), flag, true, false
				}
				continue
			}
			if strings.IndexAny(t[len(t)-1:], withArg) == 0 && len(t) == 2 {
				if lang == "python" && t == "-m" {
					return "", "", false, false
				}
				i++
			}
			continue
		case strings.HasPrefix(t, "--"):
			continue
		}
		if len(codes) > 0 {
			break
		}
		return "", "", false, false // a script file
	}
	if len(codes) > 0 {
		return joinCode(codes), flag, true, false
	}
	return "", "", false, true
}

func joinCode(codes []string) string { return strings.Join(codes, "\n") }

// execNames are the calls that run their first argument as a shell
// command line, or as argv when it is a list.
var execNames = map[string]bool{
	"system": true, "popen": true, "popen2": true, "popen3": true, "popen4": true,
	"spawn": true, "spawnSync": true, "exec": true, "execSync": true, "execFile": true,
	"execFileSync": true, "execa": true, "execaSync": true, "execaCommand": true, "execaCommandSync": true,
	"check_output": true, "check_call": true, "getoutput": true, "getstatusoutput": true,
	"run": true, "call": true, "Popen": true, "shell_exec": true, "passthru": true, "proc_open": true,
	"execl": true, "execle": true, "execlp": true, "execlpe": true, "execv": true, "execve": true,
	"execvp": true, "execvpe": true, "spawnl": true, "spawnlp": true, "spawnv": true, "spawnvp": true,
	"posix_spawn": true, "posix_spawnp": true, "capture2": true, "capture2e": true, "capture3": true,
	"pipeline": true, "Command": true, "startProcess": true, "shell": true, "sh": true, "getstatusoutput_": true,
}

// weakExec are exec names that are also common method names: they count
// only qualified by a process module (subprocess.run, cp.exec...).
var weakExec = map[string]bool{"run": true, "call": true, "exec": true, "Command": true, "shell": true, "sh": true, "pipeline": true}

// codeExec are calls that run their string argument as code of the same
// language.
var codeExec = map[string]map[string]bool{
	"python": {"exec": true, "eval": true, "compile": true},
	"node":   {"eval": true, "Function": true},
	"perl":   {"eval": true},
	"ruby":   {"eval": true, "instance_eval": true, "class_eval": true},
	"php":    {"eval": true},
}

// runsByName are the functions and methods that run programs or code,
// as a name reached dynamically spells them.
var runsByName = map[string]bool{"system": true, "popen": true, "exec": true, "execSync": true, "execFile": true, "execFileSync": true,
	"spawn": true, "spawnSync": true, "fork": true, "eval": true, "Popen": true, "check_output": true, "check_call": true, "call": true,
	"run": true, "execv": true, "execve": true, "execvp": true, "execl": true, "execlp": true, "getoutput": true, "getstatusoutput": true,
	"instance_eval": true, "class_eval": true, "shell_exec": true,
	"passthru": true, "proc_open": true, "backtick": true, "Function": true}

// nameArg are the calls that reach a module, function or method by name,
// with the index of the argument that names it.
var nameArg = map[string]map[string]int{
	"python": {"__import__": 0, "import_module": 0, "getattr": 1, "setattr": 1},
	"node":   {"require": 0, "import": 0},
	"ruby":   {"send": 0, "public_send": 0, "__send__": 0, "const_get": 0, "method": 0, "require": 0},
	"php":    {"call_user_func": 0, "call_user_func_array": 0},
	"perl":   {"require": 0},
}

func langFamily(lang string) string {
	switch lang {
	case "deno", "bun":
		return "node"
	}
	return lang
}

// code reads interpreter code: lists its literals and the commands it
// runs.
func (p *parser) code(lang, label, code string, c *ctx) {
	if p.stop || !p.spend(len(code)) {
		return
	}
	if c.depth+1 > MaxDepth {
		p.fail(errTooDeep(c.via, label))
		return
	}
	fam := langFamily(lang)
	toks := lex(fam, code)
	saved := p.procModule
	defer func() { p.procModule = saved }()
	p.procModule = strings.Contains(code, "subprocess") || strings.Contains(code, "child_process") ||
		strings.Contains(code, "Open3") || strings.Contains(code, "execa") || strings.Contains(code, "import os")
	execAny := false
	for i, t := range toks {
		if t.kind == tExec || t.kind == tIdent && p.isExecCall(fam, toks, i) {
			execAny = true
			break
		}
	}
	used := make([]bool, len(toks))
	for i := 0; i < len(toks) && !p.stop; i++ {
		t := toks[i]
		switch t.kind {
		case tStr:
			text := strings.ReplaceAll(t.text, dynPlaceholder, "")
			p.literal(label, text)
			d := p.encoded(text)
			if d == "" && decodedArg(toks, i) {
				if dec, ok := decodeBase64(text); ok {
					p.literal("base64", dec)
					d = dec
				}
			}
			if d != "" && execAny && (looksLikeCommand(d) || decodedArg(toks, i)) {
				p.codeShell(d, false, c, joinVia(label, "base64"))
				used[i] = true
			}
		case tPunct:
			// obj['execSync'](...): a method that runs programs or code,
			// called by a string subscript (the name folded from pieces).
			if t.text == "[" {
				// The subscript: string literals joined by +.
				var name strings.Builder
				j := i + 1
				for ; j < len(toks) && j < i+33; j += 2 {
					if toks[j].kind != tStr {
						break
					}
					name.WriteString(strings.ReplaceAll(toks[j].text, dynPlaceholder, ""))
					if j+1 >= len(toks) || toks[j+1].text != "+" {
						j++
						break
					}
				}
				if name.Len() > 0 && j+1 < len(toks) && toks[j].text == "]" && toks[j+1].text == "(" && runsByName[name.String()] {
					p.opaque(label + ": [" + name.String() + "]() calls a function that runs programs or code by a string subscript")
				}
			}
		case tExec:
			p.literal(label, strings.ReplaceAll(t.text, dynPlaceholder, ""))
			p.codeShell(t.text, t.dyn, c, label)
			used[i] = true
		case tIdent:
			name := lastSegment(t.text)
			if k, ok := nameArg[fam][name]; ok && i+1 < len(toks) && toks[i+1].text == "(" {
				// A module, function or method reached by a name built
				// at run time (require('child_'+'process'),
				// getattr(os, 'sys'+'tem')): code built from pieces.
				if args := callArgs(toks, i+2, true); len(args) > k && (!args[k].str || args[k].dyn) {
					p.opaque(label + ": " + name + "() reaches a module or function by a name built at run time")
				} else if len(args) > k && runsByName[lastSegment(args[k].text)] {
					p.opaque(label + ": " + name + "() reaches " + args[k].text + " by name, a call that runs programs or code")
				}
			}
			if (fam == "perl" || fam == "ruby") && name == "eval" && i+1 < len(toks) && toks[i+1].text != "(" && toks[i+1].text != "{" && toks[i+1].kind != tStr {
				// perl's and ruby's eval EXPR without parentheses: eval
				// pack(...), eval Net::HTTP.get(...).
				p.opaque(label + ": eval runs code built at run time")
			}
			if codeExec[fam][name] && i+1 < len(toks) && toks[i+1].text == "(" {
				args := callArgs(toks, i+2, true)
				if len(args) > 0 && args[0].str {
					for k := args[0].from; k < args[0].to; k++ {
						used[k] = true
					}
					p.code(lang, label, strings.ReplaceAll(args[0].text, dynPlaceholder, ""), c.deeper())
				}
				if len(args) > 0 && (!args[0].str || args[0].dyn) {
					p.opaque(label + ": " + name + "() runs code built at run time")
				}
				continue
			}
			if p.isExecCall(fam, toks, i) {
				p.execCall(fam, toks, i, used, c, label, code)
			}
		}
	}
	if !execAny {
		return
	}
	for i, t := range toks {
		if t.kind == tStr && !used[i] && looksLikeCommand(t.text) {
			p.codeShell(t.text, t.dyn, c, label)
		}
	}
}

// decodeNames are calls that decode their base64 argument.
var decodeNames = map[string]bool{
	"b64decode": true, "standard_b64decode": true, "urlsafe_b64decode": true, "decodebytes": true,
	"decodestring": true, "atob": true, "decode_base64": true, "decode64": true, "base64_decode": true,
	"strict_decode64": true, "urlsafe_decode64": true, "from": true,
}

// decodedArg says toks[i] is the argument of a base64-decoding call
// (b64decode("..."), atob("..."), Buffer.from("...", "base64")).
func decodedArg(toks []token, i int) bool {
	if i < 2 || toks[i-1].text != "(" || toks[i-2].kind != tIdent {
		return false
	}
	name := lastSegment(toks[i-2].text)
	if name == "from" {
		return i+2 < len(toks) && toks[i+1].text == "," && toks[i+2].kind == tStr && toks[i+2].text == "base64"
	}
	return decodeNames[name]
}

func (c *ctx) deeper() *ctx {
	n := *c
	n.depth++
	return &n
}

// isExecCall says toks[i] names an exec-like call.
func (p *parser) isExecCall(fam string, toks []token, i int) bool {
	t := toks[i]
	name := lastSegment(t.text)
	if fam == "osascript" {
		return t.text == "do" && i+2 < len(toks) && toks[i+1].text == "shell" && toks[i+2].text == "script"
	}
	if !execNames[name] {
		return false
	}
	if weakExec[name] {
		if p.procModule {
			// s.call(...), run(...) where the code imports a process
			// module (import subprocess as s; from subprocess import
			// run). Python's bare exec is code, read as code above.
			return isCallStart(fam, toks, i)
		}
		q := strings.ToLower(t.text)
		qualified := strings.Contains(q, "subprocess") || strings.Contains(q, "child_process") ||
			strings.Contains(q, "process") || strings.HasPrefix(q, "os.") || strings.HasPrefix(q, "cp.") ||
			strings.Contains(q, "runtime") || strings.Contains(q, "open3") || strings.Contains(q, "kernel") ||
			strings.HasPrefix(q, "sp.") || strings.Contains(q, "deno.") || strings.HasPrefix(q, "bun.") ||
			strings.HasPrefix(q, "shutil")
		bare := t.text == name && (fam == "perl" || fam == "ruby" || fam == "php" || fam == "node" && name == "exec")
		if !qualified && !bare {
			return false
		}
	}
	return isCallStart(fam, toks, i)
}

// isCallStart says toks[i] is followed by "(" or (perl, ruby, awk)
// directly by an argument.
func isCallStart(fam string, toks []token, i int) bool {
	if i+1 >= len(toks) {
		return false
	}
	next := toks[i+1]
	return next.text == "(" || next.kind == tStr || next.text == "[" && fam != "python" && fam != "node"
}

// execCall reads the arguments of the exec-like call at toks[i].
func (p *parser) execCall(fam string, toks []token, i int, used []bool, c *ctx, label, code string) {
	name := lastSegment(toks[i].text)
	j := i + 1
	if fam == "osascript" {
		j = i + 3
	}
	paren := j < len(toks) && toks[j].text == "("
	if paren {
		j++
	}
	args := callArgs(toks, j, paren)
	if len(args) == 0 {
		return
	}
	for _, a := range args {
		for k := a.from; k < a.to; k++ {
			used[k] = true
		}
	}
	line := ""
	if end := args[len(args)-1].to; end <= len(toks) {
		from, to := toks[i].pos, len(code)
		if end < len(toks) {
			to = toks[end].pos + len(toks[end].text)
			if toks[end].kind == tStr {
				to = toks[end].end
			}
		}
		if from <= to && to <= len(code) {
			line = code[from:to]
		}
	}
	first := args[0]
	switch {
	case first.list != nil:
		p.argv(first.list, c, label, line)
	case len(args) > 1 && args[1].list != nil && first.str:
		argv := args[1].list
		if !strings.HasPrefix(name, "execv") && !strings.HasPrefix(name, "execl") || len(argv) == 0 {
			argv = append([]Word{{Text: first.text, Dynamic: first.dyn}}, argv...)
		}
		p.argv(argv, c, label, line)
	case first.str && (fam == "perl" || fam == "ruby") && len(args) > 1 && allStr(args):
		var argv []Word
		for _, a := range args {
			argv = append(argv, Word{Text: a.text, Dynamic: a.dyn})
		}
		p.argv(argv, c, label, line)
	case first.str && (strings.HasPrefix(name, "execl") || strings.HasPrefix(name, "spawnl")):
		var argv []Word
		for _, a := range args[1:] {
			argv = append(argv, Word{Text: a.text, Dynamic: a.dyn || !a.str})
		}
		if len(argv) == 0 {
			argv = []Word{{Text: first.text, Dynamic: first.dyn}}
		}
		p.argv(argv, c, label, line)
	case first.str:
		p.codeShell(first.text, first.dyn, c, label)
	default:
		p.opaque(label + ": " + name + "() runs a command built at run time")
	}
}

// opaque notes something the line runs whose text cannot be read.
func (p *parser) opaque(what string) {
	if len(p.a.Opaque) < MaxLiterals && !slices.Contains(p.a.Opaque, what) {
		p.a.Opaque = append(p.a.Opaque, what)
	}
}

func allStr(args []callArg) bool {
	for _, a := range args {
		if !a.str {
			return false
		}
	}
	return true
}

// argv lists a command an interpreter runs without a shell, and what it
// runs in turn.
func (p *parser) argv(args []Word, c *ctx, label, line string) {
	if len(args) == 0 || p.stop {
		return
	}
	in := *c
	in.via = joinVia(c.via, label)
	in.depth = c.depth + 1
	if in.depth > MaxDepth {
		p.fail(errTooDeep(c.via, label))
		return
	}
	cmd := Command{Args: args, PipeIn: -1, Via: in.via, Depth: in.depth, Line: line}
	if p.add(cmd) < 0 {
		return
	}
	p.exec(cmd, args, &in, input{}, 0)
}

// codeShell parses a literal an interpreter runs as a shell command line;
// dyn says it was built with unknown parts (dynPlaceholder).
func (p *parser) codeShell(text string, dyn bool, c *ctx, label string) {
	in := *c
	in.via = joinVia(c.via, label)
	in.depth = c.depth + 1
	in.sc = c.sc.child(nil)
	in.dyn = dyn
	p.shell(text, &in, label)
}

// looksLikeCommand says a literal reads as a shell command line: its
// first word a path to a program or a well-known program name, with
// arguments ("hello world" is not a command; "curl -d @f https://x" is).
func looksLikeCommand(s string) bool {
	s = strings.TrimSpace(s)
	sp := strings.IndexAny(s, " \t")
	if sp <= 0 || len(s) > 1<<16 {
		return false
	}
	prog := s[:sp]
	path := strings.HasPrefix(prog, "/") || strings.HasPrefix(prog, "./") || strings.HasPrefix(prog, "~/")
	if path {
		prog = base(prog)
	}
	if prog == "" || len(prog) > 32 {
		return false
	}
	for i := 0; i < len(prog); i++ {
		ch := prog[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' && i > 0 || (ch == '-' || ch == '_' || ch == '.' || ch == '+') && i > 0) {
			return false
		}
	}
	return path || knownPrograms[prog] || isShell(prog) || isInterpreter(prog) != ""
}

// knownPrograms are the programs a string literal may start with to be
// read as a command line (looksLikeCommand).
var knownPrograms = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range strings.Fields(`curl wget nc ncat netcat socat telnet ssh scp sftp rsync ftp tftp
		rm rmdir cp mv ln chmod chown chgrp chattr touch mkdir cat head tail less more tee dd mkfs
		shred truncate wipefs fdisk mount umount kill pkill killall crontab at systemctl service
		launchctl sudo su doas env nohup setsid exec eval echo printf base64 xxd openssl gpg tar
		zip unzip gzip gunzip xz 7z find xargs grep sed awk sort uniq cut tr wc ls stat id whoami
		hostname uname ps netstat ss ip ifconfig iptables ufw git docker kubectl podman helm aws
		gcloud az apt apt-get yum dnf apk brew pip pip3 npm npx yarn pnpm gem cargo go make
		useradd usermod userdel passwd chpasswd visudo reboot shutdown halt poweroff history
		osascript powershell pwsh cmd certutil bitsadmin regsvr32 mshta rundll32 nslookup dig
		host ping traceroute nmap sqlite3 mysql psql mongo redis-cli ssh-keygen ssh-add
		security keychain gh`) {
		m[p] = true
	}
	return m
}()

func lastSegment(s string) string {
	if i := strings.LastIndexAny(s, ".:>"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// callArg is one argument of a call: a string (concatenations of
// literals and other operands: dyn), a list of them, or something else.
type callArg struct {
	str      bool
	text     string
	dyn      bool
	list     []Word
	from, to int // token range
}

// callArgs splits the tokens from j into arguments, up to the closing
// parenthesis (paren) or the end of the statement.
func callArgs(toks []token, j int, paren bool) []callArg {
	var out []callArg
	for j < len(toks) && len(out) < 64 {
		a, next, end := oneArg(toks, j, paren)
		out = append(out, a)
		j = next
		if end {
			break
		}
	}
	return out
}

// oneArg reads one argument starting at toks[j]; end says the call ended.
func oneArg(toks []token, j int, paren bool) (a callArg, next int, end bool) {
	a.from = j
	depth := 0
	var text strings.Builder
	hasStr, other := false, false
	if j < len(toks) && toks[j].text == "[" {
		list, k, ok := listLiteral(toks, j)
		if ok {
			a.list = list
			j = k
		}
	}
	for ; j < len(toks); j++ {
		t := toks[j]
		if depth == 0 {
			switch t.text {
			case ",":
				a.to = j
				a.str, a.text, a.dyn = hasStr, text.String(), other
				return a, j + 1, false
			case ")", ";", "]", "}":
				a.to = j
				a.str, a.text, a.dyn = hasStr, text.String(), other
				return a, j + 1, true
			case "\n":
				if !paren {
					a.to = j
					a.str, a.text, a.dyn = hasStr, text.String(), other
					return a, j + 1, true
				}
			}
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
		switch {
		case a.list != nil:
		case t.kind == tStr && depth == 0:
			hasStr = true
			text.WriteString(t.text)
			if t.dyn {
				other = true
			}
		case t.text == "+" || t.text == "." || t.text == "&" || t.text == "<<" || t.kind == tSpace:
		case t.kind == tStr:
			other = true
		default:
			if hasStr && !other && depth >= 0 {
				text.WriteString(dynPlaceholder)
			}
			other = true
		}
	}
	a.to = j
	a.str, a.text, a.dyn = hasStr, text.String(), other
	return a, j, true
}

// listLiteral reads ["a", "b", x] from toks[j] ("[" or "("): strings
// become words, other elements Dynamic words.
func listLiteral(toks []token, j int) ([]Word, int, bool) {
	closeTok := "]"
	if toks[j].text == "(" {
		closeTok = ")"
	}
	var out []Word
	cur := Word{}
	has := false
	depth := 0
	for k := j + 1; k < len(toks); k++ {
		t := toks[k]
		switch {
		case depth == 0 && (t.text == "," || t.text == closeTok):
			if has {
				out = append(out, cur)
			}
			cur, has = Word{}, false
			if t.text == closeTok {
				return out, k + 1, true
			}
		case t.text == "(" || t.text == "[" || t.text == "{":
			depth++
			cur.Dynamic, has = true, true
		case t.text == ")" || t.text == "]" || t.text == "}":
			depth--
			if depth < 0 {
				return nil, j, false
			}
		case t.kind == tSpace || t.text == "\n" || t.text == "+":
		case t.kind == tStr && depth == 0:
			cur.Text += t.text
			cur.Dynamic = cur.Dynamic || t.dyn
			has = true
		default:
			cur.Dynamic, has = true, true
		}
	}
	return nil, j, false
}
