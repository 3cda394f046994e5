package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger/event"
)

// TestManager_Filesystem: a Manager with the real filesystem server, one
// that cannot start and one disabled. The engine runs on without the
// broken one, which is recorded and reported; the good one's tools are
// offered and called by their namespaced names; Stop records its exit.
func TestManager_Filesystem(t *testing.T) {
	fs := mcptest.Program(t, mcptest.Filesystem)
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("managed"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager(e.sb, []mcp.Spec{
		{Name: "fs", Argv: []string{fs, e.ws}, Workspace: e.ws},
		{Name: "broken", Argv: []string{"opx-no-such-server"}, Workspace: e.ws},
		{Name: "off", Argv: []string{fs}, Workspace: e.ws, Disabled: true},
	}, e.rec.rec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m.Start(ctx)
	if err := m.WaitStarted(ctx); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if len(st) != 3 || st[0].Name != "broken" || st[1].Name != "fs" || st[2].Name != "off" {
		t.Fatalf("status: %+v", st)
	}
	if st[1].State != "running" || st[1].PID <= 0 || st[1].Tools == 0 || st[1].Instance != 1 {
		t.Errorf("fs: %+v", st[1])
	}
	if (st[0].State != "restarting" && st[0].State != "failed") || !strings.Contains(st[0].LastError, "not found in PATH") {
		t.Errorf("broken: %+v", st[0])
	}
	if st[2].State != "disabled" {
		t.Errorf("off: %+v", st[2])
	}
	failed := all[*event.MCPServerFailed](e.rec)
	if len(failed) == 0 || failed[0].Server != "broken" || failed[0].Attempt != 1 || failed[0].RetryInMS != 500 {
		t.Errorf("server_failed: %+v", failed)
	}

	tools := m.Tools()
	if len(tools) == 0 || !strings.HasPrefix(tools[0].Name, "mcp__fs__") {
		t.Fatalf("tools: %+v", tools)
	}
	for i := 1; i < len(tools); i++ {
		if tools[i-1].Name >= tools[i].Name {
			t.Errorf("tools not sorted: %s, %s", tools[i-1].Name, tools[i].Name)
		}
	}
	r, err := m.Call(ctx, "c1", "mcp__fs__read_text_file", json.RawMessage(`{"path":"`+filepath.Join(e.ws, "a.txt")+`"}`))
	if err != nil || r.Text != "managed" {
		t.Errorf("call: %+v %v", r, err)
	}
	if _, err := m.Call(ctx, "c2", "mcp__broken__x", nil); !errors.Is(err, mcp.ErrNotRunning) {
		t.Errorf("call of a server that is not running: %v", err)
	}
	if _, err := m.Call(ctx, "c3", "mcp__nope__x", nil); !errors.Is(err, mcp.ErrUnknownTool) {
		t.Errorf("call of an unknown server: %v", err)
	}
	if _, err := m.Call(ctx, "c4", "read_file", nil); !errors.Is(err, mcp.ErrUnknownTool) {
		t.Errorf("call of a name that is not an MCP tool's: %v", err)
	}
	if s, ok := m.Spec("fs"); !ok || s.Name != "fs" {
		t.Errorf("spec: %+v %v", s, ok)
	}

	m.Stop(ctx)
	exited := all[*event.MCPServerExited](e.rec)
	if len(exited) != 1 || exited[0].Server != "fs" || exited[0].Reason != "stopped" || exited[0].RestartInMS != 0 {
		t.Errorf("exited: %+v", exited)
	}
	for _, s := range m.Status() {
		if s.State == "running" || s.State == "starting" || s.State == "restarting" {
			t.Errorf("after Stop: %+v", s)
		}
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools after Stop: %d", len(m.Tools()))
	}
}

// TestManager_Restarts: a server that crashes mid-call is recorded
// (crashed, with the pause before its restart), restarted as instance 2,
// and serves again; one that crashes at every start is given up after
// MaxFailures, each failure recorded, the last with no retry.
func TestManager_Restarts(t *testing.T) {
	defer mcp.SetBackoff(10*time.Millisecond, 40*time.Millisecond)()
	e := newEnv(t)
	bad := mcptest.BadServer(t)
	m := mcp.NewManager(e.sb, []mcp.Spec{
		{Name: "bad", Argv: []string{bad}, Workspace: e.ws, Timeout: 30 * time.Second},
		{Name: "never", Argv: []string{bad, "-start", "exit"}, Workspace: e.ws, Timeout: 30 * time.Second},
	}, e.rec.rec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m.Start(ctx)
	defer m.Stop(ctx)
	if err := m.WaitStarted(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, "c1", "mcp__bad__crash", nil); err == nil {
		t.Fatal("the crash answered")
	}
	waitFor(t, time.Minute, "bad to run again as instance 2", func() bool {
		st := m.Status()[0]
		return st.State == "running" && st.Instance == 2 && st.Restarts == 1
	})
	r, err := m.Call(ctx, "c2", "mcp__bad__echo", json.RawMessage(`{"text":"again"}`))
	if err != nil || r.Text != "again" {
		t.Errorf("after the restart: %+v %v", r, err)
	}
	var crashed *event.MCPServerExited
	for _, ex := range all[*event.MCPServerExited](e.rec) {
		if ex.Server == "bad" {
			crashed = ex
		}
	}
	if crashed == nil || crashed.Reason != "crashed" || crashed.ExitCode != 3 || crashed.Instance != 1 || crashed.RestartInMS != 10 {
		t.Errorf("exited: %+v", crashed)
	}
	started := all[*event.MCPServerStarted](e.rec)
	if n := len(started); n != 2 || started[1].Instance != 2 || started[1].PID == started[0].PID {
		t.Errorf("started: %+v", started)
	}

	waitFor(t, time.Minute, "never to be given up", func() bool { return m.Status()[1].State == "failed" })
	var failed []*event.MCPServerFailed
	for _, f := range all[*event.MCPServerFailed](e.rec) {
		if f.Server == "never" {
			failed = append(failed, f)
		}
	}
	if len(failed) != mcp.MaxFailures {
		t.Fatalf("%d failures recorded, want %d", len(failed), mcp.MaxFailures)
	}
	for i, f := range failed {
		wantRetry := int64(min(10<<i, 40))
		if i == len(failed)-1 {
			wantRetry = 0
		}
		if f.Attempt != i+1 || f.RetryInMS != wantRetry || !strings.Contains(f.StderrTail, "refusing to start") || !strings.Contains(f.Error, "exit status 7") {
			t.Errorf("failure %d: %+v", i, f)
		}
	}
	if st := m.Status()[1]; !strings.Contains(st.LastError, "refusing to start") {
		t.Errorf("status of a server given up: %+v", st)
	}
}
