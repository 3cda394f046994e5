package shellx

import (
	"strings"
)

// maxPeel caps how many wrappers (sudo, env, timeout...) are peeled off
// one command.
const maxPeel = 16

// payloads lists what command i runs beyond itself: the payloads of
// shells, eval and the wrappers around them, the commands find -exec and
// ssh run, data fed into a shell or an interpreter, interpreter code.
func (p *parser) payloads(i int, c *ctx) {
	hasPipe := p.hasPipe
	p.hasPipe = false
	defer func() { p.hasPipe = hasPipe }()

	cmd := p.a.Commands[i]
	piped := staticOut{}
	if cmd.PipeIn >= 0 && cmd.PipeIn < len(p.out) {
		piped = p.out[cmd.PipeIn]
	}
	in := p.stdinOf(piped, cmd.Redirects)
	fromPipe := in.known && piped.known && in.text == piped.text
	if out := p.produce(cmd.Args, in); out.known {
		p.out[i] = out
	}
	for _, w := range cmd.Args {
		p.encodedWord(w)
	}
	for _, a := range cmd.Assigns {
		p.encodedWord(a.Value)
	}
	for _, r := range cmd.Redirects {
		if (r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<") && !r.Target.Dynamic && len(r.Target.Text) <= 2*maxStatic {
			// Here-documents hold base64 over several lines.
			p.encodedWord(Word{Text: strings.Join(strings.Fields(r.Target.Text), "")})
		}
	}
	p.exec(cmd, cmd.Args, c, input{out: in, pipe: fromPipe}, 0)
}

// input is what a command reads on stdin, when known.
type input struct {
	out  staticOut
	pipe bool // it comes from a pipe (else a here-document or here-string)
}

func (p *parser) encodedWord(w Word) {
	if !w.Dynamic && len(w.Text) >= minEncoded {
		p.encoded(w.Text)
	}
}

// exec lists what argv (of cmd) runs.
func (p *parser) exec(cmd Command, args []Word, c *ctx, in input, peeled int) {
	if len(args) == 0 || args[0].Dynamic || peeled > maxPeel || p.stop {
		return
	}
	// A new process started here sees the exported variables and the
	// command's own NAME=value prefixes.
	env := p.env
	p.env = cmd.Assigns
	defer func() { p.env = env }()
	name := base(args[0].Text)
	switch {
	case isShell(name):
		p.shellCmd(name, args, c, in)
	case name == "eval":
		text, chain, _ := p.resolveAll(args[1:])
		p.payload(text, c, joinVia(chain, "eval"), false)
	case name == "source" || name == ".":
		if len(args) > 1 {
			if text, chain, static := p.resolve(args[1]); static && args[1].Dynamic {
				p.payload(text, c, joinVia(chain, "source"), false)
			}
		}
	case name == "busybox":
		p.exec(cmd, args[1:], c, in, peeled+1)
	case name == "su" || name == "runuser":
		if text, ok := optionValue(args[1:], "-c", "--command"); ok {
			p.payload(text, c, name+" -c", true)
		} else if name == "runuser" {
			if inner := afterDashDash(args); inner != nil {
				p.exec(cmd, inner, c, in, peeled+1)
			}
		}
	case name == "script":
		if text, ok := optionValue(args[1:], "-c", "--command"); ok {
			p.payload(text, c, "script -c", true)
		}
	case name == "flock":
		if text, ok := optionValue(args[1:], "-c", "--command"); ok {
			p.payload(text, c, "flock -c", true)
		} else if inner := skipOptions(args[1:], "wEo", 1); inner != nil {
			p.exec(cmd, inner, c, in, peeled+1)
		}
	case name == "watch":
		rest := skipOptions(args[1:], "nqd", 0)
		if len(rest) > 0 {
			if hasFlag(args, "-x") || hasFlag(args, "--exec") {
				p.exec(cmd, rest, c, in, peeled+1)
			} else {
				text, _, _ := p.resolveAll(rest)
				p.payload(text, c, "watch", true)
			}
		}
	case name == "parallel":
		var cmdArgs []Word
		for _, a := range args[1:] {
			if a.Text == ":::" || a.Text == "::::" {
				break
			}
			cmdArgs = append(cmdArgs, a)
		}
		if rest := skipOptions(cmdArgs, "jSIdaE", 0); len(rest) > 0 {
			text, _, _ := p.resolveAll(rest)
			p.payload(text, c, "parallel", true)
		}
	case name == "xargs":
		if inner := skipOptions(args[1:], "aEdILnPsR", 0); inner != nil {
			p.exec(cmd, inner, c, input{}, peeled+1)
		}
	case name == "find":
		p.find(cmd, args, c, peeled)
	case name == "ssh":
		p.ssh(args, c)
	case name == "docker" || name == "podman" || name == "nerdctl" || name == "kubectl" || name == "oc":
		p.container(cmd, name, args, c, peeled)
	case name == "alias":
		for _, a := range args[1:] {
			if k := strings.IndexByte(a.Text, '='); k > 0 {
				p.payload(a.Text[k+1:], c, "alias", false)
			}
		}
	case name == "trap":
		if len(args) > 2 && !strings.HasPrefix(args[1].Text, "-") {
			p.payload(args[1].Text, c, "trap", false)
		}
	case isInterpreter(name) != "":
		p.interpreter(isInterpreter(name), args, c, in)
	case (name == "sbatch" || name == "salloc") && wrapped(args) != "":
		// rules 22: sbatch --wrap 'LINE' runs LINE on the cluster's nodes
		// as a batch job, a shell of its own
		p.payload(wrapped(args), c, name+" --wrap", true)
	case (name == "kas" || name == "kas-container") && kasShell(args) != "":
		// rules 19: kas shell CONFIG -c 'LINE' runs LINE in the build
		// environment kas sets up, a shell of its own
		p.payload(kasShell(args), c, "kas shell -c", true)
	default:
		if inner := peel(name, args); inner != nil {
			p.exec(cmd, inner, c, in, peeled+1)
		}
	}
}

