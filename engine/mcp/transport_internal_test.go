package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The line transport over plain pipes, the test playing the server.

type pipeServer struct {
	t    *testing.T
	lc   *lineConn
	in   *bufio.Reader // what opx wrote to the server
	out  *os.File      // the server's stdout
	inW  *os.File
	mu   sync.Mutex
	errs []problem
	logs []string
}

func newPipeServer(t *testing.T, maxLine int) *pipeServer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &pipeServer{t: t, in: bufio.NewReader(inR), out: outW, inW: inW}
	s.lc = newLineConn(inW, outR, maxLine, func(p problem) {
		s.mu.Lock()
		s.errs = append(s.errs, p)
		s.mu.Unlock()
	}, func(f string, a ...any) {
		s.mu.Lock()
		s.logs = append(s.logs, f)
		s.mu.Unlock()
	})
	t.Cleanup(func() {
		s.lc.Close()
		inR.Close()
		outW.Close()
	})
	return s
}

func (s *pipeServer) problems() []problem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]problem(nil), s.errs...)
}

// next reads the next message opx sent.
func (s *pipeServer) next() map[string]json.RawMessage {
	s.t.Helper()
	line, err := s.in.ReadBytes('\n')
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		s.t.Fatalf("opx wrote %q: %v", line, err)
	}
	return m
}

func (s *pipeServer) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.out, line); err != nil {
		s.t.Fatal(err)
	}
}

type callResult struct {
	raw json.RawMessage
	err error
}

// call starts an own call and returns its request as the server saw it
// and where its result will come.
func (s *pipeServer) call(ctx context.Context, method, callID string) (map[string]json.RawMessage, chan callResult) {
	s.t.Helper()
	ch := make(chan callResult, 1)
	go func() {
		raw, err := s.lc.call(ctx, method, map[string]any{}, callID)
		ch <- callResult{raw, err}
	}()
	return s.next(), ch
}

func wait(t *testing.T, ch chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
		return callResult{}
	}
}

func TestLineConn_CapBoundary(t *testing.T) {
	const max = 1024
	s := newPipeServer(t, max)
	ctx := context.Background()
	// A message of max-1 bytes plus its newline: taken.
	req, ch := s.call(ctx, "tools/list", "c1")
	pad := func(total int, id json.RawMessage) string {
		head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"p":"`
		return head + strings.Repeat("x", total-len(head)-len(`"}}`)) + `"}}` + "\n"
	}
	line := pad(max-1, req["id"])
	if len(line) != max {
		t.Fatalf("line of %d", len(line))
	}
	s.send(line)
	if r := wait(t, ch); r.err != nil || len(r.raw) < max-100 {
		t.Fatalf("at the cap: %v", r.err)
	}
	// One byte more: discarded, the call answered with ErrOversize, and
	// the problem reported before the answer.
	req, ch = s.call(ctx, "tools/list", "c2")
	s.send(pad(max, req["id"]))
	r := wait(t, ch)
	if !errors.Is(r.err, ErrOversize) {
		t.Fatalf("over the cap: %v", r.err)
	}
	p := s.problems()
	if len(p) != 1 || p[0].kind != "oversize" || p[0].callID != "c2" || p[0].size != max+1 {
		t.Errorf("problems: %+v", p)
	}
	// The connection goes on.
	req, ch = s.call(ctx, "ping", "")
	s.send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{}}` + "\n")
	if r := wait(t, ch); r.err != nil {
		t.Errorf("after: %v", r.err)
	}
}

func TestLineConn_Answers(t *testing.T) {
	s := newPipeServer(t, 1<<20)
	ctx := context.Background()

	// An error answer is a *jsonrpc.Error.
	req, ch := s.call(ctx, "prompts/get", "")
	s.send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"error":{"code":-32602,"message":"no such prompt"}}` + "\n")
	var werr *jsonrpc.Error
	if r := wait(t, ch); !errors.As(r.err, &werr) || werr.Code != -32602 {
		t.Errorf("error answer: %v", r.err)
	}
	// An answer with neither result nor error is malformed.
	req, ch = s.call(ctx, "ping", "")
	s.send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `}` + "\n")
	if r := wait(t, ch); !errors.Is(r.err, ErrMalformed) {
		t.Errorf("empty answer: %v", r.err)
	}
	// An answer to nothing: reported as unexpected, once.
	s.send(`{"jsonrpc":"2.0","id":"opx-999","result":{}}` + "\n")
	s.send(`{"jsonrpc":"2.0","id":424242,"result":{}}` + "\n")
	// A cancelled call's late answer: dropped quietly.
	cctx, cancel := context.WithCancel(ctx)
	req, ch = s.call(cctx, "tools/call", "c3")
	cancel()
	if r := wait(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled: %v", r.err)
	}
	note := s.next()
	if string(note["method"]) != `"notifications/cancelled"` || !strings.Contains(string(note["params"]), string(req["id"])) {
		t.Errorf("cancellation sent: %v", note)
	}
	s.send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{}}` + "\n")
	// Blank lines are nothing.
	s.send("\n  \r\n")
	// A barrier: everything before it has been handled.
	req, ch = s.call(ctx, "ping", "")
	s.send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{}}` + "\n")
	wait(t, ch)
	p := s.problems()
	if len(p) != 2 || p[0].kind != "unexpected" || p[1].kind != "unexpected" || !strings.Contains(p[1].detail, "424242") {
		t.Errorf("problems: %+v", p)
	}
}

