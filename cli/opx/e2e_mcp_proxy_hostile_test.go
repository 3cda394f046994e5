package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// TestE2E_MCPProxy_Hostile: what a proxy's client and an upstream can
// send that they should not. The engine's McpProxyService is spoken to
// directly (a stream that does not open first, opens twice, names what
// is not there, floods), a client sends lines over the cap and garbage,
// and misbehaving upstreams crash mid-call, never answer, answer 48 MB,
// answer malformed JSON-RPC, or never start. Each is refused or recorded
// with a clear error, the session goes on or ends with its end recorded,
// nothing hangs, and the ledger verifies strictly.
func TestE2E_MCPProxy_Hostile(t *testing.T) {
	t.Parallel()
	bad := mcptest.BadServer(t)
	w := proxyWorld(t, fmt.Sprintf("    bad:\n      command: %s\n      timeout: 2s\n", bad))
	m := w.start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pc := w.proxyService()

	t.Run("stream", func(t *testing.T) {
		// Not opened first.
		s := pc.stream(t, ctx)
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Call{Call: &opxv1.ProxyCall{Id: 1, Method: "tools/list"}}})
		if _, err := s.Recv(); grpcstatus.Code(err) != codes.InvalidArgument {
			t.Errorf("a call before the open: %v", err)
		}
		for name, open := range map[string]*opxv1.ProxyOpen{
			"unknown server":     {Server: "nope", ClientName: "x"},
			"server and command": {Server: "fs", Command: []string{"true"}, ClientName: "x"},
			"no upstream":        {ClientName: "x"},
			"long command":       {Command: make([]string, 300), ClientName: "x"},
			"NUL in the command": {Command: []string{"/bin/true", "a\x00b"}, ClientName: "x"},
			"a long argument":    {Command: []string{"/bin/true", strings.Repeat("a", 5000)}, ClientName: "x"},
			"sandbox of a name":  {Server: "fs", Writable: true, ClientName: "x"},
		} {
			s := pc.stream(t, ctx)
			s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: open}})
			if _, err := s.Recv(); grpcstatus.Code(err) != codes.InvalidArgument {
				t.Errorf("%s: %v", name, err)
			}
		}
		// A client's name is its own: clipped, recorded. (Not UTF-8
		// cannot arrive: gRPC refuses such a string field.)
		s = pc.stream(t, ctx)
		hostile := strings.Repeat("\x00\x1b[31mé", 5000)
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: &opxv1.ProxyOpen{Server: "fs", ClientName: hostile,
			ClientVersion: strings.Repeat("v", 10000), Capabilities: make([]string, 1000)}}})
		r, err := s.Recv()
		if err != nil || r.GetOpened() == nil {
			t.Fatalf("a hostile name: %v %v", r, err)
		}
		hostileSession := r.GetOpened().SessionId
		// Garbage calls: each answered with an error, the session goes on.
		for i, c := range []*opxv1.ProxyCall{
			{Method: "tools/call", Params: []byte("not json")},
			{Method: "tools/call", Params: []byte(`{"arguments":{}}`)},
			{Method: "tools/call", Params: []byte(`[1,2]`)},
			{Method: "resources/list", Params: []byte(`"a string"`)},
			{Method: "sampling/createMessage", Params: []byte(`{}`)},
			{Method: "tools/list\x00\n", Params: []byte(`{}`)},
			{Method: strings.Repeat("m", 100000)},
		} {
			c.Id = uint64(10 + i)
			s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Call{Call: c}})
			r, err := s.Recv()
			if err != nil || r.GetResult() == nil || r.GetResult().Error == "" || r.GetResult().Id != c.Id {
				t.Errorf("garbage call %d (%q): %v %v", i, clip(c.Method), r, err)
			}
		}
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Call{Call: &opxv1.ProxyCall{Id: 99, Method: "tools/list"}}})
		if r, err := s.Recv(); err != nil || !strings.Contains(string(r.GetResult().GetResult()), "read_text_file") {
			t.Errorf("tools/list after the garbage: %v %v", r, err)
		}
		// An answer to an approval that is not the session's changes
		// nothing; a second open ends the stream.
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Approval{Approval: &opxv1.ProxyApprovalAnswer{ApprovalId: "apr_0000000000000000", Approved: true}}})
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: &opxv1.ProxyOpen{Server: "fs", ClientName: "again"}}})
		for {
			_, err := s.Recv()
			if err != nil {
				if grpcstatus.Code(err) != codes.InvalidArgument {
					t.Errorf("a second open: %v", err)
				}
				break
			}
		}
		w.sessionEnded(hostileSession)
	})

	t.Run("flood", func(t *testing.T) {
		// Writes wait for a human: 16 in flight at most, the rest refused
		// at once; the client leaves and every approval is denied.
		s := pc.stream(t, ctx)
		s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Open{Open: &opxv1.ProxyOpen{Server: "fs", ClientName: "flood"}}})
		r, err := s.Recv()
		if err != nil || r.GetOpened() == nil {
			t.Fatalf("open: %v %v", r, err)
		}
		session := r.GetOpened().SessionId
		for i := range 40 {
			params := fmt.Sprintf(`{"name":"write_file","arguments":{"path":%q,"content":"x"}}`, filepath.Join(w.ws, fmt.Sprintf("flood-%d.txt", i)))
			s.Send(&opxv1.ProxyRequest{Request: &opxv1.ProxyRequest_Call{Call: &opxv1.ProxyCall{Id: uint64(i + 1), Method: "tools/call", Params: []byte(params)}}})
		}
		busy, asked := 0, 0
		for busy+asked < 40 {
			r, err := s.Recv()
			if err != nil {
				t.Fatalf("flood: %v", err)
			}
			switch {
			case r.GetResult() != nil && strings.Contains(r.GetResult().Error, "too many requests in flight"):
				busy++
			case r.GetApproval() != nil && !r.GetApproval().Resolved:
				asked++
			case r.GetResult() != nil:
				t.Fatalf("flood: answered %v", r)
			}
		}
		if asked != 16 || busy != 24 {
			t.Errorf("flood: %d asked, %d refused", asked, busy)
		}
		s.CloseSend()
		denied := 0
		for {
			r, err := s.Recv()
			if err != nil {
				break
			}
			if res := r.GetResult(); res != nil && strings.Contains(string(res.Result), "the mcp-proxy session ended") {
				denied++
			}
		}
		w.sessionEnded(session)
		for i := range 40 {
			if _, err := os.Stat(filepath.Join(w.ws, fmt.Sprintf("flood-%d.txt", i))); !os.IsNotExist(err) {
				t.Errorf("flood-%d.txt was written", i)
			}
		}
		t.Logf("flood: %d asked, %d refused as busy, %d answered denied before the stream closed", asked, busy, denied)
	})

	t.Run("upstreams", func(t *testing.T) {
		p := w.connectProxy("bad-client", nil, "bad")
		// Never answers: the call times out (2 s), the session goes on.
		res, text := p.call(t, "hang", nil)
		if !res.IsError || !strings.Contains(text, "did not answer in time") {
			t.Errorf("hang: %v %q", res.IsError, text)
		}
		// 48 MB (three times the transport's cap): cut at the cap, bounded.
		res, text = p.call(t, "big", map[string]any{"mb": 48})
		if !res.IsError || len(text) > 1<<20 {
			t.Errorf("big: %v %d bytes %q", res.IsError, len(text), clip(text))
		}
		res, text = p.call(t, "malformed", nil)
		if !res.IsError {
			t.Errorf("malformed: %v %q", res.IsError, text)
		}
		if res, text = p.call(t, "echo", map[string]any{"text": "still here"}); res.IsError || !strings.Contains(text, "still here") {
			t.Errorf("echo after the bad answers: %v %q", res.IsError, text)
		}
		// Its tools change: the client is told, and lists the new ones.
		if res, text = p.call(t, "change", nil); res.IsError {
			t.Errorf("change: %q", text)
		}
		select {
		case <-p.toolsChanged:
		case <-time.After(time.Minute):
			t.Fatalf("the client was not told that the tools changed:\n%s", p.stderr.String())
		}
		waitFor(t, "the new tool in tools/list", func() bool {
			tl, err := p.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			names := map[string]bool{}
			for _, x := range tl.Tools {
				names[x.Name] = true
			}
			if names["opx-mcp-proxy-tools-changed"] {
				t.Fatalf("the placeholder is listed: %v", names)
			}
			return names["added1"]
		})
		if res, text = p.call(t, "added1", map[string]any{"text": "new"}); res.IsError && strings.Contains(text, "blocked") {
			t.Errorf("the new tool: %q", text)
		}
		// Crash mid-call: a tool error, then the session ends (the
		// upstream is gone) and the proxy exits, saying why.
		res, text = p.call(t, "crash", nil)
		if !res.IsError {
			t.Errorf("crash: %v %q", res.IsError, text)
		}
		session := sessionOf(t, p.stderr.String())
		p.waitGone(t, "the session ended: the MCP server bad ended (crashed")
		w.sessionEnded(session)

		// An upstream that will not start: the client's initialize fails
		// and says why.
		cmd := exec.Command(w.bin, "mcp-proxy", "--workspace", w.ws, "--", bad, "-start", "exit")
		cmd.Env = w.env()
		errOut := &syncBuffer{}
		cmd.Stderr = errOut
		_, err := sdk.NewClient(&sdk.Implementation{Name: "x", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err == nil || !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "refusing to start") {
			t.Errorf("an upstream that will not start: %v\n%s", err, errOut.String())
		}
	})

	t.Run("client lines", func(t *testing.T) {
		for name, line := range map[string]string{
			"over the cap": `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`,
			"garbage":      "this is not JSON-RPC \xff\xfe",
		} {
			cmd := exec.Command(w.bin, "mcp-proxy", "--workspace", w.ws, "fs")
			cmd.Env = w.env()
			errOut := &syncBuffer{}
			cmd.Stderr = errOut
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(out)
			fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			if !lines.Scan() || !strings.Contains(lines.Text(), `"serverInfo"`) {
				t.Fatalf("%s: initialize: %q\n%s", name, lines.Text(), errOut.String())
			}
			fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			io.WriteString(in, line+"\n")
			done := make(chan error, 1)
			go func() { io.Copy(io.Discard, out); done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("%s: the proxy still runs:\n%s", name, errOut.String())
			}
			in.Close()
			w.sessionEnded(sessionOf(t, errOut.String()))
		}
	})

	// The engine stops under an open session: the session ends (its end
	// recorded before engine.stopped) and the proxy exits, saying so.
	p := w.connectProxy("last-client", nil, "fs")
	if res, _ := p.call(t, "read_text_file", map[string]any{"path": filepath.Join(w.ws, "hello.txt")}); res.IsError {
		t.Fatal("read before the stop failed")
	}
	w.stop(m)
	p.waitGone(t, "the session ended: the engine stopped")
	path := filepath.Join(w.stateDir(), "ledger.db")
	w.types(path) // strict verification
	checkHostileLedger(t, path)
}

