package chronicle

import (
	"io/fs"
)

// FS is the workspace as Chronicle reads it. Every path is relative to
// the workspace, slash-separated, and resolved beneath it; a final symlink
// is never followed. Absence is an error matching fs.ErrNotExist.
type FS interface {
	Lstat(rel string) (fs.FileInfo, error)
	ReadFile(rel string) ([]byte, error)
	Readlink(rel string) (string, error)
}

// Stat is what a directory listing tells of one entry without opening
// it: enough to decide whether a file changed since it was last hashed.
type Stat struct {
	Name  string
	Mode  fs.FileMode // type bits and permissions
	Size  int64
	Dev   uint64
	Ino   uint64
	Mtime int64 // Unix nanoseconds
	Ctime int64 // Unix nanoseconds; no system call sets it, so a change always moves it
}

// TreeFS can list a directory with its entries' stats, for workspace
// snapshots. ReadDirStat(".") lists the root.
type TreeFS interface {
	FS
	ReadDirStat(rel string) ([]Stat, error)
}

// WriteFS can restore what a snapshot recorded. Each method works beneath
// the workspace and never follows a final symlink.
type WriteFS interface {
	FS
	// WriteFile replaces rel atomically (temporary file, fsync, rename,
	// fsync of the directory) with data and mode.
	WriteFile(rel string, data []byte, mode uint32) error
	// Symlink replaces rel atomically with a symlink to target.
	Symlink(target, rel string) error
	// Remove deletes a file or symlink, or with dir an empty directory.
	Remove(rel string, dir bool) error
	// Mkdir creates rel and any missing parents.
	Mkdir(rel string, mode uint32) error
	// Chmod sets rel's permission bits; rel is not a symlink.
	Chmod(rel string, mode uint32) error
}

// Workspace is everything Chronicle does with a workspace: snapshots
// (TreeFS) and rollbacks (WriteFS).
type Workspace interface {
	TreeFS
	WriteFS
}

// FileWrite is one file of a batch.
type FileWrite struct {
	Path string
	Data []byte
	Mode uint32
}

// BatchWriter is a WriteFS that can replace many files with one flush to
// disk, each still atomically. Rollbacks of many files use it.
type BatchWriter interface {
	// WriteFiles replaces each file like WriteFile does and returns how
	// many it replaced before an error.
	WriteFiles(files []FileWrite) (int, error)
}
