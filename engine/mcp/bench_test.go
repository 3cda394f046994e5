package mcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// BenchmarkCallTool measures a tools/call round trip through Conn (the
// bounded line transport, the sandboxed server) beside the baseline in
// the same run: the go-sdk's own client and stdio transport calling the
// same server program unsandboxed. Each iteration makes one call of each,
// so the machine's drift hits both alike.
//
//	go test ./engine/mcp -run XXX -bench CallTool -benchtime 2000x
func BenchmarkCallTool(b *testing.B) {
	mcptest.NeedSandbox(b)
	bad := mcptest.BadServer(b)
	root := b.TempDir()
	sb := mcp.Sandbox{Self: mcptest.Self(b), HomeRoot: root + "/homes"}
	noRecord := func(context.Context, ledger.Durability, string, event.Payload, ...[]byte) error { return nil }
	ctx := context.Background()
	c, err := mcp.Start(ctx, sb, mcp.Spec{Name: "bad", Argv: []string{bad}, Workspace: root, Timeout: time.Minute}, 1, "", noRecord)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "baseline", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(bad)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := json.RawMessage(`{"text":"ping"}`)
	var opx, base time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if r, err := c.CallTool(ctx, "bench", "echo", args); err != nil || r.Text != "ping" {
			b.Fatal(r, err)
		}
		t1 := time.Now()
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}}); err != nil {
			b.Fatal(err)
		}
		opx += t1.Sub(t0)
		base += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(opx.Nanoseconds())/n, "opx-ns/call")
	b.ReportMetric(float64(base.Nanoseconds())/n, "sdk-ns/call")
	b.ReportMetric(float64(opx)/float64(base), "opx/sdk")
}
