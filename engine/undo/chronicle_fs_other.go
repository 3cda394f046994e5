//go:build !linux

package undo

import (
	"io/fs"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
)

// workspaceFS is unavailable off Linux, like the executors.
type workspaceFS struct{ ws *executor.Workspace }

// WorkspaceFS gives Chronicle a workspace; unavailable off Linux.
func WorkspaceFS(ws *executor.Workspace) chronicle.Workspace { return workspaceFS{ws} }

func (w workspaceFS) Lstat(rel string) (fs.FileInfo, error) { return nil, executor.ErrUnsupported }
func (w workspaceFS) ReadFile(rel string) ([]byte, error)   { return nil, executor.ErrUnsupported }
func (w workspaceFS) Readlink(rel string) (string, error)   { return "", executor.ErrUnsupported }
func (w workspaceFS) ReadDirStat(rel string) ([]chronicle.Stat, error) {
	return nil, executor.ErrUnsupported
}
func (w workspaceFS) WriteFile(rel string, data []byte, mode uint32) error {
	return executor.ErrUnsupported
}
func (w workspaceFS) Symlink(target, rel string) error    { return executor.ErrUnsupported }
func (w workspaceFS) Remove(rel string, dir bool) error   { return executor.ErrUnsupported }
func (w workspaceFS) Mkdir(rel string, mode uint32) error { return executor.ErrUnsupported }
func (w workspaceFS) Chmod(rel string, mode uint32) error { return executor.ErrUnsupported }

// Dir returns the workspace's path.
func (w workspaceFS) Dir() string { return w.ws.Path() }