// waitGone waits until the proxy ended the client's connection, and
// checks that it said why on stderr.
func (p *proxyClient) waitGone(t *testing.T, why string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cs.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the proxy still serves its client:\n%s", p.stderr.String())
	}
	waitFor(t, "the proxy to say "+why, func() bool { return strings.Contains(p.stderr.String(), why) })
	p.cs = nil
}

// proxyService is a McpProxyService client of the world's engine, with
// its client token.
type proxyService struct {
	c   opxv1.McpProxyServiceClient
	ctx context.Context
}

func (w *world) proxyService() *proxyService {
	w.t.Helper()
	e, tok, err := registry.Lookup(registry.Dir(w.stateDir()))
	if err != nil {
		w.t.Fatal(err)
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { conn.Close() })
	return &proxyService{c: opxv1.NewMcpProxyServiceClient(conn), ctx: metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, tok)}
}

func (p *proxyService) stream(t *testing.T, ctx context.Context) opxv1.McpProxyService_ProxyClient {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	md, _ := metadata.FromOutgoingContext(p.ctx)
	s, err := p.c.Proxy(metadata.NewOutgoingContext(ctx, md))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sessionEnded waits until the session's upstream's end is recorded.
func (w *world) sessionEnded(session string) {
	w.t.Helper()
	w.waitEntry("the end of session "+session, func(e ledger.Entry) bool {
		return e.Session == session && e.Type == event.TypeMCPServerExited
	})
}

// checkHostileLedger checks what the hostile test left: clipped, valid
// client names; the timed-out, oversized, malformed and crashed calls
// recorded; the flood's approvals denied by the engine; the failed start
// recorded; each session's end before engine.stopped.
func checkHostileLedger(t *testing.T, path string) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, _ := l.Head()
	var stoppedSeq uint64
	ended := map[string]uint64{}
	opened := map[string]bool{}
	kinds := map[string]int{}
	engineDenials, failed := 0, 0
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		switch e.Type {
		case event.TypeMCPClient:
			var c event.MCPClient
			json.Unmarshal(e.Data, &c)
			if len(c.ClientName) > 128 || len(c.ClientVersion) > 64 || len(c.Capabilities) > 32 || !utf8.ValidString(c.ClientName) {
				t.Errorf("seq %d: mcp.client not clipped: %d bytes of name, %d of version, %d capabilities", e.Seq, len(c.ClientName), len(c.ClientVersion), len(c.Capabilities))
			}
			opened[e.Session] = true
		case event.TypeMCPProtocolError:
			kinds[field(e, "kind")]++
		case event.TypeApprovalResolved:
			if field(e, "by") == "engine" && strings.Contains(field(e, "reason"), "the mcp-proxy session ended") {
				engineDenials++
			}
		case event.TypeMCPServerFailed:
			failed++
			ended[e.Session] = e.Seq
		case event.TypeMCPServerExited:
			if e.Session != "" {
				ended[e.Session] = e.Seq
			}
		case event.TypeEngineStopped:
			stoppedSeq = e.Seq
		}
		return nil
	})
	if kinds["oversize"] == 0 || kinds["malformed"] == 0 {
		t.Errorf("protocol errors recorded: %v", kinds)
	}
	if engineDenials < 16 {
		t.Errorf("%d approvals denied by the session's end, want 16", engineDenials)
	}
	if failed == 0 {
		t.Errorf("no mcp.server_failed for the upstream that would not start")
	}
	for s := range opened {
		if seq, ok := ended[s]; !ok || seq > stoppedSeq {
			t.Errorf("session %s: its end (seq %d) is not recorded before engine.stopped (seq %d)", s, seq, stoppedSeq)
		}
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
