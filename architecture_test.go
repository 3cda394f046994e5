package opx_test

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// architectureDoc and readme are the two folder tables kept true here:
// the first has one row per package, the second one per top-level folder.
const (
	architectureDoc = "docs/architecture.md"
	readme          = "README.md"
)

// TestArchitecture_EveryPackageHasARow: every package of the module (but
// the root) has exactly one row in docs/architecture.md's table, the
// table is sorted by path, and every row names a package that exists.
func TestArchitecture_EveryPackageHasARow(t *testing.T) {
	pkgs := modulePackages(t)
	rows := tableRows(t, architectureDoc, "| package | what it owns |")
	seen := map[string]bool{}
	for i, r := range rows {
		if seen[r] {
			t.Errorf("%s: package %s has two rows; keep one", architectureDoc, r)
		}
		seen[r] = true
		if i > 0 && rows[i-1] >= r {
			t.Errorf("%s: row `%s` comes after `%s`; the table is sorted by path", architectureDoc, r, rows[i-1])
		}
		if !pkgs[r] {
			t.Errorf("%s: the row of `%s` names no package of the module (moved or removed?): remove or rename the row", architectureDoc, r)
		}
	}
	for _, p := range sortedKeys(pkgs) {
		if seen[p] {
			continue
		}
		t.Errorf("%s has no row for package %s: add, %s,\n| `%s` | %s |",
			architectureDoc, p, placeAmong(rows, p), p, synopsis(t, p))
	}
}

// TestArchitecture_EveryPackageHasADocGo: every package of the module has
// a doc.go whose package comment says what it owns (issue 25): the one
// place a newcomer reads first.
func TestArchitecture_EveryPackageHasADocGo(t *testing.T) {
	pkgs := modulePackages(t)
	pkgs["."] = true
	for _, p := range sortedKeys(pkgs) {
		f := filepath.Join(filepath.FromSlash(p), "doc.go")
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Errorf("package %s has no doc.go (%v): add one whose package comment says what it owns", p, err)
			continue
		}
		if file.Doc == nil || len(strings.TrimSpace(file.Doc.Text())) < 20 {
			t.Errorf("%s: no package comment (or a stub): say what the package owns", f)
		}
	}
}

// TestArchitecture_READMEFolderTable: every top-level folder that holds
// a package has a row in the README's folder table, and every row names
// a folder that holds one.
func TestArchitecture_READMEFolderTable(t *testing.T) {
	pkgs := modulePackages(t)
	holds := map[string]bool{} // every folder that is or holds a package
	top := map[string]bool{}
	for p := range pkgs {
		parts := strings.Split(p, "/")
		top[parts[0]] = true
		for i := range parts {
			holds[strings.Join(parts[:i+1], "/")] = true
		}
	}
	rows := tableRows(t, readme, "| folder | what lives there |")
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r] = true
		if !holds[r] {
			t.Errorf("%s: the folder table's row `%s/` names no folder holding a package: remove or rename it", readme, r)
		}
	}
	for _, f := range sortedKeys(top) {
		if !seen[f] {
			t.Errorf("%s: the folder table has no row for the top-level folder %s/: add\n| `%s/` | %s |",
				readme, f, f, synopsis(t, f))
		}
	}
}

// modulePackages lists the module's packages as slash paths relative to
// the root (the root itself left out): every directory the go command
// would build or test for this platform, skipping what it skips
// (testdata, names starting with . or _) and node_modules.
func modulePackages(t *testing.T) map[string]bool {
	t.Helper()
	pkgs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		_, err = build.ImportDir(path, 0)
		var noGo *build.NoGoError
		switch {
		case errors.As(err, &noGo):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		}
		if path != "." {
			pkgs[filepath.ToSlash(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list the module's packages: %v", err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages; is the test running in the module root?", len(pkgs))
	}
	return pkgs
}

// tableRows reads the first column of the Markdown table of file whose
// header line is header: each row's first cell must be one path in
// backticks (a trailing slash is dropped).
func tableRows(t *testing.T, file, header string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !in:
			in = line == header
		case strings.HasPrefix(line, "|---"):
		case !strings.HasPrefix(line, "|"):
			return rows
		default:
			cell := strings.TrimSpace(strings.SplitN(line[1:], "|", 2)[0])
			p, ok := strings.CutPrefix(cell, "`")
			p, ok2 := strings.CutSuffix(p, "`")
			if !ok || !ok2 || p == "" || strings.ContainsAny(p, "` ") {
				t.Fatalf("%s:%d: the first cell of a row is one path in backticks, not %q", file, n, cell)
			}
			rows = append(rows, strings.TrimSuffix(p, "/"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !in {
		t.Fatalf("%s has no table headed %q", file, header)
	}
	return rows
}

// placeAmong says where path p goes in the sorted rows.
func placeAmong(rows []string, p string) string {
	i := sort.SearchStrings(rows, p)
	if i == 0 {
		if len(rows) == 0 {
			return "as the table's first row"
		}
		return fmt.Sprintf("before the row of `%s`", rows[0])
	}
	return fmt.Sprintf("after the row of `%s`", rows[i-1])
}

// synopsis is the first sentence of the package doc of directory dir, as
// a draft of its row; a placeholder when it has none.
func synopsis(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil || af.Doc == nil {
			continue
		}
		if s := new(doc.Package).Synopsis(af.Doc.Text()); s != "" {
			return s
		}
	}
	if len(files) == 0 {
		return "what its packages own"
	}
	return "what it owns (it has no package doc yet: give it a doc.go)"
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
