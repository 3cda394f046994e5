package witnesshttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// fakeWitness is a scripted witnesshttp.Witness: it knows the origins in
// known and answers every AddCheckpoint with add (the handler's own logic
// is under test, not a witness's).
type fakeWitness struct {
	known map[string]bool
	add   func(ctx context.Context, origin string, req tlog.AddCheckpointRequest) ([]byte, error)
	calls atomic.Int32
}

func (f *fakeWitness) Known(origin string) bool { return f.known[origin] }

func (f *fakeWitness) AddCheckpoint(ctx context.Context, origin string, req tlog.AddCheckpointRequest) ([]byte, error) {
	f.calls.Add(1)
	return f.add(ctx, origin, req)
}

const sigLine = "— witness AAAAAQ==\n"

func newFake(add func(context.Context, string, tlog.AddCheckpointRequest) ([]byte, error)) *fakeWitness {
	if add == nil {
		add = func(context.Context, string, tlog.AddCheckpointRequest) ([]byte, error) { return []byte(sigLine), nil }
	}
	return &fakeWitness{known: map[string]bool{"example.com/log": true, "example.com/other": true}, add: add}
}

// body is a well-formed request for origin (the fake checks no signature).
func body(origin string) []byte {
	return tlog.AddCheckpointRequest{OldSize: 0, Checkpoint: []byte(origin + "\n5\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\n— " + origin + " AAAAAQ==\n")}.Marshal()
}

func serve(t *testing.T, w witnesshttp.Witness, opts witnesshttp.Options) string {
	t.Helper()
	srv := httptest.NewServer(witnesshttp.New(w, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

type answer struct {
	code  int
	ctype string
	body  string
	hdr   http.Header
}

func do(t *testing.T, method, url string, b []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(rb), resp.Header}
}

// TestHandler_Answers: each error a Witness returns becomes the
// protocol's status, content type and body; the request is checked
// before the Witness sees it.
func TestHandler_Answers(t *testing.T) {
	const plain = "text/plain; charset=utf-8"
	for _, tc := range []struct {
		name      string
		method    string
		path      string
		body      []byte
		err       error
		code      int
		ctype     string
		want      string // the body, exactly ("" any)
		noWitness bool   // refused before AddCheckpoint
	}{
		{name: "cosigned", body: body("example.com/log"), code: 200, ctype: plain, want: sigLine},
		{name: "conflict", body: body("example.com/log"), err: &witnesshttp.ConflictError{Latest: 42}, code: 409, ctype: tlog.ContentTypeSize, want: "42\n"},
		{name: "conflict wrapped", body: body("example.com/log"), err: fmt.Errorf("x: %w", &witnesshttp.ConflictError{Latest: 0}), code: 409, ctype: tlog.ContentTypeSize, want: "0\n"},
		{name: "unknown origin from the witness", body: body("example.com/log"), err: witnesshttp.ErrUnknownOrigin, code: 404, ctype: plain},
		{name: "no signature", body: body("example.com/log"), err: fmt.Errorf("%w for x", witnesshttp.ErrNoSignature), code: 403, ctype: plain},
		{name: "old size over the checkpoint's", body: body("example.com/log"), err: witnesshttp.ErrOldSize, code: 400, ctype: plain},
		{name: "malformed note", body: body("example.com/log"), err: fmt.Errorf("cp: %w", tlog.ErrMalformed), code: 400, ctype: plain},
		{name: "bad proof", body: body("example.com/log"), err: witnesshttp.ErrBadProof, code: 422, ctype: plain},
		{name: "store failure tells nothing", body: body("example.com/log"), err: errors.New("bbolt: /srv/store/collector.db: disk I/O"), code: 500, ctype: plain, want: "internal error\n"},
		{name: "deadline", body: body("example.com/log"), err: context.DeadlineExceeded, code: 503, ctype: plain},
		{name: "unknown origin", body: body("example.com/nope"), code: 404, ctype: plain, noWitness: true},
		{name: "GET", method: "GET", code: 405, ctype: plain, noWitness: true},
		{name: "another path", path: "/add-checkpoint/x", body: body("example.com/log"), code: 404, noWitness: true},
		{name: "malformed body", body: []byte("old 01\n\nexample.com/log\n"), code: 400, ctype: plain, noWitness: true},
		{name: "no origin line", body: []byte("old 0\n\nexample.com/log"), code: 400, ctype: plain, noWitness: true},
		{name: "origin line too long", body: tlog.AddCheckpointRequest{Checkpoint: []byte(strings.Repeat("a", 1025) + "\n")}.Marshal(), code: 400, ctype: plain, noWitness: true},
		{name: "body too large", body: bytes.Repeat([]byte("x"), tlog.MaxAddCheckpointBytes+1), code: 413, ctype: plain, noWitness: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(nil)
			if tc.err != nil {
				f.add = func(context.Context, string, tlog.AddCheckpointRequest) ([]byte, error) { return nil, tc.err }
			}
			url := serve(t, f, witnesshttp.Options{})
			method, path := "POST", tlog.AddCheckpointPath
			if tc.method != "" {
				method = tc.method
			}
			if tc.path != "" {
				path = tc.path
			}
			a := do(t, method, url+path, tc.body)
			if a.code != tc.code || tc.ctype != "" && a.ctype != tc.ctype || tc.want != "" && a.body != tc.want {
				t.Fatalf("%d %q %q, want %d %q %q", a.code, a.ctype, a.body, tc.code, tc.ctype, tc.want)
			}
			if tc.code == 405 && a.hdr.Get("Allow") != "POST" {
				t.Errorf("405 without Allow: POST")
			}
			if got := f.calls.Load(); tc.noWitness && got != 0 || !tc.noWitness && got != 1 {
				t.Errorf("AddCheckpoint called %d times", got)
			}
			if a.code != 200 && a.code != 409 && a.code != 404 && a.hdr.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("a refusal without nosniff")
			}
		})
	}
}

