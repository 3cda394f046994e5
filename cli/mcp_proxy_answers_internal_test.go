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
