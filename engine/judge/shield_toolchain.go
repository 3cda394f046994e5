package judge

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

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
		if strings.Contains(k, "/") && !strings.HasPrefix(k, "repo:") {
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
		}, nil)
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
// until fn returns false. saw, if set, is told each declaring file read
// and its lstat. It returns whether the walk went through everything
// within the depth (no other bound cut it short, fn never said stop).
func (e ShieldEvaluator) declarations(fn func(rel, key string) bool, saw func(rel string, st *unix.Stat_t)) bool {
	if !e.gitRemotes(fn, saw) {
		return false
	}
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
					return false
				}
				rel := ent.Name
				if d != "." {
					rel = d + "/" + ent.Name
				}
				// A tool's own file or directory names it (dvc.yaml,
				// .dvc/): declared without reading it.
				if mode := ent.Stat.Mode & unix.S_IFMT; mode == unix.S_IFDIR || mode == unix.S_IFREG {
					if k := shield.NamedTool(rel, mode == unix.S_IFDIR); k != "" {
						if saw != nil && mode == unix.S_IFREG {
							saw(rel, &ent.Stat)
						}
						if !fn(rel, k) {
							return false
						}
					}
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
						return false
					}
					if saw != nil {
						saw(rel, &ent.Stat)
					}
					b := e.readHead(rel)
					more := true
					shield.DeclaredTools(rel, b, func(key string) {
						if more {
							more = fn(rel, key)
						}
					})
					if !more {
						return false
					}
				}
			}
		}
		dirs = next
	}
	return true
}

// gitConfig is the workspace's git configuration: the walk skips .git,
// so it is read first, by itself.
const gitConfig = ".git/config"