// TestHandler_BodyBounds: a body over the bound is refused whether its
// length is announced or not (chunked), and never read past the bound.
func TestHandler_BodyBounds(t *testing.T) {
	f := newFake(nil)
	h := witnesshttp.New(f, witnesshttp.Options{})
	big := bytes.Repeat([]byte("x"), 10*tlog.MaxAddCheckpointBytes)
	r := &countingReader{r: bytes.NewReader(big)}
	req := httptest.NewRequest("POST", tlog.AddCheckpointPath, r)
	req.ContentLength = -1 // chunked: no length announced
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("chunked body over the bound: %d", rec.Code)
	}
	if r.n > int64(tlog.MaxAddCheckpointBytes)+1+32<<10 {
		t.Fatalf("read %d bytes of a body bounded at %d", r.n, tlog.MaxAddCheckpointBytes)
	}
	// Exactly the bound is read and parsed (malformed here: 400, not 413).
	url := serve(t, f, witnesshttp.Options{})
	if a := do(t, "POST", url+tlog.AddCheckpointPath, big[:tlog.MaxAddCheckpointBytes]); a.code != 400 {
		t.Fatalf("a body of the bound: %d", a.code)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestHandler_RateLimit: an origin beyond its burst gets 429 with
// Retry-After, without reaching the witness; another origin has its own
// bucket; an unknown origin is 404 however many times, never 429.
func TestHandler_RateLimit(t *testing.T) {
	f := newFake(nil)
	url := serve(t, f, witnesshttp.Options{Rate: 0.001, Burst: 2})
	for i := range 2 {
		if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log")); a.code != 200 {
			t.Fatalf("request %d within the burst: %d", i, a.code)
		}
	}
	a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log"))
	if a.code != 429 || a.hdr.Get("Retry-After") == "" || a.ctype != "text/plain; charset=utf-8" {
		t.Fatalf("beyond the burst: %d %q Retry-After %q", a.code, a.ctype, a.hdr.Get("Retry-After"))
	}
	if f.calls.Load() != 2 {
		t.Fatalf("the witness saw %d requests, want 2", f.calls.Load())
	}
	if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/other")); a.code != 200 {
		t.Fatalf("another origin: %d", a.code)
	}
	for range 5 {
		if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/nope")); a.code != 404 {
			t.Fatalf("unknown origin: %d", a.code)
		}
	}
}

