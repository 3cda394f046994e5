package executor

import (
	"errors"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxLinks bounds the symlinks Resolve follows for one path, as the
// kernel's own lookup does (40).
const MaxLinks = 40

// Resolve returns the path rel names once every symlink on the way is
// followed, component by component, beneath the workspace: a clean
// relative path ("." for the root) that goes through no symlink at the
// time of the call, or, when a link or ".." leads out of the workspace
// (where openat2 refuses to go), the absolute path it leads to. With
// followLast, a symlink in the last component is followed too. A
// component that does not exist ends the lookup: the rest is taken as
// written (".." applied). More than MaxLinks links is an error (ELOOP).
//
// Resolve is what Shield judges beside the path as written (a link
// s -> secrets makes s/key secrets/key); the executors then open the
// resolved path following no symlink at all, so a link swapped in after
// the verdict is refused rather than followed.
func (w *Workspace) Resolve(rel string, followLast bool) (string, error) {
	if err := checkRel(rel); err != nil {
		return "", err
	}
	var done []string // real components, none a symlink when looked at
	todo := strings.Split(rel, "/")
	links := 0
	missing := false // a component did not exist: the rest is lexical
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return path.Join(append([]string{path.Dir(w.path)}, todo...)...), nil
			}
			done = done[:len(done)-1]
			continue
		}
		if missing || (!followLast && lastComponent(todo)) {
			done = append(done, c)
			continue
		}
		target, isLink, err := w.lookLink(done, c)
		switch {
		case err != nil:
			missing = true
			done = append(done, c)
			continue
		case !isLink:
			done = append(done, c)
			continue
		}
		links++
		if links > MaxLinks {
			return "", pathError(rel, unix.ELOOP)
		}
		if path.IsAbs(target) {
			return path.Join(append([]string{target}, todo...)...), nil
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// lastComponent reports whether the components left name nothing more.
func lastComponent(todo []string) bool {
	for _, c := range todo {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

// lookLink says whether name in the directory dir (real components
// beneath the root) is a symlink, and its target. The directory is
// opened following no symlink, so a link swapped in on the way is an
// error, not a detour.
func (w *Workspace) lookLink(dir []string, name string) (string, bool, error) {
	d := "."
	if len(dir) > 0 {
		d = strings.Join(dir, "/")
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveFlags | unix.RESOLVE_NO_SYMLINKS}
	var fd int
	for {
		var err error
		fd, err = unix.Openat2(int(w.root.Fd()), d, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		break
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", false, nil
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, name, buf)
	if err != nil {
		return "", false, err
	}
	if n == 0 {
		return "", false, unix.ENOENT
	}
	return string(buf[:n]), true, nil
}

// LinksBeneath lists the symlinks beneath the directory rel (rel itself
// excluded), following none, as workspace-relative paths, looking at no
// more than max entries: complete is false when it stopped there. A rel
// that is not a directory has none.
func (w *Workspace) LinksBeneath(rel string, max int) (links []string, complete bool, err error) {
	strict := w.Strict()
	st, err := strict.Lstat(rel)
	if path.Clean(rel) == "." {
		st, err = unix.Stat_t{Mode: unix.S_IFDIR}, nil
	}
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, true, nil
	}
	seen := 0
	dirs := []string{path.Clean(rel)}
	for len(dirs) > 0 {
		d := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		err := strict.ReadDirStatFunc(d, func(name []byte, st *unix.Stat_t) {
			seen++
			if seen > max {
				return
			}
			p := path.Join(d, string(name))
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFLNK:
				links = append(links, p)
			case unix.S_IFDIR:
				dirs = append(dirs, p)
			}
		})
		if seen > max {
			return links, false, nil
		}
		if err != nil {
			continue // gone or unreadable since: nothing to follow there
		}
	}
	return links, true, nil
}
