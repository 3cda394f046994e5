package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
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
	Name     string   `yaml:"name"`
	Tools    []string `yaml:"tools"`    // tool name globs
	Paths    []string `yaml:"paths"`    // path globs: relative to the workspace, "~/" for home, or absolute
	Commands []string `yaml:"commands"` // regular expressions over the command line
	Hosts    []string `yaml:"hosts"`    // host globs
	// OutsideWorkspace matches actions touching any path outside the
	// workspace.
	OutsideWorkspace bool `yaml:"outside_workspace"`
	// Tier, on verify rules, is who answers the escalation: 2 (the LLM
	// evaluator) or 3 (a human, the default).
	Tier int `yaml:"tier"`

	commands []*regexp.Regexp
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
			if len(r.Tools)+len(r.Paths)+len(r.Commands)+len(r.Hosts) == 0 && !r.OutsideWorkspace {
				return nil, fmt.Errorf("%w: %s rule %q matches nothing (set tools, paths, commands, hosts or outside_workspace)", ErrPolicy, list, r.Name)
			}
			if list == "verify" && r.Tier == 0 {
				r.Tier = 3
			}
			if r.Tier != 0 && (list != "verify" || r.Tier < 2 || r.Tier > 3) {
				return nil, fmt.Errorf("%w: rule %q: tier is for verify rules, 2 or 3", ErrPolicy, r.Name)
			}
			for _, c := range r.Commands {
				re, err := regexp.Compile(c)
				if err != nil {
					return nil, fmt.Errorf("%w: rule %q: command %q: %v", ErrPolicy, r.Name, c, err)
				}
				r.commands = append(r.commands, re)
			}
			for _, g := range append(append([]string{}, r.Tools...), r.Hosts...) {
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

// matches reports whether r matches a, with path globs resolved against
// the workspace and home.
func (r *Rule) matches(a *Action, ws, home string) bool {
	if len(r.Tools) > 0 && !anyGlob(r.Tools, a.Tool) {
		return false
	}
	if r.OutsideWorkspace {
		outside := false
		for _, p := range a.Paths {
			if p != ws && !strings.HasPrefix(p, ws+"/") {
				outside = true
			}
		}
		if !outside {
			return false
		}
	}
	if len(r.Paths) > 0 {
		if len(a.Paths) == 0 {
			return false
		}
		// Every path the action touches must match: an allow rule for
		// src/** does not cover a move from src/ to ~/.
		for _, p := range a.Paths {
			ok := false
			for _, g := range r.Paths {
				if matchGlob(resolvePattern(g, ws, home), p) {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
	}
	if len(r.commands) > 0 {
		ok := false
		for _, re := range r.commands {
			if a.Command != "" && re.MatchString(a.Command) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(r.Hosts) > 0 {
		if len(a.Hosts) == 0 {
			return false
		}
		for _, h := range a.Hosts {
			if !anyGlob(r.Hosts, h) {
				return false
			}
		}
	}
	return true
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
