package cli

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// newOwing is a proxy with only what the answer bookkeeping needs, and
// the client's input lines read through its requestReader (as the SDK
// reads them).
func newOwing(t *testing.T, input ...string) (*mcpProxy, answerWriter, *bytes.Buffer) {
	t.Helper()
	p := &mcpProxy{}
	p.answered = sync.NewCond(&p.mu)
	r := &requestReader{r: strings.NewReader(strings.Join(input, "")), p: p, max: 1 << 10}
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return p, answerWriter{&out, p}, &out
}

func owedNow(p *mcpProxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.owed)
}

// TestMCPProxy_EndWaitsForAnswers: when the engine ends a session, the
// proxy closes the client's connection only after the answers owed for
// the client's requests are on stdout (a crash mid-call was answered by
// the engine, but the connection closed before the SDK wrote the answer:
// a CI failure in TestE2E_MCPProxy_Hostile).
func TestMCPProxy_EndWaitsForAnswers(t *testing.T) {
	p, w, out := newOwing(t,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`+"\n")
	if n := owedNow(p); n != 2 {
		t.Fatalf("%d owed after two requests and a notification, want 2", n)
	}
	done := make(chan struct{})
	go func() { p.waitAnswered(time.Hour); close(done) }()
	// A notification and a request of the server's are not answers.
	w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	if n := owedNow(p); n != 1 {
		t.Fatalf("%d owed after one answer, want 1", n)
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"crashed"}}` + "\n"))
	<-done
	if !bytes.Contains(out.Bytes(), []byte("crashed")) {
		t.Fatal("the answer was not written")
	}
}

// TestMCPProxy_AnswersPayOnlyTheirOwn: an answer pays only for the
// request with its id — the SDK's answer to a line it could not parse
// (id null) and an answer to an id the client never sent pay for nothing.
// Session 18 counted: its answers took a count down whatever they
// answered, so an uncounted answer paid for the crash call's, the end did
// not wait for it and the client read EOF (TestE2E_MCPProxy_Hostile on a
// busy CI machine).
func TestMCPProxy_AnswersPayOnlyTheirOwn(t *testing.T) {
	p, w, _ := newOwing(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`+"\n")
	done := make(chan struct{})
	go func() { p.waitAnswered(time.Hour); close(done) }()
	w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method"}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":"3","result":{}}` + "\n")) // the string "3" is another id than 3
	if n := owedNow(p); n != 1 {
		t.Fatalf("%d owed after answers to other ids, want 1 (the crash call's)", n)
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}` + "\n"))
	<-done
}

// TestMCPProxy_RequestReaderBounded: the ids are read from lines split
// across reads and from batches; a line over the bound is not read for
// ids (and nothing of it is kept).
func TestMCPProxy_RequestReaderBounded(t *testing.T) {
	p := &mcpProxy{}
	p.answered = sync.NewCond(&p.mu)
	r := &requestReader{r: iotestHalves(`{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n" +
		`[{"jsonrpc":"2.0","id":8,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]` + "\n" +
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":"` + strings.Repeat("y", 2000) + `"}}` + "\n"), p: p, max: 1 << 10}
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.owed) != 2 || !p.owed["sa"] || !p.owed["n8"] {
		t.Fatalf("owed %v, want the ids \"a\" and 8 (the long line's 9 not read)", p.owed)
	}
	if cap(r.line) > 2<<10 {
		t.Errorf("the reader kept %d bytes of a line over its bound", cap(r.line))
	}
}

// iotestHalves reads s a few bytes at a time, so that lines are split
// across reads.
func iotestHalves(s string) io.Reader { return &smallReads{s: s} }

type smallReads struct{ s string }

func (r *smallReads) Read(b []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), 7)], r.s)
	r.s = r.s[n:]
	return n, nil
}
