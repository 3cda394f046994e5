package projection

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Metrics counts, each under a key of NUL-separated parts and as an
// 8-byte big-endian number:
//
//	verdict tier rule decision         shield verdicts
//	llm model calls|errors|latency_ms|max_latency_ms|input_tokens|output_tokens
//	tool name calls|failed|exited|duration_ms (failed calls included)
//	subagent spawned|completed|failed|cancelled|timed_out
//	subagent_failed reason
//	subagent_verdict decision
//	subagent_llm calls|errors|latency_ms|input_tokens|output_tokens
//	subagent_tool calls|failed|exited|duration_ms
//	mcp server calls|failed|duration_ms|flagged
//	mcp server started|exited|crashed|start_failed|protocol_errors
//	session mode
//	agent_tool mode tool calls|blocked|interrupted
//	hook_unrecorded agent
//
// The sub-agents' verdicts, model calls and tool calls are in the totals
// (verdict, llm, tool) like the agent's, and also counted apart under
// subagent_*, so their share can be told: every entry recorded with a
// sub-agent's id (its model calls include Shield's tier 2 evaluator asked
// about its proposals).
//
// A call counts as failed or exited as event.ExecOutcome says: the one
// definition every view of the ledger uses.
//
// The MCP servers' share of the tool calls (tools named
// mcp__<server>__<tool>) is counted per server too, with the results
// Shield flagged and the servers' lives: starts, exits (crashed: those
// not ended by opx), failed starts and protocol errors.
//
// The sessions are counted by mode, and the calls of agents audited
// through their hooks by the agent's own tool names (metrics_hooks.go).
type Metrics struct{}

func (Metrics) Name() string    { return "metrics" }
func (Metrics) Version() string { return "6" }

// subAgentEnds names the end entries' counters.
var subAgentEnds = map[string]string{event.TypeSubAgentSpawned: "spawned", event.TypeSubAgentCompleted: "completed",
	event.TypeSubAgentFailed: "failed", event.TypeSubAgentCancelled: "cancelled", event.TypeSubAgentTimedOut: "timed_out"}

func (m Metrics) Apply(b ledger.Bucket, e *ledger.Entry) error {
	if err := m.total(b, e); err != nil {
		return err
	}
	if err := m.mcp(b, e); err != nil {
		return err
	}
	if err := m.hooks(b, e); err != nil {
		return err
	}
	return m.subAgent(b, e)
}

// mcpServer is the server of an MCP tool's name (mcp__<server>__<tool>),
// "" for any other.
func mcpServer(tool string) string {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return server
}

// mcp counts the MCP servers' calls, flagged results and lives.
func (Metrics) mcp(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeExecCompleted, event.TypeExecFailed:
		f := ledger.Fields(e.Data, "duration_ms", "exit_code", "failed", "tool")
		server := mcpServer(ledger.RawString(f[3]))
		if server == "" {
			return nil
		}
		if err := add(b, 1, "mcp", server, "calls"); err != nil {
			return err
		}
		if e.Type == event.TypeExecFailed || event.ExecOutcome(ledger.RawString(f[3]), ledger.RawInt(f[1]), string(f[2]) == "true") != event.ExecOK {
			if err := add(b, 1, "mcp", server, "failed"); err != nil {
				return err
			}
		}
		return add(b, uint64(max(ledger.RawInt(f[0]), 0)), "mcp", server, "duration_ms")
	case event.TypeResultFlagged:
		if server := mcpServer(str(e, "tool")); server != "" {
			return add(b, 1, "mcp", server, "flagged")
		}
	case event.TypeMCPServerStarted:
		return add(b, 1, "mcp", str(e, "server"), "started")
	case event.TypeMCPServerExited:
		if err := add(b, 1, "mcp", str(e, "server"), "exited"); err != nil {
			return err
		}
		if str(e, "reason") != "stopped" {
			return add(b, 1, "mcp", str(e, "server"), "crashed")
		}
	case event.TypeMCPServerFailed:
		return add(b, 1, "mcp", str(e, "server"), "start_failed")
	case event.TypeMCPProtocolError:
		f := ledger.Fields(e.Data, "server", "suppressed")
		return add(b, 1+uint64(max(ledger.RawInt(f[1]), 0)), "mcp", ledger.RawString(f[0]), "protocol_errors")
	}
	return nil
}