// TestHandler_InFlight: with MaxInFlight requests being served, one more
// is 503 with Retry-After; once they finish, requests are served again.
func TestHandler_InFlight(t *testing.T) {
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	f := newFake(func(ctx context.Context, _ string, _ tlog.AddCheckpointRequest) ([]byte, error) {
		entered.Done()
		<-release
		return []byte(sigLine), nil
	})
	url := serve(t, f, witnesshttp.Options{MaxInFlight: 2, Rate: 1000, Burst: 1000})
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Post(url+tlog.AddCheckpointPath, "text/plain", bytes.NewReader(body("example.com/log")))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	entered.Wait()
	a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log"))
	if a.code != 503 || a.hdr.Get("Retry-After") == "" {
		t.Fatalf("one beyond MaxInFlight: %d Retry-After %q", a.code, a.hdr.Get("Retry-After"))
	}
	close(release)
	for range 2 {
		if c := <-codes; c != 200 {
			t.Fatalf("a request in flight: %d", c)
		}
	}
	f.add = func(context.Context, string, tlog.AddCheckpointRequest) ([]byte, error) { return []byte(sigLine), nil }
	if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log")); a.code != 200 {
		t.Fatalf("after the requests in flight finished: %d", a.code)
	}
}

// TestHandler_Timeout: the witness's context ends after Timeout (503);
// a client that sends its body slowly is cut off at Timeout (408), and
// its slot is free again.
func TestHandler_Timeout(t *testing.T) {
	f := newFake(func(ctx context.Context, _ string, _ tlog.AddCheckpointRequest) ([]byte, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("record: %w", ctx.Err())
	})
	url := serve(t, f, witnesshttp.Options{Timeout: 100 * time.Millisecond, MaxInFlight: 1})
	start := time.Now()
	if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log")); a.code != 503 {
		t.Fatalf("a witness past the timeout: %d", a.code)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("answered after %v", d)
	}

	// A slow body: headers and part of the body, then nothing.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := body("example.com/log")
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", tlog.AddCheckpointPath, len(b), b[:10])
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 408 {
		t.Fatalf("a slow body: %d, want 408", resp.StatusCode)
	}
	// The only slot is free again.
	f.add = func(context.Context, string, tlog.AddCheckpointRequest) ([]byte, error) { return []byte(sigLine), nil }
	if a := do(t, "POST", url+tlog.AddCheckpointPath, body("example.com/log")); a.code != 200 {
		t.Fatalf("after a slow body: %d", a.code)
	}
}

// TestServe_StopsWithContext: Serve answers until its context ends, then
// returns nil.
func TestServe_StopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- witnesshttp.Serve(ctx, ln, witnesshttp.New(newFake(nil), witnesshttp.Options{}), witnesshttp.ServeConfig{})
	}()
	if a := do(t, "POST", "http://"+ln.Addr().String()+tlog.AddCheckpointPath, body("example.com/log")); a.code != 200 {
		t.Fatalf("served: %d", a.code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestStatusOf: the one mapping of errors to status codes.
func TestStatusOf(t *testing.T) {
	for err, want := range map[error]int{
		nil:                                   200,
		&witnesshttp.ConflictError{}:          409,
		witnesshttp.ErrUnknownOrigin:          404,
		witnesshttp.ErrNoSignature:            403,
		witnesshttp.ErrBadProof:               422,
		witnesshttp.ErrOldSize:                400,
		tlog.ErrMalformed:                     400,
		context.Canceled:                      503,
		errors.New("anything else"):           500,
		fmt.Errorf("w: %w", context.Canceled): 503,
	} {
		if got := witnesshttp.StatusOf(err); got != want {
			t.Errorf("StatusOf(%v) = %d, want %d", err, got, want)
		}
	}
}