// resolveAll joins words with spaces, each resolved (see resolve).
func (p *parser) resolveAll(ws []Word) (text, chain string, static bool) {
	static = true
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		t, ch, ok := p.resolve(w)
		parts = append(parts, t)
		static = static && ok
		if ch != "" {
			chain = ch
		}
	}
	return strings.Join(parts, " "), chain, static
}

// payload parses text as shell one payload deeper, Via via. A fresh
// process (sh -c, ssh) starts with no variables; eval, alias and trap
// run in the line's own shell and see its variables.
func (p *parser) payload(text string, c *ctx, via string, fresh bool) {
	in := *c
	in.via = joinVia(c.via, via)
	in.depth = c.depth + 1
	in.dyn = false
	switch {
	case fresh && c.remote:
		in.sc = newScope() // another machine or container: none of ours
		in.remote = false
	case fresh:
		if !p.spend(len(c.sc.exported) + len(p.env)) {
			return
		}
		in.sc = c.sc.child(p.env)
	}
	p.shell(text, &in, via)
}

// ShellArgs reads a shell's arguments (without the program's name) as
// sh, bash and their kin do: whether -c is given, whether the script is
// standard input (-s, or "-"), the files --rcfile and --init-file name,
// and the operands after the options (the -c string first, else the
// script and its arguments). -o and -O (also in a group: -eo pipefail)
// take a value. The one reading of a shell's options: the command model
// uses it too.
func ShellArgs(args []Word) (hasC, stdin bool, rcfiles, rest []Word) {
	i := 0
	for i < len(args) {
		t := args[i].Text
		if t == "--" || t == "-" {
			stdin = stdin || t == "-"
			i++
			break
		}
		if t == "--rcfile" || t == "--init-file" {
			if i+1 < len(args) {
				rcfiles = append(rcfiles, args[i+1])
			}
			i += 2
			continue
		}
		if strings.HasPrefix(t, "--") {
			i++
			continue
		}
		if len(t) > 1 && (t[0] == '-' || t[0] == '+') {
			for _, ch := range t[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
			i++
			continue
		}
		break
	}
	return hasC, stdin, rcfiles, args[min(i, len(args)):]
}

// shellCmd lists a shell's payload: its -c string, the script it reads
// on stdin when that is known (here-document, here-string, a pipe from a
// known producer), or a process substitution it runs as its script.
func (p *parser) shellCmd(name string, args []Word, c *ctx, in input) {
	hasC, stdin, _, rest := ShellArgs(args[1:])
	switch {
	case hasC:
		if len(rest) > 0 {
			text, chain, _ := p.resolve(rest[0])
			p.payload(text, c, joinVia(chain, name+" -c"), true)
		}
	case len(rest) == 0 || stdin:
		if in.out.known {
			via := "sh <<"
			if in.pipe {
				via = "| sh"
			}
			p.payload(in.out.text, c, joinVia(in.out.chain, via), true)
		}
	default:
		// A script file: known only when it is a process substitution
		// with a known output (bash <(echo ...)).
		if rest[0].Dynamic {
			if text, chain, static := p.resolve(rest[0]); static {
				p.payload(text, c, joinVia(chain, "sh <()"), true)
			}
		}
	}
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "rbash", "ksh93", "bash5", "lksh", "oksh":
		return true
	}
	return false
}

