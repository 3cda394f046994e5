package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// An unwrapper reads a wrapper's arguments and returns the argv of the
// program it runs (nil when it runs none), and whether the wrapper is
// worth a Run of its own (privilege wrappers are; harmless ones are named
// only in the inner Run's Via).
type unwrapper func(x *call, args []shellx.Word) (inner []shellx.Word, own bool)

var wrappers map[string]unwrapper

func init() {
	wrappers = map[string]unwrapper{
		"sudo":             unwrapSudo,
		"doas":             privileged(posixSpec("-u -C")),
		"pkexec":           privileged(posixSpec("--user")),
		"su":               unwrapSu,
		"runuser":          unwrapSu,
		"chroot":           unwrapChroot,
		"env":              unwrapEnv,
		"nice":             harmless(posixSpec("-n --adjustment")),
		"nohup":            harmless(posixSpec("")),
		"busybox":          harmless(posixSpec("")), // busybox APPLET ARGS runs the applet
		"toybox":           harmless(posixSpec("")),
		"builtin":          harmless(posixSpec("")),
		"setsid":           harmless(posixSpec("")),
		"unbuffer":         harmless(posixSpec("")),
		"caffeinate":       harmless(posixSpec("-t -w")),
		"catchsegv":        harmless(posixSpec("")),
		"dbus-run-session": harmless(posixSpec("--config-file --dbus-daemon")),
		"xvfb-run":         harmless(posixSpec("-n -s -f -e -p --server-num --server-args --auth-file --error-file")),
		"proxychains":      harmless(posixSpec("-f")),
		"proxychains4":     harmless(posixSpec("-f")),
		"torsocks":         harmless(posixSpec("-u -p -a -P")),
		"exec":             harmless(posixSpec("-a")),
		"stdbuf":           harmless(posixSpec("-i -o -e --input --output --error")),
		"ionice":           harmless(posixSpec("-c -n -p -P -u --class --classdata")),
		"command":          unwrapCommand,
		"timeout":          unwrapSkipping(posixSpec("-s -k --signal --kill-after"), 1),
		"chrt":             unwrapSkipping(posixSpec("-T -P -D"), 1),
		"taskset":          unwrapSkipping(posixSpec(""), 1),
		"time":             unwrapTime,
		"strace":           unwrapTrace,
		"ltrace":           unwrapTrace,
		"watch":            unwrapWatch,
		"flock":            unwrapFlock,
		"xargs":            unwrapXargs,
		"nsenter":          privileged(posixSpec("-t --target -m -u -i -n -p -U -C -T -r -w -S -G --mount --uts --ipc --net --pid --user --cgroup --time --root --wd --setuid --setgid")),
		"unshare":          privileged(posixSpec("--map-user --map-group --propagation --setgroups -S -G -R -w --setuid --setgid --root --wd")),
		"setpriv":          privileged(posixSpec("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --selinux-label --apparmor-profile")),
		"capsh":            unwrapCapsh,
		"systemd-run":      unwrapSystemdRun,
		"sg":               unwrapSg,
		// Rules 12 (k27h): development environments that run a command
		// in the workspace's declared toolchain: the command is judged.
		"nix":    unwrapEnvRunner(map[string]bool{"develop": true}, []string{"-c", "--command"}),
		"devenv": unwrapEnvRunner(map[string]bool{"shell": true}, nil),
		"direnv": unwrapDirenvExec,
		"mise":   unwrapEnvRunner(map[string]bool{"exec": true, "x": true}, []string{"--"}),
		"rtx":    unwrapEnvRunner(map[string]bool{"exec": true, "x": true}, []string{"--"}),
		"asdf":   unwrapEnvRunner(map[string]bool{"exec": true}, nil),
		// Rules 13: batch schedulers run a command later, elsewhere
		// (sbatch --wrap CMD: a shell line; srun and salloc: a program
		// and its arguments): the command is judged.
		"sbatch": unwrapSbatch,
		"srun":   unwrapSlurm,
		"salloc": unwrapSlurm,
	}
}

