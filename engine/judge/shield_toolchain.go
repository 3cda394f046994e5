package judge

import (
	"encoding/json"
	"io"
	"path"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/opx-dev/opx/shield"
)

// Bounds of the look for the workspace's toolchain: directories deep,
// entries listed, files read.
const (
	toolchainDepth   = 6
	toolchainEntries = 20000
	toolchainFiles   = 600
)

// Toolchain are the programs an execute_command proposal runs that the
// workspace declares it uses (shield.ToolchainKey), each as
// "key=file", the workspace file that declares it: a project or
// manifest file that names the tool, a file whose commands run it, or,
// for a program run by a relative path, the program file itself. Found
// through FS when the call is proposed (a bounded look: directories
// toolchainDepth deep, toolchainEntries entries, toolchainFiles files of
// at most shield.MaxToolchainFileBytes), recorded with it, and judged by
// the policy's `toolchain: workspace` rules. Nil without FS.
func (e ShieldEvaluator) Toolchain(p Proposal) []string {
	if e.FS == nil || p.Tool != "execute_command" {
		return nil
	}
	var args struct{ Command, Cwd string }
	if json.Unmarshal(p.Args, &args) != nil || args.Command == "" {
		return nil
	}
	keys := e.S.ToolchainKeys(args.Command, args.Cwd)
	if len(keys) == 0 {
		return nil
	}
	want := map[string]bool{}
	found := map[string]string{}
	for _, k := range keys {
		if strings.Contains(k, "/") {
			// A program of the workspace run by its path.
			rel := k
			if args.Cwd != "" && !path.IsAbs(args.Cwd) && !strings.HasPrefix(args.Cwd, "~") {
				rel = path.Join(args.Cwd, k)
			}
			if e.regularFile(rel) {
				found[k] = rel
			}
			continue
		}
		want[k] = true
	}
	if len(want) > 0 && e.Declared != nil {
		for k := range want {
			if f, ok := e.Declared.lookup(e, k); ok {
				found[k] = f
			}
		}
	} else if len(want) > 0 {
		e.declarations(func(rel string, key string) bool {
			if want[key] {
				if _, ok := found[key]; !ok {
					found[key] = rel
				}
				delete(want, key)
			}
			return len(want) > 0
		})
	}
	if len(found) == 0 {
		return nil
	}
	out := make([]string, 0, len(found))
	for k, f := range found {
		out = append(out, k+"="+f)
	}
	sort.Strings(out)
	return out
}

// declarations walks the workspace's declaring files (breadth first, in
// name order, within the bounds) and calls fn with each declaration
// until fn returns false.
func (e ShieldEvaluator) declarations(fn func(rel, key string) bool) {
	dirs := []string{"."}
	entries, files := 0, 0
	for depth := 0; depth <= toolchainDepth && len(dirs) > 0; depth++ {
		var next []string
		for _, d := range dirs {
			list, err := e.FS.ReadDirStat(d)
			if err != nil {
				continue
			}
			sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
			for _, ent := range list {
				if entries++; entries > toolchainEntries {
					return
				}
				rel := ent.Name
				if d != "." {
					rel = d + "/" + ent.Name
				}
				switch ent.Stat.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					if skipToolchainDir(ent.Name) {
						continue
					}
					next = append(next, rel)
				case unix.S_IFREG:
					if !shield.ToolchainFile(rel) {
						continue
					}
					if files++; files > toolchainFiles {
						return
					}
					b := e.readHead(rel)
					more := true
					shield.DeclaredTools(rel, b, func(key string) {
						if more {
							more = fn(rel, key)
						}
					})
					if !more {
						return
					}
				}
			}
		}
		dirs = next
	}
}

// skipToolchainDir says which directories declare nothing of the
// project's toolchain: version control, dependencies, build output.
func skipToolchainDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".opx", "node_modules", "vendor", "third_party", ".venv", "venv", "__pycache__", "target",
		"dist", "build", "out", "Library", "Temp", ".pio", ".cache", ".gradle", ".idea", "bazel-out", "_build", "deps":
		return true
	}
	return strings.HasPrefix(name, ".") && name != ".github" && name != ".gitlab" && name != ".circleci" &&
		name != ".devcontainer" && name != ".buildkite"
}

// regularFile reports whether rel is a regular file of the workspace.
func (e ShieldEvaluator) regularFile(rel string) bool {
	f, err := e.FS.Open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// readHead reads at most shield.MaxToolchainFileBytes of a regular
// file of the workspace (nil if it cannot).
func (e ShieldEvaluator) readHead(rel string) []byte {
	f, err := e.FS.Open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, shield.MaxToolchainFileBytes))
	return b
}

// maxDeclared bounds the programs a workspace's declarations hold.
const maxDeclared = 4096

// Declarations caches what a workspace declares of its toolchain for
// one engine (ShieldEvaluator.Declared): walked once, walked again after
// a proposal changes a declaring file (Changed). Without it, each
// proposal walks (tests, what-if).
type Declarations struct {
	mu    sync.Mutex
	valid bool
	decl  map[string]string // program key -> the first file declaring it
}

// NewDeclarations returns an empty cache.
func NewDeclarations() *Declarations { return &Declarations{} }

// lookup returns the file that declares key, walking the workspace
// first if the cache is not valid.
func (d *Declarations) lookup(e ShieldEvaluator, key string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid {
		d.decl = map[string]string{}
		e.declarations(func(rel, k string) bool {
			if _, ok := d.decl[k]; !ok {
				d.decl[k] = rel
			}
			return len(d.decl) < maxDeclared
		})
		d.valid = true
	}
	f, ok := d.decl[key]
	return f, ok
}

// Changed drops the cache when p writes, moves or deletes a file that
// can declare tools (its next lookup walks again).
func (d *Declarations) Changed(e ShieldEvaluator, p Proposal) {
	if d == nil || !p.Def.Mutating {
		return
	}
	a := e.Action(p)
	refs := [][]shield.Ref{a.Facts.Writes, a.Facts.Deletes}
	if a.Command != "" {
		c := e.S.CommandFactsIn(a.Command, a.Cwd)
		refs = append(refs, c.Writes, c.Deletes)
	}
	ws := e.S.ResolvePath(".")
	for _, refs := range refs {
		for _, r := range refs {
			rel, ok := strings.CutPrefix(r.Path, ws+"/")
			if !ok {
				continue
			}
			if r.Tree || r.Glob || shield.ToolchainFile(rel) {
				d.mu.Lock()
				d.valid = false
				d.mu.Unlock()
				return
			}
		}
	}
}
