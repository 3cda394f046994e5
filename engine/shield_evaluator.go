package engine

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/opx-dev/opx/engine/shield"
	"github.com/opx-dev/opx/ledger"
)

// ShieldEvaluator judges proposals with Shield.
type ShieldEvaluator struct{ S *shield.Shield }

// PolicyHash implements Evaluator.
func (e ShieldEvaluator) PolicyHash() ledger.Hash { return e.S.PolicyHash() }

// pathArgs are the argument names tools use for paths.
var pathArgs = []string{"path", "from", "to", "source", "destination", "dir"}

// contentArgs are the argument names that carry text the agent passes on.
var contentArgs = []string{"content", "new", "body", "text", "message"}

// Evaluate implements Evaluator: it reads what the tool's arguments touch
// and says, and asks Shield.
func (e ShieldEvaluator) Evaluate(ctx context.Context, p Proposal) []Verdict {
	var args map[string]any
	_ = json.Unmarshal(p.Args, &args) // canonical JSON object: cannot fail
	a := shield.Action{Session: p.Session, Tool: p.Tool, Mutating: p.Def.Mutating}
	for _, k := range pathArgs {
		if s, ok := args[k].(string); ok && s != "" {
			a.Paths = append(a.Paths, e.S.ResolvePath(s))
		}
	}
	for _, rel := range p.Paths {
		a.Paths = append(a.Paths, e.S.ResolvePath(rel))
	}
	if list, ok := args["paths"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				a.Paths = append(a.Paths, e.S.ResolvePath(s))
			}
		}
	}
	if p.Def.Mutating {
		a.Writes = a.Paths
	}
	if c, ok := args["command"].(string); ok {
		a.Command = c
	}
	if u, ok := args["url"].(string); ok {
		if parsed, err := url.Parse(u); err == nil && parsed.Hostname() != "" {
			a.Hosts = append(a.Hosts, strings.ToLower(parsed.Hostname()))
		}
	}
	var content []string
	for _, k := range contentArgs {
		if s, ok := args[k].(string); ok {
			content = append(content, s)
		}
	}
	if a.Command != "" {
		content = append(content, a.Command)
	}
	a.Content = strings.Join(content, "\n")
	vs := e.S.Evaluate(ctx, a)
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		out[i] = Verdict{Decision: v.Decision, Tier: v.Tier, Rule: v.Rule, Reason: v.Reason}
	}
	return out
}
