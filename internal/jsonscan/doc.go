// Package jsonscan finds, eight bytes a step, where a JSON string needs a
// closer look: the next quote, backslash or control byte. It is the
// inner loop of every JSON reader in ledger (the scanner behind
// ParseEntry and verify, the canonicaliser and its in-place check) and
// of ledger/event's fast payload check, which each kept a copy of it.
//
// # Invariants
//
// PlainRun(b, i) is the index of the first byte of b at or after i that
// is '"', '\\' or below 0x20, or len(b) when there is none; it reads
// nothing outside b and does not allocate. SpecialBytes is its step on
// one word. The package imports only the standard library and may be
// imported by any package of opx.
package jsonscan
