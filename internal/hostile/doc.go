// Package hostile makes the inputs an attacker would hand a reader of
// outside files — empty, random, truncated, over-long, nested or aliased
// without end, invalid UTF-8 — and the special files that are not files
// at all (a directory, a FIFO, a device). Tests of every reader of outside
// input run their reader over these and check that it answers with an
// error in bounded memory, never a hang or a crash.
package hostile
