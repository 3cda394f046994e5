package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger/event"
)

// The misbehaving server (internal/mcptest/badserver) through Conn: each
// misbehaviour is recorded, answered with a clear error in bounded time
// and memory, and the connection goes on where the server does.

func badSpec(t *testing.T, timeout time.Duration, flags ...string) mcp.Spec {
	return mcp.Spec{Name: "bad", Argv: append([]string{mcptest.BadServer(t)}, flags...), Timeout: timeout}
}

// echo checks that the server still answers.
func echo(t *testing.T, c *mcp.Conn, text string) {
	t.Helper()
	r, err := c.CallTool(context.Background(), "echo-"+text, "echo", json.RawMessage(`{"text":"`+text+`"}`))
	if err != nil || r.IsError || r.Text != text {
		t.Fatalf("echo after the misbehaviour: %+v %v", r, err)
	}
}

// totalAlloc returns the bytes allocated by the process so far.
func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

func protocolErrors(e *env, kind string) []*event.MCPProtocolError {
	var out []*event.MCPProtocolError
	for _, p := range all[*event.MCPProtocolError](e.rec) {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

func TestBadServer_CrashMidCall(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, 30*time.Second))
	_, err := c.CallTool(context.Background(), "call-crash", "crash", nil)
	if err == nil || !(errors.Is(err, mcp.ErrMalformed) || errors.Is(err, mcp.ErrNotRunning)) {
		t.Fatalf("crash: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed after the crash")
	}
	ex := c.Exit()
	if ex.Reason != "crashed" || ex.ExitCode != 3 || !strings.Contains(ex.StderrTail, "crashing mid-call") {
		t.Errorf("exit: %+v", ex)
	}
	// The half answer it left is on record, tied to the call.
	if pe := protocolErrors(e, "malformed"); len(pe) != 1 || pe[0].CallID != "call-crash" {
		t.Errorf("protocol errors: %+v", pe)
	}
	if _, err := c.CallTool(context.Background(), "after", "echo", nil); !errors.Is(err, mcp.ErrNotRunning) {
		t.Errorf("call after the crash: %v", err)
	}
}

func TestBadServer_NeverAnswers(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, 5*time.Second))
	_, err := c.CallTool(context.Background(), "call-hang", "hang", nil)
	if !errors.Is(err, mcp.ErrTimeout) {
		t.Fatalf("hang: %v", err)
	}
	// It still answers pings, so it is kept.
	echo(t, c, "still-here")
	if c.Exit().Reason != "" {
		t.Errorf("ended: %+v", c.Exit())
	}
	// A caller's own deadline is honoured as well.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.CallTool(ctx, "call-hang-2", "hang", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline: %v", err)
	}
}

// deadline is a context for a call that is meant to time out.
func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func TestBadServer_Freezes(t *testing.T) {
	defer mcp.SetProbeTimeout(300 * time.Millisecond)()
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	if _, err := c.CallTool(deadline(t), "call-freeze", "freeze", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("freeze: %v", err)
	}
	// It answers no ping either: killed as unresponsive.
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a frozen server was not ended")
	}
	if ex := c.Exit(); ex.Reason != "unresponsive" || ex.Signal != "SIGKILL" {
		t.Errorf("exit: %+v", ex)
	}
}

func TestBadServer_HugeResult(t *testing.T) {
	for _, tool := range []string{"big", "bigfirst"} {
		t.Run(tool, func(t *testing.T) {
			e := newEnv(t)
			c := e.start(t, badSpec(t, time.Minute))
			runtime.GC()
			before := totalAlloc()
			// 48 MB: more than the bound on what opx may allocate for it
			// (twice the frame cap), so an answer held whole fails.
			_, err := c.CallTool(context.Background(), "call-"+tool, tool, json.RawMessage(`{"mb":48}`))
			allocated := totalAlloc() - before
			if !errors.Is(err, mcp.ErrOversize) {
				t.Fatalf("48 MB result: %v", err)
			}
			// 48 MB went by; what opx allocated for it is the capped line
			// (gathered up to the cap) and change.
			t.Logf("allocated %d MB while a 48 MB answer went by", allocated>>20)
			if allocated > 2*mcp.MaxFrameBytes {
				t.Errorf("allocated %d MB for a 48 MB answer", allocated>>20)
			}
			pe := protocolErrors(e, "oversize")
			if len(pe) != 1 || pe[0].CallID != "call-"+tool || pe[0].Size < 48<<20 {
				t.Errorf("protocol errors: %+v", pe)
			}
			echo(t, c, "after-"+tool)
		})
	}
}

