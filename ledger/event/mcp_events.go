package event

import "errors"

// Types of the MCP area (docs/mcp.md): the life of each MCP server the
// engine runs (for opx's own agent, from `mcp.servers` in the config, or
// as the upstream of an `opx mcp-proxy` session), what a proxied MCP
// client asked beside tool calls, and tool results Shield flagged.
//
// A call of an MCP tool is a tool call like any other: tool.proposed,
// shield.verdict, chronicle.snapshot (writable servers), exec.started,
// exec.completed, under the tool's namespaced name mcp__<server>__<tool>.
const (
	TypeMCPServerStarted = "mcp.server_started"
	TypeMCPServerExited  = "mcp.server_exited"
	TypeMCPServerFailed  = "mcp.server_failed"
	TypeMCPToolsListed   = "mcp.tools_listed"
	TypeMCPProtocolError = "mcp.protocol_error"
	TypeMCPClient        = "mcp.client"
	TypeMCPRequest       = "mcp.request"
	TypeMCPResponse      = "mcp.response"
	TypeResultFlagged    = "shield.result_flagged"
)

func init() {
	register(func() Payload { return &MCPServerStarted{} })
	register(func() Payload { return &MCPServerExited{} })
	register(func() Payload { return &MCPServerFailed{} })
	register(func() Payload { return &MCPToolsListed{} })
	register(func() Payload { return &MCPProtocolError{} })
	register(func() Payload { return &MCPClient{} })
	register(func() Payload { return &MCPRequest{} })
	register(func() Payload { return &MCPResponse{} })
	register(func() Payload { return &ResultFlagged{} })
}

// MCPSandbox is the command sandbox an MCP server runs in.
type MCPSandbox struct {
	Writable bool `json:"writable"` // the workspace is read-write for it
	Network  bool `json:"network"`  // it may connect out
	// ReadOnly are the directories it may read beyond the system ones
	// (its install directory among them), Home its private home.
	ReadOnly []string `json:"read_only"`
	Home     string   `json:"home,omitempty"`
}

// MCPServerStarted records an MCP server process that started and
// answered `initialize`. Server is the configured name (or, for a proxy
// session's `-- COMMAND` upstream, "upstream"); the entry's session is
// empty for the engine's own servers and the proxy session otherwise.
// Instance counts the starts of this server in this engine's life (1 for
// the first, then each restart).
type MCPServerStarted struct {
	Server          string     `json:"server"`
	Instance        int        `json:"instance"`
	Command         []string   `json:"command"` // the server's argv, without the sandbox launcher
	PID             int        `json:"pid"`
	Sandbox         MCPSandbox `json:"sandbox"`
	ProtocolVersion string     `json:"protocol_version"`
	ServerName      string     `json:"server_name,omitempty"` // as the server reports itself
	ServerVersion   string     `json:"server_version,omitempty"`
}

func (*MCPServerStarted) Type() string { return TypeMCPServerStarted }

func (s *MCPServerStarted) Validate() error {
	if len(s.Command) == 0 {
		return errors.New("command is required")
	}
	if s.Instance <= 0 || s.PID <= 0 {
		return errors.New("instance and pid must be positive")
	}
	return need("server", s.Server)
}

// MCPTool is one tool a server offers, as opx offers it to the agent.
type MCPTool struct {
	Name         string `json:"name"` // namespaced: mcp__<server>__<tool>
	Tool         string `json:"tool"` // the server's own name for it
	Mutating     bool   `json:"mutating"`
	ReadOnlyHint bool   `json:"read_only_hint,omitempty"` // the server's hint, recorded, never trusted
	SchemaHash   string `json:"schema_hash"`              // BLAKE3 of its input schema as received
}

// MCPToolsListed records the tools a server offers, after it started and
// whenever it says they changed. Listing is the whole tools/list answer
// (descriptions and schemas), inline or as a blob; Tools is what opx made
// of it (a tool whose name or schema opx refused is in Refused, with why).
type MCPToolsListed struct {
	Server      string    `json:"server"`
	Instance    int       `json:"instance"`
	Tools       []MCPTool `json:"tools"`
	Refused     []string  `json:"refused,omitempty"`
	Listing     string    `json:"listing,omitempty"`
	ListingBlob string    `json:"listing_blob,omitempty"`
	Size        int64     `json:"size"`
}

func (*MCPToolsListed) Type() string { return TypeMCPToolsListed }

func (l *MCPToolsListed) Validate() error {
	if l.Tools == nil {
		return errors.New("tools is required (a server may offer none)")
	}
	return firstErr(need("server", l.Server), inlineOrBlobNamed("listing", l.Listing, l.ListingBlob, l.Size))
}

// MCPServerExited records the end of a server process that had started:
// how it ended, the tail of its stderr, and when it is started again
// (RestartInMS 0: it is not, the engine stopping or the session ended).
type MCPServerExited struct {
	Server      string `json:"server"`
	Instance    int    `json:"instance"`
	PID         int    `json:"pid"`
	ExitCode    int    `json:"exit_code"`        // -1 when killed by a signal
	Signal      string `json:"signal,omitempty"` // e.g. "killed"
	Reason      string `json:"reason"`           // crashed, stopped, unresponsive, protocol
	StderrTail  string `json:"stderr_tail,omitempty"`
	RestartInMS int64  `json:"restart_in_ms"`
}

