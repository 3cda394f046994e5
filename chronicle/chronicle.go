package chronicle

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// FS is the workspace as Chronicle needs it. Every path is relative to
// the workspace and resolved beneath it; a final symlink is never
// followed. Absence is an error matching fs.ErrNotExist.
type FS interface {
	Lstat(rel string) (fs.FileInfo, error)
	ReadFile(rel string) ([]byte, error)
	Readlink(rel string) (string, error)
}

// MaxFileBytes bounds the content one snapshot keeps per file.
const MaxFileBytes = 64 << 20

// ErrTooLarge is returned when a file is too large to snapshot.
var ErrTooLarge = errors.New("file too large to snapshot")

// Capture returns the pre-state of each path, and the contents to store as
// blobs with the snapshot entry.
func Capture(fsys FS, paths []string) ([]event.FileState, [][]byte, error) {
	paths = uniqueSorted(paths)
	states := make([]event.FileState, 0, len(paths))
	var blobs [][]byte
	for _, p := range paths {
		fi, err := fsys.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			states = append(states, event.FileState{Path: p, State: event.StateAbsent})
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("snapshot %s: %w", p, err)
		}
		mode := uint32(fi.Mode().Perm())
		switch {
		case fi.Mode().IsRegular():
			if fi.Size() > MaxFileBytes {
				return nil, nil, fmt.Errorf("snapshot %s: %w (%d bytes, limit %d)", p, ErrTooLarge, fi.Size(), MaxFileBytes)
			}
			b, err := fsys.ReadFile(p)
			if err != nil {
				return nil, nil, fmt.Errorf("snapshot %s: %w", p, err)
			}
			states = append(states, event.FileState{Path: p, State: event.StateFile, Mode: mode, Size: int64(len(b)), Blob: ledger.Sum(b).String()})
			blobs = append(blobs, b)
		case fi.IsDir():
			states = append(states, event.FileState{Path: p, State: event.StateDir, Mode: mode})
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := fsys.Readlink(p)
			if err != nil {
				return nil, nil, fmt.Errorf("snapshot %s: %w", p, err)
			}
			states = append(states, event.FileState{Path: p, State: event.StateSymlink, Target: target})
		default:
			return nil, nil, fmt.Errorf("snapshot %s: not a file, directory or symlink (%v)", p, fi.Mode().Type())
		}
	}
	return states, blobs, nil
}

// Post returns the state of each path after an action: a file's content
// hash, or absent. Rollback compares it with the file at rollback time to
// detect later changes.
func Post(fsys FS, paths []string) ([]event.PostState, error) {
	paths = uniqueSorted(paths)
	out := make([]event.PostState, 0, len(paths))
	for _, p := range paths {
		fi, err := fsys.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, event.PostState{Path: p, Absent: true})
			continue
		case err != nil:
			return nil, fmt.Errorf("post-state %s: %w", p, err)
		}
		var h ledger.Hash
		switch {
		case fi.Mode().IsRegular():
			b, err := fsys.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("post-state %s: %w", p, err)
			}
			h = ledger.Sum(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := fsys.Readlink(p)
			if err != nil {
				return nil, fmt.Errorf("post-state %s: %w", p, err)
			}
			h = ledger.Sum([]byte("symlink:" + target))
		default: // a directory: its existence and mode are its state
			h = ledger.Sum([]byte("dir"))
		}
		out = append(out, event.PostState{Path: p, Hash: h.String(), Mode: uint32(fi.Mode().Perm())})
	}
	return out, nil
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
