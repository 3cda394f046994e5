package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/replay/projection"
	"github.com/urfave/cli/v2"
)

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:      "metrics",
		Usage:     "Shield's verdicts by tier and rule, model calls and tokens by model, tool calls and durations",
		UsageText: "opx metrics [--json]",
		Description: "Counts over the whole ledger, from the metrics projection of the file (folded from the entries when\n" +
			"the file was written without it), or folded from the running engine's ledger service while an engine\n" +
			"holds the file. An escalation's tier is the tier it asks (2: the model evaluator, 3: a human).\n" +
			"Per-session figures are in `opx replay SESSION` and `opx report`.\n\n" +
			exitCodesHelp("integrity failure found: an entry does not parse"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runMetrics,
	}
}

// metricsJSON is `opx metrics --json`.
type metricsJSON struct {
	Verdicts  []verdictCount  `json:"verdicts"`
	Models    []modelMetrics  `json:"models"`
	Tools     []toolMetrics   `json:"tools"`
	SubAgents subAgentMetrics `json:"subagents"`
	// MCPServers are the MCP servers' share of the tool calls (tools
	// mcp__<server>__<tool>), by server, and their lives.
	MCPServers []mcpMetrics `json:"mcp_servers"`
	// Sessions counts the sessions by mode (normal, otr, mcp-proxy,
	// claude-code, codex, gemini-cli).
	Sessions map[string]uint64 `json:"sessions"`
	// AgentTools are the calls of the agents audited through their
	// hooks, by mode and the agent's own tool name; HookUnrecorded the
	// calls their hooks let through unjudged while no engine ran, by
	// agent.
	AgentTools     []agentToolMetrics `json:"agent_tools"`
	HookUnrecorded map[string]uint64  `json:"hook_unrecorded"`
}

// agentToolMetrics counts the calls of one tool of an agent audited
// through its hooks: blocked (a verdict blocked one of its opx calls, or
// a human denied it) and interrupted (the agent never reported its end).
type agentToolMetrics struct {
	Mode        string `json:"mode"`
	Tool        string `json:"tool"`
	Calls       uint64 `json:"calls"`
	Blocked     uint64 `json:"blocked"`
	Interrupted uint64 `json:"interrupted"`
}

// mcpMetrics counts one MCP server's calls and life.
type mcpMetrics struct {
	Server         string `json:"server"`
	Calls          uint64 `json:"calls"`
	Failed         uint64 `json:"failed"`
	DurationMS     uint64 `json:"duration_ms"` // summed over the calls
	Flagged        uint64 `json:"flagged"`     // results Shield flagged
	Started        uint64 `json:"started"`
	Exited         uint64 `json:"exited"`
	Crashed        uint64 `json:"crashed"` // exits opx did not cause
	StartFailed    uint64 `json:"start_failed"`
	ProtocolErrors uint64 `json:"protocol_errors"`
}

// subAgentMetrics counts the sub-agents by how they ended, and their
// share of the verdicts, model calls and tool calls above (which count
// everyone's).
type subAgentMetrics struct {
	Spawned   uint64            `json:"spawned"`
	Completed uint64            `json:"completed"`
	Failed    uint64            `json:"failed"`
	Cancelled uint64            `json:"cancelled"`
	TimedOut  uint64            `json:"timed_out"`
	FailedBy  map[string]uint64 `json:"failed_by"` // reason -> count
	Verdicts  map[string]uint64 `json:"verdicts"`  // decision -> count
	Model     modelMetrics      `json:"model_calls"`
	Tool      toolMetrics       `json:"tool_calls"`
}

type verdictCount struct {
	Tier     int64  `json:"tier"`
	Rule     string `json:"rule"`
	Decision string `json:"decision"`
	Count    uint64 `json:"count"`
}

type modelMetrics struct {
	Model        string `json:"model"`
	Calls        uint64 `json:"calls"`
	Errors       uint64 `json:"errors"`
	InputTokens  uint64 `json:"input_tokens"`
	OutputTokens uint64 `json:"output_tokens"`
	LatencyMS    uint64 `json:"latency_ms"` // summed over the calls
	MaxLatencyMS uint64 `json:"max_latency_ms"`
}

// toolMetrics counts a tool's executions; failed and exited are as
// event.ExecOutcome defines them (the tool failed; a command it ran exited
// non-zero or was killed).
type toolMetrics struct {
	Tool       string `json:"tool"`
	Calls      uint64 `json:"calls"`
	Failed     uint64 `json:"failed"`
	Exited     uint64 `json:"exited"`
	DurationMS uint64 `json:"duration_ms"` // summed over the calls
}

