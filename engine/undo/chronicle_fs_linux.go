package undo

import (
	"io"
	"io/fs"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"
)

// workspaceFS gives Chronicle the workspace, resolved beneath its root.
type workspaceFS struct{ ws *executor.Workspace }

var _ chronicle.Workspace = workspaceFS{}

// WorkspaceFS gives Chronicle a workspace (tests and offline rollbacks use
// it too): a strict view, so that no symlink is followed on the way to
// anything Chronicle records or restores.
func WorkspaceFS(ws *executor.Workspace) chronicle.Workspace { return workspaceFS{ws.Strict()} }

type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (i statInfo) Sys() any           { return &i.st }
func (i statInfo) Mode() fs.FileMode  { return fileMode(&i.st) }

func fileMode(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	switch st.Mode & unix.S_IFMT {
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
	f, err := w.ws.Open(rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the file, as os.ReadFile does: growing a buffer for a
	// large file would copy it several times over.
	size := int64(512)
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		size = min(fi.Size(), chronicle.MaxFileBytes) + 1
	}
	data := make([]byte, 0, size)
	for int64(len(data)) <= chronicle.MaxFileBytes {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: let append pick
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
	return data, nil
}

// HashFile hashes a file without holding it in memory (files over the
// snapshot limit).
func (w workspaceFS) HashFile(rel string) (ledger.Hash, error) {
	f, err := w.ws.Open(rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return ledger.Hash{}, err
	}
	defer f.Close()
	h := blake3.New()
	if _, err := io.Copy(h, f); err != nil {
		return ledger.Hash{}, err
	}
	var out ledger.Hash
	copy(out[:], h.Sum(nil))
	return out, nil
}

func (w workspaceFS) Readlink(rel string) (string, error) { return w.ws.Readlink(rel) }

// ReadDirStat implements chronicle.TreeFS. The names of one directory
// share one string (a workspace snapshot lists every directory).
func (w workspaceFS) ReadDirStat(rel string) ([]chronicle.Stat, error) {
	out := make([]chronicle.Stat, 0, 32)
	var names []byte
	var ends []int
	err := w.ws.ReadDirStatFunc(rel, func(name []byte, st *unix.Stat_t) {
		names = append(names, name...)
		ends = append(ends, len(names))
		out = append(out, chronicle.Stat{Mode: fileMode(st), Size: st.Size, Dev: st.Dev, Ino: st.Ino,
			Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()})
	})
	all, start := string(names), 0
	for i := range out {
		out[i].Name = all[start:ends[i]]
		start = ends[i]
	}
	return out, err
}

func (w workspaceFS) WriteFile(rel string, data []byte, mode uint32) error {
	return w.ws.WriteFile(rel, data, mode)
}
func (w workspaceFS) Symlink(target, rel string) error { return w.ws.Symlink(target, rel) }

// WriteFiles implements chronicle.BatchWriter: one flush for many files.
func (w workspaceFS) WriteFiles(files []chronicle.FileWrite) (int, error) {
	batch := make([]executor.FileWrite, len(files))
	for i, f := range files {
		batch[i] = executor.FileWrite{Rel: f.Path, Data: f.Data, Mode: f.Mode}
	}
	return w.ws.WriteFiles(batch)
}

// Dir returns the workspace's path.
func (w workspaceFS) Dir() string { return w.ws.Path() }

func (w workspaceFS) Remove(rel string, dir bool) error   { return w.ws.Remove(rel, dir) }
func (w workspaceFS) Mkdir(rel string, mode uint32) error { return w.ws.Mkdir(rel, mode) }
func (w workspaceFS) Chmod(rel string, mode uint32) error { return w.ws.Chmod(rel, mode) }
