package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// End-to-end tests of `opx mcp-proxy`: the real opx binary between a real
// MCP client (the official Go SDK's, and the npm inspector CLI) and the
// real npm filesystem and everything servers, with the real engine,
// sandbox and ledger.

// proxyPolicy is the test workspace's policy: reads of the filesystem
// server allowed, its secrets and everything outside the workspace
// blocked, its writes asked about, the everything server allowed.
const proxyPolicy = `version: 1
default: verify
deny:
  - name: fs-outside-workspace
    tools: ["mcp__fs__*"]
    outside_workspace: true
  - name: fs-secrets
    tools: ["mcp__fs__*"]
    paths: ["secret/**"]
verify:
  - name: fs-writes
    tools: ["mcp__fs__write_file", "mcp__fs__edit_file"]
    tier: 3
allow:
  - name: fs-reads
    tools: ["mcp__fs__read_text_file", "mcp__fs__list_directory", "mcp__fs__get_file_info", "mcp__fs__list_allowed_directories"]
  - name: everything
    tools: ["mcp__everything__*", "mcp__bad__*"]
`

// proxyWorld is a world whose configuration names the filesystem server
// (writable) and the everything server, under proxyPolicy.
func proxyWorld(t *testing.T, moreServers ...string) *world {
	t.Helper()
	fs := mcptest.Program(t, mcptest.Filesystem)
	every := mcptest.Program(t, mcptest.Everything)
	mcptest.NeedSandbox(t)
	w := newWorld(t)
	files := map[string]string{
		"hello.txt":        "hello from the workspace\n",
		"secret/key.txt":   "not for MCP clients\n",
		".opx/policy.yaml": proxyPolicy,
		".opx/config.yaml": fmt.Sprintf("policy: .opx/policy.yaml\nmcp:\n  servers:\n    fs:\n      command: %s\n      args: [\"${workspace}\"]\n      writable: true\n    everything:\n      command: %s\n", fs, every) +
			strings.Join(moreServers, ""),
		"notes/untouched.txt": "stays\n",
	}
	for name, body := range files {
		p := filepath.Join(w.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// proxyClient is a Go SDK client session with `opx mcp-proxy` as its
// server, and the proxy's stderr.
type proxyClient struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *syncBuffer
	// toolsChanged receives the proxy's notifications/tools/list_changed.
	toolsChanged chan struct{}
}

// connectProxy starts `opx mcp-proxy ARGS...` for the world and connects
// a Go SDK client named name to it; elicit, if set, answers the proxy's
// elicitations.
func (w *world) connectProxy(name string, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error), args ...string) *proxyClient {
	w.t.Helper()
	return w.connectProxyOpts(name, &sdk.ClientOptions{ElicitationHandler: elicit}, args...)
}

// connectProxyOpts is connectProxy with the client's options (its
// ToolListChangedHandler is the proxyClient's).
func (w *world) connectProxyOpts(name string, opts *sdk.ClientOptions, args ...string) *proxyClient {
	w.t.Helper()
	cmd := exec.Command(w.bin, append([]string{"mcp-proxy", "--workspace", w.ws}, args...)...)
	cmd.Env = w.env()
	p := &proxyClient{cmd: cmd, stderr: &syncBuffer{}, toolsChanged: make(chan struct{}, 1)}
	cmd.Stderr = p.stderr
	opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) {
		select {
		case p.toolsChanged <- struct{}{}:
		default:
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: "9.9.9"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		w.t.Fatalf("connect to opx mcp-proxy %v: %v\nstderr:\n%s", args, err, p.stderr.String())
	}
	p.cs = cs
	w.t.Cleanup(func() { p.close(w.t) })
	return p
}

// close disconnects the client and waits for the proxy to exit (it
// waits for the engine to record the session's end first).
func (p *proxyClient) close(t *testing.T) {
	if p.cs == nil {
		return
	}
	cs := p.cs
	p.cs = nil
	if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "exit status") {
		t.Errorf("close the client: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

// call calls a tool and returns its result's text and whether it is an
// error.
func (p *proxyClient) call(t *testing.T, tool string, args map[string]any) (*sdk.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v\nproxy stderr:\n%s", tool, err, p.stderr.String())
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return res, strings.Join(texts, "\n")
}

// approvalFor waits until the proxy shows an approval for tool on
// stderr, and returns its id.
func (p *proxyClient) approvalFor(t *testing.T, tool string) string {
	t.Helper()
	var id string
	waitFor(t, "an approval of "+tool+" on the proxy's stderr", func() bool {
		s := p.stderr.String()
		i := strings.Index(s, "Shield asks a human about "+tool)
		if i < 0 {
			return false
		}
		rest := s[i:]
		j := strings.Index(rest, "opx deny ")
		if j < 0 {
			return false
		}
		id = strings.Fields(rest[j+len("opx deny "):])[0]
		return true
	})
	return id
}

// TestE2E_MCPProxy drives `opx mcp-proxy` with the Go SDK's client in
// front of the real filesystem and everything servers: tools listed,
// several calls made, one blocked by the policy, one escalated and denied
// with `opx deny`, one escalated and approved with `opx approve` (a write,
// snapshotted, then rolled back with rollback --session), one answered by
// the client's own elicitation; prompts and resources passed through.
// The ledger holds each, verifies strictly, and replay, report, metrics,
// what-if and rerun read the sessions.
func TestE2E_MCPProxy(t *testing.T) {
	w := proxyWorld(t)
	m := w.start()
	ws := w.ws

	// The client's elicitation answers "no" (with a reason).
	var elicited []string
	fs := w.connectProxy("e2e-client", func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		elicited = append(elicited, r.Params.Message)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "reason": "not in this test"}}, nil
	}, "--elicit-approvals", "fs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tools, err := fs.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"read_text_file", "write_file", "list_directory"} {
		if !names[want] {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	if got := fs.cs.InitializeResult(); got.ServerInfo == nil || got.ServerInfo.Name != "secure-filesystem-server" || got.Capabilities.Tools == nil {
		t.Errorf("initialize told the client %+v", got)
	}

	// Allowed reads: the upstream's answer as it sent it.
	res, text := fs.call(t, "read_text_file", map[string]any{"path": filepath.Join(ws, "hello.txt")})
	if res.IsError || !strings.Contains(text, "hello from the workspace") {
		t.Errorf("read hello.txt: error %v, %q", res.IsError, text)
	}
	if res.StructuredContent == nil {
		t.Errorf("read hello.txt: the structured content the server sent is missing: %+v", res)
	}
	res, text = fs.call(t, "list_directory", map[string]any{"path": filepath.Join(ws, "notes")})
	if res.IsError || !strings.Contains(text, "untouched.txt") {
		t.Errorf("list notes/: error %v, %q", res.IsError, text)
	}
	// A listing of the whole workspace reaches secret/ (Shield takes an
	// MCP tool's paths as trees): blocked.
	if res, text = fs.call(t, "list_directory", map[string]any{"path": ws}); !res.IsError || !strings.Contains(text, "fs-secrets") {
		t.Errorf("list the workspace: error %v, %q", res.IsError, text)
	}
	// Blocked by the policy: a tool error that says why.
	res, text = fs.call(t, "read_text_file", map[string]any{"path": filepath.Join(ws, "secret", "key.txt")})
	if !res.IsError || !strings.Contains(text, "blocked by Shield") || !strings.Contains(text, "fs-secrets") || strings.Contains(text, "not for MCP clients") {
		t.Errorf("read secret/key.txt: error %v, %q", res.IsError, text)
	}
	res, text = fs.call(t, "read_text_file", map[string]any{"path": "/etc/passwd"})
	if !res.IsError || !strings.Contains(text, "blocked by Shield") || strings.Contains(text, "root:") {
		t.Errorf("read /etc/passwd: error %v, %q", res.IsError, text)
	}

	// Escalated: the client's elicitation says no.
	res, text = fs.call(t, "write_file", map[string]any{"path": filepath.Join(ws, "elicited.txt"), "content": "no\n"})
	if !res.IsError || !strings.Contains(text, "denied by a human: mcp client e2e-client") {
		t.Errorf("elicited write: error %v, %q", res.IsError, text)
	}
	if len(elicited) != 1 || !strings.Contains(elicited[0], "mcp__fs__write_file") {
		t.Errorf("elicitations: %q", elicited)
	}
	if _, err := os.Stat(filepath.Join(ws, "elicited.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied write happened: %v", err)
	}

	// Escalated, denied with opx deny in another terminal (this client
	// cannot be asked).
	plain := w.connectProxy("plain-client", nil, "fs")
	done := make(chan string, 1)
	go func() {
		r, err := plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(ws, "denied.txt"), "content": "no\n"}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- fmt.Sprintf("%v %s", r.IsError, r.Content[0].(*sdk.TextContent).Text)
	}()
	id := plain.approvalFor(t, "mcp__fs__write_file")
	if out, errOut, code := w.run("deny", id, "--reason", "e2e says no"); code != 0 {
		t.Fatalf("opx deny %s: %d %s%s", id, code, out, errOut)
	}
	if got := <-done; !strings.HasPrefix(got, "true ") || !strings.Contains(got, "denied by a human") || !strings.Contains(got, "e2e says no") {
		t.Errorf("denied write: %s", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied write happened: %v", err)
	}
	// Escalated and approved: the write runs, snapshotted first.
	go func() {
		r, err := plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(ws, "hello.txt"), "content": "overwritten\n"}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- fmt.Sprintf("%v %s", r.IsError, r.Content[0].(*sdk.TextContent).Text)
	}()
	id2 := plain.approvalFor(t, "mcp__fs__write_file {\"content\":\"overwritten")
	if id2 == id {
		t.Fatalf("the same approval twice: %s", id)
	}
	if out, errOut, code := w.run("approve", id2); code != 0 {
		t.Fatalf("opx approve %s: %d %s%s", id2, code, out, errOut)
	}
	if got := <-done; !strings.HasPrefix(got, "false ") {
		t.Errorf("approved write: %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "hello.txt")); string(b) != "overwritten\n" {
		t.Errorf("hello.txt after the approved write: %q", b)
	}
	// Escalated, then cancelled by the client (notifications/cancelled):
	// its approval is denied at once, nothing is written.
	cctx, ccancel := context.WithCancel(ctx)
	go func() {
		_, err := plain.cs.CallTool(cctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(ws, "cancelled.txt"), "content": "no\n"}})
		done <- fmt.Sprint(err)
	}()
	id3 := plain.approvalFor(t, "mcp__fs__write_file {\"content\":\"no\\n\",\"path\":\""+filepath.Join(ws, "cancelled.txt"))
	ccancel()
	if got := <-done; !strings.Contains(got, "context canceled") {
		t.Errorf("cancelled write: %s", got)
	}
	waitFor(t, "the cancelled call's approval to be denied", func() bool {
		return strings.Contains(plain.stderr.String(), "approval "+id3+": denied by mcp client plain-client")
	})
	if _, err := os.Stat(filepath.Join(ws, "cancelled.txt")); !os.IsNotExist(err) {
		t.Errorf("the cancelled write happened: %v", err)
	}
	fsSession := sessionOf(t, fs.stderr.String())
	plainSession := sessionOf(t, plain.stderr.String())
	fs.close(t)
	plain.close(t)

	// The everything server: calls, structured content, prompts and
	// resources passed through.
	// --env passes a variable of the proxy's to the upstream (which does
	// not inherit the proxy's environment), never recorded as such.
	t.Setenv("OPX_E2E_TOKEN", "tok-e2e-4711")
	ev := w.connectProxy("e2e-client", nil, "--env", "OPX_E2E_TOKEN", "everything")
	if res, text := ev.call(t, "get-env", nil); res.IsError || !strings.Contains(text, "tok-e2e-4711") || strings.Contains(text, "XDG_STATE_HOME") {
		t.Errorf("get-env: %v %q", res.IsError, clip(text))
	}
	res, text = ev.call(t, "echo", map[string]any{"message": "through opx"})
	if res.IsError || !strings.Contains(text, "through opx") {
		t.Errorf("echo: %v %q", res.IsError, text)
	}
	res, text = ev.call(t, "get-sum", map[string]any{"a": 2, "b": 40})
	if res.IsError || !strings.Contains(text, "42") {
		t.Errorf("get-sum: %v %q", res.IsError, text)
	}
	res, _ = ev.call(t, "get-structured-content", map[string]any{"location": "New York"})
	if res.IsError || res.StructuredContent == nil {
		t.Errorf("get-structured-content: %+v", res)
	}
	prompts, err := ev.cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Errorf("prompts/list: %v %+v", err, prompts)
	}
	if p, err := ev.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "simple-prompt"}); err != nil || len(p.Messages) == 0 {
		t.Errorf("prompts/get: %v %+v", err, p)
	}
	resources, err := ev.cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources/list: %v %+v", err, resources)
	}
	if r, err := ev.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: resources.Resources[0].URI}); err != nil || len(r.Contents) == 0 {
		t.Errorf("resources/read %s: %v %+v", resources.Resources[0].URI, err, r)
	}
	if _, err := ev.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "no-such-prompt"}); err == nil {
		t.Errorf("prompts/get of no prompt answered")
	}
	if tpl, err := ev.cs.ListResourceTemplates(ctx, nil); err != nil || len(tpl.ResourceTemplates) == 0 {
		t.Errorf("resources/templates/list: %v %+v", err, tpl)
	}
	c, err := ev.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
		Argument: sdk.CompleteParamsArgument{Name: "department", Value: "E"}})
	if err != nil || len(c.Completion.Values) == 0 {
		t.Errorf("completion/complete: %v %+v", err, c)
	}
	evSession := sessionOf(t, ev.stderr.String())
	ev.close(t)

	// Review, with the engine running.
	out, errOut, code := w.run("sessions", "--json")
	if code != 0 {
		t.Fatalf("opx sessions: %d %s", code, errOut)
	}
	for _, s := range []string{fsSession, plainSession, evSession} {
		if !strings.Contains(out, s) {
			t.Errorf("opx sessions lacks %s:\n%s", s, out)
		}
	}
	if !strings.Contains(out, `"mode":"mcp-proxy"`) || !strings.Contains(out, "e2e-client 9.9.9 → fs") || !strings.Contains(out, "plain-client 9.9.9 → fs") {
		t.Errorf("opx sessions does not show the mode and client:\n%s", out)
	}
	var listed struct {
		Sessions []struct {
			ID       string `json:"id"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(out), &listed)
	messages := -1
	for _, s := range listed.Sessions {
		if s.ID == fsSession {
			messages = s.Messages
		}
	}
	if messages != 12 { // each tools/call and its answer: 6 calls in the fs session
		t.Errorf("opx sessions: %s has %d messages, want 12 (6 tools/call and their answers)", fsSession, messages)
	}
	out, errOut, code = w.run("replay", fsSession)
	if code != 0 {
		t.Fatalf("opx replay %s: %d %s", fsSession, code, errOut)
	}
	for _, want := range []string{"MCP client e2e-client: \"tools/call read_text_file", "mcp__fs__read_text_file", "BLOCKED", "fs-secrets",
		"DENIED", "denied by mcp client e2e-client", "the client got", "MCP client \"e2e-client\" 9.9.9 connected, in front of fs"} {
		if !strings.Contains(out, want) {
			t.Errorf("opx replay %s lacks %q:\n%s", fsSession, want, out)
		}
	}
	out, _, _ = w.run("replay", plainSession)
	t.Logf("opx replay %s:\n%s", plainSession, out)
	for _, want := range []string{"denied by opx deny", "approved by opx approve", "snapshot (workspace)"} {
		if !strings.Contains(out, want) {
			t.Errorf("opx replay %s lacks %q:\n%s", plainSession, want, out)
		}
	}
	out, _, _ = w.run("replay", evSession)
	for _, want := range []string{"MCP client asked completion/complete", "MCP prompts/get answered with an error", "MCP resources/read answered",
		"tools/call get-structured-content"} {
		if !strings.Contains(out, want) {
			t.Errorf("opx replay %s lacks %q:\n%s", evSession, want, out)
		}
	}
	out, _, code = w.run("metrics", "--json")
	if code != 0 || !strings.Contains(out, "mcp") {
		t.Errorf("opx metrics: %d\n%s", code, out)
	}
	report := filepath.Join(t.TempDir(), "report.html")
	if out, errOut, code := w.run("report", plainSession, "-o", report); code != 0 {
		t.Errorf("opx report: %d %s%s", code, out, errOut)
	}
	// Undo the approved write.
	out, errOut, code = w.run("rollback", "--session", plainSession)
	if code != 0 {
		t.Fatalf("opx rollback --session %s: %d %s%s", plainSession, code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "hello.txt")); string(b) != "hello from the workspace\n" {
		t.Errorf("hello.txt after the rollback: %q", b)
	}
	w.stop(m)
	path := filepath.Join(w.stateDir(), "ledger.db")
	types := w.types(path) // verifies strictly
	for _, typ := range []string{event.TypeMCPClient, event.TypeMCPRequest, event.TypeMCPResponse, event.TypeMCPServerStarted,
		event.TypeMCPToolsListed, event.TypeMCPServerExited, event.TypeApprovalResolved, event.TypeSnapshot, event.TypeRollback} {
		if count(types, typ) == 0 {
			t.Errorf("no %s in the ledger", typ)
		}
	}
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Errorf("opx ledger verify --strict: %d %s%s", code, out, errOut)
	}
	checkProxyLedger(t, path, fsSession)
	// The token is in the ledger only as the upstream's answer carried it.
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if strings.Contains(string(e.Data), "tok-e2e-4711") && e.Type != event.TypeExecCompleted && e.Type != event.TypeMCPResponse {
			t.Errorf("seq %d %s holds the token passed with --env", e.Seq, e.Type)
		}
		return nil
	})
	l.Close()
	// What-if: under a policy that allows everything, the blocked reads
	// would have run.
	lax := filepath.Join(t.TempDir(), "lax.yaml")
	os.WriteFile(lax, []byte("version: 1\ndefault: allow\n"), 0o644)
	out, errOut, code = w.run("replay", fsSession, "--policy", lax)
	if code != 0 || !strings.Contains(out, "mcp__fs__read_text_file") || !strings.Contains(out, "fs-secrets") {
		t.Errorf("what-if: %d %s%s", code, out, errOut)
	}
	t.Logf("what-if:\n%s", out)
	// Rerun: each proxied call re-judged and served from the record.
	for _, s := range []string{fsSession, plainSession, evSession} {
		out, errOut, code = w.run("replay", s, "--rerun")
		if code != 0 || !strings.Contains(out, "identical") {
			t.Errorf("opx replay %s --rerun: %d\n%s%s", s, code, out, errOut)
		}
		t.Logf("opx replay %s --rerun:\n%s", s, out)
	}
}

// sessionOf reads the session id the proxy announced on stderr.
func sessionOf(t *testing.T, stderr string) string {
	t.Helper()
	i := strings.Index(stderr, "session ses_")
	if i < 0 {
		t.Fatalf("the proxy did not announce its session:\n%s", stderr)
	}
	return strings.TrimSuffix(strings.Fields(stderr[i+len("session "):])[0], ":")
}

// checkProxyLedger checks the fs session's entries: session.created
// (mcp-proxy), then mcp.client, then the upstream's start, and each
// tools/call between its mcp.request and mcp.response.
func checkProxyLedger(t *testing.T, path, session string) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	var types []string
	var client event.MCPClient
	open := map[string]bool{}
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Session != session {
			return nil
		}
		types = append(types, e.Type)
		switch e.Type {
		case event.TypeMCPClient:
			json.Unmarshal(e.Data, &client)
		case event.TypeMCPRequest:
			open[field(e, "request_id")] = true
		case event.TypeMCPResponse:
			delete(open, field(e, "request_id"))
		case event.TypeToolProposed, event.TypeExecStarted, event.TypeExecCompleted:
			if !open[field(e, "call_id")] {
				t.Errorf("seq %d %s of call %s outside its mcp.request/mcp.response", e.Seq, e.Type, field(e, "call_id"))
			}
		}
		return nil
	})
	if len(types) < 4 || types[0] != event.TypeSessionCreated || types[1] != event.TypeMCPClient || types[2] != event.TypeMCPServerStarted {
		t.Errorf("session %s starts %v", session, types[:min(4, len(types))])
	}
	if types[len(types)-1] != event.TypeMCPServerExited {
		t.Errorf("session %s ends with %s, not the upstream's end", session, types[len(types)-1])
	}
	if client.ClientName != "e2e-client" || client.ClientVersion != "9.9.9" || client.Upstream != "fs" || len(client.Command) == 0 {
		t.Errorf("mcp.client %+v", client)
	}
	if len(open) != 0 {
		t.Errorf("requests without an answer: %v", open)
	}
}

// TestE2E_MCPProxy_Inspector: the npm inspector CLI (the TypeScript SDK's
// client) in front of opx mcp-proxy, one session per invocation. No
// engine runs at first: the first proxy starts one in the background.
func TestE2E_MCPProxy_Inspector(t *testing.T) {
	t.Parallel()
	inspector := mcptest.Program(t, mcptest.Inspector)
	w := proxyWorld(t)
	defer func() {
		if out, errOut, code := w.run("stop"); code != 0 {
			t.Errorf("opx stop: %d %s%s", code, out, errOut)
		}
	}()
	inspect := func(server string, args ...string) (string, string, error) {
		t.Helper()
		argv := append([]string{"--cli"}, args...)
		argv = append(argv, "--", w.bin, "mcp-proxy", "--workspace", w.ws, server)
		cmd := exec.Command(inspector, argv...)
		// The inspector reads its own package.json relative to the
		// working directory.
		cmd.Dir = mcptest.InspectorDir()
		cmd.Env = w.env()
		var out, errOut syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(3 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("the inspector did not finish: %s", errOut.String())
		}
		return out.String(), errOut.String(), err
	}
	out, errOut, err := inspect("everything", "--method", "tools/list")
	if err != nil || !strings.Contains(out, `"name": "echo"`) {
		t.Fatalf("tools/list: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = inspect("everything", "--tool-arg", "message=from the inspector", "--method", "tools/call", "--tool-name", "echo")
	if err != nil || !strings.Contains(out, "from the inspector") {
		t.Errorf("tools/call echo: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = inspect("fs", "--tool-arg", "path="+filepath.Join(w.ws, "secret", "key.txt"), "--method", "tools/call", "--tool-name", "read_text_file")
	if !strings.Contains(out+errOut, "blocked by Shield") || strings.Contains(out, "not for MCP clients") {
		t.Errorf("a blocked read: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = inspect("everything", "--method", "prompts/list")
	if err != nil || !strings.Contains(out, "simple-prompt") {
		t.Errorf("prompts/list: %v\n%s\n%s", err, out, errOut)
	}
	out, _, code := w.run("sessions")
	if code != 0 || strings.Count(out, "mcp-proxy") != 4 || !strings.Contains(out, "inspector-cli") {
		t.Errorf("opx sessions:\n%s", out)
	}
	if out, errOut, code := w.run("ledger", "verify", "--strict"); code != 0 {
		t.Errorf("opx ledger verify --strict: %d %s%s", code, out, errOut)
	}
}

// TestE2E_MCPProxy_StartRace: several MCP clients start their proxies at
// once in a workspace where no engine runs: one engine is started, every
// proxy attaches to it, each client gets its session.
func TestE2E_MCPProxy_StartRace(t *testing.T) {
	t.Parallel()
	every := mcptest.Program(t, mcptest.Everything)
	mcptest.NeedSandbox(t)
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755)
	os.WriteFile(filepath.Join(w.ws, ".opx", "policy.yaml"), []byte("version: 1\nallow:\n  - name: upstream\n    tools: [\"mcp__upstream__*\"]\n"), 0o644)
	os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte("policy: .opx/policy.yaml\n"), 0o644)
	defer w.run("stop")
	const n = 3
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cmd := exec.Command(w.bin, "mcp-proxy", "--workspace", w.ws, "--", every)
			cmd.Env = w.env()
			var stderr syncBuffer
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("racer-%d", i), Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				errs <- fmt.Errorf("racer %d: %v\n%s", i, err, stderr.String())
				return
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "racing"}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("racer %d: echo: %v %+v\n%s", i, err, res, stderr.String())
				return
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	out, _, code := w.run("sessions")
	if code != 0 || strings.Count(out, "mcp-proxy") != n {
		t.Errorf("opx sessions: %d\n%s", code, out)
	}
	st, code := w.status()
	if code != 0 || st.EnginePID == 0 {
		t.Errorf("opx status: %d %+v", code, st)
	}
}
