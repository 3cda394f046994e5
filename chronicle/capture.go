package chronicle

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"syscall"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// MaxFileBytes bounds the content one snapshot keeps per file. A tool
// that names a larger file does not run; a workspace snapshot records a
// larger file's hash without its content (event.FileState.Omitted).
const MaxFileBytes = 256 << 20

// Capture returns the pre-state of each path, and the contents to store as
// blobs with the snapshot entry. A file over the snapshot limit is
// refused (ErrTooLarge): a tool that names it does not run.
func Capture(fsys FS, paths []string) ([]event.FileState, [][]byte, error) {
	return captureAll(fsys, paths, false)
}

// CaptureOmitting is Capture recording a file over the snapshot limit by
// its hash, without its content (event.FileState.Omitted): what a rollback
// overwrites must be recorded even when it cannot all be kept.
func CaptureOmitting(fsys FS, paths []string) ([]event.FileState, [][]byte, error) {
	return captureAll(fsys, paths, true)
}

func captureAll(fsys FS, paths []string, omitLarge bool) ([]event.FileState, [][]byte, error) {
	paths = uniqueSorted(paths)
	states := make([]event.FileState, 0, len(paths))
	var blobs [][]byte
	for _, p := range paths {
		st, content, err := capture(fsys, p, MaxFileBytes, true)
		if err != nil {
			return nil, nil, err
		}
		if st.State == event.StateFile && st.Blob == "" && !omitLarge {
			return nil, nil, fmt.Errorf("snapshot %s: %w (%d bytes, limit %d)", p, ErrTooLarge, st.Size, MaxFileBytes)
		}
		states = append(states, st)
		if content != nil {
			blobs = append(blobs, content)
		}
	}
	return states, blobs, nil
}

// capture reads one path's state. A regular file's content is returned
// when keep is set and it is at most limit bytes; otherwise only its hash
// is recorded (and, above the limit, why).
func capture(fsys FS, p string, limit int64, keep bool) (event.FileState, []byte, error) {
	fi, err := fsys.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		// ENOTDIR: a directory above it is a file now; ELOOP: a symlink
		// (which Chronicle never follows): the path itself is absent.
		return event.FileState{Path: p, State: event.StateAbsent}, nil, nil
	case err != nil:
		return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	mode := ModeBits(fi.Mode())
	switch {
	case fi.Mode().IsRegular():
		if fi.Size() > limit {
			h, err := hashFile(fsys, p)
			if err != nil {
				return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w", p, err)
			}
			return event.FileState{Path: p, State: event.StateFile, Mode: mode, Size: fi.Size(), Hash: h.String(),
				Omitted: fmt.Sprintf("%d bytes, over the %d byte snapshot limit", fi.Size(), limit)}, nil, nil
		}
		b, err := fsys.ReadFile(p)
		if err != nil {
			return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w", p, err)
		}
		st := event.FileState{Path: p, State: event.StateFile, Mode: mode, Size: int64(len(b)), Blob: ledger.Sum(b).String()}
		if !keep {
			b = nil
		}
		return st, b, nil
	case fi.IsDir():
		return event.FileState{Path: p, State: event.StateDir, Mode: mode}, nil, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := fsys.Readlink(p)
		if err != nil {
			return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w", p, err)
		}
		if !utf8.ValidString(target) {
			// A ledger entry is UTF-8: such a target could only be
			// recorded altered, and restored wrong.
			return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w (a symlink whose target is not valid UTF-8)", p, ErrNotSnapshottable)
		}
		return event.FileState{Path: p, State: event.StateSymlink, Target: target}, nil, nil
	default:
		return event.FileState{}, nil, fmt.Errorf("snapshot %s: %w (%v)", p, ErrNotSnapshottable, fi.Mode().Type())
	}
}

// Read returns a path's state now and, for a regular file within the
// snapshot limit, its content.
func Read(fsys FS, p string) (event.FileState, []byte, error) {
	return capture(fsys, p, MaxFileBytes, true)
}

// ModeBits are the permission bits a snapshot records and a rollback
// restores: rwx for all, and setuid, setgid and sticky.
func ModeBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// hashFile hashes a file too large to keep. FS has no streaming read, so
// this reads it whole: it is rare and bounded by the filesystem.
func hashFile(fsys FS, p string) (ledger.Hash, error) {
	if s, ok := fsys.(interface {
		HashFile(rel string) (ledger.Hash, error)
	}); ok {
		return s.HashFile(p)
	}
	b, err := fsys.ReadFile(p)
	if err != nil {
		return ledger.Hash{}, err
	}
	return ledger.Sum(b), nil
}

// Post returns the state of each path after an action: a file's content
// hash, or absent. Rollback compares it with the file at rollback time to
// detect later changes.
func Post(fsys FS, paths []string) ([]event.PostState, error) {
	paths = uniqueSorted(paths)
	out := make([]event.PostState, 0, len(paths))
	for _, p := range paths {
		st, _, err := capture(fsys, p, MaxFileBytes, false)
		if err != nil {
			return nil, fmt.Errorf("post-state %s: %w", p, errors.Unwrap(err))
		}
		out = append(out, PostOf(st))
	}
	return out, nil
}

// PostOf turns a state into the post-state form exec.completed records:
// absent, or a hash that tells content (files), target (symlinks) and
// kind apart, with the mode.
func PostOf(f event.FileState) event.PostState {
	if f.State == event.StateAbsent {
		return event.PostState{Path: f.Path, Absent: true}
	}
	return event.PostState{Path: f.Path, Hash: StateHash(f), Mode: f.Mode}
}

// StateHash is the hash post-states record for a present path: a file's
// content hash, BLAKE3("symlink:"+target) for a symlink, BLAKE3("dir")
// for a directory; "" for absent.
func StateHash(f event.FileState) string {
	switch f.State {
	case event.StateFile:
		return f.ContentHash()
	case event.StateSymlink:
		return ledger.Sum([]byte("symlink:" + f.Target)).String()
	case event.StateDir:
		return ledger.Sum([]byte("dir")).String()
	default:
		return ""
	}
}

func uniqueSorted(paths []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