// slurmSpec are the options of Slurm's sbatch, srun and salloc that take
// a value.
var slurmSpec = posixSpec("-A --account -p --partition -N --nodes -n --ntasks -c --cpus-per-task -t --time -J --job-name " +
	"-o --output -e --error -i --input -D --chdir -w --nodelist -x --exclude -G --gpus --gres --mem --mem-per-cpu --mem-per-gpu " +
	"-q --qos -C --constraint -b --begin -d --dependency -a --array --export --mail-type --mail-user --reservation " +
	"--ntasks-per-node --signal --wrap --container --mpi --cpu-bind -m --distribution --comment --licenses -L -M --clusters " +
	"--time-min --deadline --nice --priority --tmp --wckey --gpus-per-node --gpus-per-task --cpus-per-gpu")

// unwrapSbatch reads sbatch: --wrap's shell line is judged as a line the
// job runs; a job script named as an operand was judged when it was
// written (and is read here).
func unwrapSbatch(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := slurmSpec.parse(args)
	if c, ok := val(opts, "--wrap"); ok {
		x.payload(c, "sbatch --wrap")
	}
	if len(ops) > 0 {
		x.ref(kRead, ops[0], false)
	}
	return nil, true
}

// unwrapSlurm reads srun and salloc: the program after the options runs.
func unwrapSlurm(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	_, ops := slurmSpec.parse(args)
	return ops, true
}

// unwrapEnvRunner reads a development environment's run of a command in
// the workspace's own environment (nix develop -c CMD, devenv shell CMD,
// mise exec -- CMD, asdf exec CMD): with one of verbs first, the command
// after the first of marks (or, with no marks, after the verb) is the
// program run, provided nothing between names an environment from
// elsewhere (nix develop github:o/r -c …, mise exec ubi:o/t -- …: those
// stay the program itself, judged as such).
func unwrapEnvRunner(verbs map[string]bool, marks []string) unwrapper {
	return func(x *call, args []shellx.Word) ([]shellx.Word, bool) {
		if len(args) < 2 || !verbs[args[0].Text] {
			return nil, false
		}
		if len(marks) == 0 {
			return args[1:], false
		}
		for k, w := range args[1:] {
			for _, m := range marks {
				if w.Text == m && k+2 < len(args) {
					return args[k+2:], false
				}
			}
			if w.Dynamic || !strings.HasPrefix(w.Text, "-") && w.Text != "." && !strings.HasPrefix(w.Text, ".#") && !strings.HasPrefix(w.Text, "./") {
				return nil, false // an environment named from elsewhere, or computed
			}
		}
		return nil, false
	}
}

// unwrapDirenvExec reads direnv exec DIR CMD: the command run with the
// environment DIR's .envrc gives.
func unwrapDirenvExec(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	if len(args) < 3 || args[0].Text != "exec" {
		return nil, false
	}
	return args[2:], false
}

func harmless(sp *spec) unwrapper {
	return func(x *call, args []shellx.Word) ([]shellx.Word, bool) {
		_, ops := sp.parse(args)
		return ops, false
	}
}

func privileged(sp *spec) unwrapper {
	return func(x *call, args []shellx.Word) ([]shellx.Word, bool) {
		_, ops := sp.parse(args)
		return skipAssigns(ops), true
	}
}

func unwrapSkipping(sp *spec, n int) unwrapper {
	return func(x *call, args []shellx.Word) ([]shellx.Word, bool) {
		_, ops := sp.parse(args)
		if len(ops) <= n {
			return nil, false
		}
		return ops[n:], false
	}
}

// skipAssigns drops leading NAME=value words (sudo VAR=x cmd, env).
func skipAssigns(ops []shellx.Word) []shellx.Word {
	for len(ops) > 0 && isAssign(ops[0].Text) {
		ops = ops[1:]
	}
	return ops
}