func (*MCPServerExited) Type() string { return TypeMCPServerExited }

func (e *MCPServerExited) Validate() error {
	if e.RestartInMS < 0 {
		return errors.New("restart_in_ms must not be negative")
	}
	return firstErr(need("server", e.Server), oneOf("reason", e.Reason, "crashed", "stopped", "unresponsive", "protocol"))
}

// MCPServerFailed records a server that could not be started or did not
// complete `initialize` (the engine runs on without it, and tries again
// after RetryInMS; 0: it gives up).
type MCPServerFailed struct {
	Server     string `json:"server"`
	Attempt    int    `json:"attempt"`
	Error      string `json:"error"`
	StderrTail string `json:"stderr_tail,omitempty"`
	RetryInMS  int64  `json:"retry_in_ms"`
}

func (*MCPServerFailed) Type() string { return TypeMCPServerFailed }

func (f *MCPServerFailed) Validate() error {
	if f.Attempt <= 0 || f.RetryInMS < 0 {
		return errors.New("attempt must be positive and retry_in_ms not negative")
	}
	return need("server", f.Server, "error", f.Error)
}

// MCPProtocolError records what a server sent that was not a message opx
// could take: a line that is not JSON-RPC (malformed), one over the size
// cap (oversize: the content was discarded unread beyond the cap), an
// answer to no request (unexpected). CallID names the tool call it
// answered when opx could tell. Suppressed counts errors of the same
// server not recorded one by one since the last entry (bounded rate).
type MCPProtocolError struct {
	Server     string `json:"server"`
	Instance   int    `json:"instance"`
	Kind       string `json:"kind"`
	Size       int64  `json:"size"`
	Detail     string `json:"detail"`
	CallID     string `json:"call_id,omitempty"`
	Suppressed int    `json:"suppressed"`
}

func (*MCPProtocolError) Type() string { return TypeMCPProtocolError }

func (p *MCPProtocolError) Validate() error {
	if p.Size < 0 || p.Suppressed < 0 {
		return errors.New("size and suppressed must not be negative")
	}
	return firstErr(need("server", p.Server), oneOf("kind", p.Kind, "malformed", "oversize", "unexpected"))
}

// MCPClient records the MCP client of an `opx mcp-proxy` session, as it
// introduced itself in `initialize`, and the upstream it is put in front
// of; it follows session.created (mode mcp-proxy).
type MCPClient struct {
	ClientName      string   `json:"client_name"`
	ClientVersion   string   `json:"client_version,omitempty"`
	ProtocolVersion string   `json:"protocol_version,omitempty"`
	Capabilities    []string `json:"capabilities,omitempty"` // e.g. elicitation, roots, sampling
	Upstream        string   `json:"upstream"`               // the configured server name, or "upstream"
	Command         []string `json:"command"`
}

func (*MCPClient) Type() string { return TypeMCPClient }

func (c *MCPClient) Validate() error {
	if len(c.Command) == 0 {
		return errors.New("command is required")
	}
	return need("client_name", c.ClientName, "upstream", c.Upstream)
}

// MCPRequest records a proxied client's request other than tools/call
// (tools/list, resources/list, resources/read, resources/templates/list,
// prompts/list, prompts/get, completion/complete, ...), passed through to
// the upstream; RequestID ties it to its mcp.response.
type MCPRequest struct {
	RequestID  string `json:"request_id"`
	Method     string `json:"method"`
	Params     string `json:"params,omitempty"`
	ParamsBlob string `json:"params_blob,omitempty"`
	Size       int64  `json:"size"`
}

func (*MCPRequest) Type() string { return TypeMCPRequest }

func (r *MCPRequest) Validate() error {
	return firstErr(need("request_id", r.RequestID, "method", r.Method), inlineOrBlobNamed("params", r.Params, r.ParamsBlob, r.Size))
}

// MCPResponse records the upstream's answer to an mcp.request as the
// client got it: the result, or the error.
type MCPResponse struct {
	RequestID  string `json:"request_id"`
	Method     string `json:"method"`
	Result     string `json:"result,omitempty"`
	ResultBlob string `json:"result_blob,omitempty"`
	Size       int64  `json:"size"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

func (*MCPResponse) Type() string { return TypeMCPResponse }

func (r *MCPResponse) Validate() error {
	if r.DurationMS < 0 {
		return errors.New("duration_ms must not be negative")
	}
	return firstErr(need("request_id", r.RequestID, "method", r.Method), inlineOrBlobNamed("result", r.Result, r.ResultBlob, r.Size))
}

// ResultFlagged records a tool result Shield's prompt-injection heuristic
// flagged before the model (or a proxied client) saw it, and what opx did:
// "annotated" (delivered with a warning in front) or "withheld" (replaced
// by the warning). It follows the call's exec.completed.
type ResultFlagged struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Rule       string `json:"rule"`
	Reason     string `json:"reason"`
	Action     string `json:"action"`
}

func (*ResultFlagged) Type() string { return TypeResultFlagged }

func (f *ResultFlagged) Validate() error {
	return firstErr(need("call_id", f.CallID, "tool", f.Tool, "rule", f.Rule), oneOf("action", f.Action, "annotated", "withheld"))
}
