package ledger

import "runtime/debug"

// catchFaults makes a memory fault on this goroutine (a read of the map of
// a truncated or damaged ledger file, which would be SIGBUS or SIGSEGV) a
// panic that the caller recovers and reports, instead of a crash of the
// process. It returns the function that restores the previous setting:
//
//	defer catchFaults()()
func catchFaults() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}