func isAssign(t string) bool {
	k := strings.IndexByte(t, '=')
	if k <= 0 {
		return false
	}
	for i := 0; i < k; i++ {
		c := t[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var sudoSpec = posixSpec("-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt --close-from --chdir --role --type --other-user --command-timeout")

func unwrapSudo(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := sudoSpec.parse(args)
	if d, ok := val(opts, "-D", "--chdir"); ok {
		x.cd(d)
	}
	if has(opts, "-e", "--edit") {
		x.name = "sudoedit"
		for _, w := range ops {
			x.ref(kRead, w, false)
			x.ref(kWrite, w, false)
		}
		return nil, true
	}
	return skipAssigns(ops), true
}

var suSpec = newSpec("-c -s -g -G -w -u -l --command --shell --group --supp-group --whitelist-environment --user --login")

// unwrapSu reads su [-] [user] [-c CMD] and runuser [-u user] [cmd].
func unwrapSu(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := suSpec.parse(args)
	if c, ok := val(opts, "-c", "--command"); ok {
		x.payload(c, x.name+" -c")
		return nil, true
	}
	if has(opts, "-u", "--user") {
		return ops, true
	}
	return nil, true
}

func unwrapChroot(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	_, ops := cachedSpec(1, "--userspec --groups").parse(args)
	if len(ops) == 0 {
		return nil, true
	}
	// The inner command's paths are under the new root; they are judged
	// as written, which names the host's paths of the same names.
	x.ref(kRead, ops[0], false)
	return ops[1:], true
}

var envSpec = posixSpec("-u -C -S --unset --chdir --split-string -P")

func unwrapEnv(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := envSpec.parse(args)
	if d, ok := val(opts, "-C", "--chdir"); ok {
		x.cd(d)
	}
	if s, ok := val(opts, "-S", "--split-string"); ok {
		x.payload(s, "env -S")
		return nil, false
	}
	return skipAssigns(ops), false
}

func unwrapCommand(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := cachedSpec(1, "").parse(args)
	if has(opts, "-v", "-V") {
		return nil, false
	}
	return ops, false
}

func unwrapTime(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := cachedSpec(1, "-f -o --format --output").parse(args)
	for _, w := range vals(opts, "-o", "--output") {
		x.name = "time"
		x.ref(kWrite, w, false)
	}
	return ops, false
}

func unwrapTrace(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := cachedSpec(1, "-o -e -p -s -a -b -E -I -O -P -S -u -X -U -A -l -L -n -F").parse(args)
	for _, w := range vals(opts, "-o") {
		x.name = "strace"
		x.ref(kWrite, w, false)
	}
	return ops, false
}

func unwrapWatch(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := cachedSpec(1, "-n -d --interval --differences -q --equexit -e -g").parse(args)
	if len(ops) == 1 && !has(opts, "-x", "--exec") && strings.ContainsAny(ops[0].Text, " ;|&") {
		// watch runs a single argument with sh -c.
		x.payload(ops[0], "watch")
		return nil, false
	}
	return ops, false
}

func unwrapFlock(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := cachedSpec(1, "-w -E --timeout --conflict-exit-code").parse(args)
	if c, ok := val(opts, "-c", "--command"); ok {
		x.payload(c, "flock")
		return nil, false
	}
	if len(ops) < 2 {
		return nil, false
	}
	if ops[1].Text == "-c" || ops[1].Text == "--command" {
		if len(ops) > 2 {
			x.payload(ops[2], "flock")
		}
		return nil, false
	}
	return ops[1:], false
}

var xargsSpec = posixSpec("-I -n -L -P -d -E -s -a --arg-file --max-args --max-lines --max-procs --delimiter --replace --eof --max-chars --process-slot-var")

// unwrapXargs reads xargs: the inner command's last arguments (or those
// holding the -I string) are what the producer of its input lists.
func unwrapXargs(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := xargsSpec.parse(args)
	if f, ok := val(opts, "-a", "--arg-file"); ok {
		x.name = "xargs"
		x.ref(kRead, f, false)
		x.input, x.inputKnown = nil, false
	} else if text, ok := hereInput(x.c); ok {
		// xargs ... <<< "a b": the items are the text's words.
		x.input, x.inputKnown = nil, true
		for _, f := range strings.Fields(text) {
			if p, ok := x.abs(f); ok {
				x.input = append(x.input, Ref{Path: p})
			}
		}
	} else {
		x.input, x.inputKnown = x.m.listed(x.c.PipeIn)
	}
	if len(ops) == 0 {
		ops = []shellx.Word{word("echo")}
	}
	if len(ops) > 0 && runsCode(path.Base(ops[0].Text)) {
		// A shell or interpreter given the items (sh -c 'cat {}'): its
		// payload is read apart, without them; whatever they name may be
		// read, so each is a read, and items not known are not understood.
		for _, r := range x.input {
			r.By = x.name
			x.add(kRead, r)
		}
		if !x.inputKnown {
			x.m.unknown("xargs hands items known only at run time to " + ops[0].Text)
		}
	}
	repl, ok := val(opts, "-I", "--replace")
	if !ok && has(opts, "-i") {
		repl, ok = word("{}"), true
	}
	inner := make([]shellx.Word, 0, len(ops)+1)
	if ok && repl.Text != "" {
		for _, w := range ops {
			inner = append(inner, replaced(w, repl.Text))
		}
		return inner, false
	}
	inner = append(append(inner, ops...), word(inputWord))
	return inner, false
}

// unwrapCapsh reads capsh [opts] -- ARGS: a shell with the given
// capabilities runs ARGS (capsh -- -c CMD).
func unwrapCapsh(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	for i, w := range args {
		if w.Text == "--" {
			return append([]shellx.Word{word("bash")}, args[i+1:]...), true
		}
	}
	return nil, true
}

// unwrapSg reads sg GROUP [-c] CMD.
func unwrapSg(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	if len(args) < 2 {
		return nil, true
	}
	if args[1].Text == "-c" && len(args) > 2 {
		x.payload(args[2], "sg -c")
		return nil, true
	}
	x.payload(args[1], "sg")
	return nil, true
}

var systemdRunSpec = posixSpec("-u --unit -p --property -M --machine -H --host --description --slice -E --setenv --working-directory -d --uid --gid --nice --on-active --on-boot --on-startup --on-unit-active --on-unit-inactive --on-calendar --timer-property --path-property --socket-property")

// unwrapSystemdRun reads systemd-run: the command runs as a service,
// outside any sandbox; with a timer (--on-*) it runs later, persistently.
func unwrapSystemdRun(x *call, args []shellx.Word) ([]shellx.Word, bool) {
	opts, ops := systemdRunSpec.parse(args)
	for _, o := range opts {
		if strings.HasPrefix(o.name, "--on-") {
			dir := "/etc/systemd/system"
			if has(opts, "--user") {
				dir = "~/.config/systemd/user"
			}
			x.name = "systemd-run"
			x.refPath(kWrite, dir, true)
			break
		}
	}
	return ops, true
}

// replaced is w with the string xargs -I or find -exec replace by their
// input: the input itself when w starts with it, else a pattern
// ("/backup/{}.bak" is "/backup/*.bak").
func replaced(w shellx.Word, repl string) shellx.Word {
	switch {
	case !strings.Contains(w.Text, repl):
		return w
	case strings.HasPrefix(w.Text, repl):
		return word(inputWord)
	}
	return shellx.Word{Text: strings.ReplaceAll(w.Text, repl, "*"), Dynamic: w.Dynamic, Glob: true}
}

// payload judges text as a shell line run by the current command (su -c,
// watch 'cmd', sudo sh -c when shellx did not list it), unless shellx
// already listed its commands.
func (x *call) payload(w shellx.Word, via string) {
	m := x.m
	if w.Dynamic {
		x.dynamicCode(w, via)
		return
	}
	full := joinVia(x.via, via)
	for j := x.i + 1; j < len(m.a.Commands) && j < x.i+8; j++ {
		if v := m.a.Commands[j].Via; v == full || strings.HasPrefix(v, full+" > ") || strings.HasSuffix(v, via) {
			return
		}
	}
	if m.depth+1 > shellx.MaxDepth {
		m.unknown("payloads nested deeper than " + itoa(shellx.MaxDepth) + " are not read")
		return
	}
	sub := shellx.Parse(w.Text) // a parser failure is sub.Err, judged by run
	for k := range sub.Commands {
		sub.Commands[k].Via = joinVia(full, sub.Commands[k].Via)
	}
	child := newModel(m.s, &sub, m.f, x.cwd, m.depth+1)
	child.run()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// hereInput is the text a here-string or here-document feeds c, if any.
func hereInput(c *shellx.Command) (string, bool) {
	for _, r := range c.Redirects {
		if (r.Op == "<<<" || r.Op == "<<" || r.Op == "<<-") && (r.Fd == "" || r.Fd == "0") && !r.Target.Dynamic {
			return r.Target.Text, true
		}
	}
	return "", false
}

// runsCode reports whether a program runs code it is given (shells and
// interpreters).
func runsCode(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "fish", "busybox", "python", "python2", "python3", "node", "perl", "ruby", "php", "deno", "bun":
		return true
	}
	return strings.HasPrefix(name, "python3.")
}
