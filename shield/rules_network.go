package shield

import (
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// metadataHosts are the cloud metadata endpoints by name and address:
// they hand out the machine's cloud credentials to whoever asks. Every
// spelling of an address counts (metadataHost), and so does all of
// 169.254.0.0/16, the link-local range they live in.
var metadataHosts = []string{"169.254.169.254", "metadata.google.internal", "metadata", "metadata.goog", "instance-data",
	"instance-data.ec2.internal", "metadata.azure.internal", "fd00:ec2::254", "100.100.100.200", "169.254.170.2"}

// wildcardDNS are public DNS services that resolve a name to the address
// written in it (169.254.169.254.nip.io, a9fea9fe.nip.io).
var wildcardDNS = []string{"nip.io", "sslip.io", "xip.io", "traefik.me", "localtest.me", "lvh.me", "nip.direct"}

// metadataHost reports whether host reaches a cloud metadata endpoint:
// one of hosts by name (with or without a trailing dot), an address in
// any spelling the resolver's inet_aton accepts (2852039166, 0xA9FEA9FE,
// 0251.0376.0251.0376, 169.254.43518), IPv4-mapped or NAT64 IPv6, any
// link-local IPv4 address, or a wildcard-DNS name embedding one. Never
// resolves a name.
func metadataHost(host string, hosts []string) bool {
	h := strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
	if h == "" {
		return false
	}
	if slices.Contains(hosts, h) {
		return true
	}
	if k := strings.IndexByte(h, '%'); k > 0 {
		h = h[:k] // an IPv6 zone
	}
	if metadataAddr(h, hosts) {
		return true
	}
	for _, w := range wildcardDNS {
		if !strings.HasSuffix(h, "."+w) {
			continue
		}
		labels := strings.Split(strings.TrimSuffix(h, "."+w), ".")
		if n := len(labels); n >= 4 && metadataAddr(strings.Join(labels[n-4:], "."), hosts) {
			return true
		}
		last := labels[len(labels)-1]
		if parts := strings.Split(last, "-"); len(parts) >= 4 && metadataAddr(strings.Join(parts[len(parts)-4:], "."), hosts) {
			return true
		}
		parts := strings.Split(last, "-")
		if p := parts[len(parts)-1]; len(p) == 8 && metadataAddr("0x"+p, hosts) {
			return true
		}
	}
	return false
}

// metadataAddr reports whether h, an address in any spelling, is a
// metadata endpoint's or link-local.
func metadataAddr(h string, hosts []string) bool {
	var a netip.Addr
	if v4, ok := inetAton(h); ok {
		a = netip.AddrFrom4(v4)
	} else if p, err := netip.ParseAddr(h); err == nil {
		a = p
	} else {
		return false
	}
	if a.Is6() {
		b := a.As16()
		nat64 := b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && [8]byte(b[4:12]) == [8]byte{}
		if a.Is4In6() || nat64 {
			a = netip.AddrFrom4([4]byte(b[12:]))
		}
	}
	if a.Is4() && a.IsLinkLocalUnicast() {
		return true
	}
	for _, m := range hosts {
		if p, err := netip.ParseAddr(m); err == nil && p == a {
			return true
		}
	}
	return false
}

// inetAton parses an IPv4 address as inet_aton(3) does: one to four
// parts, each decimal, octal (leading 0) or hex (0x), the last filling
// the bytes the others leave ("169.254.43518", "2852039166").
func inetAton(s string) ([4]byte, bool) {
	var out [4]byte
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return out, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" && base == 16 {
			digits = "0" // glibc accepts a bare "0x"
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil || p == "" {
			return out, false
		}
		vals[i] = v
	}
	n := len(vals)
	for i := 0; i < n-1; i++ {
		if vals[i] > 0xff {
			return out, false
		}
		out[i] = byte(vals[i])
	}
	last := vals[n-1]
	if rest := 4 - (n - 1); rest < 4 && last >= 1<<(8*rest) {
		return out, false
	}
	for i := 3; i >= n-1; i-- {
		out[i] = byte(last)
		last >>= 8
	}
	return out, true
}

