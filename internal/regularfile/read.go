package regularfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Open opens path for reading if it is a regular file, without blocking
// on a FIFO or a device's open.
func Open(path string) (*os.File, error) {
	// O_NONBLOCK: a FIFO with no writer is refused below, not waited for.
	// The check is made on the opened file, so nothing can be swapped in
	// between.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
	}
	return f, nil
}

// Read returns the content of the regular file at path, refusing one of
// more than max bytes with ErrTooLarge. It reads at most max+1 bytes, so
// a file that grows while it is read cannot make it use more memory.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes (at most %d)", path, ErrTooLarge, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLarge, max)
	}
	return b, nil
}

// kind names a non-regular file's type for an error message.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	default:
		return "a special file"
	}
}