// collectMetrics turns the projection's counters into the three tables.
func collectMetrics(counters []projection.Counter) metricsJSON {
	out := metricsJSON{Verdicts: []verdictCount{}, Models: []modelMetrics{}, Tools: []toolMetrics{},
		SubAgents: subAgentMetrics{FailedBy: map[string]uint64{}, Verdicts: map[string]uint64{}}, MCPServers: []mcpMetrics{},
		Sessions: map[string]uint64{}, AgentTools: []agentToolMetrics{}, HookUnrecorded: map[string]uint64{}}
	models, tools, servers := map[string]*modelMetrics{}, map[string]*toolMetrics{}, map[string]*mcpMetrics{}
	agentTools := map[[2]string]*agentToolMetrics{}
	sa := &out.SubAgents
	for _, c := range counters {
		k := c.Key
		switch {
		case len(k) == 2 && k[0] == "subagent":
			switch k[1] {
			case "spawned":
				sa.Spawned = c.Value
			case "completed":
				sa.Completed = c.Value
			case "failed":
				sa.Failed = c.Value
			case "cancelled":
				sa.Cancelled = c.Value
			case "timed_out":
				sa.TimedOut = c.Value
			}
		case len(k) == 2 && k[0] == "subagent_failed":
			sa.FailedBy[k[1]] = c.Value
		case len(k) == 2 && k[0] == "subagent_verdict":
			sa.Verdicts[k[1]] = c.Value
		case len(k) == 2 && k[0] == "subagent_llm":
			setModel(&sa.Model, k[1], c.Value)
		case len(k) == 2 && k[0] == "subagent_tool":
			setTool(&sa.Tool, k[1], c.Value)
		case len(k) == 4 && k[0] == "verdict":
			tier, err := strconv.ParseInt(k[1], 10, 64)
			if err != nil {
				continue
			}
			out.Verdicts = append(out.Verdicts, verdictCount{Tier: tier, Rule: k[2], Decision: k[3], Count: c.Value})
		case len(k) == 3 && k[0] == "llm":
			m := models[k[1]]
			if m == nil {
				m = &modelMetrics{Model: k[1]}
				models[k[1]] = m
			}
			setModel(m, k[2], c.Value)
		case len(k) == 3 && k[0] == "mcp":
			m := servers[k[1]]
			if m == nil {
				m = &mcpMetrics{Server: k[1]}
				servers[k[1]] = m
			}
			setMCP(m, k[2], c.Value)
		case len(k) == 2 && k[0] == "session":
			out.Sessions[k[1]] = c.Value
		case len(k) == 2 && k[0] == "hook_unrecorded":
			out.HookUnrecorded[k[1]] = c.Value
		case len(k) == 4 && k[0] == "agent_tool":
			a := agentTools[[2]string{k[1], k[2]}]
			if a == nil {
				a = &agentToolMetrics{Mode: k[1], Tool: k[2]}
				agentTools[[2]string{k[1], k[2]}] = a
			}
			switch k[3] {
			case "calls":
				a.Calls = c.Value
			case "blocked":
				a.Blocked = c.Value
			case "interrupted":
				a.Interrupted = c.Value
			}
		case len(k) == 3 && k[0] == "tool":
			t := tools[k[1]]
			if t == nil {
				t = &toolMetrics{Tool: k[1]}
				tools[k[1]] = t
			}
			setTool(t, k[2], c.Value)
		}
	}
	sort.SliceStable(out.Verdicts, func(i, j int) bool { return out.Verdicts[i].Tier < out.Verdicts[j].Tier })
	for _, m := range models {
		out.Models = append(out.Models, *m)
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	for _, t := range tools {
		out.Tools = append(out.Tools, *t)
	}
	sort.Slice(out.Tools, func(i, j int) bool { return out.Tools[i].Tool < out.Tools[j].Tool })
	for _, m := range servers {
		out.MCPServers = append(out.MCPServers, *m)
	}
	sort.Slice(out.MCPServers, func(i, j int) bool { return out.MCPServers[i].Server < out.MCPServers[j].Server })
	for _, a := range agentTools {
		out.AgentTools = append(out.AgentTools, *a)
	}
	sort.Slice(out.AgentTools, func(i, j int) bool {
		a, b := out.AgentTools[i], out.AgentTools[j]
		return a.Mode < b.Mode || a.Mode == b.Mode && a.Tool < b.Tool
	})
	return out
}

// setMCP sets an MCP server counter by its name in the projection.
func setMCP(m *mcpMetrics, name string, v uint64) {
	for n, p := range map[string]*uint64{"calls": &m.Calls, "failed": &m.Failed, "duration_ms": &m.DurationMS, "flagged": &m.Flagged,
		"started": &m.Started, "exited": &m.Exited, "crashed": &m.Crashed, "start_failed": &m.StartFailed, "protocol_errors": &m.ProtocolErrors} {
		if n == name {
			*p = v
		}
	}
}

// setModel sets a model counter by its name in the projection.
func setModel(m *modelMetrics, name string, v uint64) {
	switch name {
	case "calls":
		m.Calls = v
	case "errors":
		m.Errors = v
	case "input_tokens":
		m.InputTokens = v
	case "output_tokens":
		m.OutputTokens = v
	case "latency_ms":
		m.LatencyMS = v
	case "max_latency_ms":
		m.MaxLatencyMS = v
	}
}

// setTool sets a tool counter by its name in the projection.
func setTool(t *toolMetrics, name string, v uint64) {
	switch name {
	case "calls":
		t.Calls = v
	case "failed":
		t.Failed = v
	case "exited":
		t.Exited = v
	case "duration_ms":
		t.DurationMS = v
	}
}

func runMetrics(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	var out metricsJSON
	err := readReviewProjection(c, projection.Metrics{}, func(b ledger.Bucket) error {
		out = collectMetrics(projection.ReadMetrics(b))
		return nil
	})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, out)
	}
	w := c.App.Writer
	if len(out.Verdicts)+len(out.Models)+len(out.Tools)+len(out.MCPServers)+len(out.AgentTools) == 0 {
		fmt.Fprintln(w, "no verdicts, model calls or tool calls recorded")
		return nil
	}
	if len(out.Verdicts) > 0 {
		fmt.Fprintf(w, "SHIELD VERDICTS\n%-4s  %-40s  %-8s  %8s\n", "TIER", "RULE", "DECISION", "COUNT")
		for _, v := range out.Verdicts {
			fmt.Fprintf(w, "%-4d  %-40s  %s  %8d\n", v.Tier, ui.Clip(v.Rule, 40), verdictWord(w, v.Decision), v.Count)
		}
	}
	if len(out.Models) > 0 {
		fmt.Fprintf(w, "\nMODEL CALLS\n%-24s  %6s  %6s  %12s  %12s  %10s  %10s\n", "MODEL", "CALLS", "ERRORS", "INPUT TOK", "OUTPUT TOK", "AVG MS", "MAX MS")
		for _, m := range out.Models {
			fmt.Fprintf(w, "%-24s  %6d  %6d  %12d  %12d  %10d  %10d\n", ui.Clip(orDash(m.Model), 24), m.Calls, m.Errors, m.InputTokens, m.OutputTokens,
				avg(m.LatencyMS, m.Calls), m.MaxLatencyMS)
		}
	}
	if len(out.Tools) > 0 {
		fmt.Fprintf(w, "\nTOOL CALLS (executed; FAILED: the tool failed, EXIT≠0: a command it ran exited non-zero)\n%-24s  %6s  %6s  %6s  %10s\n",
			"TOOL", "CALLS", "FAILED", "EXIT≠0", "AVG MS")
		for _, t := range out.Tools {
			fmt.Fprintf(w, "%-24s  %6d  %6d  %6d  %10d\n", ui.Clip(t.Tool, 24), t.Calls, t.Failed, t.Exited, avg(t.DurationMS, t.Calls))
		}
	}
	printSubAgentMetrics(w, out.SubAgents)
	printMCPMetrics(w, out.MCPServers)
	printAgentMetrics(w, out)
	return nil
}

