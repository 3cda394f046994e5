package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/sandbox"
)

// LauncherArg is the first argument that makes a test binary the
// sandbox launcher (as `opx internal-sandbox-exec`).
const LauncherArg = "internal-sandbox-exec"

func init() {
	if len(os.Args) < 2 || os.Args[1] != LauncherArg {
		return
	}
	err := sandbox.Launch(os.Args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "opx: %v\n", err) // as the opx CLI reports it
	// syscall.Exit: the race runtime's exit sleep reads GORACE from
	// /proc/self/environ, which a confined process may not read.
	syscall.Exit(1)
}

// InstallCommand is what installs the npm servers and client.
const InstallCommand = "cd .ci/mcp && npm ci --ignore-scripts"

// The programs .ci/mcp installs, by name in node_modules/.bin. Inspector
// is the MCP inspector's CLI, a real MCP client (the TypeScript SDK's):
//
//	mcp-inspector-cli --cli COMMAND ARGS... --method tools/list
//	mcp-inspector-cli --cli COMMAND ARGS... --method tools/call --tool-name NAME --tool-arg key=value
//
// It prints the result as JSON on stdout (a deprecation notice goes to
// stderr). It must run in its own build directory (InspectorDir): it
// looks for its package.json relative to the working directory.
const (
	Filesystem = "mcp-server-filesystem"
	Everything = "mcp-server-everything"
	Inspector  = "mcp-inspector-cli"
)

// InspectorDir is the working directory the inspector CLI needs.
func InspectorDir() string {
	return filepath.Join(Root(), ".ci", "mcp", "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
}

// Root returns the module's root directory (the one with go.mod), found
// from this source file.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("mcptest: no caller information")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Program returns the path of the npm program name (Filesystem,
// Everything, Inspector) installed in .ci/mcp, after checking that it
// and Node are there. A missing one skips the test, or fails it under
// CI=true.
func Program(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Root(), ".ci", "mcp", "node_modules", ".bin", name)
	_, err := os.Stat(p)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MCP test program %s: %v (install: %s)", name, err, InstallCommand)
		}
		t.Skipf("MCP test program %s: %v (install: %s)", name, err, InstallCommand)
	}
	return p
}

// Self returns the test binary, which acts as the sandbox launcher
// (Sandbox.Self).
func Self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// NeedSandbox skips when the kernel cannot enforce the command sandbox
// without network (fails under CI=true).
func NeedSandbox(t testing.TB) {
	t.Helper()
	c := sandbox.New().Probe()
	if c.Filesystem && c.Seccomp && c.Network {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no command sandbox: %+v", c)
	}
	t.Skipf("no command sandbox: %+v", c)
}

var (
	badOnce sync.Once
	badDir  string
	badPath string
	badErr  error
)

// BadServer returns the misbehaving MCP server (./badserver), built once
// per test binary into a temporary directory that Cleanup removes.
func BadServer(t testing.TB) string {
	t.Helper()
	badOnce.Do(func() {
		badDir, badErr = os.MkdirTemp("", "opx-mcptest-")
		if badErr != nil {
			return
		}
		badPath = filepath.Join(badDir, "badserver")
		cmd := exec.Command("go", "build", "-o", badPath, "./internal/mcptest/badserver")
		cmd.Dir = Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			badErr = fmt.Errorf("go build badserver: %v\n%s", err, out)
		}
	})
	if badErr != nil {
		t.Fatal(badErr)
	}
	return badPath
}

// Cleanup removes what BadServer built; call it from TestMain after
// m.Run.
func Cleanup() {
	if badDir != "" {
		os.RemoveAll(badDir)
	}
}
