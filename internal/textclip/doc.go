// Package textclip cuts strings to a byte budget without splitting a
// character: what opx keeps of client, agent and model input goes into
// ledger entries, verdicts, errors and protobuf messages, which must not
// end in half a rune.
//
// It owns only Cut, the one copy of the cut the engine and its concerns
// used to keep each for itself. It imports only the standard library and
// may be imported by any package of opx.
//
// Invariants: Cut(s, n) is a prefix of s of at most n bytes; it is s
// itself when s fits; it never ends inside a UTF-8 sequence that starts
// within the budget. It does not repair invalid UTF-8 (a stray byte in
// s is kept as it is), add a marker of the cut, or allocate.
package textclip