// printAgentMetrics prints the sessions by mode and the table of the
// agents' calls through their hooks, if any agent was audited so.
func printAgentMetrics(w io.Writer, out metricsJSON) {
	if len(out.AgentTools)+len(out.HookUnrecorded) == 0 {
		return
	}
	var modes []string
	for m, n := range out.Sessions {
		modes = append(modes, fmt.Sprintf("%s %d", ui.Clip(printable(m), 20), n))
	}
	sort.Strings(modes)
	fmt.Fprintf(w, "\nSESSIONS BY MODE: %s\n", strings.Join(modes, ", "))
	fmt.Fprintf(w, "\nAGENT TOOLS (calls of the agents audited through their hooks, by their own names; each judged as opx calls above)\n"+
		"%-12s  %-24s  %6s  %7s  %11s\n", "MODE", "TOOL", "CALLS", "BLOCKED", "INTERRUPTED")
	for _, a := range out.AgentTools {
		fmt.Fprintf(w, "%-12s  %-24s  %6d  %7d  %11d\n", ui.Clip(printable(a.Mode), 12), ui.Clip(printable(a.Tool), 24), a.Calls, a.Blocked, a.Interrupted)
	}
	if len(out.HookUnrecorded) > 0 {
		var agents []string
		for a, n := range out.HookUnrecorded {
			agents = append(agents, fmt.Sprintf("%s %d", ui.Clip(printable(a), 20), n))
		}
		sort.Strings(agents)
		fmt.Fprintf(w, "let through unjudged while no engine ran (hooks.on_engine_down: allow): %s\n", strings.Join(agents, ", "))
	}
}

