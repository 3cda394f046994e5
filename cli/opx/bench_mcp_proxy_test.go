package main_test

// What `opx mcp-proxy` adds to a tools/call: the same Go SDK client
// calls the same tool of the npm everything server directly and through
// opx (the real binary, the real engine, Shield, the ledger's durable
// writes), alternating call by call in one run, and the latencies'
// p50/p99 of both and their difference are reported.
//
//	go test -run '^$' -bench MCPProxyToolCall -benchtime 400x ./cli/opx/

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/internal/mcptest"
)

func BenchmarkMCPProxyToolCall(b *testing.B) {
	every := mcptest.Program(b, mcptest.Everything)
	bin := buildOpx(b)
	ws, state := b.TempDir(), b.TempDir()
	env := append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(state, "cache"))
	os.MkdirAll(filepath.Join(ws, ".opx"), 0o755)
	os.WriteFile(filepath.Join(ws, ".opx", "policy.yaml"), []byte("version: 1\ndefault: verify\nallow:\n  - name: everything\n    tools: [\"mcp__upstream__*\"]\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".opx", "config.yaml"), []byte("policy: .opx/policy.yaml\n"), 0o644)
	// The engine, in the foreground of the benchmark (mcp-proxy would
	// start one itself; this one is stopped at the end).
	mgr := exec.Command(bin, "start", "--workspace", ws)
	mgr.Env = env
	if err := mgr.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		st := exec.Command(bin, "stop", "--workspace", ws)
		st.Env = env
		st.Run()
		mgr.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	connect := func(cmd *exec.Cmd) *sdk.ClientSession {
		cmd.Env = env
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	direct := connect(exec.Command(every))
	defer direct.Close()
	// A proxy session: Shield's rate limit (120 proposals a minute per
	// session) is met by starting a new one every 100 calls, outside the
	// timed calls.
	open := func() *sdk.ClientSession {
		for deadline := time.Now().Add(time.Minute); ; {
			// The engine may still be starting: mcp-proxy then says so.
			cmd := exec.Command(bin, "mcp-proxy", "--workspace", ws, "--", every)
			cmd.Env = env
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			switch {
			case err == nil:
				return cs
			case time.Now().After(deadline):
				b.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	proxied := open()
	defer func() { proxied.Close() }()
	calls := 0
	rotate := func() {
		if calls++; calls%100 == 0 {
			b.StopTimer()
			proxied.Close()
			proxied = open()
			b.StartTimer()
		}
	}
	call := func(cs *sdk.ClientSession) time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}})
		d := time.Since(t0)
		if err != nil || res.IsError {
			text := ""
			if res != nil && len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*sdk.TextContent); ok {
					text = tc.Text
				}
			}
			b.Fatalf("echo: %v %s", err, text)
		}
		return d
	}
	// Warm both paths (first calls load code, open files).
	for range 20 {
		call(direct)
		call(proxied)
		rotate()
	}
	var d, p []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			d = append(d, call(direct))
			p = append(p, call(proxied))
		} else {
			p = append(p, call(proxied))
			d = append(d, call(direct))
		}
		rotate()
	}
	b.StopTimer()
	q := func(s []time.Duration, f float64) float64 {
		s = slices.Clone(s)
		slices.Sort(s)
		return float64(s[int(f*float64(len(s)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(d, 0.5), "direct-p50-ms")
	b.ReportMetric(q(d, 0.99), "direct-p99-ms")
	b.ReportMetric(q(p, 0.5), "proxy-p50-ms")
	b.ReportMetric(q(p, 0.99), "proxy-p99-ms")
	b.ReportMetric(q(p, 0.5)-q(d, 0.5), "overhead-p50-ms")
	b.ReportMetric(q(p, 0.99)-q(d, 0.99), "overhead-p99-ms")
}
