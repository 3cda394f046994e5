package ledger

import (
	"fmt"
	"runtime/debug"
)

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

// faultless runs fn on this goroutine with faults caught: a fault or a
// panic while it reads a damaged file's map is returned as ErrUnreadable.
// Goroutines that read the map outside Ledger.view run their work in it.
func faultless(fn func() error) (err error) {
	defer catchFaults()()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: a page does not read (%v)", ErrUnreadable, r)
		}
	}()
	return fn()
}