// codeRunners are programs that run code they read: from a file argument,
// -c, or standard input.
var codeRunners = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "python", "python2", "python3",
	"perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "pwsh", "source", "."}

// pipeIntoShell is the shape of a download piped into an interpreter, a
// backstop for lines whose facts could not be listed in full (Unknown).
var pipeIntoShell = mustRx(`\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/\S*/)?(?:ba|z|da|k|mk|fi)?sh\b|\|\s*(?:/\S*/)?(?:python[0-9.]*|perl|ruby|node|php)\b`)

// hostAllowed reports whether the policy lets tools reach host.
func (s *Shield) hostAllowed(host string) bool {
	for _, g := range s.cfg.Policy.Network.AllowHosts {
		if ok, _ := path.Match(g, host); ok {
			return true
		}
	}
	return false
}

// localHost reports whether host is this machine's loopback ("localhost",
// 127.0.0.0/8, ::1). An unspecified address (0.0.0.0, ::) is not: a
// server bound to it listens on every interface.
func localHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// serves is `exfiltration:serve` and `network:serve`: a server listening
// beyond the loopback (0.0.0.0, ::, an interface's address) hands what it
// serves to anyone who can reach the machine. Serving home, /, a
// directory holding either, or credentials blocks; serving the workspace
// (or nothing named: nc -l) escalates. It reports whether q was judged.
func (s *Shield) serves(q *Request, j *judgement) bool {
	if q.Method != "LISTEN" || localHost(q.Host) {
		return false
	}
	where := "every interface"
	if a, err := netip.ParseAddr(q.Host); err != nil || !a.IsUnspecified() {
		where = q.Host
	}
	for _, p := range q.Files {
		if p == "/" || (s.cfg.Home != "" && within(s.cfg.Home, p)) || s.credential(&Ref{Path: p, Tree: true}) != "" {
			j.block("exfiltration:serve", "%s serves %s on %s: it holds the user's files or credentials", q.By, p, where)
			return true
		}
	}
	what := "a server"
	if len(q.Files) > 0 {
		what = q.Files[0]
	}
	j.escalate("network:serve", "%s serves %s on %s, beyond this machine's loopback", q.By, what, where)
	return true
}

// pipeToShell is `pipe-to-shell`: code fetched from the network and run
// (curl … | sh, bash <(curl …), sh -c "$(curl …)", a download then run
// in the same line). It runs whatever the server sends, now or later.
func (s *Shield) pipeToShell(a *Action, f *Facts, j *judgement) {
	for _, x := range f.Execs {
		if x.Remote {
			j.block("pipe-to-shell", "%s runs code %s fetches from the network: %s", x.Runner, x.From, quote(x.Line))
			return
		}
	}
	if len(f.Requests) == 0 {
		return
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if !slices.Contains(codeRunners, r.Name) || literalVia(r.Via) {
			continue
		}
		script, fromStdin := shellScript(r)
		switch {
		case fromStdin:
			j.block("pipe-to-shell", "%s runs code it reads from a pipe or a substitution, in a line that downloads (%s)", quote(r.Line), f.Requests[0].By)
			return
		case script != "":
			p := s.ResolvePath(script)
			for _, w := range f.Writes {
				if w.Path == p {
					j.block("pipe-to-shell", "%s runs %s, which the same line downloads", quote(r.Line), script)
					return
				}
			}
		}
	}
	if a.Command != "" && len(f.Unknown) > 0 && pipeIntoShell.MatchString(a.Command) {
		j.block("pipe-to-shell", "pipes what it downloads into an interpreter: %s", quote(a.Command))
	}
}