// gitRemotes calls fn with the repositories the workspace's remotes name
// (shield.GitRemoteRepos: "repo:HOST/PATH", "repo:HOST/OWNER/*"), read
// from .git/config when .git is a directory and config a regular file
// in it (not a link: read without following one, at most
// shield.MaxToolchainFileBytes), and tells saw it read it. A .git that
// is a file (a worktree's or a submodule's gitdir: …) is not followed:
// what it points to lies outside the workspace. It returns false if fn
// said stop.
func (e ShieldEvaluator) gitRemotes(fn func(rel, key string) bool, saw func(rel string, st *unix.Stat_t)) bool {
	if st, err := e.FS.Lstat(".git"); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return true
	}
	st, err := e.FS.Lstat(gitConfig)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return true
	}
	f, err := e.FS.Open(gitConfig, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !fst.Mode().IsRegular() {
		return true
	}
	if saw != nil {
		saw(gitConfig, &st)
	}
	b, _ := io.ReadAll(io.LimitReader(f, shield.MaxToolchainFileBytes))
	more := true
	shield.DeclaredTools(gitConfig, b, func(key string) {
		if more {
			more = fn(gitConfig, key)
		}
	})
	return more
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

// inSkippedDir reports whether rel (a tree or a glob) lies in a
// directory the walk skips by name (skipToolchainDir: node_modules,
// dist, .git…): a real directory now, or nothing yet (what a tree
// written there makes is a directory the walk skips). A link by that
// name to a directory the walk reads does not count. Only the
// components before the first glob character count.
func (e ShieldEvaluator) inSkippedDir(rel string) bool {
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		if strings.ContainsAny(c, "*?[{\\") {
			return false
		}
		if skipToolchainDir(c) {
			st, err := e.FS.Lstat(strings.Join(parts[:i+1], "/"))
			if err != nil {
				return errors.Is(err, fs.ErrNotExist)
			}
			return st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
	}
	return false
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
//
// A proposal that names a declaring file marks it dirty; the next lookup
// walks again only if one of them differs from what the last walk read
// (its lstat: device, inode, mode, size, modification and change times),
// is one the walk did not read, or was changed too close to the walk for
// its times to tell (racyWindow); a proposal never carried out (refused,
// or judged without running: shield eval, the benchmarks) costs no walk.
// A tree or glob written or deleted drops the cache as before, unless it
// lies in a real directory the walk skips (inSkippedDir: rm -rf
// node_modules); so does a walk cut short by its bounds.
type Declarations struct {
	mu    sync.Mutex
	valid bool
	decl  map[string]string // program key -> the first file declaring it
	// seen are the declaring files the last walk read, as it found them
	// (nil when the walk was cut short), walked when it began.
	seen   map[string]fileState
	walked time.Time
	dirty  map[string]bool // declaring files proposed since (bounded by maxDirty)
}

// fileState is what the walk knew of a declaring file.
type fileState struct {
	dev, ino   uint64
	mode       uint32
	size       int64
	mtim, ctim unix.Timespec
}

func stateOf(st *unix.Stat_t) fileState {
	return fileState{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: st.Mode, size: st.Size, mtim: st.Mtim, ctim: st.Ctim}
}

// racyWindow: a file changed this close before the walk (or after it)
// may change again within the same tick of the filesystem's clock (up to
// 2 s on some) with the same size, leaving its times as they were: it
// is read again.
var racyWindow = 3 * time.Second

// maxDirty bounds the dirty files kept between lookups.
const maxDirty = 64

// NewDeclarations returns an empty cache.
func NewDeclarations() *Declarations { return &Declarations{} }

// lookup returns the file that declares key, walking the workspace
// first if the cache is not valid.
func (d *Declarations) lookup(e ShieldEvaluator, key string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.valid && len(d.dirty) > 0 {
		for rel := range d.dirty {
			if !d.unchanged(e, rel) {
				d.valid = false
				break
			}
		}
		clear(d.dirty)
	}
	if !d.valid {
		d.decl = map[string]string{}
		d.seen = map[string]fileState{}
		d.walked = time.Now()
		complete := e.declarations(func(rel, k string) bool {
			if _, ok := d.decl[k]; !ok {
				d.decl[k] = rel
			}
			return len(d.decl) < maxDeclared
		}, func(rel string, st *unix.Stat_t) {
			d.seen[rel] = stateOf(st)
		})
		if !complete {
			d.seen = nil
		}
		clear(d.dirty)
		d.valid = true
	}
	f, ok := d.decl[key]
	return f, ok
}

// unchanged reports whether rel is as the last walk read it, and old
// enough then for its times to tell; or, a file the (complete) walk did
// not read, whether it is still absent (the walk cannot have read it:
// it was absent, or where the walk does not look).
func (d *Declarations) unchanged(e ShieldEvaluator, rel string) bool {
	if d.seen == nil {
		return false
	}
	st, err := e.FS.Lstat(rel)
	was, ok := d.seen[rel]
	if !ok {
		return errors.Is(err, fs.ErrNotExist)
	}
	limit := d.walked.Add(-racyWindow)
	if !time.Unix(was.mtim.Unix()).Before(limit) || !time.Unix(was.ctim.Unix()).Before(limit) {
		return false
	}
	return err == nil && stateOf(&st) == was
}

// Changed marks the declaring files p writes, moves or deletes dirty
// (the next lookup walks again if one of them changed), and drops the
// cache when p writes or deletes a tree or a glob.
func (d *Declarations) Changed(e ShieldEvaluator, p Proposal) {
	if d == nil || !p.Def.Mutating {
		return
	}
	d.changed(e, p, e.Action(p))
}

// changed is Changed with p's action (e.Action(p)) at hand.
func (d *Declarations) changed(e ShieldEvaluator, p Proposal, a shield.Action) {
	if d == nil || !p.Def.Mutating {
		return
	}
	refs := [][]shield.Ref{a.Facts.Writes, a.Facts.Deletes}
	if a.Command != "" {
		c := e.S.CommandFactsIn(a.Command, a.Cwd)
		refs = append(refs, c.Writes, c.Deletes)
		if remotesChanged(c.Runs) {
			d.markDirty(gitConfig)
		}
	}
	ws := e.S.ResolvePath(".")
	for _, refs := range refs {
		for _, r := range refs {
			rel, ok := strings.CutPrefix(r.Path, ws+"/")
			if !ok {
				continue
			}
			if r.Tree || r.Glob {
				if e.inSkippedDir(rel) {
					continue // rm -rf node_modules, dist/*: where the walk never looks
				}
				d.mu.Lock()
				d.valid = false
				d.mu.Unlock()
				return
			}
			if shield.ToolchainFile(rel) || shield.NamedTool(rel, false) != "" || shield.NamedTool(rel, true) != "" {
				d.markDirty(rel)
			}
		}
	}
}

// markDirty marks the declaring file rel dirty.
func (d *Declarations) markDirty(rel string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirty == nil {
		d.dirty = map[string]bool{}
	}
	if d.dirty[rel] = true; len(d.dirty) > maxDirty {
		d.valid = false
	}
}

// remotesChanged reports whether runs may change the remotes .git/config
// holds without the facts naming it as written: git remote (add,
// set-url, rename …), git config, gh repo fork/clone/set-default.
func remotesChanged(runs []shield.Run) bool {
	for _, r := range runs {
		if len(r.Argv) < 2 {
			continue
		}
		switch {
		case r.Name == "git" && slices.Contains(r.Argv[1:], "remote"), r.Name == "git" && slices.Contains(r.Argv[1:], "config"):
			return true
		case r.Name == "gh" && r.Argv[1] == "repo":
			return true
		}
	}
	return false
}
