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
