package baseline

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// Decisions.
const (
	Allow    = "allow"
	Block    = "block"
	Escalate = "escalate"
)

// Action is a proposal as Shield judges it.
type Action struct {
	Session  string
	Tool     string
	Mutating bool
	// Paths are the absolute, cleaned paths the action touches (see
	// ResolvePath); Writes says which of them it changes.
	Paths  []string
	Writes []string
	// Command is a shell command line; Hosts are the hosts it or a
	// request names; Content is text the agent passes along (file
	// content, a request body, a command).
	Command string
	Hosts   []string
	Content string
}

// Verdict is one tier's decision.
type Verdict struct {
	Decision string
	Tier     int
	Rule     string
	Reason   string
}

// Config configures a Shield.
type Config struct {
	Workspace string   // absolute
	Home      string   // the user's home, for "~" and credential paths
	Protected []string // absolute paths no tool may touch (the state dir, the ledger)
	// ReadOnly are absolute paths tools may read but never change, beside
	// the workspace's .opx directory, which always is (a policy file kept
	// elsewhere in the workspace, say).
	ReadOnly []string
	Policy   *Policy
	// RateLimit bounds proposals per session per minute; 0 means 120.
	RateLimit int
	Now       func() time.Time
}

// Shield evaluates actions. It is safe for concurrent use.
type Shield struct {
	cfg      Config
	readOnly []string // the workspace's .opx, then cfg.ReadOnly
	named    []string // readOnly and cfg.Protected: what no command may name

	mu     sync.Mutex
	recent map[string][]time.Time // session -> proposal times in the last minute
}

// New returns a Shield for cfg.
func New(cfg Config) *Shield {
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = 120
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ro := append([]string{path.Join(cfg.Workspace, ".opx")}, cfg.ReadOnly...)
	return &Shield{cfg: cfg, readOnly: ro, named: append(append([]string(nil), ro...), cfg.Protected...), recent: map[string][]time.Time{}}
}

// PolicyHash is the hash of the policy in force.
func (s *Shield) PolicyHash() ledger.Hash { return s.cfg.Policy.Hash() }

// ResolvePath turns a path as a tool receives it into the absolute path
// Shield judges: "~" is home, a relative path is under the workspace, and
// ".." is applied (so "../../etc/passwd" is judged as /etc/passwd, which
// is also where the executor would refuse to go).
func (s *Shield) ResolvePath(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return path.Clean(s.cfg.Home + p[1:])
	case path.IsAbs(p):
		return path.Clean(p)
	default:
		return path.Join(s.cfg.Workspace, p)
	}
}

// inWorkspace reports whether an absolute path is the workspace or under it.
func (s *Shield) inWorkspace(p string) bool {
	return p == s.cfg.Workspace || strings.HasPrefix(p, s.cfg.Workspace+"/")
}

// Evaluate judges a. It returns the verdict of every tier consulted; any
// block blocks, and an escalation names who must answer (its tier).
func (s *Shield) Evaluate(_ context.Context, a Action) []Verdict {
	if v, ok := s.hardcoded(&a); ok {
		return []Verdict{v}
	}
	if v, ok := s.rateLimit(a.Session); ok {
		return []Verdict{v}
	}
	out := []Verdict{s.tier0(&a)}
	if v, ok := s.tier1(&a); ok {
		out = append(out, v)
	} else {
		out = append(out, Verdict{Allow, 1, "heuristics:none", "no heuristic matched"})
	}
	return out
}

// hardcoded is tier -1: what no policy can allow.
func (s *Shield) hardcoded(a *Action) (Verdict, bool) {
	for _, p := range a.Paths {
		for _, prot := range s.cfg.Protected {
			if p == prot || strings.HasPrefix(p, prot+"/") {
				return Verdict{Block, -1, "protected:state", fmt.Sprintf("%s is inside opx's own state (%s): no tool may reach it", p, prot)}, true
			}
		}
	}
	// Changing a directory that holds the state (moving or deleting a
	// parent) would take the state with it.
	for _, p := range a.Writes {
		for _, prot := range s.cfg.Protected {
			if strings.HasPrefix(prot, p+"/") {
				return Verdict{Block, -1, "protected:state", fmt.Sprintf("%s contains opx's own state (%s): no tool may change it", p, prot)}, true
			}
		}
	}
	for _, p := range a.Writes {
		for _, ro := range s.readOnly {
			if p == ro || strings.HasPrefix(p, ro+"/") || strings.HasPrefix(ro, p+"/") {
				return Verdict{Block, -1, "protected:config", p + " is opx's configuration: read-only to tools"}, true
			}
		}
	}
	if a.Command != "" {
		for _, prot := range s.named {
			if strings.Contains(a.Command, prot) || (prot == s.readOnly[0] && strings.Contains(a.Command, ".opx/")) {
				return Verdict{Block, -1, "protected:state", "the command names opx's own state or configuration"}, true
			}
		}
	}
	return Verdict{}, false
}

// rateLimit blocks a session proposing faster than the limit.
func (s *Shield) rateLimit(session string) (Verdict, bool) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Times are appended in order: drop the expired prefix.
	times := s.recent[session]
	i := 0
	for i < len(times) && now.Sub(times[i]) >= time.Minute {
		i++
	}
	times = times[i:]
	if len(times) >= s.cfg.RateLimit {
		s.recent[session] = times
		return Verdict{Block, 0, "rate-limit", fmt.Sprintf("more than %d proposals in a minute in this session", s.cfg.RateLimit)}, true
	}
	s.recent[session] = append(times, now)
	return Verdict{}, false
}

// tier0 applies the policy: deny, then verify, then allow, then default.
func (s *Shield) tier0(a *Action) Verdict {
	p := s.cfg.Policy
	for i := range p.Deny {
		if r := &p.Deny[i]; r.matches(a, s.cfg.Workspace, s.cfg.Home) {
			return Verdict{Block, 0, "policy:" + r.Name, "denied by policy rule " + r.Name}
		}
	}
	for i := range p.Verify {
		if r := &p.Verify[i]; r.matches(a, s.cfg.Workspace, s.cfg.Home) {
			return Verdict{Escalate, r.Tier, "policy:" + r.Name, fmt.Sprintf("policy rule %s asks for verification (tier %d)", r.Name, r.Tier)}
		}
	}
	for i := range p.Allow {
		if r := &p.Allow[i]; r.matches(a, s.cfg.Workspace, s.cfg.Home) {
			return Verdict{Allow, 0, "policy:" + r.Name, "allowed by policy rule " + r.Name}
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
