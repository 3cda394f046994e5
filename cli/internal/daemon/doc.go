// Package daemon starts a workspace's engine in the background and waits
// for it: what `opx start --daemon`, `opx mcp-proxy` and the hooks (`opx
// hook`, `opx-hook`) do when no engine runs.
//
// It may import engine/registry and the standard library only, so that
// the small opx-hook binary can start an engine without linking opx.
//
// # Invariants
//
//   - The engine is started as `OPX start --workspace WS`, in its own
//     session (it outlives the caller), its output appended to engine.log
//     in the state directory.
//   - Start returns only once the registry names a running engine, or
//     says why not: the start exited early (with the log's last line), or
//     35 s passed.
package daemon
