package mcp

import "errors"

// Errors of a server's start.
var (
	// ErrInvalidSpec is returned by Start for a Spec it cannot run: no
	// name or command, a relative workspace, no sandbox launcher.
	ErrInvalidSpec = errors.New("invalid MCP server spec")
	// ErrInstallDir is returned by Start when the server's program lives
	// where granting its directory would grant too much (the home
	// directory or an ancestor of it, or a directory at the top of the
	// tree such as /tmp).
	ErrInstallDir = errors.New("the MCP server's install directory cannot be granted")
	// ErrWorkspaceCode is returned by Start when the server's code (its
	// program, a script it is given, their install root) is in the
	// workspace and the spec does not trust it (Spec.TrustWorkspaceCode).
	ErrWorkspaceCode = errors.New("the MCP server's code is in the workspace, which the agent can change")
)

// Errors of a request to a running server. A call that fails with one of
// them got no answer the caller can use; the server may still be running.
var (
	// ErrNotRunning is returned for a call to a server that is not
	// running (not started yet, restarting, given up, or ended).
	ErrNotRunning = errors.New("the MCP server is not running")
	// ErrTimeout is returned when the server did not answer within the
	// spec's timeout.
	ErrTimeout = errors.New("the MCP server did not answer in time")
	// ErrOversize is returned when the server's answer was over
	// MaxFrameBytes (discarded past the cap, recorded as
	// mcp.protocol_error "oversize").
	ErrOversize = errors.New("the MCP server's answer is over the size cap")
	// ErrMalformed is returned when the server's answer was not JSON-RPC,
	// or not the result the method has (recorded as mcp.protocol_error
	// "malformed").
	ErrMalformed = errors.New("the MCP server's answer is malformed")
	// ErrUnresponsive is returned when the server stopped reading its
	// input, so a request could not even be sent.
	ErrUnresponsive = errors.New("the MCP server does not read its input")
	// ErrUnknownTool is returned by CallTool for a tool the server did not
	// list (or whose listing opx refused), and by Manager.Call for a name
	// that is not an MCP tool of a configured server.
	ErrUnknownTool = errors.New("no such MCP tool")
	// ErrMethodRefused is returned by Forward for a method it does not
	// pass on.
	ErrMethodRefused = errors.New("method not passed on to MCP servers")
	// ErrBadArguments is returned by CallTool when args is not a JSON
	// object.
	ErrBadArguments = errors.New("MCP tool arguments must be a JSON object")
)
