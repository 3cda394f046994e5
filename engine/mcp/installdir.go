package mcp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opx-dev/opx/sandbox"
)

// A server runs with the system directories readable and nothing else of
// the machine; what its program needs beyond them is found here, from the
// program itself:
//
//   - the program (Argv[0] looked up in PATH, symbolic links resolved), and
//     any argument that is an absolute path to a script (.js, .mjs, .cjs,
//     .ts, .py) or a file inside a node_modules tree: `node /srv/x/index.js`;
//   - for each, its install root: the outermost node_modules directory
//     above it (a package's dependencies are hoisted there), else the
//     nearest of its ancestors, up to four levels, that holds
//     package.json, node_modules, pyproject.toml or pyvenv.cfg (a project
//     or a Python virtual environment), else its own directory;
//   - the interpreter its "#!" line names (through /usr/bin/env, looked up
//     in PATH), found the same way.
//
// Directories beneath the system ones are left out (already readable). A
// root at the top of the tree ("/", /tmp, /home), the home directory, or
// an ancestor of it is refused (ErrInstallDir): granting it would grant
// the user's files, or everyone's.

// installDepth bounds how far up a project root is looked for.
const installDepth = 4

// scriptExts are the arguments that name a program's code.
var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".py"}

// resolveProgram finds argv0 the way execvp would in pathList, and
// returns its absolute path.
func resolveProgram(argv0, pathList string) (string, error) {
	if strings.Contains(argv0, "/") {
		abs, err := filepath.Abs(argv0)
		if err != nil {
			return "", err
		}
		if st, err := os.Stat(abs); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("%w: program %s: not a regular file", ErrInvalidSpec, argv0)
		}
		return abs, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the directory
		}
		p := filepath.Join(dir, argv0)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: program %s: not found in PATH %q", ErrInvalidSpec, argv0, pathList)
}

// installDirs returns the directories the server's program needs
// readable, for argv whose argv[0] is already resolved, given the PATH
// its "#!" interpreters are looked up in and the user's home directory.
func installDirs(argv []string, pathList, home string) ([]string, error) {
	var files []string
	files = append(files, argv[0])
	for _, a := range argv[1:] {
		if !filepath.IsAbs(a) {
			continue
		}
		if slices.Contains(scriptExts, filepath.Ext(a)) || strings.Contains(a, "/node_modules/") {
			if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() {
				files = append(files, a)
			}
		}
	}
	var dirs []string
	seen := map[string]bool{}
	var add func(file string, depth int) error
	add = func(file string, depth int) error {
		real, err := filepath.EvalSymlinks(file)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidSpec, file, err)
		}
		if seen[real] {
			return nil
		}
		seen[real] = true
		if !underSystem(real) {
			root := installRoot(real, home)
			if strings.Count(root, "/") < 2 || (home != "" && within(home, root)) {
				return fmt.Errorf("%w: %s is in %s", ErrInstallDir, file, root)
			}
			if !slices.Contains(dirs, root) {
				dirs = append(dirs, root)
			}
		}
		if depth > 0 {
			if interp := interpreter(real, pathList); interp != "" {
				return add(interp, depth-1)
			}
		}
		return nil
	}
	for _, f := range files {
		if err := add(f, 2); err != nil {
			return nil, err
		}
	}
	// A directory beneath another is covered by it.
	slices.Sort(dirs)
	out := dirs[:0]
	for _, d := range dirs {
		if len(out) > 0 && within(d, out[len(out)-1]) {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// installRoot is the directory granted for file (see above); the search
// upwards stops below home and the system directories.
func installRoot(file, home string) string {
	dir := filepath.Dir(file)
	if i := strings.Index(dir+"/", "/node_modules/"); i >= 0 {
		return dir[:i+len("/node_modules")]
	}
	d := dir
	for range installDepth + 1 {
		for _, marker := range []string{"package.json", "node_modules", "pyproject.toml", "pyvenv.cfg"} {
			if _, err := os.Lstat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d || underSystem(parent) || (home != "" && within(home, parent)) {
			break
		}
		d = parent
	}
	return dir
}

// interpreter returns the program file's "#!" interpreter, resolved, or
// "" when it has none (a binary) or it cannot be found.
func interpreter(file, pathList string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	prog, args := fields[0], fields[1:]
	if filepath.Base(prog) == "env" {
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:] // env -S, env -i
		}
		for len(args) > 0 && strings.Contains(args[0], "=") {
			args = args[1:] // env VAR=value
		}
		if len(args) == 0 {
			return ""
		}
		p, err := resolveProgram(args[0], pathList)
		if err != nil {
			return ""
		}
		return p
	}
	if !filepath.IsAbs(prog) {
		return ""
	}
	return prog
}

// underSystem reports whether p is beneath a directory every command may
// read anyway.
func underSystem(p string) bool {
	for _, d := range sandbox.CommandSystemDirs() {
		if within(p, d) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or beneath it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
