package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/agents/unrecorded"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Tests of `opx hook AGENT` against a scripted HookService published in
// the workspace's registry as an engine would be: what the hook sends,
// and how it turns each answer into the CLI's.

// scriptedHooks is a HookService whose Event answers with answer and
// which keeps what it was sent.
type scriptedHooks struct {
	opxv1.UnimplementedHookServiceServer
	token  string
	answer func(context.Context, *opxv1.HookEventRequest) (*opxv1.HookEventReply, error)

	mu          sync.Mutex
	events      []*opxv1.HookEventRequest
	deadlines   []time.Duration // left at each call
	transcripts [][]*opxv1.TranscriptChunk
}

func (s *scriptedHooks) authorized(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(engine.TokenHeader); len(v) != 1 || v[0] != s.token {
		return status.Error(codes.Unauthenticated, "no token")
	}
	return nil
}

func (s *scriptedHooks) Event(ctx context.Context, req *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
	if err := s.authorized(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.events = append(s.events, req)
	if d, ok := ctx.Deadline(); ok {
		s.deadlines = append(s.deadlines, time.Until(d))
	}
	s.mu.Unlock()
	return s.answer(ctx, req)
}

func (s *scriptedHooks) Transcript(stream opxv1.HookService_TranscriptServer) error {
	if err := s.authorized(stream.Context()); err != nil {
		return err
	}
	var got []*opxv1.TranscriptChunk
	var n int64
	for {
		c, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		got = append(got, c)
		n += int64(len(c.Data))
	}
	s.mu.Lock()
	s.transcripts = append(s.transcripts, got)
	s.mu.Unlock()
	return stream.SendAndClose(&opxv1.TranscriptStored{SessionId: "S1", Bytes: n, Seq: 7})
}

func (s *scriptedHooks) got() ([]*opxv1.HookEventRequest, [][]*opxv1.TranscriptChunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*opxv1.HookEventRequest(nil), s.events...), append([][]*opxv1.TranscriptChunk(nil), s.transcripts...)
}

// answering is a scripted answer that is always reply.
func answering(reply *opxv1.HookEventReply) func(context.Context, *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
	return func(context.Context, *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) { return reply, nil }
}

// serveHooks publishes s as the engine of workspace ws (a gRPC server on
// loopback in the registry, with a client token); without s, the server
// serves no HookService (an engine from before hooks).
func serveHooks(t *testing.T, ws string, s *scriptedHooks) {
	t.Helper()
	dir := registry.Dir(stateDir(t, ws))
	lock, err := registry.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	token, err := lock.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	if s != nil {
		s.token = token
		opxv1.RegisterHookServiceServer(srv, s)
	}
	go srv.Serve(lis)
	if err := lock.Publish(registry.Entry{Workspace: ws, ManagerPID: os.Getpid(), EnginePID: os.Getpid(),
		Port: lis.Addr().(*net.TCPAddr).Port, Ledger: filepath.Join(string(dir), "ledger.db")}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		lock.Release()
	})
}