// optionValue finds the value of a short option (-c CMD, -qc CMD) or a
// long one (--command CMD, --command=CMD).
func optionValue(args []Word, short, long string) (string, bool) {
	letter := short[1]
	for i, a := range args {
		t := a.Text
		if t == "--" {
			return "", false
		}
		if t == long && i+1 < len(args) {
			return args[i+1].Text, true
		}
		if strings.HasPrefix(t, long+"=") {
			return t[len(long)+1:], true
		}
		if len(t) > 1 && t[0] == '-' && t[1] != '-' {
			if k := strings.IndexByte(t[1:], letter); k >= 0 {
				if k+2 < len(t) {
					return t[k+2:], true
				}
				if i+1 < len(args) {
					return args[i+1].Text, true
				}
			}
		}
	}
	return "", false
}

// skipOptions returns the words after the leading options, where the
// short options in withArg take a value, and then skips operands more
// operands (flock FILE). nil when nothing is left.
func skipOptions(args []Word, withArg string, operands int) []Word {
	i := 0
	for i < len(args) {
		t := args[i].Text
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		if strings.HasPrefix(t, "--") {
			if !strings.Contains(t, "=") && longTakesArg(t) {
				i++
			}
			i++
			continue
		}
		if k := strings.IndexAny(t[1:], withArg); k >= 0 && k == len(t)-2 {
			i++ // -n 5: the value is the next word
		}
		i++
	}
	i += operands
	if i >= len(args) {
		return nil
	}
	return args[i:]
}

// longTakesArg says a long option of a wrapper takes the next word.
func longTakesArg(t string) bool {
	switch t {
	case "--user", "--group", "--chdir", "--prompt", "--role", "--type", "--other-user",
		"--close-from", "--host", "--command-timeout", "--chroot", "--signal", "--kill-after",
		"--adjustment", "--unset", "--split-string", "--format", "--output", "--interval",
		"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace",
		"--eof", "--max-chars", "--timeout", "--conflict-exit-code", "--input", "--error",
		"--classdata", "--class", "--userspec", "--groups", "--cpu-list", "--jobs", "--sshlogin":
		return true
	}
	return false
}

func afterDashDash(args []Word) []Word {
	for i, a := range args {
		if a.Text == "--" && i+1 < len(args) {
			return args[i+1:]
		}
	}
	return nil
}

// wrapped returns the line of sbatch --wrap LINE (or --wrap=LINE), or "".
func wrapped(args []Word) string {
	for i := 1; i < len(args); i++ {
		switch t := args[i].Text; {
		case t == "--wrap" && i+1 < len(args):
			return args[i+1].Text
		case strings.HasPrefix(t, "--wrap="):
			return strings.TrimPrefix(t, "--wrap=")
		}
	}
	return ""
}

