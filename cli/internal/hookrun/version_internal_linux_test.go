package hookrun

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/agents/hookproto"
)

// fakePackage makes node_modules/NAME with a package.json of name and
// version under root, and returns the package's directory.
func fakePackage(t *testing.T, root, name, version string) string {
	t.Helper()
	dir := filepath.Join(root, "node_modules", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	pj := `{"name": "` + name + `", "version": "` + version + `", "bin": {"x": "bin/x"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pj), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyFile copies the program at from to to, executable.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// startPrinting starts cmd, reads the pid it prints on its first line,
// and kills it at the test's end.
func startPrinting(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestAgentVersion_FromProcesses: the CLI's version found from real
// processes: a native binary in its package that runs the hook through
// sh -c (Claude Code), a platform package whose version names the
// platform (Codex), and a node script given as an argument (Gemini CLI).
func TestAgentVersion_FromProcesses(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	project := filepath.Join(root, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name":"someones-project","version":"9.9.9"}`), 0o644)

	// Claude: the CLI (a copy of sh in its package) runs sh -c, which
	// runs the hook (here: sleep, whose pid is printed).
	claude := fakePackage(t, project, "@anthropic-ai/claude-code", "2.1.332")
	copyFile(t, sh, filepath.Join(claude, "bin", "claude.exe"))
	pid := startPrinting(t, exec.Command(filepath.Join(claude, "bin", "claude.exe"), "-c", `sh -c 'sleep 30 & echo $!; wait'`))
	if v := versionFrom(hookproto.Claude, pid); v != "2.1.332" {
		t.Errorf("claude: version %q, want 2.1.332", v)
	}
	if v := versionFrom(hookproto.Gemini, pid); v != "" {
		t.Errorf("gemini found in claude's processes: %q", v)
	}

	// Codex: the native binary in the platform package.
	codex := fakePackage(t, project, "@openai/codex-linux-x64", "0.171.0-linux-x64")
	copyFile(t, sh, filepath.Join(codex, "bin", "codex"))
	pid = startPrinting(t, exec.Command(filepath.Join(codex, "bin", "codex"), "-c", `sleep 30 & echo $!; wait`))
	if v := versionFrom(hookproto.Codex, pid); v != "0.171.0" {
		t.Errorf("codex: version %q, want 0.171.0", v)
	}

	// Gemini: "node" (sh here) runs the bundle named by a relative path
	// through node_modules/.bin's symlink.
	gemini := fakePackage(t, project, "@google/gemini-cli", "0.61.0")
	os.MkdirAll(filepath.Join(gemini, "bundle"), 0o755)
	os.WriteFile(filepath.Join(gemini, "bundle", "gemini.js"), []byte("sleep 30 & echo $!; wait\n"), 0o755)
	os.MkdirAll(filepath.Join(project, "node_modules", ".bin"), 0o755)
	os.Symlink("../@google/gemini-cli/bundle/gemini.js", filepath.Join(project, "node_modules", ".bin", "gemini"))
	cmd := exec.Command(sh, "node_modules/.bin/gemini")
	cmd.Dir = project
	pid = startPrinting(t, cmd)
	if v := versionFrom(hookproto.Gemini, pid); v != "0.61.0" {
		t.Errorf("gemini: version %q, want 0.61.0", v)
	}
}

func TestPackageVersion_Refused(t *testing.T) {
	root := t.TempDir()
	for name, version := range map[string]string{
		"@anthropic-ai/claude-code-evil": "1.0.0\x1b[2J", // not a version
		"@anthropic-ai/claude-codex":     "1.0.0",        // another package
	} {
		dir := fakePackage(t, filepath.Join(root, strings.NewReplacer("/", "_", "@", "").Replace(name)), name, version)
		os.WriteFile(filepath.Join(dir, "bin", "x"), nil, 0o755)
		if v := packageVersion(hookproto.Claude, filepath.Join(dir, "bin", "x")); v != "" {
			t.Errorf("%s %q: version %q", name, version, v)
		}
	}
	// A package.json that is not a file, or too large, is passed over.
	dir := filepath.Join(root, "big")
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "x"), nil, 0o755)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@google/gemini-cli","version":"1.0.0","x":"`+strings.Repeat("x", versionPackage)+`"}`), 0o644)
	if v := packageVersion(hookproto.Gemini, filepath.Join(dir, "bin", "x")); v != "" {
		t.Errorf("a package.json past the bound: version %q", v)
	}
}
