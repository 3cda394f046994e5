package mcp_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.Cleanup()
	os.Exit(code)
}

// recorder records into a real ledger, and keeps each payload to look
// at; the ledger is verified strictly when the test ends.
type recorder struct {
	t  testing.TB
	l  *ledger.Ledger
	mu sync.Mutex
	ps []recorded
}

type recorded struct {
	session string
	p       event.Payload
	blobs   [][]byte
}

func newRecorder(t testing.TB) *recorder {
	t.Helper()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{t: t, l: l}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the ledger: %v", err)
			return
		}
		ro, err := ledger.OpenReadOnly(l.Path())
		if err != nil {
			t.Errorf("reopening the ledger: %v", err)
			return
		}
		defer ro.Close()
		rep, err := ro.Verify(event.StrictOptions())
		if err != nil || !rep.OK {
			t.Errorf("verify --strict: %v %+v", err, rep)
			for _, f := range rep.Failures {
				t.Errorf("  %v", f)
			}
		}
	})
	return r
}

func (r *recorder) rec(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error {
	rec, err := event.Record(session, p, blobs...)
	if err != nil {
		r.t.Errorf("recording an invalid payload: %v", err)
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.l.Append(ctx, d, rec); err != nil {
		return err
	}
	r.ps = append(r.ps, recorded{session, p, blobs})
	return nil
}

// all returns the payloads of type typ recorded so far.
func all[T event.Payload](r *recorder) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, x := range r.ps {
		if p, ok := x.p.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

// types returns the types recorded so far, in order.
func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, x := range r.ps {
		out = append(out, x.p.Type())
	}
	return out
}

// waitFor polls cond (cheaply, no fixed sleep in the test's logic) until
// it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncWriter is a log the tests can read while servers write it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
	n  int64
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += int64(len(p))
	if w.b.Len() < 1<<20 {
		w.b.Write(p)
	}
	return len(p), nil
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *syncWriter) Len() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

var _ io.Writer = (*syncWriter)(nil)

// env is a workspace, a sandbox and a recorder.
type env struct {
	ws  string
	sb  mcp.Sandbox
	rec *recorder
	log *syncWriter
}

func newEnv(t *testing.T) *env {
	t.Helper()
	mcptest.NeedSandbox(t)
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	log := &syncWriter{}
	return &env{
		ws:  ws,
		sb:  mcp.Sandbox{Self: mcptest.Self(t), HomeRoot: filepath.Join(root, "homes"), Log: log},
		rec: newRecorder(t),
		log: log,
	}
}

// start starts spec (Workspace filled in) and closes it when the test
// ends.
func (e *env) start(t *testing.T, spec mcp.Spec) *mcp.Conn {
	t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = e.ws
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := mcp.Start(ctx, e.sb, spec, 1, "", e.rec.rec)
	if err != nil {
		t.Fatalf("start %s: %v\nlog:\n%s", spec.Name, err, e.log.String())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// isZombie reports whether pid has exited and waits to be reaped.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
