package mcp

import (
	"sync"
	"syscall"
)

// A freezer keeps a writable server's process group stopped (SIGSTOP)
// whenever no request of opx's is in flight, and continues it (SIGCONT)
// while one is: a server that may change the workspace changes it only
// while a call of it runs, between the call's snapshot and its recorded
// diff, never unseen between calls (review #2): its relistings are made
// at its next call (Conn.relistDue) and a ping after a timeout before
// the call returns. The window left is its start (before its first
// listing), how long it takes to stop after an answer, and requests a
// proxy passes through (Forward); at its end it is killed where it
// stands (Close): docs/mcp.md says so.
//
// The launcher, the group's leader, is continued at once after each
// stop: it only waits for the server, and it must be able to act on the
// engine's death signal (SIGTERM), which a stopped process cannot — it
// would catch the signal and stop before acting on it, leaving the group
// stopped for good. It kills the group, stopped members included. (Were
// the engine to die between the two signals, the group is orphaned with
// stopped members and the kernel sends it SIGHUP and SIGCONT, which the
// launcher also acts on.)
type freezer struct {
	proc *process

	mu     sync.Mutex
	n      int  // requests in flight
	frozen bool // stopped by us
	off    bool // no longer stopped or continued (closing)
}

// hold continues the group if it is stopped; release stops it again once
// no request is left in flight.
func (f *freezer) hold() (release func()) {
	f.mu.Lock()
	f.n++
	if f.frozen && !f.off {
		f.frozen = false
		f.proc.signal(syscall.SIGCONT)
	}
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.n--
			f.mu.Unlock()
			f.freeze()
		})
	}
}

// freeze stops the group if nothing is in flight.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 && !f.frozen && !f.off {
		f.frozen = true
		f.proc.signal(syscall.SIGSTOP)
		f.proc.signalLeader(syscall.SIGCONT)
	}
}

// stayFrozen keeps the group as it is from now on (it is being killed).
func (f *freezer) stayFrozen() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.off = true
}
