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
//   - What a tool opens is what Shield judged: a path that went through a
//     symlink is resolved before the verdict (Workspace.Resolve) and the
//     executors open that resolution (Call.Judged) with
//     RESOLVE_NO_SYMLINKS, so a link that appears later is refused, not
//     followed. Changes never go through a symlinked directory and
//     replace or remove a final link rather than follow it.
//   - Executors are deterministic for the same workspace content: listings
//     are sorted and output is capped with a stated marker, because replay
//     compares their results.
//   - An executor never panics on hostile arguments: it returns a Result
//     with IsError set and a message the model can act on.
package executor