// kasShell returns the line of kas shell … -c LINE (or --command), or "".
func kasShell(args []Word) string {
	shell := false
	for i := 1; i < len(args); i++ {
		switch t := args[i].Text; {
		case t == "shell":
			shell = true
		case shell && (t == "-c" || t == "--command") && i+1 < len(args):
			return args[i+1].Text
		case shell && strings.HasPrefix(t, "--command="):
			return strings.TrimPrefix(t, "--command=")
		}
	}
	return ""
}

// peel returns the command a wrapper runs (sudo rm -> rm), or nil.
func peel(name string, args []Word) []Word {
	rest := args[1:]
	switch name {
	case "nohup", "setsid", "unbuffer", "caffeinate", "catchsegv", "builtin", "noglob", "nocorrect":
		return skipOptions(rest, "", 0)
	case "timeout":
		return skipOptions(rest, "sk", 1)
	case "srun", "mpirun", "mpiexec", "aprun", "jsrun", "prun":
		// rules 22: a cluster's or MPI's launcher runs its program on nodes
		return skipOptions(rest, "ACcDdeiJLMmNnopqrStTwxHfa", 0)
	case "nice":
		return skipOptions(rest, "n", 0)
	case "sudo":
		if hasFlag(rest, "-e") || hasFlag(rest, "--edit") || hasFlag(rest, "-l") || hasFlag(rest, "-v") {
			return nil
		}
		return skipOptions(rest, "ugCDhprtUTR", 0)
	case "doas":
		return skipOptions(rest, "uC", 0)
	case "exec":
		return skipOptions(rest, "a", 0)
	case "command":
		if hasFlag(rest, "-v") || hasFlag(rest, "-V") {
			return nil
		}
		return skipOptions(rest, "", 0)
	case "stdbuf":
		return skipOptions(rest, "ioe", 0)
	case "time":
		return skipOptions(rest, "fo", 0)
	case "ionice":
		if hasFlag(rest, "-p") || hasFlag(rest, "-P") || hasFlag(rest, "-u") {
			return nil
		}
		return skipOptions(rest, "cn", 0)
	case "chroot":
		return skipOptions(rest, "", 1)
	case "taskset":
		if hasFlag(rest, "-p") {
			return nil
		}
		if hasFlag(rest, "-c") || hasFlag(rest, "--cpu-list") {
			return skipOptions(rest, "c", 0)
		}
		return skipOptions(rest, "", 1)
	case "env":
		return peelEnv(rest)
	case "uv", "poetry", "pipenv", "pdm", "rye", "pixi", "hatch", "conda", "mamba", "micromamba", "bundle":
		return peelRunner(name, rest)
	}
	return nil
}

// runnerValued are the options of a project runner's run verb that take
// the next word (uv run --with rich python -c …).
var runnerValued = map[string]bool{
	"--with": true, "--with-editable": true, "--with-requirements": true, "--python": true, "-p": true,
	"--package": true, "--directory": true, "--project": true, "--group": true, "--only-group": true,
	"--no-group": true, "--extra": true, "--env-file": true, "--index": true, "--default-index": true,
	"--index-url": true, "-i": true, "--extra-index-url": true, "--find-links": true, "-f": true,
	"-C": true, "-P": true, "-e": true, "--environment": true, "--manifest-path": true, "-n": true,
	"--name": true, "--prefix": true, "--cwd": true, "--gemfile": true, "--pyproject": true, "--config-file": true,
}

