// Package codextrust records Codex CLI's command hooks as trusted the way
// the CLI itself does. Codex runs a hook only when its configuration
// holds, under [hooks.state."KEY"], a trusted_hash equal to the hook's
// current hash; editing hooks.json changes the hash and the hook stops
// running until trusted again. The hash is Codex's own (it covers the
// handler and its place), so this package does not compute it: it asks a
// `codex app-server` child over JSON-RPC (hooks/list) for each hook's key
// and currentHash, and writes the trust with the same server's
// config/batchWrite, which merges into config.toml without touching
// anything else there. `opx agents install codex` and the hook tests
// (internal/agenttest) use it.
//
// # Invariants
//
//   - Only hooks the caller selects are trusted; a hook the caller did not
//     select keeps whatever trust it had.
//   - Trust returns successfully only after a second hooks/list reports
//     every selected hook as trusted.
//   - The app-server child runs in its own process group, is killed when
//     the call returns, and its answers are read line by line with a bound
//     (MaxLine) and within the caller's context.
package codextrust
