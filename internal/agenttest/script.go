package agenttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// MaxBody bounds the request bodies a fake model server reads: a CLI
// sends its whole conversation each turn, a few hundred KiB at most in
// these tests; a larger body is refused with 413 and recorded as such.
const MaxBody = 8 << 20

// A Turn is one answer of a fake model: a call of the CLI's shell tool
// (Shell), a call of another tool by the name the CLI declares (Call),
// or text that ends the turn (Answer).
type Turn struct {
	// Shell is the command of a shell-tool call, written in the vendor's
	// shell tool: Claude's Bash {"command"}, Codex's exec_command {"cmd"},
	// Gemini's run_shell_command {"command"}.
	Shell string
	// Tool and Input are any other tool call, verbatim.
	Tool  string
	Input map[string]any
	// Text is the answer when neither Shell nor Tool is set.
	Text string
}

// Shell returns a turn that calls the CLI's shell tool with cmd.
func Shell(cmd string) Turn { return Turn{Shell: cmd} }

// Call returns a turn that calls tool with input.
func Call(tool string, input map[string]any) Turn { return Turn{Tool: tool, Input: input} }

// Answer returns a turn that answers text and ends the model's turn.
func Answer(text string) Turn { return Turn{Text: text} }

// FinalText is what a fake answers once its script is used up, so that a
// CLI always reaches the end of its turn.
const FinalText = "done"

// A Request is one HTTP request a fake model server received.
type Request struct {
	Method, Path, Query string
	// Body is the request body (at most MaxBody bytes; Truncated says
	// the body was larger and refused).
	Body      []byte
	Truncated bool
	// Turn is the index of the scripted turn this request was answered
	// with, -1 for a request that is not a main model call (routing,
	// token counting) or that came after the script.
	Turn int
}

// A ToolResult is what a CLI sent back to the model for one tool call: the
// output the model sees, which for a denied call carries the hook's reason.
type ToolResult struct {
	ID, Name string
	Output   string
	IsError  bool
}

// dialect is one vendor's wire format.
type dialect interface {
	// main reports whether the request is a model call that takes the next
	// scripted turn (the others get a fixed answer from side).
	main(r *http.Request, body []byte) bool
	// answer writes turn t (id numbers the call) to w.
	answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, id int)
	// side answers a request that is not a main model call.
	side(w http.ResponseWriter, r *http.Request, body []byte)
	// results extracts the tool results a request body carries.
	results(body []byte) []ToolResult
}

// A Server is a scripted fake model server on 127.0.0.1 speaking one
// vendor's API. It answers main model calls with its script's turns in
// order, then with FinalText, and records every request.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	d    dialect
	srv  *http.Server
	mu   sync.Mutex
	turn []Turn
	next int
	reqs []Request
}

func newServer(t testing.TB, d dialect, turns []Turn) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), d: d, turn: turns}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// ServeHTTP records r and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, Turn: -1}
	if errors.As(err, &tooBig) {
		rec.Truncated = true
		s.record(rec)
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		s.record(rec)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method != http.MethodPost || !s.d.main(r, body) {
		s.record(rec)
		s.d.side(w, r, body)
		return
	}
	s.mu.Lock()
	t, n := Answer(FinalText), s.next
	if n < len(s.turn) {
		t, rec.Turn = s.turn[n], n
	}
	s.next++
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	s.d.answer(w, r, body, t, n+1)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Used returns how many scripted turns have been answered.
func (s *Server) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(s.next, len(s.turn))
}

// ToolResults returns the tool results the CLI sent back, from the last
// main model call (each carries the whole conversation so far).
func (s *Server) ToolResults() []ToolResult {
	reqs := s.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Turn >= 0 || (reqs[i].Method == http.MethodPost && !reqs[i].Truncated && s.isMain(reqs[i])) {
			return s.d.results(reqs[i].Body)
		}
	}
	return nil
}

func (s *Server) isMain(r Request) bool {
	req, err := http.NewRequest(r.Method, "http://x"+r.Path+"?"+r.Query, nil)
	return err == nil && s.d.main(req, r.Body)
}

// Describe summarizes the requests received, for a failing test's message.
func (s *Server) Describe() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "%s %s turn=%d %d bytes\n", r.Method, r.Path, r.Turn, len(r.Body))
	}
	return b.String()
}

// sse writes one server-sent event (event line omitted when name is "")
// and flushes it.
func sse(w http.ResponseWriter, name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // the fakes marshal only maps and strings
	}
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
