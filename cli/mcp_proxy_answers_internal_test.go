package cli

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// TestMCPProxy_EndWaitsForAnswers: when the engine ends a session, the
// proxy closes the client's connection only after the answers owed for
// the requests it handled are on stdout (a crash mid-call was answered by
// the engine, but the connection closed before the SDK wrote the answer:
// a CI failure in TestE2E_MCPProxy_Hostile).
func TestMCPProxy_EndWaitsForAnswers(t *testing.T) {
	p := &mcpProxy{}
	p.answered = sync.NewCond(&p.mu)
	var out bytes.Buffer
	w := answerWriter{&out, p}
	p.mu.Lock()
	p.owed = 2
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.waitAnswered(time.Hour); close(done) }()
	// A notification and a request of the server's are not answers.
	w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	select {
	case <-done:
		t.Fatal("the end did not wait for the second answer")
	default:
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"crashed"}}` + "\n"))
	<-done
	if !bytes.Contains(out.Bytes(), []byte("crashed")) {
		t.Fatal("the answer was not written")
	}
}

// TestMCPProxy_UncountedAnswersPayNothing: the SDK's answer to a line it
// could not parse (id null), and any answer with nothing owed, do not pay
// for a request still to be answered — they drove owed below zero, the
// end then did not wait for the crash's answer, and the client read EOF
// (TestE2E_MCPProxy_Hostile on a busy CI machine, session 18).
func TestMCPProxy_UncountedAnswersPayNothing(t *testing.T) {
	p := &mcpProxy{}
	p.answered = sync.NewCond(&p.mu)
	var out bytes.Buffer
	w := answerWriter{&out, p}
	// Nothing owed: an answer (say the SDK's own, to a request it refused)
	// leaves owed at zero, not below.
	w.Write([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method"}}` + "\n"))
	p.mu.Lock()
	if p.owed != 0 {
		t.Fatalf("owed %d after an uncounted answer", p.owed)
	}
	p.owed = 1 // the crash call, handled
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.waitAnswered(time.Hour); close(done) }()
	w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"))
	p.mu.Lock()
	owed := p.owed
	p.mu.Unlock()
	if owed != 1 {
		t.Fatalf("owed %d after a parse error's answer, want 1", owed)
	}
	select {
	case <-done:
		t.Fatal("a parse error's answer paid for the crash call's")
	default:
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":3,"result":{"isError":true}}` + "\n"))
	<-done
}
