package shield

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"go.yaml.in/yaml/v3"
)

// ErrPolicy is returned (wrapped) for a policy that does not parse or
// validate.
var ErrPolicy = errors.New("invalid policy")

// Policy is a parsed tier 0 policy.
type Policy struct {
	Version int     `yaml:"version"`
	Default string  `yaml:"default"` // allow, verify or deny: when no rule matches
	Network Network `yaml:"network"`
	Deny    []Rule  `yaml:"deny"`
	Verify  []Rule  `yaml:"verify"`
	Allow   []Rule  `yaml:"allow"`
	// Secrets are path globs (as Rule.Paths) of files that hold secrets
	// the built-in credential paths do not know (config/secrets.yml, a
	// service account key): reading one does not by itself block (a
	// deny rule does that), but once a session has read one, what can
	// carry data out is asked about (flow:tainted-egress).
	Secrets []string `yaml:"secrets"`

	hash ledger.Hash
}

// Network lists the hosts tools may reach; tier 1 treats every other host
// in a command or request as an exfiltration target.
type Network struct {
	AllowHosts []string `yaml:"allow_hosts"`
	// Commands lets shell commands and git use the network (TCP connect).
	// Off by default: the command sandbox then refuses every connection,
	// whatever host a command names.
	Commands bool `yaml:"commands"`
}

// Rule matches an action when every criterion it sets matches (each list
// matches when any of its items does).
type Rule struct {
	Name  string   `yaml:"name"`
	Tools []string `yaml:"tools"` // tool name globs
	Paths []string `yaml:"paths"` // path globs: relative to the workspace, "~/" for home, or absolute
	// Commands are regular expressions over each program a command line
	// runs (Run.Line, and Run.Name): see Shield.tier0 for how deny, verify
	// and allow lists use them.
	Commands []string `yaml:"commands"`
	// ExceptCommands are regular expressions over a program's line (as
	// Commands): a program one of them matches does not count for the
	// rule (a verify rule for git push that spares a topic branch).
	ExceptCommands []string `yaml:"except_commands"`
	Hosts          []string `yaml:"hosts"` // host globs, over every request's host
	// Methods are HTTP methods (GET, HEAD, POST, PUT, PATCH, DELETE), over
	// every request's method.
	Methods []string `yaml:"methods"`
	// ExceptHosts are host globs whose requests the rule does not count
	// (a verify rule for writes that spares this machine's loopback).
	ExceptHosts []string `yaml:"except_hosts"`
	// OutsideWorkspace matches actions touching any path outside the
	// workspace.
	OutsideWorkspace bool `yaml:"outside_workspace"`
	// Toolchain "workspace", on an allow rule, matches a program the
	// workspace declares it uses (Action.Toolchain) running a verb of
	// daily work (rules_toolchain.go): the project's own toolchain.
	// Toolchain "inspect" matches any program running a verb that only
	// reads or reports; "local", a client of a service on this machine
	// (rules_inspect.go); "remote", ssh running a command written on the
	// line with nothing forwarded (plainRemote): the programs it runs
	// there are matched by the allow list like every other program of the
	// line, so the rule allows ssh only where they are allowed here.
	Toolchain string `yaml:"toolchain"`
	// Tier, on verify rules, is who answers the escalation: 2 (the LLM
	// evaluator) or 3 (a human, the default).
	Tier int `yaml:"tier"`

	commands  []*regexp.Regexp
	except    []*regexp.Regexp
	tools     map[string]bool // the literal tool names of Tools
	toolGlobs bool            // Tools holds a pattern
}

// MaxPolicyBytes bounds a policy file: readers refuse a larger one (with
// regularfile.Read) before it is parsed.
const MaxPolicyBytes = 1 << 20

