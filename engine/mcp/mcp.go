package mcp

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// ToolPrefix starts every MCP tool's name: mcp__<server>__<tool>.
const ToolPrefix = "mcp__"

// GroupPrefix starts the tool group of each MCP server: mcp:<server>.
const GroupPrefix = "mcp:"

// ToolName is the namespaced name opx offers a server's tool under.
func ToolName(server, tool string) string { return ToolPrefix + server + "__" + tool }

// SplitToolName is ToolName's inverse; ok is false for a name that is not
// an MCP tool's.
func SplitToolName(name string) (server, tool string, ok bool) {
	if len(name) <= len(ToolPrefix) || name[:len(ToolPrefix)] != ToolPrefix {
		return "", "", false
	}
	rest := name[len(ToolPrefix):]
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '_' && rest[i+1] == '_' {
			if i == 0 || i+2 == len(rest) {
				return "", "", false
			}
			return rest[:i], rest[i+2:], true
		}
	}
	return "", "", false
}

// Defaults.
const (
	// DefaultTimeout bounds one request to a server.
	DefaultTimeout = 60 * time.Second
	// MinStartTimeout is the least a server's start (initialize and its
	// first tools/list) is given, whatever its request timeout.
	MinStartTimeout = 30 * time.Second
	// MaxFrameBytes caps one JSON-RPC message from a server: past it the
	// line is discarded unread (the answer becomes an error, recorded as
	// mcp.protocol_error "oversize").
	MaxFrameBytes = 16 << 20
	// MaxResultBytes caps the rendered result of one tool call handed on
	// (the rest is cut, and the result says so).
	MaxResultBytes = 1 << 20
)

// Spec says how to run one server.
type Spec struct {
	// Name is the configured name ("upstream" for a proxy's `-- COMMAND`).
	Name string
	// Argv is the server's command line; Argv[0] a program name (looked
	// up in PATH) or a path.
	Argv []string
	Env  map[string]string
	// Workspace is read-only to the server unless Writable.
	Workspace string
	Writable  bool
	Network   bool
	// ReadOnly are further readable directories (the install directory
	// of Argv[0] is added by Start).
	ReadOnly []string
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Disabled servers are reported by a Manager ("disabled") and never
	// started.
	Disabled bool
	// TrustWorkspaceCode lets the server's code live in the workspace,
	// which the agent can change: without it such a server is refused
	// (ErrWorkspaceCode), since what the agent writes there would run
	// with the server's sandbox (its network, its writes) at its next
	// start.
	TrustWorkspaceCode bool
	// ListingBudget bounds the bytes of the server's recorded tool
	// listings over time, shared by the starts that share it (a
	// Manager gives each configured server one for all its restarts);
	// nil gives each start a budget of its own.
	ListingBudget *ListingBudget
}

// Sandbox is how the engine runs servers.
type Sandbox struct {
	// Self is the opx binary: servers run as
	// [Self, internal-sandbox-exec, <policy>..., --, Argv...].
	Self string
	// HomeRoot holds each server's private home (HomeRoot/<name>),
	// outside the workspace and opx's state.
	HomeRoot string
	// Log receives servers' stderr, each line prefixed with the server's
	// name; nil discards it.
	Log io.Writer
}

// Recorder records one entry of a server's life (ledger/event MCP types)
// in session ("" for the engine's own servers), with its blobs. An error
// means the ledger failed.
type Recorder func(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error

// Tool is one tool a running server offers.
type Tool struct {
	event.MCPTool
	Description string
	InputSchema json.RawMessage // as the server sent it
	Raw         json.RawMessage // the server's whole tool object (for a proxy's tools/list)
}

// Result is a tool call's answer.
type Result struct {
	// Text renders the answer for a model: text contents in order,
	// others as one line each ("[image image/png, 1234 bytes]"),
	// structured content as JSON when there is no text (a server that
	// sends both repeats it in text, as MCP asks); capped at
	// MaxResultBytes, valid UTF-8.
	Text string
	// Raw is the server's CallToolResult as received (nil when the
	// server answered with an error), for a proxy to hand on.
	Raw     json.RawMessage
	IsError bool
	// Truncated says Text was cut.
	Truncated bool
}

// ServerStatus is one configured server's state, for opx status/doctor.
type ServerStatus struct {
	Name      string    `json:"name"`
	State     string    `json:"state"` // starting, running, restarting, failed, disabled, stopped
	PID       int       `json:"pid,omitempty"`
	Instance  int       `json:"instance,omitempty"`
	Tools     int       `json:"tools"`
	Restarts  int       `json:"restarts"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
}
