// Package mcpproxy is the engine's side of `opx mcp-proxy`
// (docs/mcp-proxy.md): the engine between an MCP client and an upstream
// MCP server it starts, sandboxed, for one session. The proxy process
// (cli) speaks MCP on its stdio and holds one McpProxyService.Proxy
// stream; this package holds the session that stream is.
//
// # What it owns
//
//   - The sessions of one engine (proxySessions): it implements
//     engine.MCPProxies. Linked in, the package registers them with
//     engine.UseMCPProxies; an engine built without it opens no session
//     (McpProxyService refuses the stream) and fails the rerun of one.
//   - Opening a session (proxy.go): its upstream (a configured server, or
//     a `-- COMMAND` with a private home of its own), its bounds, its end.
//   - Its requests (calls.go): each recorded as the client sent it
//     (mcp.request) and its answer as the client got it (mcp.response);
//     a tools/call goes through the engine's pipeline (Pipeline.Handle)
//     with the session's registry (engine.MCPProxies.Tools, the
//     pipeline's SessionTools), the rest are passed through and Shield
//     reads what comes back.
//   - The gRPC service (service.go): the stream, the approvals and
//     cancellations the client sends, the notices it is sent.
//   - The rerun of a recorded session (replay.go), which engine/redrive
//     starts through engine.Engine.ReplayProxy and feeds through
//     engine.ReplayMode (Recording, Blobs, OffRecord, Fail).
//
// # Imports
//
// mcpproxy imports the engine (the core) and the packages below it
// (engine/mcp, engine/executor, engine/config, ledger, the protocol,
// replay/rerun, shield); the engine never imports it, and nothing of it
// imports engine/redrive or any other room beside it.
//
// # Invariants
//
//   - A session's calls reach its upstream's tools and nothing else of the
//     engine's, whatever they name: none before the upstream started,
//     none after the session ended (review #4).
//   - The result of a call that ran is durable (exec.completed) before the
//     client hears it; the answer to a call that did not run is recorded
//     Sync (mcp.response) before it is handed on.
//   - Bounded: sessions open at once (mcp.max_proxy_sessions), requests
//     in flight per session, an upstream's command line and environment,
//     an answer handed on; a session's end waits a bounded time for its
//     calls.
//   - A session ends once, and its end (mcp.server_exited) is recorded
//     before engine.stopped: the engine's stop ends every session
//     (engine.MCPProxies.Stop) and opens no more.
package mcpproxy
