package baseline

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
)

// pathArgs are the argument names tools use for paths.
var pathArgs = []string{"path", "from", "to", "source", "destination", "dir"}

// contentArgs are the argument names that carry text the agent passes on.
var contentArgs = []string{"content", "new", "body", "text", "message"}

// EvaluateTool is engine.ShieldEvaluator.Evaluate of the baseline's
// commit: it reads what a tool's canonical JSON arguments touch and say,
// plus the workspace paths the tool acts on that they do not name
// (executor.Pather: extraPaths), and asks Shield.
func (sh *Shield) EvaluateTool(ctx context.Context, session, tool string, mutating bool, canonicalArgs []byte, extraPaths []string) []Verdict {
	var args map[string]any
	_ = json.Unmarshal(canonicalArgs, &args) // canonical JSON object: cannot fail
	a := Action{Session: session, Tool: tool, Mutating: mutating}
	for _, k := range pathArgs {
		if s, ok := args[k].(string); ok && s != "" {
			a.Paths = append(a.Paths, sh.ResolvePath(s))
		}
	}
	for _, rel := range extraPaths {
		a.Paths = append(a.Paths, sh.ResolvePath(rel))
	}
	if list, ok := args["paths"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				a.Paths = append(a.Paths, sh.ResolvePath(s))
			}
		}
	}
	if mutating {
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
	return sh.Evaluate(ctx, a)
}
