package manifest

import (
	"fmt"
	"go/parser"
	"go/token"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

func keepVersion(_, v string) (string, error) { return v, nil }

// replaceFacts records each replace by its old path (and version): compared
// by the new module path or directory, so a version bump within the same
// target is no change.
func replaceFacts(rs []*modfile.Replace, fs *facts) {
	for _, r := range rs {
		k := "replace " + r.Old.Path
		if r.Old.Version != "" {
			k += "@" + r.Old.Version
		}
		f := fact{kind: KindSource, flag: true}
		if r.New.Path == r.Old.Path && r.New.Version != "" {
			fs.note(k, r.New.Path+" "+r.New.Version) // a pin within the same module
			continue
		}
		if r.New.Version == "" {
			f.val, f.cmp, f.local = r.New.Path, "dir "+r.New.Path, r.New.Path
		} else {
			f.val, f.cmp = r.New.Path+" "+r.New.Version, "mod "+r.New.Path
		}
		fs.set(k, f)
	}
}

func goModFacts(data []byte, fs *facts) error {
	f, err := modfile.Parse("go.mod", data, keepVersion)
	if err != nil {
		return fmt.Errorf("manifest: go.mod: %w", err)
	}
	replaceFacts(f.Replace, fs)
	for _, t := range f.Tool {
		fs.add(KindRuns, "tool "+t.Path, "tool "+t.Path+" (run by go tool)")
	}
	for _, r := range f.Require {
		fs.note("require "+r.Mod.Path, r.Mod.Version)
	}
	if f.Toolchain != nil && !releaseToolchain.MatchString(f.Toolchain.Name) {
		// rules 21: a toolchain that is no Go release (a suffix names a
		// build of someone's own): the compiler itself comes from elsewhere
		fs.add(KindSource, "toolchain", "toolchain "+f.Toolchain.Name+" (not a Go release)")
	}
	return nil
}

// releaseToolchain is a Go release's toolchain name (go1.23.4, go1.24rc1)
// or "default".
var releaseToolchain = regexp.MustCompile(`^(?:go1\.\d+(?:\.\d+|rc\d+|beta\d+)?|default)$`)

func goWorkFacts(data []byte, fs *facts) error {
	f, err := modfile.ParseWork("go.work", data, keepVersion)
	if err != nil {
		return fmt.Errorf("manifest: go.work: %w", err)
	}
	replaceFacts(f.Replace, fs)
	for _, u := range f.Use {
		p := strings.ReplaceAll(u.Path, "\\", "/")
		if leaves(p) {
			fs.set("use "+u.Path, fact{kind: KindSource, val: u.Path, flag: true, local: p})
		}
	}
	return nil
}

// leaves reports whether a relative path may leave the directory it is
// relative to (the caller checks whether it really does).
func leaves(p string) bool {
	p = strings.ReplaceAll(p, "\\", "/")
	return p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") ||
		(len(p) > 1 && p[1] == ':') || strings.Contains(p, "/../")
}

func goSumFacts(data []byte, fs *facts) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	for i, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") && !strings.Contains(f[2], ":") {
			return fmt.Errorf("manifest: go.sum: line %d: malformed", i+1)
		}
		if err := module.CheckPath(f[0]); err != nil && module.CheckImportPath(f[0]) != nil {
			return fmt.Errorf("manifest: go.sum: line %d: %v", i+1, err)
		}
		fs.set("go.sum "+f[0]+" "+f[1], fact{kind: KindChecksum, val: f[2], flag: true, changedOnly: true})
	}
	return nil
}

// goSourceFacts records the //go:generate lines of a Go file; the file
// must at least have a package clause.
func goSourceFacts(data []byte, fs *facts) error {
	if _, err := parser.ParseFile(token.NewFileSet(), "x.go", data, parser.PackageClauseOnly); err != nil {
		return fmt.Errorf("manifest: go source: %w", err)
	}
	ls, err := lines(data)
	if err != nil {
		return err
	}
	for _, l := range ls {
		if strings.HasPrefix(l, "//go:generate ") || strings.HasPrefix(l, "//go:generate\t") {
			cmd := strings.TrimSpace(l[len("//go:generate"):])
			fs.set("//go:generate "+cmd, fact{kind: KindRuns, val: cmd, flag: true})
		}
	}
	return nil
}
