package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/internal/regularfile"
)

// MaxSettingsBytes bounds a settings file opx reads: the CLIs' own are a
// few kilobytes.
const MaxSettingsBytes = 4 << 20

// A settingsFile is one CLI settings file as read: its document, and
// where and how to write it back.
type settingsFile struct {
	path   string // as named
	target string // the file to replace: path, or where its link points (user scope)
	exists bool
	doc    *object
	// canon is the document's encoding as read: a rewrite that encodes
	// the same changed nothing, and the file is not written.
	canon []byte
	scope Scope
}

// readSettings reads and decodes the settings file at path. A missing
// file is an empty document. In a workspace, the file and the directory
// holding it must not be symbolic links (ErrSymlink); in the user's scope a
// link to a regular file is followed and the file it names is the one
// rewritten.
func readSettings(path string, s Scope) (*settingsFile, error) {
	f := &settingsFile{path: path, target: path, scope: s, doc: &object{}}
	if !s.IsUser() {
		if fi, err := os.Lstat(filepath.Dir(path)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%w: %s; opx does not write through it (make it a directory, or install with --user)", ErrSymlink, filepath.Dir(path))
		}
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.canon = encodeDocument(f.doc)
		return f, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		if !s.IsUser() {
			return nil, fmt.Errorf("%w: %s; opx does not write through it (replace it with the file, or install with --user)", ErrSymlink, path)
		}
		if f.target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, fmt.Errorf("%s is a symbolic link that cannot be followed: %w", path, err)
		}
	}
	b, err := regularfile.Read(path, MaxSettingsBytes)
	if err != nil {
		if errors.Is(err, regularfile.ErrTooLarge) || errors.Is(err, regularfile.ErrNotRegular) {
			return nil, fmt.Errorf("%w: %w", ErrSettings, err)
		}
		return nil, err
	}
	if f.doc, err = parseDocument(b); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; it was left as it is", ErrSettings, path, err)
	}
	f.exists = true
	f.canon = encodeDocument(f.doc)
	return f, nil
}

// write writes the document back if it changed, atomically, keeping an
// existing file's mode (a new one: 0644 in a workspace, which teams
// commit, 0600 in the user's directory). It reports whether it wrote.
func (f *settingsFile) write() (bool, error) {
	b := encodeDocument(f.doc)
	if string(b) == string(f.canon) {
		return false, nil
	}
	var perm os.FileMode // 0: keep the existing file's mode
	if !f.exists {
		dirPerm := os.FileMode(0o700)
		perm = 0o600
		if !f.scope.IsUser() {
			dirPerm, perm = 0o755, 0o644
		}
		if err := os.MkdirAll(filepath.Dir(f.target), dirPerm); err != nil {
			return false, err
		}
	}
	if err := regularfile.WriteAtomic(f.target, b, perm); err != nil {
		return false, err
	}
	f.canon, f.exists = b, true
	return true, nil
}

// hooks returns the document's "hooks" object, creating it when create
// is set; nil when there is none. A "hooks" that is not an object is
// ErrSettings.
func (f *settingsFile) hooks(create bool) (*object, error) {
	v, ok := f.doc.get("hooks")
	if !ok || v == nil {
		if !create {
			return nil, nil
		}
		h := &object{}
		f.doc.set("hooks", h)
		return h, nil
	}
	h, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%w: %s: \"hooks\" is not an object; it was left as it is", ErrSettings, f.path)
	}
	return h, nil
}
