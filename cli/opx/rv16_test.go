package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/internal/mcptest"
)

// Issue 16 review: failing tests that prove findings.

var (
	rv16Once sync.Once
	rv16Path string
	rv16Err  error
)

// rv16Server builds internal/mcptest/rv16server.
func rv16Server(t testing.TB) string {
	t.Helper()
	rv16Once.Do(func() {
		dir, err := os.MkdirTemp("", "opx-rv16-")
		if err != nil {
			rv16Err = err
			return
		}
		rv16Path = filepath.Join(dir, "rv16server")
		cmd := exec.Command("go", "build", "-o", rv16Path, "./internal/mcptest/rv16server")
		cmd.Dir = mcptest.Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			rv16Err = err
			rv16Path = string(out)
		}
	})
	if rv16Err != nil {
		t.Fatalf("go build rv16server: %v\n%s", rv16Err, rv16Path)
	}
	return rv16Path
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestRV16_EngineCrashOrphansServerChildren: the engine dies (SIGKILL,
// OOM, a crash) while an mcp-proxy upstream runs that has started a child
// in its process group, as npx, shells and many servers do. The leader
// gets the parent-death signal; its children are orphaned and run on,
// unsandboxed from opx's view, with nothing left to kill them.
func TestRV16_EngineCrashOrphansServerChildren(t *testing.T) {
	t.Parallel()
	srv := rv16Server(t)
	w := proxyWorld(t)
	t.Cleanup(func() { w.run("stop") }) // the engine the first proxy started
	if err := os.WriteFile(filepath.Join(w.ws, ".opx/policy.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.connectProxy("rv16-client", nil, "--", srv)
	_, text := p.call(t, "sleeper", nil)
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || !alive(pid) {
		t.Fatalf("the server's child: %q %v", text, err)
	}
	child := pin(t, pid) // the cleanup must not kill another process that reused the pid
	t.Cleanup(func() { child.signal(syscall.SIGKILL) })
	st, _ := w.status()
	if st.EnginePID == 0 {
		t.Fatalf("no engine pid: %+v", st)
	}
	w.kill(st.EnginePID)
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling a condition, bounded
	}
	if alive(pid) {
		t.Errorf("30 s after the engine died, process %d that its MCP server started still runs (an orphan)", pid)
	}
}

// TestRV16_PathDisguisedAsURLEvadesDenyRule: Shield reads a string under
// a path-like key that has "://" after a plain scheme as a URL, not a
// path, and files nothing for a non-http one. The filesystem server
// resolves "zz://../secret/key.txt" as a relative path: <ws>/zz:/.. is
// <ws>, so it reads <ws>/secret/key.txt. Under proxyWorld's policy
// (fs-secrets denies secret/**, fs-reads allows the read tools by name)
// the deny rule sees no path and the read is allowed.
func TestRV16_PathDisguisedAsURLEvadesDenyRule(t *testing.T) {
	t.Parallel()
	w := proxyWorld(t)
	t.Cleanup(func() { w.run("stop") }) // the engine the first proxy started
	p := w.connectProxy("rv16-client", nil, "fs")
	_, plain := p.call(t, "read_text_file", map[string]any{"path": "secret/key.txt"})
	if strings.Contains(plain, "not for MCP clients") {
		t.Fatalf("the plain read of secret/key.txt was not blocked: the test proves nothing: %q", plain)
	}
	res, text := p.call(t, "read_text_file", map[string]any{"path": "zz://../secret/key.txt"})
	t.Logf("answer: %q", text)
	if strings.Contains(text, "not for MCP clients") {
		t.Errorf("the deny rule fs-secrets was evaded by writing the path as zz://../secret/key.txt: %q (isError %v)", text, res.IsError)
	}
}

// TestRV16_ProxyUpstreamsShareHome: every `opx mcp-proxy -- COMMAND`
// upstream is named "upstream" and so gets the same private home
// (HomeRoot/upstream), which persists: what one untrusted upstream
// without network leaves there (a $HOME/.local/.../usercustomize.py, a
// $HOME/.node_modules package, an .npmrc) is read, or run, by the next,
// whatever its command, here one run with --network.
func TestRV16_ProxyUpstreamsShareHome(t *testing.T) {
	t.Parallel()
	srv := rv16Server(t)
	w := proxyWorld(t)
	t.Cleanup(func() { w.run("stop") }) // the engine the first proxy started
	if err := os.WriteFile(filepath.Join(w.ws, ".opx/policy.yaml"), []byte("version: 1\ndefault: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := w.connectProxy("rv16-first", nil, "--", srv, "-plant", "HOME/planted=left by the first upstream")
	first.close(t)
	second := w.connectProxy("rv16-second", nil, "--network", "--", srv, "-desc", "another server")
	if _, text := second.call(t, "readhome", nil); strings.Contains(text, "left by the first upstream") {
		t.Errorf("a network-enabled upstream found in its home what another, unrelated upstream left there: %q", text)
	}
}
