// Package mcp runs MCP servers for the engine, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): each server is a process on
// stdio started through the command sandbox (`opx internal-sandbox-exec`),
// spoken to over a transport that bounds what the server can make opx
// hold (a line over the cap is discarded unread past it, a malformed line
// skipped, each recorded), kept running with backoff by a Manager, and
// offered to the agent as tools named mcp__<server>__<tool>.
//
// The engine records every event of a server's life through Record
// (ledger/event/mcp_events.go); calls of its tools go through the
// engine's pipeline like any tool (Shield, Chronicle, exec.*), and this
// package only executes them.
//
// THE API BELOW IS THE CONTRACT between the engine integration, the proxy
// and this package (issue 16); bodies marked "contract" are filled in by
// the package's owner.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// ToolPrefix starts every MCP tool's name: mcp__<server>__<tool>.
const ToolPrefix = "mcp__"

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
	// MaxFrameBytes caps one JSON-RPC message from a server: past it the
	// line is discarded unread (the answer becomes an error, recorded as
	// mcp.protocol_error "oversize").
	MaxFrameBytes = 16 << 20
	// MaxResultBytes caps the rendered result of one tool call handed on
	// (the rest is cut, and the result says so).
	MaxResultBytes = 1 << 20
)

// ErrNotRunning is returned for a call to a server that is not running
// (not started yet, restarting, given up).
var ErrNotRunning = errors.New("the MCP server is not running")

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
	// structured content as JSON; capped at MaxResultBytes.
	Text string
	// Raw is the server's CallToolResult as received (nil when the
	// server answered with an error), for a proxy to hand on.
	Raw     json.RawMessage
	IsError bool
	// Truncated says Text was cut.
	Truncated bool
}

// Conn is one running, initialized server.
//
// Contract: Start starts the process through the sandbox, completes
// initialize (within spec.Timeout), lists its tools, and records
// mcp.server_started and mcp.tools_listed (in session); if it cannot, it
// records nothing and returns the error (the caller records
// mcp.server_failed). When the process ends, Done is closed and Exit says
// how (the caller records mcp.server_exited, knowing whether it restarts).
type Conn struct {
	impl connImpl
}

// connImpl is filled in by the package's owner.
type connImpl interface {
	tools() []Tool
	callTool(ctx context.Context, callID, tool string, args json.RawMessage) (Result, error)
	forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	started() event.MCPServerStarted
	done() <-chan struct{}
	exit() event.MCPServerExited
	close() error
}

// Start runs spec's server under sb and initializes it; instance numbers
// this start of it. Entries go to rec in session.
func Start(ctx context.Context, sb Sandbox, spec Spec, instance int, session string, rec Recorder) (*Conn, error) {
	return nil, errors.New("contract: not yet written")
}

// Tools are the server's tools as of its latest tools/list.
func (c *Conn) Tools() []Tool { return c.impl.tools() }

// CallTool calls the server's own tool (its name without the prefix),
// bounded by the spec's timeout and ctx. callID names the pipeline's call
// in any mcp.protocol_error. An error (not an error Result) means there
// was no answer: the server died, timed out, or answered nonsense.
func (c *Conn) CallTool(ctx context.Context, callID, tool string, args json.RawMessage) (Result, error) {
	return c.impl.callTool(ctx, callID, tool, args)
}

// Forward passes a request other than tools/call (resources/list,
// resources/read, resources/templates/list, prompts/list, prompts/get,
// completion/complete, ping) to the server and returns its result as
// received, bounded like CallTool. Methods outside that list are refused.
func (c *Conn) Forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.impl.forward(ctx, method, params)
}

// Started is the mcp.server_started this Conn recorded.
func (c *Conn) Started() event.MCPServerStarted { return c.impl.started() }

// Done is closed once the process has ended.
func (c *Conn) Done() <-chan struct{} { return c.impl.done() }

// Exit says how the process ended (valid once Done is closed); Reason
// "stopped" when Close ended it. RestartInMS is left 0 for the caller.
func (c *Conn) Exit() event.MCPServerExited { return c.impl.exit() }

// Close ends the server (stdin closed, then SIGTERM, then SIGKILL, the
// whole process group) and waits for it.
func (c *Conn) Close() error { return c.impl.close() }

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

// Manager keeps the engine's configured servers running: each started in
// the background, restarted with backoff (500 ms doubling to 30 s, reset
// after a minute up) when it dies, every start, failure and exit
// recorded. The engine runs on without a server that will not start.
//
// Contract methods (filled in by the package's owner):
//
//	NewManager(sb Sandbox, specs []Spec, rec Recorder) *Manager
//	(m *Manager) Start(ctx context.Context)            // returns at once
//	(m *Manager) WaitStarted(ctx context.Context) error // each server started or failed at least once
//	(m *Manager) Tools() []Tool                         // every running server's tools, sorted by Name
//	(m *Manager) Call(ctx context.Context, callID, name string, args json.RawMessage) (Result, error) // name namespaced
//	(m *Manager) Spec(server string) (Spec, bool)
//	(m *Manager) Status() []ServerStatus                // sorted by Name
//	(m *Manager) Stop(ctx context.Context)              // ends them all, records their exits ("stopped", no restart)
type Manager struct {
	impl managerImpl
}

type managerImpl interface{}
