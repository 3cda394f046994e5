package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
)

// clientNotices collects what the proxy tells an MCP client besides its
// answers: log messages (level: data) and progress messages by token.
type clientNotices struct {
	mu       sync.Mutex
	logs     []string
	progress map[string][]string
}

func newClientNotices() *clientNotices { return &clientNotices{progress: map[string][]string{}} }

// options are client options whose handlers collect into n.
func (n *clientNotices) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs = append(n.logs, fmt.Sprintf("%s [%s] %v", r.Params.Level, r.Params.Logger, r.Params.Data))
			n.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			n.mu.Lock()
			tok := fmt.Sprint(r.Params.ProgressToken)
			n.progress[tok] = append(n.progress[tok], r.Params.Message)
			n.mu.Unlock()
		},
	}
}

// report logs what the client was told, and the proxy's stderr, when
// the test failed.
func (n *clientNotices) report(t *testing.T, c *proxyClient) {
	if !t.Failed() {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t.Logf("log messages:\n%s\nprogress: %q\nproxy stderr:\n%s", strings.Join(n.logs, "\n"), n.progress, c.stderr.String())
}

// logWith is the first log message containing every one of want, or "".
func (n *clientNotices) logWith(want ...string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return firstWith(n.logs, want...)
}

// progressOf is token's progress messages so far.
func (n *clientNotices) progressOf(token string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.progress[token]...)
}

func firstWith(msgs []string, want ...string) string {
next:
	for _, m := range msgs {
		for _, w := range want {
			if !strings.Contains(m, w) {
				continue next
			}
		}
		return m
	}
	return ""
}

var approvalIDRe = regexp.MustCompile(`approval \((apr_[A-Za-z0-9_]+)\)`)

// TestE2E_MCPProxy_ApprovalNotices: a client that cannot see the proxy's
// stderr (as the MCP inspector) is told that its calls wait for a human
// and how to answer: each of three write_file calls in flight at once
// gets progress notifications on its own progress token naming its own
// approval and the opx approve / opx deny commands (with the
// workspace), the client gets log messages at the level it set, and each
// call is answered as its approval was resolved (denied: a tool error
// that says by whom and why). A client that set no logging level and
// sent no progress token gets neither.
func TestE2E_MCPProxy_ApprovalNotices(t *testing.T) {
	t.Parallel()
	w := proxyWorld(t)
	w.start()
	ws := w.ws
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	n := newClientNotices()
	c := w.connectProxyOpts("notified-client", n.options(), "fs")
	t.Cleanup(func() { n.report(t, c) })
	if caps := c.cs.InitializeResult().Capabilities; caps == nil || caps.Logging == nil {
		t.Fatalf("the proxy does not offer logging: %+v", caps)
	}
	if err := c.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	type answer struct {
		isError bool
		text    string
		err     error
	}
	keys := []string{"a", "b", "c"}
	answers := map[string]chan answer{}
	for _, k := range keys {
		ch := make(chan answer, 1)
		answers[k] = ch
		go func() {
			params := &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(ws, k+".txt"), "content": k + "\n"}}
			params.SetProgressToken("tok-" + k)
			r, err := c.cs.CallTool(ctx, params)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			ch <- answer{isError: r.IsError, text: r.Content[0].(*sdk.TextContent).Text}
		}()
	}
	// Each call's progress names its own approval, and how to answer it.
	ids := map[string]string{}
	for _, k := range keys {
		var first string
		waitFor(t, "progress of tok-"+k, func() bool {
			p := n.progressOf("tok-" + k)
			if len(p) == 0 {
				return false
			}
			first = p[0]
			return true
		})
		m := approvalIDRe.FindStringSubmatch(first)
		if m == nil {
			t.Fatalf("tok-%s: the progress names no approval: %q", k, first)
		}
		id := m[1]
		for _, want := range []string{"the call of mcp__fs__write_file waits for a human's approval", "opx approve " + id + " --workspace " + ws,
			"opx deny " + id + " --workspace " + ws, "denied in 5m0s without an answer"} {
			if !strings.Contains(first, want) {
				t.Errorf("tok-%s: the progress lacks %q: %q", k, want, first)
			}
		}
		for other, oid := range ids {
			if oid == id {
				t.Fatalf("tok-%s and tok-%s were told the same approval %s", k, other, id)
			}
		}
		ids[k] = id
		waitFor(t, "the log message of "+id, func() bool {
			return n.logWith("warning [opx] opx: ", "waits for a human's approval ("+id+")", "opx approve "+id+" --workspace "+ws) != ""
		})
	}
	// The answers tie the tokens to the calls: a's approval denied, b's
	// approved, c's denied; each call is answered as its own was.
	if out, errOut, code := w.run("deny", ids["a"], "--reason", "not a"); code != 0 {
		t.Fatalf("opx deny: %d %s%s", code, out, errOut)
	}
	if out, errOut, code := w.run("approve", ids["b"]); code != 0 {
		t.Fatalf("opx approve: %d %s%s", code, out, errOut)
	}
	if out, errOut, code := w.run("deny", ids["c"]); code != 0 {
		t.Fatalf("opx deny: %d %s%s", code, out, errOut)
	}
	got := map[string]answer{}
	for _, k := range keys {
		got[k] = <-answers[k]
		if got[k].err != nil {
			t.Fatalf("tools/call %s: %v\nstderr:\n%s", k, got[k].err, c.stderr.String())
		}
	}
	if a := got["a"]; !a.isError || !strings.Contains(a.text, "denied by a human: opx deny") || !strings.Contains(a.text, "not a") ||
		!strings.Contains(a.text, ids["a"]) {
		t.Errorf("call a: %+v", a)
	}
	if b := got["b"]; b.isError {
		t.Errorf("call b: %+v", b)
	}
	if cc := got["c"]; !cc.isError || !strings.Contains(cc.text, "denied by a human") || !strings.Contains(cc.text, ids["c"]) {
		t.Errorf("call c: %+v", cc)
	}
	for k, want := range map[string]string{"a": "", "b": "b\n", "c": ""} {
		b, err := os.ReadFile(filepath.Join(ws, k+".txt"))
		if want == "" && !os.IsNotExist(err) || want != "" && string(b) != want {
			t.Errorf("%s.txt: %q %v", k, b, err)
		}
	}
	// The resolutions are told too, at their level.
	waitFor(t, "the resolutions in the log", func() bool {
		return n.logWith("warning [opx] opx: approval "+ids["a"]+" of mcp__fs__write_file: denied by opx deny: not a; the call is not made") != "" &&
			n.logWith("notice [opx] opx: approval "+ids["b"]+" of mcp__fs__write_file: approved by") != "" &&
			n.logWith("warning [opx] opx: approval "+ids["c"]+" of mcp__fs__write_file: denied by") != ""
	})
	// Each token was told about its own approval only.
	for _, k := range keys {
		for _, m := range n.progressOf("tok-" + k) {
			for other, oid := range ids {
				if other != k && strings.Contains(m, oid) {
					t.Errorf("tok-%s was told about %s's approval %s: %q", k, other, oid, m)
				}
			}
		}
	}

	// A client that set no level and sent no token: told nothing but the
	// answer.
	quiet := newClientNotices()
	q := w.connectProxyOpts("quiet-client", quiet.options(), "fs")
	done := make(chan string, 1)
	go func() {
		r, err := q.cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(ws, "q.txt"), "content": "q\n"}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- fmt.Sprintf("%v %s", r.IsError, r.Content[0].(*sdk.TextContent).Text)
	}()
	id := q.approvalFor(t, "mcp__fs__write_file")
	if out, errOut, code := w.run("deny", id); code != 0 {
		t.Fatalf("opx deny: %d %s%s", code, out, errOut)
	}
	if got := <-done; !strings.HasPrefix(got, "true ") || !strings.Contains(got, "denied by a human") {
		t.Errorf("the quiet client's call: %s", got)
	}
	// One more answer after it: whatever was sent before it has arrived.
	if res, _ := q.call(t, "list_allowed_directories", nil); res.IsError {
		t.Errorf("list_allowed_directories: %+v", res)
	}
	quiet.mu.Lock()
	if len(quiet.logs) != 0 || len(quiet.progress) != 0 {
		t.Errorf("a client that asked for nothing was told %q %q", quiet.logs, quiet.progress)
	}
	quiet.mu.Unlock()
}