// printMCPMetrics prints the MCP server table, if any server ran or was
// called.
func printMCPMetrics(w io.Writer, servers []mcpMetrics) {
	if len(servers) == 0 {
		return
	}
	fmt.Fprintf(w, "\nMCP SERVERS (calls of their tools, results Shield flagged; starts, exits, crashes, failed starts, protocol errors)\n"+
		"%-24s  %6s  %6s  %7s  %6s  %7s  %6s  %7s  %8s  %8s\n", "SERVER", "CALLS", "FAILED", "FLAGGED", "AVG MS", "STARTED", "EXITED",
		"CRASHED", "NO START", "PROTOCOL")
	for _, m := range servers {
		fmt.Fprintf(w, "%-24s  %6d  %6d  %7d  %6d  %7d  %6d  %7d  %8d  %8d\n", ui.Clip(m.Server, 24), m.Calls, m.Failed, m.Flagged,
			avg(m.DurationMS, m.Calls), m.Started, m.Exited, m.Crashed, m.StartFailed, m.ProtocolErrors)
	}
}

// printSubAgentMetrics prints the sub-agent table, if any was spawned.
func printSubAgentMetrics(w io.Writer, sa subAgentMetrics) {
	if sa.Spawned == 0 {
		return
	}
	running := int64(sa.Spawned) - int64(sa.Completed+sa.Failed+sa.Cancelled+sa.TimedOut)
	fmt.Fprintf(w, "\nSUB-AGENTS\n%7s  %9s  %6s  %9s  %9s  %7s\n%7d  %9d  %6d  %9d  %9d  %7d\n", "SPAWNED", "COMPLETED", "FAILED", "CANCELLED",
		"TIMED OUT", "RUNNING", sa.Spawned, sa.Completed, sa.Failed, sa.Cancelled, sa.TimedOut, max(running, 0))
	if len(sa.FailedBy) > 0 {
		var reasons []string
		for r, n := range sa.FailedBy {
			reasons = append(reasons, fmt.Sprintf("%s %d", ui.Clip(r, 40), n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(w, "failed: %s\n", strings.Join(reasons, ", "))
	}
	var verdicts []string
	for _, d := range []string{"allow", "escalate", "block"} {
		if n := sa.Verdicts[d]; n > 0 {
			verdicts = append(verdicts, fmt.Sprintf("%d %s", n, d))
		}
	}
	m, t := sa.Model, sa.Tool
	fmt.Fprintf(w, "their share of the tables above: verdicts %s; %d model calls (%d errors, %d input tokens, %d output tokens, avg %d ms); "+
		"%d tool calls executed (%d failed, %d exit≠0, avg %d ms)\n", orDash(strings.Join(verdicts, ", ")), m.Calls, m.Errors, m.InputTokens,
		m.OutputTokens, avg(m.LatencyMS, m.Calls), t.Calls, t.Failed, t.Exited, avg(t.DurationMS, t.Calls))
}

// verdictWord is a decision padded to its column, red for block, yellow
// for escalate on a terminal.
func verdictWord(w io.Writer, d string) string {
	s := fmt.Sprintf("%-8s", d)
	switch d {
	case "block":
		return ui.Red(w, s)
	case "escalate":
		return ui.Paint(w, "33", s)
	}
	return s
}

func avg(sum, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	return sum / n
}
