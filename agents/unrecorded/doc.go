// Package unrecorded is the file in which `opx hook AGENT` writes down
// the tool calls it let through while no engine could be reached or
// started (hooks.on_engine_down: allow), so that the next engine to start
// records them (ledger/event.HookUnrecorded). The hook writes it; the
// engine reads it. Both sides go through this package, so the file has
// one format.
//
// # The file
//
// File, in the workspace's state directory: JSON Lines, one Line per
// call, appended. Line has exactly the JSON fields of
// ledger/event.HookUnrecorded (a test in package cli holds the two
// equal; this package is on the ground floor and cannot import the
// record's).
//
// # Bounds and hostile files
//
//   - Append opens with O_APPEND|O_CREATE|O_NOFOLLOW, mode 0600, and
//     writes only to a regular file: a symlink planted at the path is
//     refused, never followed. It writes each line in one write(2), so
//     two hooks appending at once do not interleave their lines.
//   - Append refuses (ErrFull) a line that would grow the file past
//     MaxFileBytes; the hook still answers as configured and says the
//     call is no longer written down.
//   - A line holds the tool input cut to MaxInputBytes on a character
//     boundary and is at most MaxLineBytes.
//   - Read reads at most its bound, never follows a symlink, reads only
//     a regular file, and skips (and counts) lines that are not one Line
//     with its required fields: a torn last line after a crash, garbage.
//
// The engine takes the file by renaming it aside before reading it (a
// hook appending meanwhile then creates a new one), records its lines and
// removes it.
package unrecorded
