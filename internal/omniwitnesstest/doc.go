// Package omniwitnesstest runs transparency-dev's omniwitness, the C2SP
// tlog-witness of the public witness network
// (github.com/transparency-dev/witness/cmd/omniwitness, pinned in
// .ci/tools/go.mod and built by .ci/run into .ci/bin), on loopback for
// the tests that have opx's checkpoints cosigned by the real thing.
//
// # Invariants
//
//   - Under CI=true a missing omniwitness fails the test; elsewhere the
//     test is skipped with the command that builds it.
//   - It listens on 127.0.0.1 only (its metrics listener is off), knows
//     only the log it is given (its built-in logs are never polled: no
//     feeder or distributor runs) and keeps its state in a sqlite file in
//     the test's temporary directory, so a restart keeps what it cosigned.
//   - It is stopped (SIGTERM, then SIGKILL) when the test ends.
package omniwitnesstest
