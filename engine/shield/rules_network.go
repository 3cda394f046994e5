package shield

import (
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strings"
)

// metadataHosts are the cloud metadata endpoints: they hand out the
// machine's cloud credentials to whoever asks.
var metadataHosts = []string{"169.254.169.254", "metadata.google.internal", "metadata", "fd00:ec2::254", "100.100.100.200", "169.254.170.2"}

// codeRunners are programs that run code they read: from a file argument,
// -c, or standard input.
var codeRunners = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "python", "python2", "python3",
	"perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "pwsh", "source", "."}

// pipeIntoShell is the shape of a download piped into an interpreter, a
// backstop for lines whose facts could not be listed in full (Unknown).
var pipeIntoShell = regexp.MustCompile(`\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/\S*/)?(?:ba|z|da|k|mk|fi)?sh\b|\|\s*(?:/\S*/)?(?:python[0-9.]*|perl|ruby|node|php)\b`)

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

// network is `exfiltration:*`, `network:*` and `credential-metadata`:
// what leaves the machine. A host on the policy's allow list, and this
// machine's own loopback, are trusted (but never with credentials, see
// credential-path). Elsewhere a plain GET or HEAD carrying nothing is a
// read, not exfiltration, and passes; a request carrying files blocks;
// one carrying data blocks when the line also reads files or computes
// what it sends, and escalates otherwise.
func (s *Shield) network(_ *Action, f *Facts, j *judgement) {
	for i := range f.Requests {
		q := &f.Requests[i]
		host := q.Host
		if slices.Contains(s.rules.hostsMeta, host) {
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
		case q.Data && q.Method == "" && host != "":
			j.block("exfiltration:data", "%s opens a raw connection to %s and sends data", q.By, target)
			return
		case q.Data:
			j.escalate("exfiltration:data", "%s sends data to %s", q.By, target)
		case host == "" && q.Method != "":
			// A tool's configured endpoint (kubectl, git fetch): nothing
			// of the line's goes with it.
		case q.Method == "":
			j.escalate("network:raw", "%s opens a connection to %s", q.By, target)
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
	case "docker", "podman", "helm", "npm", "pnpm", "yarn", "pip", "pip3", "twine", "gh", "glab", "aws", "gcloud", "gsutil", "az", "kubectl", "terraform", "cargo", "gem", "poetry", "mvn", "gradle":
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

// readsData reports whether the action reads file content (more than a
// template): what it sends may be that content.
func readsData(f *Facts) bool {
	for _, r := range f.Reads {
		if !isTemplate(path.Base(r.Path)) {
			return true
		}
	}
	return false
}

// taskVerb is a request body's instruction to run something: a task
// handed to another agent or a job runner on the other end.
var taskVerb = regexp.MustCompile(`(?i)\b(?:run|execute|exec)\s*:?\s+([^"\n]{1,400})`)

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
