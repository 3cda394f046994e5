// Package mcp runs MCP servers for the engine, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): each server is a process on
// stdio started through the command sandbox (`opx internal-sandbox-exec`),
// spoken to over a transport that bounds what the server can make opx
// hold, kept running with backoff by a Manager, and offered to the agent
// as tools named mcp__<server>__<tool> (Source, the executor registry's
// dynamic source of them: the engine's servers', an mcp-proxy session's
// upstream's, or a record's in a rerun).
//
// The engine records every event of a server's life through a Recorder
// (ledger/event/mcp_events.go); calls of its tools go through the
// engine's pipeline like any tool (Shield, Chronicle, exec.*), and this
// package only executes them.
//
// # The sandbox
//
// A server runs as [opx internal-sandbox-exec <policy> -- argv]: no
// capability, seccomp, Landlock with the system directories and the
// server's install directory (see installdir.go) read-only, the workspace
// read-only unless the spec is Writable, a private home (HomeRoot/<name>,
// also its TMPDIR) read-write, no network unless Network. Its environment
// is exactly PATH, HOME, TMPDIR, LANG and the spec's Env: nothing of the
// engine's (API keys) leaks into it. It leads its own process group and
// may not leave it; when it ends, or opx ends it (stdin closed, SIGTERM,
// SIGKILL), the whole group is killed. If the engine dies, the kernel
// kills it (parent-death signal).
//
// # Invariants
//
//   - Memory is bounded whatever a server sends: a line over MaxFrameBytes
//     is discarded past the cap as it is read (the request it answered,
//     if its id can be found anywhere in it, is answered with
//     ErrOversize at once); a tools/list over MaxListingBytes or MaxTools
//     is cut; a result's text over MaxResultBytes is cut (Raw is whole,
//     up to the frame cap); stderr lines over 1 KiB are cut and their
//     rate and total bounded; at most 8 of the server's requests, of
//     64 KiB each, wait for an answer; none of its notifications queues
//     (the SDK's handler queue is unbounded, so only the cancellation of
//     a request of the server's in flight reaches it).
//   - Nothing waits without a bound: every request has the spec's timeout
//     (a server that then does not answer a ping either is killed as
//     "unresponsive"), every write to a server has a deadline, a server
//     whose output ends is ended ("protocol"), Close escalates to
//     SIGKILL and waits a bounded time for the group.
//   - A malformed or unexpected message is skipped, never fatal: the
//     connection goes on. What passes is valid JSON-RPC in valid UTF-8.
//     Each problem is recorded as mcp.protocol_error, at a bounded rate
//     (the count of those not recorded one by one goes into the next
//     entry's suppressed); one tied to a tool call is always recorded,
//     before the call returns; none precedes the server's
//     mcp.server_started.
//   - A server's tools are what it listed, checked: a name that is not
//     [A-Za-z0-9_-]+, a namespaced name over 64 bytes, a duplicate, a
//     tool that is not valid UTF-8, or an input schema that is not an
//     object schema is refused (recorded in mcp.tools_listed's refused)
//     and cannot be called. A server's readOnlyHint is recorded, never
//     trusted: a tool is Mutating exactly when its server is Writable.
//     A server's listings are recorded when they change, at a bounded
//     rate and at most 50 per start.
//   - Results are handed on as received (Result.Raw) beside their
//     rendering for a model; the recorded listing is the tools/list
//     answer as received, and ToolsFromListing rebuilds from it exactly
//     the tools offered.
//
// The engine's own servers (servers.go): Config is how the engine is
// told to run them (engine.Options.MCP), Servers what it uses of their
// Manager, and StatusProto how GetStatus reports them. Imports: the
// engine's lower packages (executor, supervise), ledger, sandbox, shield
// and the protocol; never the engine.
//
// Concurrent Conns of one Spec.Name share the private home
// HomeRoot/<name>; give each a HomeRoot of its own where that matters.
package mcp
