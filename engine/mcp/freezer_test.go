package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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

// TestConn_WritableFrozenBetweenCalls: a writable server runs only while
// opx waits for one of its answers (review #2): stopped once started,
// answering a call, stopped again after it; a read-only one is not
// stopped; Close kills a stopped server.
func TestConn_WritableFrozenBetweenCalls(t *testing.T) {
	e := newEnv(t)
	spec := badSpec(t, 30*time.Second)
	spec.Writable = true
	c := e.start(t, spec)
	pid := c.Started().PID
	waitState(t, pid, "T")
	for i := range 3 {
		r, err := c.CallTool(context.Background(), fmt.Sprint("call-", i), "echo", json.RawMessage(`{"text":"hi"}`))
		if err != nil || r.Text != "hi" {
			t.Fatalf("echo %d through the frozen server: %+v %v", i, r, err)
		}
		waitState(t, pid, "T")
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
