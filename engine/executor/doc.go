// Package executor runs the tool calls Shield allowed, inside the
// workspace, and describes them to the model.
//
// # Invariants
//
//   - Every path a tool names is resolved beneath the workspace root with
//     openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): absolute paths, ".."
//     that climbs out, and symlinks that point out are refused by the
//     kernel (EXDEV), never by string prefix checks, so a symlink swapped
//     in between check and use cannot redirect an executor.
//   - Executors are deterministic for the same workspace content: listings
//     are sorted and output is capped with a stated marker, because replay
//     compares their results.
//   - An executor never panics on hostile arguments: it returns a Result
//     with IsError set and a message the model can act on.
package executor
