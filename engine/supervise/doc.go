// Package supervise runs a child process and restarts it by the rules of
// the process model: exit 0 is a clean stop; exit 75 asks for a restart
// (respawn at once, not a crash); exit 78 says the child refused to start
// for a reason a retry cannot cure (give up at once, spending no budget);
// anything else is a crash, and after MaxCrashes crashes inside Window
// the supervisor gives up. Between a crash and the respawn it pauses.
// Stopping sends SIGTERM, then SIGKILL after Grace.
//
// The process manager supervises the engine with it, and the engine
// supervises its agent with its own, independent budget.
//
// # Invariants
//
//   - A child started with StartTied gets its death signal when this
//     process dies, never earlier: it is forked from a thread locked for
//     the life of the process (the kernel ties the signal to the forking
//     thread, not to the process).
package supervise