// TestBadServer_LargeResult: an answer under the frame cap but over the
// result cap is handed on whole (Raw) and cut for the model (Text).
func TestBadServer_LargeResult(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	r, err := c.CallTool(context.Background(), "call-5mb", "big", json.RawMessage(`{"mb":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || len(r.Text) > mcp.MaxResultBytes || !strings.Contains(r.Text, "[opx: result cut at") || len(r.Raw) < 5<<20 {
		t.Errorf("truncated %v, text %d bytes (%q), raw %d bytes", r.Truncated, len(r.Text), r.Text[len(r.Text)-60:], len(r.Raw))
	}
}

func TestBadServer_EndlessLine(t *testing.T) {
	defer mcp.SetProbeTimeout(300 * time.Millisecond)()
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	runtime.GC()
	before := totalAlloc()
	if _, err := c.CallTool(deadline(t), "call-endless", "endless", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("endless: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a server writing an endless line was not ended")
	}
	allocated := totalAlloc() - before
	t.Logf("allocated %d MB while an endless line went by", allocated>>20)
	if allocated > 2*mcp.MaxFrameBytes {
		t.Errorf("allocated %d MB for an endless line", allocated>>20)
	}
	if ex := c.Exit(); ex.Reason != "unresponsive" {
		t.Errorf("exit: %+v", ex)
	}
}

func TestBadServer_Malformed(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	// The broken answer holds the call's id: the call fails at once,
	// not at its timeout.
	_, err := c.CallTool(context.Background(), "call-malformed", "malformed", nil)
	if !errors.Is(err, mcp.ErrMalformed) {
		t.Fatalf("malformed: %v", err)
	}
	if pe := protocolErrors(e, "malformed"); len(pe) != 1 || pe[0].CallID != "call-malformed" {
		t.Errorf("protocol errors: %+v", pe)
	}
	echo(t, c, "after-malformed")
}

func TestBadServer_NotUTF8(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	_, err := c.CallTool(context.Background(), "call-utf8", "badutf8", nil)
	if !errors.Is(err, mcp.ErrMalformed) || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("badutf8: %v", err)
	}
	if pe := protocolErrors(e, "malformed"); len(pe) != 1 || pe[0].CallID != "call-utf8" {
		t.Errorf("protocol errors: %+v", pe)
	}
	echo(t, c, "after-utf8")
}

// TestBadServer_Garbage: a thousand lines of garbage cost a bounded
// number of entries, and every one is counted.
func TestBadServer_Garbage(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	r, err := c.CallTool(context.Background(), "call-garbage", "garbage", json.RawMessage(`{"lines":1000}`))
	if err != nil || r.Text != "after garbage" {
		t.Fatalf("garbage: %+v %v", r, err)
	}
	c.Close()
	pe := protocolErrors(e, "malformed")
	counted := 0
	for _, p := range pe {
		counted += 1 + p.Suppressed
	}
	// The last entry (written at the end) carries the count of those not
	// recorded one by one, and is not one of them itself.
	if n := len(pe); n > 12 || counted != 1000+1 {
		t.Errorf("%d entries counting %d garbage lines (want at most 12, counting 1000 + the summary)", n, counted)
	}
}

func TestBadServer_Unexpected(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	r, err := c.CallTool(context.Background(), "call-unexpected", "unexpected", nil)
	if err != nil || r.Text != "first" {
		t.Fatalf("unexpected: %+v %v", r, err)
	}
	waitFor(t, 10*time.Second, "the stray answer recorded", func() bool {
		for _, p := range protocolErrors(e, "unexpected") {
			if strings.Contains(p.Detail, "987654321") {
				return true
			}
		}
		return false
	})
	echo(t, c, "after-unexpected")
}

func TestBadServer_ToolsChange(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	for i := 1; i <= 2; i++ {
		if _, err := c.CallTool(context.Background(), "call-change", "change", nil); err != nil {
			t.Fatal(err)
		}
		want := "mcp__bad__added" + strconv.Itoa(i)
		waitFor(t, 30*time.Second, want+" listed", func() bool {
			return slices.ContainsFunc(c.Tools(), func(tl mcp.Tool) bool { return tl.Name == want })
		})
	}
	listed := all[*event.MCPToolsListed](e.rec)
	if len(listed) != 3 {
		t.Fatalf("%d listings recorded, want 3", len(listed))
	}
	if r, err := c.CallTool(context.Background(), "call-added", "added2", nil); err != nil || !r.IsError {
		t.Errorf("the new tool is callable (the server answers it with an error): %+v %v", r, err)
	}
}

func TestBadServer_StderrFlood(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	runtime.GC()
	before := totalAlloc()
	r, err := c.CallTool(context.Background(), "call-flood", "flood", json.RawMessage(`{"mb":50}`))
	if err != nil || r.Text != "flooded" {
		t.Fatalf("flood: %+v %v", r, err)
	}
	allocated := totalAlloc() - before
	t.Logf("allocated %d MB while 50 MB of stderr went by", allocated>>20)
	if allocated > 16<<20 {
		t.Errorf("allocated %d MB for 50 MB of stderr", allocated>>20)
	}
	c.Close()
	if n := e.log.Len(); n > 1<<20 {
		t.Errorf("the log took %d bytes of a 50 MB flood", n)
	}
	if !strings.Contains(e.log.String(), "lines not logged: too many") || !strings.Contains(e.log.String(), "more bytes of this line not logged") {
		t.Errorf("the log does not say what it dropped:\n%.2000s", e.log.String())
	}
	if tail := c.Exit().StderrTail; len(tail) > mcp.StderrTailBytes || tail == "" {
		t.Errorf("stderr tail of %d bytes", len(tail))
	}
}

// TestBadServer_ChildKilled: what a server starts stays in its process
// group, and dies with it.
func TestBadServer_ChildKilled(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	r, err := c.CallTool(context.Background(), "call-spawn", "spawn", nil)
	if err != nil || r.IsError {
		t.Fatalf("spawn: %+v %v", r, err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(r.Text, "child "))
	if err != nil {
		t.Fatal(r.Text)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the child is not running: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Killed and reaped (by init, as an orphan): it is gone or a zombie
	// on its way out.
	waitFor(t, 10*time.Second, "the child to end", func() bool {
		err := syscall.Kill(pid, 0)
		return errors.Is(err, syscall.ESRCH) || isZombie(pid)
	})
}

func TestBadServer_StartFailures(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		timeout time.Duration
		want    error
		tail    string
		text    string
	}{
		{"Exits", []string{"-start", "exit"}, time.Minute, nil, "refusing to start", "exit status 7"},
		{"Silent", []string{"-start", "silent"}, time.Second, mcp.ErrTimeout, "", "did not answer in time"},
		{"Garbage", []string{"-start", "garbage"}, time.Second, mcp.ErrTimeout, "", "did not answer in time"},
		{"HugeListing", []string{"-start", "biglist"}, time.Minute, mcp.ErrOversize, "", "tools/list"},
		{"NoProgram", nil, time.Minute, mcp.ErrInvalidSpec, "", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			spec := badSpec(t, tt.timeout, tt.flags...)
			spec.Workspace = e.ws
			if tt.flags == nil {
				spec.Argv = []string{"opx-no-such-server"}
			}
			// A start gets mcp.MinStartTimeout whatever the request
			// timeout: the caller's deadline bounds these instead.
			ctx, cancel := context.WithTimeoutCause(context.Background(), max(tt.timeout, 5*time.Second), mcp.ErrTimeout)
			defer cancel()
			c, err := mcp.Start(ctx, e.sb, spec, 1, "", e.rec.rec)
			var se *mcp.StartError
			if c != nil || !errors.As(err, &se) {
				t.Fatalf("start: %v %v", c, err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) || !strings.Contains(se.StderrTail, tt.tail) {
				t.Errorf("err %q, tail %q", err, se.StderrTail)
			}
			if got := e.rec.types(); len(got) != 0 {
				t.Errorf("recorded %v for a server that did not start", got)
			}
		})
	}
}

func TestBadServer_RefusedTools(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute, "-start", "badtools"))
	listed := all[*event.MCPToolsListed](e.rec)[0]
	for _, want := range []string{"bad name:", "echo: listed twice", "noschema:", "arrayschema:", "lllll", "#"} {
		if !slices.ContainsFunc(listed.Refused, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("refused %q, want one starting %q", listed.Refused, want)
		}
	}
	if _, err := c.CallTool(context.Background(), "x", "noschema", nil); !errors.Is(err, mcp.ErrUnknownTool) {
		t.Errorf("a refused tool was called: %v", err)
	}
	echo(t, c, "good-one")
}

// TestConn_NoGoroutineLeft: after Close, nothing of the server's is left
// running in opx, whatever state it was in.
func TestConn_NoGoroutineLeft(t *testing.T) {
	e := newEnv(t)
	bad := mcptest.BadServer(t)
	for _, tool := range []string{"echo", "hang", "freeze", "spawn"} {
		t.Run(tool, func(t *testing.T) {
			before := runtime.NumGoroutine()
			c, err := mcp.Start(context.Background(), e.sb, mcp.Spec{Name: "bad", Argv: []string{bad}, Workspace: e.ws, Timeout: time.Minute}, 1, "", e.rec.rec)
			if err != nil {
				t.Fatal(err)
			}
			c.CallTool(deadline(t), "c", tool, nil)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}

// TestBadServer_NoisyStart: what a server says wrong before it is ready
// is recorded after its mcp.server_started, never before.
func TestBadServer_NoisyStart(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute, "-start", "noisy"))
	echo(t, c, "ready")
	got := e.rec.types()
	want := []string{event.TypeMCPServerStarted, event.TypeMCPToolsListed, event.TypeMCPProtocolError, event.TypeMCPProtocolError, event.TypeMCPProtocolError}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	kinds := map[string]int{}
	for _, p := range all[*event.MCPProtocolError](e.rec) {
		kinds[p.Kind]++
	}
	if kinds["malformed"] != 2 || kinds["unexpected"] != 1 {
		t.Errorf("kinds %v", kinds)
	}
}

// TestBadServer_Concurrent: calls in flight at once each get their own
// answer, misbehaving ones among them.
func TestBadServer_Concurrent(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, 5*time.Second))
	type out struct {
		i   int
		r   mcp.Result
		err error
	}
	ch := make(chan out)
	const n = 40
	for i := range n {
		go func() {
			tool, args := "echo", `{"text":"`+strconv.Itoa(i)+`"}`
			switch i % 4 {
			case 1:
				tool, args = "slow", `{"ms":`+strconv.Itoa(i*5)+`}`
			case 2:
				tool = "malformed"
			case 3:
				tool = "hang"
			}
			r, err := c.CallTool(context.Background(), "c"+strconv.Itoa(i), tool, json.RawMessage(args))
			ch <- out{i, r, err}
		}()
	}
	for range n {
		o := <-ch
		switch o.i % 4 {
		case 0:
			if o.err != nil || o.r.Text != strconv.Itoa(o.i) {
				t.Errorf("echo %d: %+v %v", o.i, o.r, o.err)
			}
		case 1:
			if o.err != nil || o.r.Text != "slow" {
				t.Errorf("slow %d: %+v %v", o.i, o.r, o.err)
			}
		case 2:
			if !errors.Is(o.err, mcp.ErrMalformed) {
				t.Errorf("malformed %d: %v", o.i, o.err)
			}
		case 3:
			if !errors.Is(o.err, mcp.ErrTimeout) {
				t.Errorf("hang %d: %v", o.i, o.err)
			}
		}
	}
	echo(t, c, "after")
}

// TestBadServer_ClosesOutput: a server that closes its output but lives
// on is ended ("protocol"), so that a Manager restarts it.
func TestBadServer_ClosesOutput(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	if _, err := c.CallTool(context.Background(), "call-closeout", "closeout", nil); !errors.Is(err, mcp.ErrNotRunning) {
		t.Fatalf("closeout: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a server without output was not ended")
	}
	if ex := c.Exit(); ex.Reason != "protocol" {
		t.Errorf("exit: %+v", ex)
	}
}

// TestBadServer_BigRequest: a request of the server's over 64 KiB, or
// with an id over 64 bytes, is dropped and recorded, not held.
func TestBadServer_BigRequest(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	if r, err := c.CallTool(context.Background(), "call-bigrequest", "bigrequest", nil); err != nil || r.Text != "sent" {
		t.Fatalf("bigrequest: %+v %v", r, err)
	}
	echo(t, c, "after") // everything before it was read
	if pe := protocolErrors(e, "oversize"); len(pe) != 1 || !strings.Contains(pe[0].Detail, "roots/list dropped") {
		t.Errorf("oversize: %+v", pe)
	}
	if pe := protocolErrors(e, "malformed"); len(pe) != 1 || !strings.Contains(pe[0].Detail, "an id of 1000 bytes") {
		t.Errorf("malformed: %+v", pe)
	}
}

// TestBadServer_Traceparent: a tools/call made with a trace context sends
// it in params._meta.traceparent (the MCP conventions' propagation); one
// made without sends none.
func TestBadServer_Traceparent(t *testing.T) {
	e := newEnv(t)
	c := e.start(t, badSpec(t, time.Minute))
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if r, err := c.CallTool(mcp.WithTraceparent(context.Background(), tp), "call-meta", "meta", nil); err != nil || r.Text != tp {
		t.Errorf("with a trace context: %+v %v", r, err)
	}
	if r, err := c.CallTool(context.Background(), "call-meta-2", "meta", nil); err != nil || r.Text != "" {
		t.Errorf("without: %+v %v", r, err)
	}
}
