// Package regularfile reads files that come from outside opx — a policy,
// a configuration, a scripted transcript, a token — in bounded memory and
// without hanging.
//
// # Invariants
//
// Only regular files are read: a directory, a FIFO, a socket or a device
// (/dev/zero, /dev/stdin) is refused with ErrNotRegular before a byte is
// read. The open never blocks (O_NONBLOCK, so a FIFO with no writer is
// refused rather than waited for). At most max bytes are read, whatever
// the file's size claims or becomes while it is read: a larger file is
// refused with ErrTooLarge, so memory is bounded by max.
//
// WriteAtomic is the writing side: it replaces only a regular file (never
// a device, FIFO or directory a user names as output), through a temporary
// file renamed into place, so the target holds the old bytes or all of the
// new ones.
package regularfile