// shellScript returns the script file a shell run runs, or says it runs
// code from standard input, a process substitution or a computed -c.
func shellScript(r *Run) (script string, fromStdin bool) {
	args := r.Argv
	if len(args) > 0 {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-" || a == "/dev/stdin" || strings.HasPrefix(a, "/dev/fd/") || strings.HasPrefix(a, "<("):
			return "", true
		case i == 0 && a == "run" && (r.Name == "deno" || r.Name == "bun"):
			// deno run -, bun run -: the subcommand before the script
			// (rules 12, k27h).
			continue
		case infoOnly(r.Name, a):
			// python --version, node -v: prints and exits, reads nothing.
			return "", false
		case a == "-c" || a == "-e" || a == "--eval" || a == "-E":
			if i+1 < len(args) && (strings.Contains(args[i+1], "$(") || strings.Contains(args[i+1], "`")) {
				return "", true
			}
			return "", false
		case strings.HasPrefix(a, "-"):
			continue
		default:
			return a, false
		}
	}
	// No script and no -c: the program reads its code from stdin.
	return "", r.Name != "source" && r.Name != "."
}

// infoOnly reports whether flag makes the interpreter name print its
// version or help and exit without reading code (python --version,
// node -v). A shell's -v and -h are other things (verbose, hashall): only
// the long forms count for them.
func infoOnly(name, flag string) bool {
	switch flag {
	case "--version", "--help":
		return true
	case "-V":
		return strings.HasPrefix(name, "python") || name == "ruby" || name == "perl" || name == "php"
	case "-v":
		return name == "node" || name == "deno" || name == "bun" || name == "perl" || name == "php" || name == "ruby"
	}
	return false
}