// TestLineConn_ServerRequests: the server's requests reach the SDK at
// most maxServerRequests at a time; notifications opx does not use are
// dropped, its log goes to the log.
func TestLineConn_ServerRequests(t *testing.T) {
	s := newPipeServer(t, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	changed := make(chan struct{}, 10)
	s.lc.toolsChanged = func() { changed <- struct{}{} }
	s.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}` + "\n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing"}}` + "\n")
	s.send(`{"jsonrpc":"2.0","id":"first","method":"ping"}` + "\n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"first"}}` + "\n")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("tools/list_changed did not reach toolsChanged")
	}
	// Only the server's request and the cancellation of it reach the SDK.
	for _, want := range []string{"ping", "notifications/cancelled"} {
		m, err := s.lc.Read(ctx)
		if r, ok := m.(*jsonrpc.Request); err != nil || !ok || r.Method != want {
			t.Fatalf("message for the SDK: %#v %v, want %s", m, err, want)
		}
	}
	if err := s.lc.Write(ctx, &jsonrpc.Response{ID: mustID("first"), Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	s.next()
	for i := range 20 {
		s.send(`{"jsonrpc":"2.0","id":"srv-` + string(rune('a'+i)) + `","method":"roots/list"}` + "\n")
	}
	var got []*jsonrpc.Request
	for range maxServerRequests {
		m, err := s.lc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.(*jsonrpc.Request))
	}
	// The other 12 are dropped.
	waitUntil(t, func() bool { return len(s.problems()) == 20-maxServerRequests })
	// Answering one frees a slot for the next request sent.
	if err := s.lc.Write(ctx, &jsonrpc.Response{ID: got[0].ID, Result: json.RawMessage(`{"roots":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if ans := s.next(); string(ans["id"]) != `"srv-a"` {
		t.Errorf("answer written: %v", ans)
	}
	s.send(`{"jsonrpc":"2.0","id":"srv-late","method":"ping"}` + "\n")
	m, err := s.lc.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); err != nil || !ok || r.Method != "ping" {
		t.Errorf("after a slot was freed: %#v %v", m, err)
	}
	s.mu.Lock()
	logs := len(s.logs)
	s.mu.Unlock()
	if logs != 1 {
		t.Errorf("%d log lines, want 1", logs)
	}
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLineConn_WriteDeadline: a server that does not read its input
// cannot block a write past its deadline.
func TestLineConn_WriteDeadline(t *testing.T) {
	s := newPipeServer(t, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	big := strings.Repeat("x", 1<<20) // more than a pipe holds
	_, err := s.lc.call(ctx, "tools/call", map[string]any{"pad": big}, "c1")
	if !errors.Is(err, ErrUnresponsive) {
		t.Errorf("write to a server that does not read: %v", err)
	}
}

// TestLineConn_OutputEnds: a pending call learns the server's output
// ended; Read says EOF.
func TestLineConn_OutputEnds(t *testing.T) {
	s := newPipeServer(t, 1<<20)
	_, ch := s.call(context.Background(), "tools/call", "c1")
	s.out.Close()
	if r := wait(t, ch); !errors.Is(r.err, ErrNotRunning) {
		t.Errorf("pending call: %v", r.err)
	}
	if _, err := s.lc.Read(context.Background()); err != io.EOF {
		t.Errorf("read: %v", err)
	}
}

// FuzzLineConn_Read feeds any output to the reader: it never panics,
// reports at most one problem per line, and hands the SDK only messages
// that decode, in valid UTF-8.
func FuzzLineConn_Read(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":"opx-1","result":{"content":[]}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n",
		`{"jsonrpc":"2.0","id":"s","method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}}`,
		"garbage\n\x00\xff\n[[[[\n",
		`{"result":` + strings.Repeat(`"x`, 300) + `,"id":1}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer inR.Close()
		lines := strings.Count(string(data), "\n") + 1
		problems := 0
		c := makeLineConn(inW, nil, 256, func(problem) { problems++ }, nil)
		// The SDK: take what is handed over.
		handed := make(chan jsonrpc.Message, 1024)
		go func() {
			for {
				m, err := c.Read(context.Background())
				if err != nil {
					close(handed)
					return
				}
				handed <- m
			}
		}()
		c.sdkCalls[mustID(float64(1))] = "tools/list"
		c.readLoop(bytes.NewReader(data))
		c.Close()
		for m := range handed {
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil || !utf8.Valid(b) {
				t.Errorf("handed on %#v: %v", m, err)
			}
		}
		if problems > lines {
			t.Errorf("%d problems for %d lines", problems, lines)
		}
	})
}