// peelRunner returns the program a project runner runs in the project's
// environment (uv run python -c …, poetry run sh -c …, bundle exec ruby
// -e …): the words after its verb (run, or exec for bundle) and the
// verb's options; nil when the line runs nothing (uv sync).
func peelRunner(name string, rest []Word) []Word {
	verb := "run"
	if name == "bundle" {
		verb = "exec"
	}
	i := 0
	for i < len(rest) && strings.HasPrefix(rest[i].Text, "-") {
		i++ // global options (uv --quiet run …)
	}
	if i >= len(rest) || rest[i].Text != verb {
		return nil
	}
	for i++; i < len(rest); i++ {
		t := rest[i].Text
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		if runnerValued[t] {
			i++
		}
	}
	return nonEmpty(rest[i:])
}

// peelEnv skips env's options and NAME=value words; -S splits its string
// into words (simply, on whitespace).
func peelEnv(rest []Word) []Word {
	for i := 0; i < len(rest); i++ {
		t := rest[i].Text
		switch {
		case t == "--":
			return nonEmpty(rest[i+1:])
		case t == "-S" || t == "--split-string":
			if i+1 < len(rest) {
				return append(splitWords(rest[i+1]), rest[i+2:]...)
			}
			return nil
		case strings.HasPrefix(t, "-S"):
			return append(splitWords(Word{Text: t[2:], Dynamic: rest[i].Dynamic}), rest[i+1:]...)
		case strings.HasPrefix(t, "--split-string="):
			return append(splitWords(Word{Text: t[len("--split-string="):], Dynamic: rest[i].Dynamic}), rest[i+1:]...)
		case t == "-u" || t == "-C" || t == "--unset" || t == "--chdir":
			i++
		case strings.HasPrefix(t, "-") && len(t) > 1:
		case strings.Contains(t, "=") && !strings.HasPrefix(t, "="):
		default:
			return rest[i:]
		}
	}
	return nil
}

func nonEmpty(ws []Word) []Word {
	if len(ws) == 0 {
		return nil
	}
	return ws
}

func splitWords(w Word) []Word {
	var out []Word
	for _, f := range strings.Fields(w.Text) {
		out = append(out, Word{Text: f, Dynamic: w.Dynamic})
	}
	return out
}

// find lists the commands of find's -exec, -execdir, -ok and -okdir
// actions, Via "find -exec", and what they run.
func (p *parser) find(cmd Command, args []Word, c *ctx, peeled int) {
	for i := 1; i < len(args); i++ {
		switch args[i].Text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j].Text != ";" && args[j].Text != "+" {
			j++
		}
		inner := args[i+1 : j]
		i = j
		if len(inner) == 0 {
			continue
		}
		in := c.with("find -exec")
		sub := Command{Args: append([]Word(nil), inner...), PipeIn: -1, Via: in.via, Depth: c.depth, Line: cmd.Line}
		if p.add(sub) < 0 {
			return
		}
		p.exec(sub, inner, in, input{}, peeled+1)
	}
}

// ssh lists the remote command, Via "ssh HOST": the remote shell parses
// the operands after the host joined with spaces.
func (p *parser) ssh(args []Word, c *ctx) {
	rest := skipOptions(args[1:], "BbcDEeFIiJLlmOopQRSWw", 0)
	if len(rest) < 2 {
		return
	}
	text, chain, _ := p.resolveAll(rest[1:])
	in := *c
	in.remote = true
	p.payload(text, &in, joinVia(chain, "ssh "+rest[0].Text), true)
}

// container lists the shell payload of docker|podman|kubectl exec|run:
// the command after `--` (kubectl), or from the first shell word on.
func (p *parser) container(cmd Command, name string, args []Word, c *ctx, peeled int) {
	if len(args) < 2 {
		return
	}
	label := name
	if name == "podman" || name == "nerdctl" {
		label = "docker"
	}
	in := c.with(label)
	in.remote = true
	if inner := afterDashDash(args); inner != nil && (name == "kubectl" || name == "oc") {
		p.exec(cmd, inner, in, input{}, peeled+1)
		return
	}
	for i := 2; i < len(args); i++ {
		if !args[i].Dynamic && isShell(base(args[i].Text)) {
			p.exec(cmd, args[i:], in, input{}, peeled+1)
			return
		}
	}
}
