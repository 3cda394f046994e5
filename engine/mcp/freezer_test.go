package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// procState is the state letter of /proc/PID/stat ("T": stopped).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	if i < 0 || i+2 >= len(s) {
		return "?"
	}
	return s[i+2 : i+3]
}

// waitState waits, bounded, for pid to be in state.
func waitState(t *testing.T, pid int, state string) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("process %d in state %s", pid, state), func() bool { return procState(pid) == state })
}

// serverOf is the pid of the launcher's child, the server itself.
func serverOf(t *testing.T, launcher int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", launcher, launcher))
	if err != nil {
		t.Fatalf("the launcher's children: %v", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		t.Fatalf("the launcher %d has children %q, want one: the server", launcher, f)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestConn_WritableFrozenBetweenCalls: a writable server runs only while
// opx waits for one of its answers (review #2): stopped once started,
// answering a call, stopped again after it; a read-only one is not
// stopped; Close kills a stopped server. Its launcher is never left
// stopped (it must be able to act on the engine's death signal).
func TestConn_WritableFrozenBetweenCalls(t *testing.T) {
	e := newEnv(t)
	spec := badSpec(t, 30*time.Second)
	spec.Writable = true
	c := e.start(t, spec)
	launcher := c.Started().PID
	pid := serverOf(t, launcher)
	frozen := func() {
		t.Helper()
		waitState(t, pid, "T")
		waitFor(t, 30*time.Second, "the launcher running", func() bool { return procState(launcher) != "T" })
	}
	frozen()
	for i := range 3 {
		r, err := c.CallTool(context.Background(), fmt.Sprint("call-", i), "echo", json.RawMessage(`{"text":"hi"}`))
		if err != nil || r.Text != "hi" {
			t.Fatalf("echo %d through the frozen server: %+v %v", i, r, err)
		}
		frozen()
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if x := c.Exit(); x.Reason != "stopped" {
		t.Errorf("exit: %+v", x)
	}

	ro := e.start(t, badSpec(t, 30*time.Second))
	if _, err := ro.CallTool(context.Background(), "ro", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if s := procState(ro.Started().PID); s == "T" {
		t.Errorf("a read-only server is stopped")
	}
}

// TestConn_WritableRelistsInsideCalls: a writable server that says its
// tools changed is listed again at its next call, inside that call's
// window, never between calls where nothing would record what it does
// (review #2); the new tools are there when that call returns.
func TestConn_WritableRelistsInsideCalls(t *testing.T) {
	e := newEnv(t)
	spec := badSpec(t, 30*time.Second)
	spec.Writable, spec.Workspace = true, e.ws
	var inCall atomic.Bool
	var outside atomic.Int32
	rec := func(ctx context.Context, d ledger.Durability, session string, p event.Payload, blobs ...[]byte) error {
		if _, ok := p.(*event.MCPToolsListed); ok && len(all[*event.MCPToolsListed](e.rec)) > 0 && !inCall.Load() {
			outside.Add(1)
		}
		return e.rec.rec(ctx, d, session, p, blobs...)
	}
	c, err := mcp.Start(context.Background(), e.sb, spec, 1, "", rec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := serverOf(t, c.Started().PID)
	call := func(id, tool string) {
		inCall.Store(true)
		defer inCall.Store(false)
		if _, err := c.CallTool(context.Background(), id, tool, json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	call("change", "change")
	waitState(t, pid, "T")
	call("echo", "echo")
	if !slices.ContainsFunc(c.Tools(), func(tl mcp.Tool) bool { return tl.Name == "mcp__bad__added1" }) {
		t.Errorf("the changed tools were not listed at the next call: %d tools", len(c.Tools()))
	}
	if n := len(all[*event.MCPToolsListed](e.rec)); n != 2 {
		t.Errorf("%d listings recorded, want 2", n)
	}
	if n := outside.Load(); n != 0 {
		t.Errorf("%d listings of a writable server outside its calls", n)
	}
	waitState(t, pid, "T")
}
