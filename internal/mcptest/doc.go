// Package mcptest helps tests run real MCP servers: it locates the
// third-party servers and client that .ci/run installs from the npm
// registry (pinned in .ci/mcp/package-lock.json), builds the misbehaving
// server of ./badserver, and makes a test binary able to act as the
// command sandbox's launcher, so that servers run sandboxed exactly as the
// engine runs them.
//
// # Invariants
//
//   - Under CI=true a missing npm server fails the test; elsewhere the
//     test is skipped with the command that installs them.
//   - A test binary that imports this package and is started as
//     `<binary> internal-sandbox-exec <policy> -- argv` confines itself
//     with that policy (sandbox.ExecSandboxed, the code behind
//     `opx internal-sandbox-exec`) and execs argv; it never runs argv
//     unconfined.
package mcptest
