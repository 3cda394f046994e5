// Package mcp runs MCP servers for the engine, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): each server is a process on
// stdio started through the command sandbox (`opx internal-sandbox-exec`),
// spoken to over a transport that bounds what the server can make opx
// hold, kept running with backoff by a Manager, and offered to the agent
// as tools named mcp__<server>__<tool>.
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
//     ErrOversize at once), a tools/list over MaxListingBytes or MaxTools
//     is cut, a result's text over MaxResultBytes is cut, stderr lines
//     over 1 KiB are cut and their rate bounded, the server's requests to
//     opx in flight are bounded.
//   - Nothing waits without a bound: every request has the spec's timeout
//     (a server that then does not answer a ping either is killed as
//     "unresponsive"), every write to a server has a deadline, Close
//     escalates to SIGKILL and waits a bounded time for the group.
//   - A malformed or unexpected message is skipped, never fatal: the
//     connection goes on; each is recorded as mcp.protocol_error, at a
//     bounded rate (the count of those not recorded one by one goes into
//     the next entry's suppressed). One tied to a tool call is always
//     recorded, before the call returns.
//   - A server's tools are what it listed, checked: a name that is not
//     [A-Za-z0-9_-]+, a namespaced name over 64 bytes, a duplicate, or an
//     input schema that is not an object schema is refused (recorded in
//     mcp.tools_listed's refused) and cannot be called. A server's
//     readOnlyHint is recorded, never trusted: a tool is Mutating exactly
//     when its server is Writable.
//   - Results are handed on as received (Result.Raw) beside their
//     rendering for a model.
package mcp
