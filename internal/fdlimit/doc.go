// Package fdlimit raises the process's limit on open files (RLIMIT_NOFILE)
// from its soft value to its hard value, and says what it did, so that a
// long-running server with many files open (the fleet collector: a store
// per source) runs within what the system allows and its log tells the
// operator the limit it runs under.
//
// # Invariants
//
//   - Raise never lowers a limit and never asks for more than the hard
//     limit (which only a privileged process could raise): it cannot fail
//     for lack of privilege.
//   - On Linux it makes real getrlimit/setrlimit calls; elsewhere it
//     changes nothing and reports Supported false.
//   - Go (1.19 and later) already raises the soft limit to the hard one
//     when a program starts and restores the original for the children it
//     runs; Raise is then a no-op that reports the limit. It stays
//     explicit so that the limit is logged and checked, and holds for a
//     process whose limit was lowered since it started.
package fdlimit