// TestE2E_MCPProxy_ApprovalTimeout: an approval nobody answers is denied
// when it times out, and the client is told so: a tool error that says
// no human answered in time, and a log message at the level it set. The
// npm inspector CLI (which never shows the proxy's stderr) gets the same
// tool error, not its own 60 s timeout.
func TestE2E_MCPProxy_ApprovalTimeout(t *testing.T) {
	t.Parallel()
	w := proxyWorld(t, "shield:\n  approval_timeout: 3s\n")
	w.start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := newClientNotices()
	c := w.connectProxyOpts("patient-client", n.options(), "fs")
	t.Cleanup(func() { n.report(t, c) })
	// warning: the waits and the denials, not the approvals (notice).
	if err := c.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	res, text := c.call(t, "write_file", map[string]any{"path": filepath.Join(w.ws, "late.txt"), "content": "late\n"})
	if !res.IsError || !strings.Contains(text, "tier3:timeout") || !strings.Contains(text, "no human answered within 3s") {
		t.Errorf("the unanswered write: error %v, %q", res.IsError, text)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "late.txt")); !os.IsNotExist(err) {
		t.Errorf("the unanswered write happened: %v", err)
	}
	waitFor(t, "the timeout in the log", func() bool {
		return n.logWith("warning [opx] opx: the call of mcp__fs__write_file waits for a human's approval") != "" &&
			n.logWith("warning [opx] opx: approval ", "no human answered within 3s: denied; the call is not made") != ""
	})

	inspector := mcptest.Program(t, mcptest.Inspector)
	cmd := exec.CommandContext(ctx, inspector, "--cli", "--tool-arg", "path="+filepath.Join(w.ws, "inspected.txt"), "--tool-arg", "content=x",
		"--method", "tools/call", "--tool-name", "write_file", "--", w.bin, "mcp-proxy", "--workspace", w.ws, "fs")
	cmd.Dir = mcptest.InspectorDir() // it reads its package.json from there
	cmd.Env = w.env()
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "no human answered within 3s") {
		t.Errorf("the inspector's write: %v\n%s\n%s", err, out.String(), errOut.String())
	}
}
