// Package registry maps a workspace to its running engine, so client
// commands find it and `opx start` refuses a second instance.
//
// # Layout
//
// Under <state dir>/opx/<workspace-id>/ (beside the ledger): "engine.lock"
// (held with flock by the process manager for as long as it runs),
// "engine.json" (manager and engine pids with their start times, gRPC
// port, workspace) and "client.token" (the per-engine client token, mode
// 0600). A process serving many ledgers (the fleet collector's mirrors)
// holds one lock and shares it (Lock.Share): each served directory's
// "engine.lock" is a symbolic link to the held one, beside its own
// engine.json and client.token, so it costs no descriptor.
//
// # Invariants
//
//   - At most one manager per workspace: the lock is taken before anything
//     else is written, and the kernel drops it when the manager dies, so a
//     crashed manager never blocks the next start.
//   - A process named by an entry is the one that was registered: a pid is
//     trusted only with the start time recorded beside it (a reused pid
//     has another), and an exited process is gone even as a zombie.
//   - A stale engine.json (its manager gone) is never reported as running.
//     Its engine, if it still runs (an orphan), can be found with Orphan
//     and stopped with Stop; once its engine is gone too, the files are
//     removed by whoever next looks.
//   - The token file is created 0600 in a 0700 directory and is rewritten
//     at every start.
package registry