// subAgent counts the sub-agents' lives and their share of the totals.
func (Metrics) subAgent(b ledger.Bucket, e *ledger.Entry) error {
	if name, ok := subAgentEnds[e.Type]; ok {
		if err := add(b, 1, "subagent", name); err != nil {
			return err
		}
		if e.Type == event.TypeSubAgentFailed {
			return add(b, 1, "subagent_failed", str(e, "reason"))
		}
		return nil
	}
	switch e.Type {
	case event.TypeShieldVerdict, event.TypeLLMResponse, event.TypeExecCompleted, event.TypeExecFailed:
	default:
		return nil
	}
	if str(e, "subagent_id") == "" {
		return nil
	}
	switch e.Type {
	case event.TypeShieldVerdict:
		return add(b, 1, "subagent_verdict", str(e, "decision"))
	case event.TypeLLMResponse:
		f := ledger.Fields(e.Data, "error", "latency_ms", "usage")
		u := ledger.Fields(f[2], "input_tokens", "output_tokens")
		errs := uint64(0)
		if f[0] != nil && ledger.RawString(f[0]) != "" {
			errs = 1
		}
		for _, kv := range []struct {
			n    uint64
			name string
		}{{1, "calls"}, {errs, "errors"}, {uint64(max(ledger.RawInt(f[1]), 0)), "latency_ms"},
			{uint64(max(ledger.RawInt(u[0]), 0)), "input_tokens"}, {uint64(max(ledger.RawInt(u[1]), 0)), "output_tokens"}} {
			if err := add(b, kv.n, "subagent_llm", kv.name); err != nil {
				return err
			}
		}
		return nil
	}
	f := ledger.Fields(e.Data, "duration_ms", "exit_code", "failed", "tool")
	outcome := event.ExecError
	if e.Type == event.TypeExecCompleted {
		outcome = event.ExecOutcome(ledger.RawString(f[3]), ledger.RawInt(f[1]), string(f[2]) == "true")
	}
	if err := add(b, 1, "subagent_tool", "calls"); err != nil {
		return err
	}
	switch outcome {
	case event.ExecError:
		if err := add(b, 1, "subagent_tool", "failed"); err != nil {
			return err
		}
	case event.ExecExited:
		if err := add(b, 1, "subagent_tool", "exited"); err != nil {
			return err
		}
	}
	return add(b, uint64(max(ledger.RawInt(f[0]), 0)), "subagent_tool", "duration_ms")
}

// total counts the verdicts, model calls and tool calls of everyone.
func (Metrics) total(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeShieldVerdict:
		f := ledger.Fields(e.Data, "decision", "rule", "tier")
		return add(b, 1, "verdict", strconv.FormatInt(ledger.RawInt(f[2]), 10), ledger.RawString(f[1]), ledger.RawString(f[0]))
	case event.TypeLLMResponse:
		f := ledger.Fields(e.Data, "error", "latency_ms", "model", "usage")
		m := ledger.RawString(f[2])
		if err := add(b, 1, "llm", m, "calls"); err != nil {
			return err
		}
		if f[0] != nil && ledger.RawString(f[0]) != "" {
			if err := add(b, 1, "llm", m, "errors"); err != nil {
				return err
			}
		}
		latency := ledger.RawInt(f[1])
		if err := maxOf(b, uint64(max(latency, 0)), "llm", m, "max_latency_ms"); err != nil {
			return err
		}
		u := ledger.Fields(f[3], "input_tokens", "output_tokens")
		for _, kv := range []struct {
			n    int64
			name string
		}{{latency, "latency_ms"}, {ledger.RawInt(u[0]), "input_tokens"}, {ledger.RawInt(u[1]), "output_tokens"}} {
			if err := add(b, uint64(max(kv.n, 0)), "llm", m, kv.name); err != nil {
				return err
			}
		}
	case event.TypeExecCompleted, event.TypeExecFailed:
		f := ledger.Fields(e.Data, "duration_ms", "exit_code", "failed", "tool")
		tool := ledger.RawString(f[3])
		outcome := event.ExecError
		if e.Type == event.TypeExecCompleted {
			outcome = event.ExecOutcome(tool, ledger.RawInt(f[1]), string(f[2]) == "true")
		}
		if err := add(b, 1, "tool", tool, "calls"); err != nil {
			return err
		}
		switch outcome {
		case event.ExecError:
			if err := add(b, 1, "tool", tool, "failed"); err != nil {
				return err
			}
		case event.ExecExited:
			if err := add(b, 1, "tool", tool, "exited"); err != nil {
				return err
			}
		}
		return add(b, uint64(max(ledger.RawInt(f[0]), 0)), "tool", tool, "duration_ms")
	}
	return nil
}

func add(b ledger.Bucket, n uint64, parts ...string) error {
	k := key(parts...)
	var cur uint64
	if v := b.Get(k); len(v) == 8 {
		cur = binary.BigEndian.Uint64(v)
	}
	return b.Put(k, binary.BigEndian.AppendUint64(nil, cur+n))
}

func maxOf(b ledger.Bucket, n uint64, parts ...string) error {
	k := key(parts...)
	if v := b.Get(k); len(v) == 8 && binary.BigEndian.Uint64(v) >= n {
		return nil
	}
	return b.Put(k, binary.BigEndian.AppendUint64(nil, n))
}

// Counter is one metric.
type Counter struct {
	Key   []string `json:"key"`
	Value uint64   `json:"value"`
}

// ReadMetrics returns every counter, in key order (not the fold's own
// state).
func ReadMetrics(b ledger.Bucket) []Counter {
	var out []Counter
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != 8 || bytes.HasPrefix(k, []byte(stateMark)) {
			continue
		}
		var parts []string
		for _, p := range bytes.Split(k, []byte{0}) {
			parts = append(parts, string(p))
		}
		out = append(out, Counter{Key: parts, Value: binary.BigEndian.Uint64(v)})
	}
	return out
}
