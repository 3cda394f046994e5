package executor

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// DirStat is one directory entry with its lstat, taken relative to the
// directory's descriptor (so a swapped path cannot redirect it).
type DirStat struct {
	Name string
	Stat unix.Stat_t
}

// ReadDirStat lists a directory beneath the root with each entry's lstat.
// Entries that vanish between the listing and the stat are left out.
func (w *Workspace) ReadDirStat(rel string) ([]DirStat, error) {
	var out []DirStat
	err := w.ReadDirStatFunc(rel, func(name []byte, st *unix.Stat_t) {
		out = append(out, DirStat{Name: string(name), Stat: *st})
	})
	return out, err
}

// ReadDirStatFunc is ReadDirStat calling fn for each entry instead of
// building a list; name and st are valid only during the call. It reads
// the directory with getdents into a pooled buffer and stats each name in
// place: a workspace snapshot lists every directory, so this is on its
// hot path.
func (w *Workspace) ReadDirStatFunc(rel string, fn func(name []byte, st *unix.Stat_t)) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: w.resolve()}
	fd, err := unix.Openat2(int(w.root.Fd()), rel, &how)
	for err == unix.EINTR || err == unix.EAGAIN {
		fd, err = unix.Openat2(int(w.root.Fd()), rel, &how)
	}
	if err != nil {
		return pathError(rel, err)
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var st unix.Stat_t
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return pathError(rel, err)
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, name NUL-terminated.
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			nameZ := buf[off+19 : off+reclen]
			off += reclen
			i := bytes.IndexByte(nameZ, 0)
			if i < 0 {
				return pathError(rel, unix.EINVAL) // the kernel always terminates names
			}
			name := nameZ[:i]
			if len(name) == 0 || (name[0] == '.' && (len(name) == 1 || (len(name) == 2 && name[1] == '.'))) {
				continue
			}
			if err := fstatatZ(fd, nameZ[:i+1], &st); err != nil {
				if err == unix.ENOENT {
					continue
				}
				return pathError(rel+"/"+string(name), err)
			}
			fn(name, &st)
		}
	}
}

// direntBufs are getdents buffers, reused across directories and scans.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Chmod sets the permission bits of rel, which must not be a symlink.
// The last component is opened O_PATH without following it and changed
// through /proc/self/fd, since fchmodat cannot refuse a symlink.
func (w *Workspace) Chmod(rel string, mode uint32) error {
	fd, base, err := w.writeParent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	pfd, err := unix.Openat(fd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathError(rel, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return pathError(rel, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &PathError{Path: rel, Reason: "is a symlink; its mode cannot be set", Errno: unix.ELOOP}
	}
	if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), mode&0o7777); err != nil {
		return pathError(rel, err)
	}
	return nil
}

// Symlink replaces rel atomically with a symlink to target: the link is
// made under a temporary name in the same directory and renamed over rel.
// A directory at rel is not replaced.
func (w *Workspace) Symlink(target, rel string) error {
	fd, base, err := w.writeParent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := ".opx-tmp-" + hex.EncodeToString(rnd[:])
	if err := unix.Symlinkat(target, fd, tmp); err != nil {
		return pathError(rel, err)
	}
	if err := unix.Renameat(fd, tmp, fd, base); err != nil {
		unix.Unlinkat(fd, tmp, 0)
		return pathError(rel, err)
	}
	// The directory descriptor is O_PATH: reopen it to fsync the rename.
	if real, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		unix.Fsync(real)
		unix.Close(real)
	}
	return nil
}

// FileWrite is one file of a WriteFiles batch.
type FileWrite struct {
	Rel  string
	Data []byte
	Mode uint32
}

// WriteFiles replaces many files, each atomically as WriteFile does, but
// with one flush for the whole batch instead of two fsyncs per file: every
// temporary file is written first, the filesystem is synced once
// (syncfs), then each is renamed over its target and each directory
// touched is fsynced. A crash leaves every target either as it was or
// wholly new (and maybe a .opx-tmp- file). It stops at the first error,
// removing the temporary files not yet renamed, and returns how many
// targets it replaced.
func (w *Workspace) WriteFiles(files []FileWrite) (int, error) {
	type pending struct {
		dir       int // an O_RDONLY directory descriptor, shared per directory
		tmp, base string
		rel       string
	}
	dirs := map[string]int{}
	defer func() {
		for _, fd := range dirs {
			unix.Close(fd)
		}
	}()
	var todo []pending
	cleanup := func() {
		for _, p := range todo {
			unix.Unlinkat(p.dir, p.tmp, 0)
		}
	}
	for _, f := range files {
		dir, base, err := splitRel(f.Rel)
		if err != nil {
			cleanup()
			return 0, err
		}
		dfd, ok := dirs[dir]
		if !ok {
			pfd, err := w.dirFD(dir, true)
			if err != nil {
				cleanup()
				return 0, err
			}
			dfd, err = unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			unix.Close(pfd)
			if err != nil {
				cleanup()
				return 0, pathError(dir, err)
			}
			dirs[dir] = dfd
		}
		var rnd [6]byte
		rand.Read(rnd[:])
		tmp := ".opx-tmp-" + hex.EncodeToString(rnd[:])
		fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, f.Mode&0o7777)
		if err != nil {
			cleanup()
			return 0, pathError(f.Rel, err)
		}
		todo = append(todo, pending{dir: dfd, tmp: tmp, base: base, rel: f.Rel})
		werr := writeAll(fd, f.Data)
		if werr == nil {
			werr = unix.Fchmod(fd, f.Mode&0o7777)
		}
		if cerr := unix.Close(fd); werr == nil {
			werr = cerr
		}
		if werr != nil {
			cleanup()
			return 0, pathError(f.Rel, werr)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	if err := unix.Syncfs(todo[0].dir); err != nil {
		cleanup()
		return 0, pathError(".", err)
	}
	for i, p := range todo {
		if err := unix.Renameat(p.dir, p.tmp, p.dir, p.base); err != nil {
			todo = todo[i:]
			cleanup()
			return i, pathError(p.rel, err)
		}
	}
	for _, fd := range dirs {
		if err := unix.Fsync(fd); err != nil {
			return len(todo), err
		}
	}
	return len(todo), nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
