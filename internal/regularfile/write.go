package regularfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes b to path through a temporary file in the same
// directory, synced, then renamed over path: path holds either what it
// held before or all of b, and a failure leaves no temporary file behind.
// Only a regular file is replaced (keeping its mode), also through a
// symbolic link to one; a device, a FIFO, a socket or a directory is
// refused with ErrNotRegular, since a rename would put a file in the place
// of /dev/null. The file gets mode perm, or with perm 0 the replaced
// file's mode (0600 for a new one).
func WriteAtomic(path string, b []byte, perm os.FileMode) error {
	path, mode, err := replaceable(path)
	if err != nil {
		return err
	}
	if perm != 0 {
		mode = perm
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = tmp.Chmod(mode)
	if err == nil {
		_, err = tmp.Write(b)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckReplaceable returns the error WriteAtomic would give for path
// before anything is written: a caller checks its output first, so that
// no work is done for a file it will not be allowed to write.
func CheckReplaceable(path string) error {
	_, _, err := replaceable(path)
	return err
}

// replaceable returns the file WriteAtomic replaces for path (the one a
// symbolic link names) and the mode to give it: the existing file's, or
// 0600 for a new one.
func replaceable(path string) (string, os.FileMode, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return "", 0, fmt.Errorf("%s is a symbolic link to nothing: not written", path)
		}
		return path, 0o600, nil
	case err != nil:
		return "", 0, err
	case !fi.Mode().IsRegular():
		return "", 0, fmt.Errorf("%s is %s: %w", path, kind(fi.Mode()), ErrNotRegular)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, err
	}
	return real, fi.Mode().Perm(), nil
}
