package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInstallDirs builds the layouts servers come in and checks what is
// granted for each.
func TestInstallDirs(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	write := func(p, content string, mode os.FileMode) string {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, p string) string {
		t.Helper()
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// An npm install: a .bin link into a package, node from a prefix
	// outside the system directories.
	node := write("opt-node/bin/node", "\x7fELF", 0o755)
	write("proj/package.json", "{}", 0o644)
	pkg := write("proj/node_modules/@scope/server/dist/index.js", "#!/usr/bin/env node\n", 0o755)
	bin := link("../@scope/server/dist/index.js", "proj/node_modules/.bin/server")
	// A project run by `node /path/dist/index.js`, dependencies beside it.
	write("dev/server/package.json", "{}", 0o644)
	os.MkdirAll(filepath.Join(root, "dev/server/node_modules"), 0o755)
	script := write("dev/server/dist/index.js", "console.log(1)\n", 0o644)
	// A Python virtual environment.
	write("venv/pyvenv.cfg", "home = /usr/bin\n", 0o644)
	py := write("venv/bin/mcp-py", "#!"+filepath.Join(root, "venv/bin/python")+"\n", 0o755)
	link("/usr/bin/true", "venv/bin/python")
	// A lone binary, and one dropped in the home directory itself.
	lone := write("tools/srv", "\x7fELF", 0o755)
	inHome := write("home/srv", "\x7fELF", 0o755)
	// A home with a package.json must not make the home a root.
	write("home/package.json", "{}", 0o644)
	deep := write("home/code/srv/bin/x", "\x7fELF", 0o755)

	top := "/tmp/opx-test-srv-" + filepath.Base(root)
	if err := os.WriteFile(top, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(top) })
	path := filepath.Dir(node) + ":/usr/bin:/bin"
	tests := []struct {
		name string
		argv []string
		want []string
		err  error
	}{
		{"NpmBin", []string{bin, "/ws"}, []string{filepath.Join(root, "opt-node/bin"), filepath.Join(root, "proj/node_modules")}, nil},
		{"NpmFile", []string{pkg}, []string{filepath.Join(root, "opt-node/bin"), filepath.Join(root, "proj/node_modules")}, nil},
		{"NodeScript", []string{"/usr/bin/env", script}, []string{filepath.Join(root, "dev/server")}, nil},
		{"Venv", []string{py}, []string{filepath.Join(root, "venv")}, nil},
		{"Lone", []string{lone, "--flag", "/etc/passwd"}, []string{filepath.Join(root, "tools")}, nil},
		{"System", []string{"/usr/bin/env"}, nil, nil},
		{"InHome", []string{inHome}, nil, ErrInstallDir},
		{"TopLevel", []string{"/tmp/opx-test-srv-" + filepath.Base(root)}, nil, ErrInstallDir},
		{"BelowHome", []string{deep}, []string{filepath.Join(root, "home/code/srv/bin")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := installDirs(tt.argv, path, home)
			if !errors.Is(err, tt.err) || (tt.err == nil && !slices.Equal(got, tt.want)) {
				t.Errorf("installDirs(%q) = %q, %v; want %q, %v", tt.argv, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestResolveProgram(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "srv")
	os.WriteFile(exe, []byte("x"), 0o755)
	os.WriteFile(filepath.Join(dir, "noexec"), []byte("x"), 0o644)
	if p, err := resolveProgram("srv", "relative:"+dir); err != nil || p != exe {
		t.Errorf("in PATH: %q %v", p, err)
	}
	if _, err := resolveProgram("srv", "relative"); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("a relative PATH entry is not searched: %v", err)
	}
	if _, err := resolveProgram("noexec", dir); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("not executable: %v", err)
	}
	if _, err := resolveProgram(dir, ""); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("a directory: %v", err)
	}
}