// TestHook_Answers: each answer of the engine, as each CLI reads it.
func TestHook_Answers(t *testing.T) {
	ws := hookWorkspace(t, "")
	s := &scriptedHooks{}
	serveHooks(t, ws, s)
	input := json.RawMessage(`{"command":"opx internal-sandbox-exec -- rm -rf build"}`)
	for _, tc := range []struct {
		name  string
		agent hookproto.Agent
		reply *opxv1.HookEventReply
		code  int
		out   string // stdout, exactly
		err   string // in stderr
	}{
		{"allow", hookproto.Claude, &opxv1.HookEventReply{Decision: "allow"}, 0, "", ""},
		{"allow", hookproto.Codex, &opxv1.HookEventReply{Decision: "allow"}, 0, "", ""},
		{"allow", hookproto.Gemini, &opxv1.HookEventReply{Decision: "allow"}, 0, "", ""},
		{"deny", hookproto.Claude, &opxv1.HookEventReply{Decision: "deny", Reason: "blocked: credential read"}, 2, "", "blocked: credential read\n"},
		{"deny", hookproto.Codex, &opxv1.HookEventReply{Decision: "deny", Reason: "blocked: credential read"}, 2, "", "blocked: credential read\n"},
		{"deny", hookproto.Gemini, &opxv1.HookEventReply{Decision: "deny", Reason: "blocked: credential read"}, 0,
			`{"decision":"deny","reason":"blocked: credential read"}` + "\n", ""},
		{"ask", hookproto.Claude, &opxv1.HookEventReply{Decision: "ask", Reason: "a human decides"}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a human decides"}}` + "\n", ""},
		{"ask, which Codex has not", hookproto.Codex, &opxv1.HookEventReply{Decision: "ask", Reason: "a human decides"}, 2, "", "cannot be given to codex"},
		{"rewritten input", hookproto.Claude, &opxv1.HookEventReply{Decision: "allow", UpdatedInput: input}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":` + string(input) + `}}` + "\n", ""},
		{"rewritten input", hookproto.Codex, &opxv1.HookEventReply{Decision: "allow", UpdatedInput: input}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":` + string(input) + `}}` + "\n", ""},
		{"no decision", hookproto.Claude, &opxv1.HookEventReply{}, 2, "", "bad hook answer"},
		{"a decision opx does not know", hookproto.Gemini, &opxv1.HookEventReply{Decision: "maybe"}, 0, `"decision":"deny"`, ""},
		{"a rewritten input that is not an object", hookproto.Claude, &opxv1.HookEventReply{Decision: "allow", UpdatedInput: []byte(`"x"`)}, 2, "", "bad hook answer"},
	} {
		t.Run(string(tc.agent)+"/"+tc.name, func(t *testing.T) {
			s.answer = answering(tc.reply)
			r := runHook(t, bytes.NewReader(hookEvent(tc.agent, hookproto.KindPreTool, ws, nil)), "hook", string(tc.agent))
			r.wantCode(t, tc.code)
			if tc.name == "a decision opx does not know" {
				r.wantOut(t, tc.out)
			} else if r.stdout != tc.out {
				t.Errorf("stdout %q, want %q", r.stdout, tc.out)
			}
			r.wantErr(t, tc.err)
		})
	}
}

// TestHook_Request: what the engine is sent: the event's bytes as the
// CLI wrote them, the project directory, a deadline below the hook's,
// the CLI's version only at a session's start; the workspace found from
// the project directory or cwd.
func TestHook_Request(t *testing.T) {
	ws := hookWorkspace(t, "hooks:\n  decision_timeout: 30s\n")
	sub := filepath.Join(ws, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &scriptedHooks{answer: answering(&opxv1.HookEventReply{Decision: "allow"})}
	serveHooks(t, ws, s)

	ev := hookEvent(hookproto.Claude, hookproto.KindPreTool, sub, nil)
	wantAnswered(t, runHook(t, bytes.NewReader(ev), "hook", "claude"))
	t.Setenv("GEMINI_PROJECT_DIR", ws)
	other := t.TempDir() // the agent's cwd outside: the project dir decides
	evg := hookEvent(hookproto.Gemini, hookproto.KindSessionStart, other, nil)
	wantAnswered(t, runHook(t, bytes.NewReader(evg), "hook", "gemini"))

	got, _ := s.got()
	if len(got) != 2 {
		t.Fatalf("%d events sent, want 2", len(got))
	}
	if got[0].Agent != "claude" || !bytes.Equal(got[0].Event, ev) || got[0].ProjectDir != "" {
		t.Errorf("sent %s %q project %q", got[0].Agent, got[0].Event, got[0].ProjectDir)
	}
	if got[1].Agent != "gemini" || !bytes.Equal(got[1].Event, evg) || got[1].ProjectDir != ws {
		t.Errorf("sent %s %q project %q", got[1].Agent, got[1].Event, got[1].ProjectDir)
	}
	for i, d := range s.deadlines {
		// The engine gives up a second before the hook does.
		if ms := time.Duration(got[i].DeadlineMs) * time.Millisecond; ms > 29*time.Second || ms < 25*time.Second || d > 30*time.Second || d < 25*time.Second {
			t.Errorf("event %d: deadline_ms %v, the RPC's deadline %v; want both about 30s, deadline_ms 1s less", i, ms, d)
		}
	}

	// --workspace wins over the event's directories.
	t.Setenv("GEMINI_PROJECT_DIR", "")
	wantAnswered(t, runHook(t, bytes.NewReader(hookEvent(hookproto.Gemini, hookproto.KindPreTool, other, nil)), "hook", "gemini", "--workspace", ws))
	if got, _ := s.got(); len(got) != 3 {
		t.Errorf("%d events sent, want 3", len(got))
	}
}

// TestHook_DecisionTimeout: an engine that does not answer within
// hooks.decision_timeout: the call denied, saying so.
func TestHook_DecisionTimeout(t *testing.T) {
	ws := hookWorkspace(t, "hooks:\n  decision_timeout: 1s\n")
	s := &scriptedHooks{answer: func(ctx context.Context, _ *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	serveHooks(t, ws, s)
	for _, agent := range hookAgents {
		start := time.Now()
		r := runHook(t, bytes.NewReader(hookEvent(agent, hookproto.KindPreTool, ws, nil)), "hook", string(agent))
		wantDeny(t, agent, r, "no decision within 1s (hooks.decision_timeout)")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: denied after %v", agent, d)
		}
	}
	// A session event: nothing to deny.
	r := runHook(t, bytes.NewReader(hookEvent(hookproto.Claude, hookproto.KindSessionEnd, ws, nil)), "hook", "claude")
	wantAnswered(t, r, "not recorded: no decision within 1s")
}

// TestHook_EngineFailures: an engine without HookService, one that
// errs, and one in the registry that is gone (down: on_engine_down).
func TestHook_EngineFailures(t *testing.T) {
	t.Run("no HookService", func(t *testing.T) {
		ws := hookWorkspace(t, "")
		serveHooks(t, ws, nil)
		wantDeny(t, hookproto.Codex, runHook(t, bytes.NewReader(hookEvent(hookproto.Codex, hookproto.KindPreTool, ws, nil)), "hook", "codex"),
			"the engine does not answer hooks")
	})
	t.Run("an error", func(t *testing.T) {
		ws := hookWorkspace(t, "")
		serveHooks(t, ws, &scriptedHooks{answer: func(context.Context, *opxv1.HookEventRequest) (*opxv1.HookEventReply, error) {
			return nil, status.Error(codes.FailedPrecondition, "the ledger failed")
		}})
		wantDeny(t, hookproto.Gemini, runHook(t, bytes.NewReader(hookEvent(hookproto.Gemini, hookproto.KindPreTool, ws, nil)), "hook", "gemini"),
			"the engine refused the event: FailedPrecondition: the ledger failed")
	})
	t.Run("gone, allow", func(t *testing.T) {
		ws := hookWorkspace(t, "hooks:\n  on_engine_down: allow\n")
		dir := registry.Dir(stateDir(t, ws))
		lock, err := registry.Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
		if _, err := lock.NewToken(); err != nil {
			t.Fatal(err)
		}
		lis, _ := net.Listen("tcp", "127.0.0.1:0")
		port := lis.Addr().(*net.TCPAddr).Port
		lis.Close() // nothing listens there
		if err := lock.Publish(registry.Entry{Workspace: ws, ManagerPID: os.Getpid(), EnginePID: os.Getpid(), Port: port}); err != nil {
			t.Fatal(err)
		}
		r := runHook(t, bytes.NewReader(hookEvent(hookproto.Claude, hookproto.KindPreTool, ws, nil)), "hook", "claude")
		wantAnswered(t, r, "no engine: the engine cannot be reached", "written down")
		if lines := readLines(t, filepath.Join(string(dir), unrecorded.File)); len(lines) != 1 {
			t.Errorf("%d lines written down, want 1", len(lines))
		}
	})
}

// TestHook_Transcript: the transcript sent in chunks when the engine asks
// for it (the session's end) or with --flush; a symlink is not followed;
// a failure to send it leaves the answer as it was.
func TestHook_Transcript(t *testing.T) {
	ws := hookWorkspace(t, "")
	s := &scriptedHooks{}
	serveHooks(t, ws, s)
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	body := bytes.Repeat([]byte(`{"type":"assistant","text":"hello"}`+"\n"), (5<<20)/36) // ~2.5 chunks
	body = body[:5<<19]
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(path, link)

	s.answer = answering(&opxv1.HookEventReply{Decision: "allow", TranscriptPath: path})
	wantAnswered(t, runHook(t, bytes.NewReader(hookEvent(hookproto.Claude, hookproto.KindSessionEnd, ws, nil)), "hook", "claude"))
	_, tr := s.got()
	if len(tr) != 1 {
		t.Fatalf("%d transcripts sent, want 1", len(tr))
	}
	var all []byte
	for i, c := range tr[0] {
		if i > 0 && (c.Agent != "" || c.Path != "" || c.Size != 0) {
			t.Errorf("chunk %d names the session again", i)
		}
		if len(c.Data) > 1<<20 {
			t.Errorf("chunk %d holds %d bytes", i, len(c.Data))
		}
		all = append(all, c.Data...)
	}
	first := tr[0][0]
	if len(tr[0]) != 3 || first.Agent != "claude" || first.AgentSessionId != "sess-1" || first.Path != path || first.Size != int64(len(body)) || first.Truncated || !bytes.Equal(all, body) {
		t.Errorf("sent %d chunks, first %s %s %s size %d truncated %v; %d bytes, equal %v",
			len(tr[0]), first.Agent, first.AgentSessionId, first.Path, first.Size, first.Truncated, len(all), bytes.Equal(all, body))
	}

	// --flush: the event's own transcript_path, at a tool call; the
	// answer (a denial) is the engine's whatever happens to the transcript.
	s.answer = answering(&opxv1.HookEventReply{Decision: "deny", Reason: "no"})
	r := runHook(t, bytes.NewReader(hookEvent(hookproto.Gemini, hookproto.KindPreTool, ws, map[string]any{"transcript_path": link})), "hook", "gemini", "--flush")
	wantDeny(t, hookproto.Gemini, r, "no")
	r.wantErr(t, "the transcript was not stored", "symbolic link")
	if _, tr := s.got(); len(tr) != 1 {
		t.Errorf("a transcript was read through a symlink")
	}

	s.answer = answering(&opxv1.HookEventReply{Decision: "allow", TranscriptPath: dir})
	r = runHook(t, bytes.NewReader(hookEvent(hookproto.Codex, hookproto.KindSessionEnd, ws, nil)), "hook", "codex")
	wantAnswered(t, r, "the transcript was not stored", "not a regular file")

	// An empty transcript is one chunk.
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	s.answer = answering(&opxv1.HookEventReply{TranscriptPath: empty})
	wantAnswered(t, runHook(t, bytes.NewReader(hookEvent(hookproto.Codex, hookproto.KindSessionEnd, ws, nil)), "hook", "codex"))
	if _, tr := s.got(); len(tr) != 2 || len(tr[1]) != 1 || tr[1][0].Size != 0 || tr[1][0].Path != empty {
		t.Errorf("the empty transcript: %v", tr)
	}
	if strings.Contains(r.stdout, "transcript") {
		t.Error("stdout names the transcript")
	}
}

// TestHook_LargePostTool: a post-tool event larger than a message goes
// with its tool response cut and marked; a tool call that large is
// denied without asking the engine.
func TestHook_LargePostTool(t *testing.T) {
	ws := hookWorkspace(t, "")
	s := &scriptedHooks{answer: answering(&opxv1.HookEventReply{})}
	serveHooks(t, ws, s)
	resp := strings.Repeat("line of output\n", (4<<20+64<<10)/15) // past the 4 MiB message once escaped
	ev := hookEvent(hookproto.Gemini, hookproto.KindPostTool, ws, map[string]any{"tool_response": map[string]any{"llmContent": resp}})
	rawResp, _ := json.Marshal(map[string]any{"llmContent": resp})
	wantAnswered(t, runHook(t, bytes.NewReader(ev), "hook", "gemini"))
	got, _ := s.got()
	if len(got) != 1 {
		t.Fatalf("%d events sent", len(got))
	}
	sent, err := hookproto.Parse(hookproto.Gemini, got[0].Event, nil)
	if err != nil {
		t.Fatalf("the cut event does not parse: %v", err)
	}
	orig, _ := hookproto.Parse(hookproto.Gemini, ev, nil)
	var m map[string]json.RawMessage
	json.Unmarshal(got[0].Event, &m)
	var text string
	json.Unmarshal(m["tool_response"], &text)
	if len(got[0].Event) > 4<<20 || len(text) > 1<<20 || len(text) < 1<<20-8 || string(m["opx_truncated"]) != strconv.Itoa(len(rawResp)) ||
		sent.ToolUseID != orig.ToolUseID || !bytes.Equal(sent.ToolInput, orig.ToolInput) {
		t.Errorf("sent %d bytes, response %d, opx_truncated %s, tool use id %s (was %s)",
			len(got[0].Event), len(text), m["opx_truncated"], sent.ToolUseID, orig.ToolUseID)
	}
}
