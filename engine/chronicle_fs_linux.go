package engine

import (
	"io"
	"io/fs"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"golang.org/x/sys/unix"
)

// workspaceFS gives Chronicle the workspace, resolved beneath its root.
type workspaceFS struct{ ws *executor.Workspace }

var _ chronicle.FS = workspaceFS{}

// WorkspaceFS gives Chronicle a workspace (tests and tools outside the
// engine use it too).
func WorkspaceFS(ws *executor.Workspace) chronicle.FS { return workspaceFS{ws} }

type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (i statInfo) Sys() any           { return &i.st }
func (i statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}

func (w workspaceFS) Lstat(rel string) (fs.FileInfo, error) {
	st, err := w.ws.Lstat(rel)
	if err != nil {
		return nil, err
	}
	return statInfo{name: rel, st: st}, nil
}

func (w workspaceFS) ReadFile(rel string) ([]byte, error) {
	f, err := w.ws.Open(rel, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, chronicle.MaxFileBytes+1))
}

func (w workspaceFS) Readlink(rel string) (string, error) { return w.ws.Readlink(rel) }
