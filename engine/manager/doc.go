// Package manager is the process manager behind `opx start`: it takes the
// workspace's registry lock, starts the engine, reads its start-up
// protocol, publishes where it listens, and restarts it by the crash
// budget of the process model.
//
// # Invariants
//
//   - One manager per workspace (the registry lock), taken before the
//     engine starts and released after it is gone.
//   - An engine that does not complete the stdout protocol (PORT:, then
//     WEB_*) within StartTimeout is killed, which counts as a crash.
//   - The registry names an engine only while it is up; the entry is
//     removed when it exits and rewritten with the new port after every
//     restart.
//   - No engine outlives its manager. Each engine inherits the read end
//     of a liveness pipe whose write end only the manager holds: when the
//     manager dies, however it dies, the engine reads EOF and stops
//     (recording engine.stopped, cause manager-gone). It is also started
//     with DeathSignal as its parent-death signal, from a thread that
//     lives as long as the manager (supervise.StartTied).
//   - An engine left running by a manager that died before this
//     safeguard existed, or that did not follow it, is stopped before the
//     new engine starts (the registry names it with its start time).
//   - Every signal the manager sends an engine is logged, with the
//     engine's pid and the reason, and written down in the state
//     directory (registry.WriteEnd) before it is sent; each engine's end
//     is written down after it (exit code, or signal and sender: this
//     manager when it sent that signal, else "unknown"). The next engine
//     puts it in the engine.crashed it records. The manager signals an
//     engine in two cases only: SIGKILL when the start-up protocol fails
//     or times out (StartTimeout), and SIGTERM then SIGKILL after Grace
//     when the manager itself stops. Nothing polls a running engine, so
//     no busy or blocked engine is ever killed for being slow to answer.
//     (docs/process-signals.md lists every sender.)
//
// # Exit codes of the engine
//
// 0 is a clean stop, 75 (supervise.ExitRestart) asks for a restart,
// 78 (supervise.ExitRefused) says the engine refused to start for a
// reason a retry cannot cure (its ledger is locked or unreadable, its
// configuration is bad): the manager gives up at once and reports the
// reason the engine gave on its stdout (REFUSED:<reason>). Anything else
// is a crash, restarted within the crash budget.
package manager
