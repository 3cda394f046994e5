package main_test

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/mcptest"
)

// TestE2E_MCPProxy_ClientLeavesEarly: a client that closes stdin right
// after initialize ends opx mcp-proxy quietly (exit 0: it left, nothing
// failed), and a session that cannot open is said once, with one "opx: "
// prefix, when the client leaves (issue 24 #4: the error was printed
// twice, the second time as "opx: opx mcp-proxy: …").
func TestE2E_MCPProxy_ClientLeavesEarly(t *testing.T) {
	t.Parallel()
	mcptest.NeedSandbox(t)
	w := newWorld(t)
	t.Cleanup(func() { w.run("stop") }) // the engine the first proxy started
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"early","version":"1"}}}` + "\n"
	proxy := func(upstream string, waitAnswer bool) (string, int) {
		t.Helper()
		cmd := exec.Command(w.bin, "mcp-proxy", "--workspace", w.ws, "--", upstream)
		cmd.Env = w.env()
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut syncBuffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Write([]byte(initialize))
		if waitAnswer {
			// The answer to initialize, then the client leaves.
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
				t.Errorf("the answer to initialize: %q %v\nstderr:\n%s", line, err, errOut.String())
			}
		}
		stdin.Close()
		go func() { bufio.NewReader(stdout).WriteTo(nopWriter{}) }()
		err = cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return errOut.String(), code
	}
	// An upstream that exits at once: the session cannot open.
	errOut, code := proxy("/bin/false", true)
	if code != 1 || strings.Count(errOut, "open the session") != 1 || strings.Contains(errOut, "opx: opx") {
		t.Errorf("a session that did not open: exit %d, stderr:\n%s", code, errOut)
	}
	// The engine runs now: the client leaves while its session opens.
	errOut, code = proxy("/bin/cat", false)
	if code != 0 || strings.Contains(errOut, "opx: ") || strings.Contains(errOut, "context canceled") {
		t.Errorf("a client that left at once: exit %d, stderr:\n%s", code, errOut)
	}
}

type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