// network is `exfiltration:*`, `network:*` and `credential-metadata`:
// what leaves the machine. A host on the policy's allow list, and this
// machine's own loopback, are trusted (but never with credentials, see
// credential-path). Elsewhere a plain GET or HEAD carrying nothing is a
// read, not exfiltration, and passes; a request carrying files blocks;
// one carrying data blocks when the line also reads files or computes
// what it sends, and escalates otherwise.
func (s *Shield) network(a *Action, f *Facts, j *judgement) {
	for i := range f.Requests {
		q := &f.Requests[i]
		host := q.Host
		if metadataHost(host, s.rules.hostsMeta) {
			j.block("credential-metadata", "%s reaches %s, the cloud metadata endpoint that hands out the machine's credentials", q.By, host)
			return
		}
		if s.serves(q, j) {
			if j.blocked() {
				return
			}
			continue
		}
		if host != "" && (s.hostAllowed(host) || localHost(host)) {
			continue
		}
		if q.By == "git" && (q.Method == "PUSH" || q.Data) {
			if host != "" && !forge(host) {
				// The line itself says where the code goes (a remote
				// added or set in it, a URL): a host off the list that is
				// not a code forge is exfiltration of the repository.
				j.block("exfiltration:git-push", "git sends the repository to %s, which is neither on the policy's list nor a code forge", host)
				return
			}
			if host == "" && onlyTopicPushes(f) {
				continue // a topic branch for review (rules_topicpush.go)
			}
			if host == "" && onlyDryRunPushes(f) {
				continue // git push --dry-run sends no commits (rules 12)
			}
			where := host
			if where == "" {
				where = "a remote"
			}
			j.escalate("network:git-push", "git sends commits to %s", where)
			continue
		}
		target := host
		if target == "" {
			target = "a host that cannot be known before it runs"
		} else {
			target += ", which the policy does not allow"
		}
		if len(q.Files) > 0 {
			if serviceClient(q.By) && host != "" {
				// A cloud client's upload to its own storage service
				// (aws s3 cp f s3://b/): whose bucket it is, a human
				// knows (rules 14; credentials sent still block:
				// credential-path).
				j.escalate("exfiltration:upload", "%s sends %s to %s: to a bucket Shield cannot tell is yours", q.By, q.Files[0], target)
				continue
			}
			if host != "" && intranetHost(host) && !slices.ContainsFunc(q.Files, func(p string) bool { return s.credential(&Ref{Path: p}) != "" }) {
				// rules 20: a file copied to a machine of the intranet (a
				// lab node, a host by a single-label or private name or
				// address): asked, not taken for exfiltration
				j.escalate("exfiltration:upload", "%s sends %s to %s, a machine of the intranet by its name: a human knows whose it is", q.By, s.relPath(q.Files[0]), host)
				continue
			}
			j.block("exfiltration:upload", "%s sends %s to %s", q.By, q.Files[0], target)
			return
		}
		if host == "" && dnsTool(q.By) && computed(f) {
			j.block("exfiltration:dns", "%s looks up a name computed at run time: data can leave in DNS queries", q.By)
			return
		}
		switch {
		case q.Data && serviceClient(q.By):
			// A service's own client (docker login, aws, gh) sends what
			// it sends to where it is configured to: asked about, not
			// judged as a covert channel.
			j.escalate("exfiltration:data", "%s sends data to %s", q.By, target)
		case q.Data && (computed(f) || readsData(f)):
			j.block("exfiltration:data", "%s sends data the line reads or computes to %s", q.By, target)
			return
		case q.Data && q.By == "ssh" && host != "" && s.remoteReads(a, f):
			// Rules 21: the command run there runs only what the policy
			// allows here (its rule "remote" allowed the line): a read of
			// another machine's logs or status, nothing of this one sent.
		case q.Data && q.By == "ssh" && host != "" && (internalName(host) || sshConfigIn(f, s.cfg.Workspace) || !sshForwards(f)):
			// Rules 17: a command run on another machine, written on the
			// line (nothing local read, computed or piped in): what it
			// does there is beyond the sandbox and Chronicle, and a human
			// answers; it is not data taken from here. Rules 20: on any
			// host (a company's jump host has a public name too) unless
			// the line forwards ports or tunnels to one; what the line
			// reads, computes or pipes in still blocks above.
			j.escalate("network:remote-exec", "ssh runs a command on %s: what it does there, opx cannot undo", host)
		case q.Data && q.Method == "" && host != "":
			j.block("exfiltration:data", "%s opens a raw connection to %s and sends data", q.By, target)
			return
		case q.Data:
			j.escalate("exfiltration:data", "%s sends data to %s", q.By, target)
		case q.By == "ssh" && !q.Data && slices.Contains(forges, host):
			// A forge's authentication test (ssh -T git@github.com; see
			// forgeAuthTest): the git account has no shell and nothing
			// of the line's is sent.
		case host == "" && q.Method != "":
			// A tool's configured endpoint (kubectl, git fetch): nothing
			// of the line's goes with it.
		case q.Method == "":
			j.escalate("network:raw", "%s opens a connection to %s", q.By, target)
		case (q.Method == "DNS" || q.Method == "ICMP") && plainName(host):
			// A name looked up or a host pinged, the name carrying no
			// data (rules 12, k27h): a read, as a GET of nothing is.
		case q.Method != "GET" && q.Method != "HEAD":
			j.escalate("network:method", "%s sends a %s request to %s", q.By, q.Method, target)
		}
	}
}

