package mcp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger/event"
)

// TestBadServer_ListingBudget: a server whose tools keep changing, or
// that keeps restarting, cannot grow the ledger without end: its
// recorded listings share one budget of bytes across its starts (review
// #9). Past it, a change of tools is not listed (recorded as a protocol
// error) and a start fails with ErrListingBudget.
func TestBadServer_ListingBudget(t *testing.T) {
	e := newEnv(t)
	spec := badSpec(t, time.Minute)
	spec.Workspace = e.ws
	probe := e.start(t, spec)
	size := all[*event.MCPToolsListed](e.rec)[0].Size
	probe.Close()
	if size <= 0 {
		t.Fatalf("the first listing's size: %d", size)
	}
	// Room for the first listing and one change, not two.
	defer mcp.SetListingBudget(size*5/2, 24*time.Hour)()
	spec.ListingBudget = mcp.NewListingBudget()
	c := e.start(t, spec)
	before := len(all[*event.MCPToolsListed](e.rec))
	if _, err := c.CallTool(context.Background(), "call-change-1", "change", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "added1 listed", func() bool {
		return slices.ContainsFunc(c.Tools(), func(tl mcp.Tool) bool { return tl.Name == "mcp__bad__added1" })
	})
	if _, err := c.CallTool(context.Background(), "call-change-2", "change", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the spent budget recorded", func() bool {
		return slices.ContainsFunc(protocolErrors(e, "unexpected"), func(p *event.MCPProtocolError) bool {
			return strings.Contains(p.Detail, "used their budget")
		})
	})
	if got := len(all[*event.MCPToolsListed](e.rec)) - before; got != 1 {
		t.Errorf("%d listings recorded after the start, want 1 (the change the budget had room for)", got)
	}
	if slices.ContainsFunc(c.Tools(), func(tl mcp.Tool) bool { return tl.Name == "mcp__bad__added2" }) {
		t.Error("a change past the budget was taken")
	}
	c.Close()

	// The next start of the same server shares the budget: refused.
	n := len(all[*event.MCPServerStarted](e.rec))
	_, err := mcp.Start(context.Background(), e.sb, spec, 3, "", e.rec.rec)
	if !errors.Is(err, mcp.ErrListingBudget) {
		t.Fatalf("a start past the budget: %v, want ErrListingBudget", err)
	}
	if got := len(all[*event.MCPServerStarted](e.rec)); got != n {
		t.Errorf("a start past the budget was recorded as started")
	}
}

// TestManager_RestartsBounded: a server that dies after living long
// enough to count as healthy again each time was restarted without end,
// each start and listing recorded. The Manager gives up on a server that
// died more than maxRestarts times within its window, and records why
// (review #9).
func TestManager_RestartsBounded(t *testing.T) {
	defer mcp.SetBackoff(10*time.Millisecond, 40*time.Millisecond)()
	// Every instance is "healthy" at once (as one up a minute would be):
	// failures in a row never reach MaxFailures.
	defer mcp.SetRestartBounds(0, 3, time.Hour)()
	e := newEnv(t)
	bad := mcptest.BadServer(t)
	m := mcp.NewManager(e.sb, []mcp.Spec{{Name: "bad", Argv: []string{bad}, Workspace: e.ws, Timeout: 30 * time.Second}}, e.rec.rec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m.Start(ctx)
	defer m.Stop(ctx)
	for i := 1; i <= 4; i++ {
		waitFor(t, time.Minute, "instance "+strconv.Itoa(i)+" running", func() bool {
			st := m.Status()[0]
			return st.State == "running" && st.Instance == i
		})
		if _, err := m.Call(ctx, "crash-"+strconv.Itoa(i), "mcp__bad__crash", nil); err == nil {
			t.Fatal("the crash answered")
		}
	}
	waitFor(t, time.Minute, "bad to be given up", func() bool { return m.Status()[0].State == "failed" })
	if st := m.Status()[0]; st.Instance != 4 || !strings.Contains(st.LastError, "given up") {
		t.Errorf("status: %+v", st)
	}
	exited := all[*event.MCPServerExited](e.rec)
	if len(exited) != 4 || exited[3].RestartInMS != 0 || exited[2].RestartInMS == 0 {
		t.Errorf("exits: %+v", exited)
	}
	var gaveUp []*event.MCPServerFailed
	for _, f := range all[*event.MCPServerFailed](e.rec) {
		if strings.Contains(f.Error, "died 4 times within 1h0m0s: given up") {
			gaveUp = append(gaveUp, f)
		}
	}
	if len(gaveUp) != 1 || gaveUp[0].RetryInMS != 0 {
		t.Errorf("why it was given up: %+v", gaveUp)
	}
	if n := len(all[*event.MCPServerStarted](e.rec)); n != 4 {
		t.Errorf("%d starts recorded, want 4", n)
	}
}

// TestManager_CodeChangedNotRestarted: a server whose program changed
// while it ran is not started again (review #3): what would run is not
// what was configured and started; the refusal is recorded and the
// server is failed until the engine restarts.
func TestManager_CodeChangedNotRestarted(t *testing.T) {
	defer mcp.SetBackoff(10*time.Millisecond, 40*time.Millisecond)()
	e := newEnv(t)
	orig, err := os.ReadFile(mcptest.BadServer(t))
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "srv")
	if err := os.WriteFile(prog, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager(e.sb, []mcp.Spec{{Name: "bad", Argv: []string{prog}, Workspace: e.ws, Timeout: 30 * time.Second}}, e.rec.rec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m.Start(ctx)
	defer m.Stop(ctx)
	if err := m.WaitStarted(ctx); err != nil {
		t.Fatal(err)
	}
	// Replaced as one would replace a running program: a new file
	// renamed over it (still a working badserver, one byte longer).
	tmp := prog + ".new"
	if err := os.WriteFile(tmp, append(orig, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, prog); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, "crash", "mcp__bad__crash", nil); err == nil {
		t.Fatal("the crash answered")
	}
	waitFor(t, time.Minute, "bad to be failed", func() bool { return m.Status()[0].State == "failed" })
	if st := m.Status()[0]; st.Instance != 1 || !strings.Contains(st.LastError, "code changed") {
		t.Errorf("status: %+v", st)
	}
	if n := len(all[*event.MCPServerStarted](e.rec)); n != 1 {
		t.Errorf("%d starts recorded, want 1", n)
	}
	failed := all[*event.MCPServerFailed](e.rec)
	if len(failed) != 1 || !strings.Contains(failed[0].Error, "code changed") || failed[0].RetryInMS != 0 {
		t.Errorf("failed: %+v", failed)
	}
	if ex := all[*event.MCPServerExited](e.rec); len(ex) != 1 || ex[0].RestartInMS != 0 {
		t.Errorf("its exit should say it is not restarted: %+v", ex)
	}
}
