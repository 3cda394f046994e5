package mcp

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/opx-dev/opx/internal/textclip"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// MCP servers for opx's own agent (docs/mcp.md): the servers of the
// configuration's mcp.servers run under a Manager the engine starts
// with itself and stops before engine.stopped; their tools are a dynamic
// source of the executor registry (Source), so the agent is offered
// what the servers offer at each message, named mcp__<server>__<tool> in
// the group mcp:<server>. A call of one is a proposal like any other.

// Config configures the engine's MCP servers (engine.Options.MCP).
type Config struct {
	Sandbox Sandbox
	Specs   []Spec
	// Disabled are the configured servers not started (reported as such).
	Disabled []string
	// StartTimeout bounds how long a message waits for the servers to be
	// started (or to have failed) once, so its agent is offered their
	// tools; default 2 minutes. The engine itself never waits for them.
	StartTimeout time.Duration
	// MaxProxySessions bounds the open `opx mcp-proxy` sessions; a new
	// one over it is refused (ResourceExhausted). Default 32.
	MaxProxySessions int
}

// Servers is what the engine uses of a Manager.
type Servers interface {
	// Start starts every server in the background and returns at once.
	Start(ctx context.Context)
	// WaitStarted returns once each server started or failed at least once.
	WaitStarted(ctx context.Context) error
	// Tools are every running server's tools, sorted by name.
	Tools() []Tool
	// Call calls a tool by its namespaced name.
	Call(ctx context.Context, callID, name string, args json.RawMessage) (Result, error)
	// Spec is a configured server's.
	Spec(server string) (Spec, bool)
	// Status is each configured server's state, sorted by name.
	Status() []ServerStatus
	// Stop ends every server and records their exits.
	Stop(ctx context.Context)
}

var _ Servers = (*Manager)(nil)

// StatusProto is the state of every configured server, sorted by name:
// the running servers as their manager s has them (nil: none), and the
// disabled ones.
func (c *Config) StatusProto(s Servers) []*opxv1.McpServerStatus {
	if c == nil {
		return nil
	}
	var out []*opxv1.McpServerStatus
	if s != nil {
		for _, st := range s.Status() {
			p := &opxv1.McpServerStatus{Name: st.Name, State: st.State, Pid: int64(st.PID), Instance: int64(st.Instance), Tools: int64(st.Tools),
				Restarts: int64(st.Restarts), LastError: textclip.Cut(strings.ToValidUTF8(st.LastError, "\uFFFD"), 1024)}
			if !st.Since.IsZero() {
				p.Since = st.Since.UTC().Format(time.RFC3339)
			}
			if spec, ok := s.Spec(st.Name); ok {
				p.Writable, p.Network = spec.Writable, spec.Network
			}
			out = append(out, p)
		}
	}
	for _, name := range c.Disabled {
		out = append(out, &opxv1.McpServerStatus{Name: name, State: "disabled"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WaitStarted waits (bounded by StartTimeout) until every server of s
// started or failed once, so a message's agent is offered their tools.
func (c *Config) WaitStarted(ctx context.Context, s Servers) error {
	d := c.StartTimeout
	if d <= 0 {
		d = 2 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return s.WaitStarted(wctx)
}