// forges are the public code forges: pushing there is how work is
// shared (and tier 0 asks first).
var forges = []string{"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "git.sr.ht", "dev.azure.com", "ssh.dev.azure.com", "vs-ssh.visualstudio.com", "gitee.com"}

func forge(host string) bool {
	for _, f := range forges {
		if host == f || strings.HasSuffix(host, "."+f) {
			return true
		}
	}
	return false
}

// serviceClient reports whether a program is the client of a service
// (registries, clouds, forges) rather than a general network tool.
func serviceClient(name string) bool {
	switch name {
	case "docker", "podman", "helm", "npm", "pnpm", "yarn", "pip", "pip3", "twine", "gh", "glab", "aws", "gcloud", "gsutil", "az", "kubectl", "terraform", "cargo", "gem", "poetry", "mvn", "gradle", "rclone",
		// rules 21: OpenShift's kubectl
		"oc":
		return true
	}
	return false
}

func dnsTool(name string) bool {
	switch name {
	case "dig", "nslookup", "host", "drill", "getent", "resolvectl", "ping", "ping6":
		return true
	}
	return false
}

// computed reports whether the line computes something at run time:
// a command or process substitution whose output it uses.
func computed(f *Facts) bool {
	for _, r := range f.Runs {
		if strings.Contains(r.Via, "$(") || strings.Contains(r.Via, "``") || strings.Contains(r.Via, "<(") {
			return true
		}
	}
	return false
}

// sshConfigIn reports whether ssh reads a configuration file of the
// workspace (ssh -F ops/ssh_config): the project names the hosts it
// reaches.
func sshConfigIn(f *Facts, ws string) bool {
	for _, r := range f.Reads {
		if r.By == "ssh" && ws != "" && within(r.Path, ws) && !r.Tree && !r.Glob && strings.Contains(path.Base(r.Path), "config") {
			return true
		}
	}
	return false
}

// readsData reports whether the action reads file content (more than a
// template): what it sends may be that content.
func readsData(f *Facts) bool {
	for _, r := range f.Reads {
		if r.By == "ssh" || r.By == "curl" && publicByName(path.Base(r.Path)) {
			// rules 17: ssh's own configuration and keys (-F, -i); a
			// certificate authority a client checks the server with
			// (curl --cacert root-ca.pem): not data sent
			continue
		}
		if !isTemplate(path.Base(r.Path)) {
			return true
		}
	}
	return false
}

// taskVerb is a request body's instruction to run something: a task
// handed to another agent or a job runner on the other end.
var taskVerb = mustRx(`(?i)\b(?:run|execute|exec)\s*:?\s+([^"\n]{1,400})`)

// agentTask is `network:agent-task`: a request body that tells its
// receiver (a local agent, a job runner) to run what Shield would block
// if the agent ran it itself: a request to this machine's loopback is
// trusted as a destination, not as a way round the rules.
func (s *Shield) agentTask(_ *Action, f *Facts, j *judgement) {
	if j.inner {
		return
	}
	for _, t := range f.Texts {
		if t.Source != "body" {
			continue
		}
		for _, m := range taskVerb.FindAllStringSubmatch(clip(t.Body, maxTextJudged), 16) {
			line := m[1]
			for _, sep := range []string{" and ", " then ", ". ", "; "} {
				if i := strings.Index(line, sep); i > 0 {
					line = line[:i]
				}
			}
			if v, ok, _ := s.judgeLine(line, nil); ok && v.Decision == Block && v.Rule != "shell:unknown" {
				j.block("network:agent-task", "the request body asks its receiver to run what Shield blocks: %s", v.Reason)
				return
			}
		}
	}
}

// intranetHost reports whether host is named or addressed as a machine of
// a private network: a single-label name (a lab node, an ssh alias the
// user's own configuration resolves), an intranet suffix (internalName),
// an RFC 1918 or unique-local address. Never loopback (localHost) or a
// public name.
func intranetHost(host string) bool {
	if host == "" || localHost(host) {
		return false
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ip.IsPrivate()
	}
	return !strings.Contains(host, ".") || internalName(host)
}

// sshForwards reports whether an ssh run of the facts forwards a port,
// a socket or a tunnel (-L, -R, -D, -w, -W, alone or in a group of
// flags: -fNR).
func sshForwards(f *Facts) bool {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "ssh" {
			continue
		}
		for _, a := range r.Argv[1:] {
			if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "LRDwW") {
				return true
			}
		}
	}
	return false
}
