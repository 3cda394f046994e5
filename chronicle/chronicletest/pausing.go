package chronicletest

import (
	"fmt"
	"io"
	"os"

	"github.com/opx-dev/opx/chronicle"
)

// PausingFS is a workspace that lets a rollback make After changes (a
// removal, a file written, a directory made or chmodded, a symlink; each
// file of a batch counts one) and then calls Pause instead of returning:
// right after the After-th change, or before the first one when After is
// 0. Reads are not counted, so everything a rollback does before it
// changes anything (planning, snapshotting, recording its plan) runs.
type PausingFS struct {
	chronicle.Workspace
	After int
	// Pause is called once the changes are made; it is not expected to
	// return (Block is the usual one).
	Pause   func()
	changes int
}

// Block tells the parent process "paused" on stdout and then blocks on
// stdin until the parent kills this process (or closes the pipe, which
// ends the process with status 3).
func Block() {
	fmt.Fprintln(os.Stdout, "paused")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(3)
}

// allow returns how many of n changes may be made now, pausing first
// when none may.
func (p *PausingFS) allow(n int) int {
	if p.changes >= p.After {
		p.Pause()
	}
	return min(n, p.After-p.changes)
}

func (p *PausingFS) made(n int) {
	p.changes += n
	if p.changes >= p.After {
		p.Pause()
	}
}

func (p *PausingFS) change(f func() error) error {
	p.allow(1)
	if err := f(); err != nil {
		return err
	}
	p.made(1)
	return nil
}

func (p *PausingFS) WriteFile(rel string, data []byte, mode uint32) error {
	return p.change(func() error { return p.Workspace.WriteFile(rel, data, mode) })
}

func (p *PausingFS) Symlink(target, rel string) error {
	return p.change(func() error { return p.Workspace.Symlink(target, rel) })
}

func (p *PausingFS) Remove(rel string, dir bool) error {
	return p.change(func() error { return p.Workspace.Remove(rel, dir) })
}

func (p *PausingFS) Mkdir(rel string, mode uint32) error {
	return p.change(func() error { return p.Workspace.Mkdir(rel, mode) })
}

func (p *PausingFS) Chmod(rel string, mode uint32) error {
	return p.change(func() error { return p.Workspace.Chmod(rel, mode) })
}

// WriteFiles implements chronicle.BatchWriter when the workspace does:
// the files allowed go in one batch, as the rollback would write them.
func (p *PausingFS) WriteFiles(files []chronicle.FileWrite) (int, error) {
	bw, ok := p.Workspace.(chronicle.BatchWriter)
	if !ok {
		for i, f := range files {
			if err := p.WriteFile(f.Path, f.Data, f.Mode); err != nil {
				return i, err
			}
		}
		return len(files), nil
	}
	k := p.allow(len(files))
	n, err := bw.WriteFiles(files[:k])
	if err != nil {
		return n, err
	}
	p.made(n)
	return n, nil
}

var _ chronicle.BatchWriter = (*PausingFS)(nil)