// ParsePolicy parses a policy strictly (unknown fields are errors).
func ParsePolicy(b []byte) (*Policy, error) {
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	if p.Version != 1 {
		return nil, fmt.Errorf("%w: version %d (want 1)", ErrPolicy, p.Version)
	}
	switch p.Default {
	case "":
		p.Default = "verify"
	case "allow", "verify", "deny":
	default:
		return nil, fmt.Errorf("%w: default %q (want allow, verify or deny)", ErrPolicy, p.Default)
	}
	for list, rules := range map[string][]Rule{"deny": p.Deny, "verify": p.Verify, "allow": p.Allow} {
		for i := range rules {
			r := &rules[i]
			if r.Name == "" {
				return nil, fmt.Errorf("%w: %s rule %d has no name", ErrPolicy, list, i+1)
			}
			if len(r.Tools)+len(r.Paths)+len(r.Commands)+len(r.Hosts)+len(r.Methods) == 0 && !r.OutsideWorkspace && r.Toolchain == "" {
				return nil, fmt.Errorf("%w: %s rule %q matches nothing (set tools, paths, commands, hosts, methods, toolchain or outside_workspace)", ErrPolicy, list, r.Name)
			}
			if r.Toolchain != "" && (r.Toolchain != "workspace" && r.Toolchain != "inspect" && r.Toolchain != "local" && r.Toolchain != "remote" || list != "allow") {
				return nil, fmt.Errorf("%w: rule %q: toolchain %q (want \"workspace\", \"inspect\", \"local\" or \"remote\", on an allow rule)", ErrPolicy, r.Name, r.Toolchain)
			}
			for j, m := range r.Methods {
				switch u := strings.ToUpper(m); u {
				case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE":
					r.Methods[j] = u
				default:
					return nil, fmt.Errorf("%w: rule %q: method %q (want GET, HEAD, POST, PUT, PATCH or DELETE)", ErrPolicy, r.Name, m)
				}
			}
			if list == "verify" && r.Tier == 0 {
				r.Tier = 3
			}
			if r.Tier != 0 && (list != "verify" || r.Tier < 2 || r.Tier > 3) {
				return nil, fmt.Errorf("%w: rule %q: tier is for verify rules, 2 or 3", ErrPolicy, r.Name)
			}
			r.tools = map[string]bool{}
			for _, t := range r.Tools {
				if strings.ContainsAny(t, `*?[\`) {
					r.toolGlobs = true
				} else {
					r.tools[t] = true
				}
			}
			for _, c := range r.Commands {
				re, err := regexp.Compile(c)
				if err != nil {
					return nil, fmt.Errorf("%w: rule %q: command %q: %v", ErrPolicy, r.Name, c, err)
				}
				r.commands = append(r.commands, re)
			}
			if len(r.ExceptCommands) > 0 && len(r.Commands) == 0 {
				return nil, fmt.Errorf("%w: rule %q: except_commands without commands", ErrPolicy, r.Name)
			}
			for _, c := range r.ExceptCommands {
				re, err := regexp.Compile(c)
				if err != nil {
					return nil, fmt.Errorf("%w: rule %q: except command %q: %v", ErrPolicy, r.Name, c, err)
				}
				r.except = append(r.except, re)
			}
			for _, g := range slices.Concat(r.Tools, r.Hosts, r.ExceptHosts, r.Paths) {
				if _, err := path.Match(g, ""); err != nil {
					return nil, fmt.Errorf("%w: rule %q: pattern %q: %v", ErrPolicy, r.Name, g, err)
				}
			}
		}
	}
	p.hash = ledger.Sum(b)
	return &p, nil
}

// Hash is the BLAKE3 of the policy text, recorded with every verdict.
func (p *Policy) Hash() ledger.Hash { return p.hash }

// matches reports whether r matches the action, a rule from a deny or
// verify list (any = true) or an allow list (any = false). A deny or
// verify rule matches when any path, host, method or program the action
// has matches (a deny rule for secrets/** covers a move out of secrets/);
// an allow rule when every one does (an allow rule for src/** does not
// cover a move from src/ to ~/). Commands are matched per program
// elsewhere (Shield.tier0); here run, if non-nil, is the one program
// they are matched against.
func (r *Rule) matches(a *Action, f *Facts, pats []pathPattern, ws string, any bool, run *Run) bool {
	if len(r.Tools) > 0 && !r.tools[a.Tool] && (!r.toolGlobs || !anyGlob(r.Tools, a.Tool)) {
		return false
	}
	if r.OutsideWorkspace && !touchesOutside(f, ws) {
		return false
	}
	if len(r.Paths) > 0 && !matchPaths(pats, f, any) {
		return false
	}
	if len(r.commands) > 0 {
		if run == nil {
			return false
		}
		if !r.matchRun(run) {
			return false
		}
	}
	switch r.Toolchain {
	case "workspace":
		if !workspaceToolchain(a, run) {
			return false
		}
	case "inspect":
		if ok, _ := inspectingUse(run); !ok {
			return false
		}
	case "local":
		if ok, _ := localServiceUse(run); !ok {
			return false
		}
	case "remote":
		if !plainRemote(run) {
			return false
		}
	}
	if len(r.Hosts) > 0 || len(r.Methods) > 0 {
		if len(f.Requests) == 0 {
			return false
		}
		n := 0
		for i := range f.Requests {
			q := &f.Requests[i]
			ok := (len(r.Hosts) == 0 || (q.Host != "" && anyGlob(r.Hosts, q.Host))) &&
				(len(r.Methods) == 0 || slices.Contains(r.Methods, q.Method)) &&
				(len(r.ExceptHosts) == 0 || q.Host == "" || !anyGlob(r.ExceptHosts, q.Host))
			if ok {
				n++
			}
		}
		if (any && n == 0) || (!any && n < len(f.Requests)) {
			return false
		}
	}
	return true
}

// policyLine is the command line a policy expression reads for run: its
// own simple command. A program a wrapper runs (xargs, timeout, env,
// nice, find -exec …) keeps the wrapper's line as Line, and was matched by
// the wrapper's allow rule — `timeout 60 terraform apply` by
// text-and-inspection's timeout, `env X=1 npm publish` by its env, past
// package-publish (rules 14). Such a program is matched as the line that
// runs it alone: its arguments, quoted where the shell would need it.
func policyLine(run *Run) string {
	if run.Via == "" || len(run.Argv) == 0 || leadProgram(run.Line) == run.Argv[0] {
		return run.Line
	}
	last := run.Via
	if k := strings.LastIndex(last, " > "); k >= 0 {
		last = last[k+3:]
	}
	if wrappers[last] == nil && projectRunners[last] == nil && last != "find -exec" {
		return run.Line // a payload (eval, sh -c …) has its own rules
	}
	var b strings.Builder
	for i, a := range run.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}#~") {
			b.WriteString(shellQuote(a))
		} else {
			b.WriteString(a)
		}
		if b.Len() > maxPolicyLine {
			break
		}
	}
	return b.String()
}

// leadProgram is the first word of line after assignments (X=1 cmd),
// found without splitting the whole line (policyLine calls it for every
// rule a wrapped program is matched against).
func leadProgram(line string) string {
	for rest := line; ; {
		rest = strings.TrimLeft(rest, " \t\n")
		if rest == "" {
			return ""
		}
		w := rest
		if k := strings.IndexAny(rest, " \t\n"); k >= 0 {
			w, rest = rest[:k], rest[k:]
		} else {
			rest = ""
		}
		if k := strings.IndexByte(w, '='); k > 0 && isIdent(w[:k]) {
			continue
		}
		return strings.Trim(w, `"'`)
	}
}

// matchRun reports whether one of r's command expressions matches run.
func (r *Rule) matchRun(run *Run) bool {
	line := policyLine(run)
	if len(line) > maxPolicyLine {
		// Deny and verify rules see the prefix; allow rules never see
		// a line this long (tier0 escalates it first).
		line = line[:maxPolicyLine]
	}
	for _, re := range r.except {
		if re.MatchString(line) {
			return false
		}
	}
	for _, re := range r.commands {
		if re.MatchString(line) || (run.Name != "" && re.MatchString(run.Name)) {
			return true
		}
	}
	return false
}

// matchPaths matches a rule's path globs over every Ref of f: any of
// them (a glob Ref when it could match) or all of them (a glob Ref when
// its pattern, read as a path, does; a Tree when the glob covers what is
// beneath it).
func matchPaths(pats []pathPattern, f *Facts, any bool) bool {
	n, total := 0, 0
	for _, refs := range [][]Ref{f.Reads, f.Writes, f.Deletes} {
		for i := range refs {
			ref := &refs[i]
			total++
			for j := range pats {
				pp := &pats[j]
				var ok bool
				if any {
					ok = pp.matchRef(ref)
				} else {
					ok = pp.matchPath(ref.Path) && (!ref.Tree || strings.HasSuffix(pp.src, "**"))
				}
				if ok {
					n++
					break
				}
			}
		}
	}
	if any {
		return n > 0
	}
	return total > 0 && n == total
}

// compilePaths resolves and compiles the path globs of every rule of p
// for one workspace and home.
func compilePaths(p *Policy, ws, home string) map[*Rule][]pathPattern {
	out := map[*Rule][]pathPattern{}
	for _, list := range [][]Rule{p.Deny, p.Verify, p.Allow} {
		for i := range list {
			r := &list[i]
			for _, g := range r.Paths {
				out[r] = append(out[r], compilePattern(g, resolvePattern(g, ws, home)))
			}
		}
	}
	return out
}

// tier0 applies the policy: deny, then verify, then allow, then default.
// A deny or verify rule with commands matches when any program the line
// runs matches it. The allow list allows a command line only when every
// program it runs (but those found in interpreter payloads and decoded
// data, which are tier 1's to judge) is allowed by some allow rule; the
// rule recorded is the first program's.
func (s *Shield) tier0(a *Action, f *Facts) Verdict {
	p := s.cfg.Policy
	ws := s.cfg.Workspace
	// Rules 17: a deny rule's commands are what runs on this machine; a
	// command run on another one over ssh (sudo there is not root here)
	// is tier 1's network:remote-exec, asked about.
	local := f
	if slices.ContainsFunc(f.Runs, func(r Run) bool { return elsewhere(r.Via) }) {
		lf := *f
		lf.Runs = slices.DeleteFunc(slices.Clone(f.Runs), func(r Run) bool { return elsewhere(r.Via) })
		local = &lf
	}
	for i := range p.Deny {
		if r := &p.Deny[i]; s.anyMatch(r, a, local) {
			return Verdict{Block, 0, "policy:" + r.Name, "denied by policy rule " + r.Name + viaNote(s.paths[r], f)}
		}
	}
	for i := range p.Verify {
		if r := &p.Verify[i]; s.anyMatch(r, a, f) {
			return Verdict{Escalate, r.Tier, "policy:" + r.Name, fmt.Sprintf("policy rule %s asks for verification (tier %d)%s", r.Name, r.Tier, viaNote(s.paths[r], f))}
		}
	}
	runs := policyRuns(f.Runs)
	for k := range runs {
		// Rules 26: the workspace's own repository named with --repo is
		// matched as the line without it (rules_forge_repo.go).
		runs[k] = ownRepoRun(a, runs[k])
	}
	for k := range runs {
		if len(runs[k].Line) > maxPolicyLine {
			return Verdict{Escalate, 3, "input:line-too-long", fmt.Sprintf("a simple command of %d bytes is longer than the %d the policy's command rules are matched against: it cannot be allowed by them", len(runs[k].Line), maxPolicyLine)}
		}
	}
	if len(runs) > 0 {
		var first *Rule
		all := true
		for k := range runs {
			var found *Rule
			for i := range p.Allow {
				if r := &p.Allow[i]; r.matches(a, f, s.paths[r], ws, false, &runs[k]) || (len(r.commands) == 0 && r.matches(a, f, s.paths[r], ws, false, nil)) {
					found = r
					break
				}
			}
			if found == nil {
				all = false
				break
			}
			if first == nil {
				first = found
			}
		}
		if all {
			return Verdict{Allow, 0, "policy:" + first.Name, "allowed by policy rule " + first.Name}
		}
	} else {
		for i := range p.Allow {
			if r := &p.Allow[i]; r.matches(a, f, s.paths[r], ws, false, nil) {
				return Verdict{Allow, 0, "policy:" + r.Name, "allowed by policy rule " + r.Name}
			}
		}
	}
	switch p.Default {
	case "allow":
		return Verdict{Allow, 0, "policy:default", "no rule matched; the policy's default allows"}
	case "deny":
		return Verdict{Block, 0, "policy:default", "no rule matched; the policy's default denies"}
	default:
		return Verdict{Escalate, 3, "policy:default", "no rule matched; the policy's default asks a human"}
	}
}

// maxPolicyLine bounds the text of one simple command the policy's
// command expressions are matched against: the time a proposal takes in
// tier 0 stays bounded whatever its length.
const maxPolicyLine = 8 << 10

// anyMatch reports whether a deny or verify rule matches: with commands,
// when any program run matches (the raw line too, for a line whose
// programs could not all be listed).
func (s *Shield) anyMatch(r *Rule, a *Action, f *Facts) bool {
	pats, ws := s.paths[r], s.cfg.Workspace
	if len(r.commands) == 0 {
		return r.matches(a, f, pats, ws, true, nil)
	}
	for k := range f.Runs {
		if r.matches(a, f, pats, ws, true, &f.Runs[k]) {
			return true
		}
	}
	if a.Command != "" && len(f.Unknown) > 0 {
		return r.matches(a, f, pats, ws, true, &Run{Line: a.Command})
	}
	return false
}

// policyRuns are the runs the allow list must cover: all but those found
// in interpreter payloads and decoded data, and (rules 15) those a project
// runner runs in the project's environment (uv run, poetry run, bundle
// exec, pnpm exec …), which the runner's own allow covers; deny and
// verify rules still see them (anyMatch reads every run).
func policyRuns(runs []Run) []Run {
	out := runs[:0:0]
	for _, r := range runs {
		if !literalVia(r.Via) && !projectEnvRun(&r) && !remoteSetupRun(&r) {
			out = append(out, r)
		}
	}
	return out
}

// literalVia reports whether a run was found in an interpreter payload's
// string literals or in decoded data rather than parsed as shell.
func literalVia(via string) bool {
	if via == "" || via == "memory" || via == "body" || via == "url" || strings.HasPrefix(via, "content:") {
		return false
	}
	for _, s := range literalSources {
		if strings.Contains(via, s) {
			return true
		}
	}
	return false
}

// literalSources are the Text sources (and Run.Via parts) of interpreter
// payloads and decoded data.
var literalSources = []string{"python -c", "python3 -c", "node -e", "perl -e", "ruby -e", "base64", "hex", "printf"}

// literalSource reports whether a Text comes from an interpreter payload
// or decoded data (rather than being content the action writes).
func literalSource(src string) bool { return literalVia(src) }

// touchesOutside reports whether f touches a path outside ws (for a
// glob, one it could match).
func touchesOutside(f *Facts, ws string) bool {
	for _, refs := range [][]Ref{f.Reads, f.Writes, f.Deletes} {
		for _, r := range refs {
			p := r.Path
			if r.Glob {
				p = globPrefix(p)
			}
			if !within(p, ws) {
				return true
			}
		}
	}
	return false
}

func anyGlob(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

// resolvePattern makes a policy path pattern absolute: "~/x" under home,
// "x/y" under the workspace; a bare name ("*.pem") stays a base-name
// pattern.
func resolvePattern(g, ws, home string) string {
	switch {
	case g == "**":
		return path.Join(ws, "**")
	case strings.HasPrefix(g, "~/"):
		return path.Join(home, g[2:])
	case strings.HasPrefix(g, "/"), !strings.Contains(g, "/"):
		return g
	default:
		return path.Join(ws, g)
	}
}
