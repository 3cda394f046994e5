package main_test

// What opx's hooks add to a coding agent's tool call (issue 26): the real
// binary as the CLI would run it (`opx hook claude`, a new process per
// event, its event on stdin), the real engine, Shield, the ledger's
// durable writes; and the same through the small opx-hook binary; beside
// the same process start of a hook that runs `true`, alternating call by
// call in one run.
//
//	go test -run '^$' -bench 'Hook' -benchtime 200x ./cli/opx/

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// hookBench is a running engine over a workspace, and the hook's env.
type hookBench struct {
	b       *testing.B
	bin, ws string
	env     []string
}

func startHookBench(b *testing.B, files int) *hookBench {
	bin := buildOpx(b)
	ws, state := b.TempDir(), b.TempDir()
	h := &hookBench{b: b, bin: bin, ws: ws,
		env: append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(state, "cache"))}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# bench\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range files {
		d := filepath.Join(ws, "src", fmt.Sprintf("pkg%02d", i%50))
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.go", i)), []byte(fmt.Sprintf("package p\n\nconst C%d = %d\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	mgr := exec.Command(bin, "start", "--workspace", ws)
	mgr.Env = h.env
	if err := mgr.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		st := exec.Command(bin, "stop", "--workspace", ws)
		st.Env = h.env
		st.Run()
		mgr.Wait()
	})
	return h
}

// event is a Claude Code event of session s.
func (h *hookBench) event(s, name string, fields map[string]any) []byte {
	m := map[string]any{"session_id": s, "transcript_path": "/dev/null", "cwd": h.ws, "hook_event_name": name}
	for k, v := range fields {
		m[k] = v
	}
	raw, _ := json.Marshal(m)
	return raw
}

// run runs argv with stdin and returns how long it took; it fails the
// benchmark unless the hook answered allow (exit 0, no deny on stdout).
func (h *hookBench) run(stdin []byte, argv ...string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdin = h.env, bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil || bytes.Contains(out.Bytes(), []byte(`"deny"`)) {
		h.b.Fatalf("%v: %v\nstdout: %s\nstderr: %s", argv, err, out.Bytes(), errOut.Bytes())
	}
	return d
}

// waitEngine answers once the engine takes hook events (the first may
// start it, which is not what is measured).
func (h *hookBench) waitEngine() {
	deadline := time.Now().Add(time.Minute)
	for {
		cmd := exec.Command(h.bin, "hook", "claude", "--workspace", h.ws)
		cmd.Env, cmd.Stdin = h.env, bytes.NewReader(h.event("warmup", "SessionStart", map[string]any{"source": "startup"}))
		if cmd.Run() == nil {
			return
		}
		if time.Now().After(deadline) {
			h.b.Fatal("the engine did not take hook events within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkHookRoundTrip: a read through the hooks (the pre-tool event:
// process start, judged, proposal, verdicts and start durable; the
// post-tool event: result durable), through `opx hook` and through the
// small `opx-hook` binary, beside two runs of a hook that runs `true`
// with the same stdin, alternating call by call. Reports, for each, the
// pre-tool hook alone and the pre+post round trip: p50/p99, and what
// they add to `true`'s.
func BenchmarkHookRoundTrip(b *testing.B) {
	h := startHookBench(b, 0)
	h.waitEngine()
	hooks := []struct {
		name string
		argv []string
	}{
		{"opx", []string{h.bin, "hook", "claude", "--workspace", h.ws}},
		{"opxhook", []string{buildHook(b), "claude", "--workspace", h.ws}},
	}
	truth := []string{"true"}
	read := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": filepath.Join(h.ws, "README.md")}}
	var plainPre, plainTrip []time.Duration
	pre, trip := make([][]time.Duration, len(hooks)), make([][]time.Duration, len(hooks))
	b.ResetTimer()
	for i := range b.N {
		// A new agent session every 50 calls: Shield's rate limit is
		// 120 proposals a minute per session.
		s := fmt.Sprintf("bench-%d", i/50)
		events := func(id string) ([]byte, []byte) {
			p, q := clone(read), clone(read)
			p["tool_use_id"], q["tool_use_id"] = id, id
			q["tool_response"], q["duration_ms"] = map[string]any{"type": "text", "file": map[string]any{"content": "# bench\n"}}, 1
			return h.event(s, "PreToolUse", p), h.event(s, "PostToolUse", q)
		}
		preEv, postEv := events(fmt.Sprintf("toolu_%d", i))
		d := h.run(preEv, truth...)
		plainPre, plainTrip = append(plainPre, d), append(plainTrip, d+h.run(postEv, truth...))
		for k, hk := range hooks {
			preEv, postEv := events(fmt.Sprintf("toolu_%d_%s", i, hk.name))
			d := h.run(preEv, hk.argv...)
			pre[k], trip[k] = append(pre[k], d), append(trip[k], d+h.run(postEv, hk.argv...))
		}
	}
	b.StopTimer()
	b.ReportMetric(msOf(pct(plainPre, 0.5)), "true-pre-p50-ms")
	b.ReportMetric(msOf(pct(plainTrip, 0.5)), "true-trip-p50-ms")
	b.ReportMetric(msOf(pct(plainTrip, 0.99)), "true-trip-p99-ms")
	for k, hk := range hooks {
		b.ReportMetric(msOf(pct(pre[k], 0.5)), hk.name+"-pre-p50-ms")
		b.ReportMetric(msOf(pct(pre[k], 0.99)), hk.name+"-pre-p99-ms")
		b.ReportMetric(msOf(pct(pre[k], 0.5)-pct(plainPre, 0.5)), hk.name+"-pre-added-p50-ms")
		b.ReportMetric(msOf(pct(pre[k], 0.99)-pct(plainPre, 0.99)), hk.name+"-pre-added-p99-ms")
		b.ReportMetric(msOf(pct(trip[k], 0.5)), hk.name+"-trip-p50-ms")
		b.ReportMetric(msOf(pct(trip[k], 0.99)), hk.name+"-trip-p99-ms")
		b.ReportMetric(msOf(pct(trip[k], 0.5)-pct(plainTrip, 0.5)), hk.name+"-trip-added-p50-ms")
		b.ReportMetric(msOf(pct(trip[k], 0.99)-pct(plainTrip, 0.99)), hk.name+"-trip-added-p99-ms")
	}
}

// BenchmarkHookShellSnapshot: what a team pays per shell command: the
// pre-tool event of a command (judged, the workspace snapshotted,
// durable) and its post-tool event (the workspace's diff), in a workspace
// of 2,000 files under git, beside `git status` of the same workspace,
// and beside the round trip of a read (the same two hook processes
// without a snapshot): their difference is the snapshot's and the diff's
// share.
func BenchmarkHookShellSnapshot(b *testing.B) {
	h := startHookBench(b, 2000)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.ws
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	h.waitEngine()
	opx := []string{h.bin, "hook", "claude", "--workspace", h.ws}
	var hooked, reads, git []time.Duration
	rin := map[string]any{"file_path": filepath.Join(h.ws, "README.md")}
	b.ResetTimer()
	for i := range b.N {
		s := fmt.Sprintf("bench-%d", i/50)
		id := fmt.Sprintf("toolu_%d", i)
		rpre := map[string]any{"tool_name": "Read", "tool_input": rin, "tool_use_id": id + "r"}
		rpost := map[string]any{"tool_name": "Read", "tool_input": rin, "tool_use_id": id + "r", "tool_response": map[string]any{"type": "text"}}
		reads = append(reads, h.run(h.event(s, "PreToolUse", rpre), opx...)+h.run(h.event(s, "PostToolUse", rpost), opx...))
		in := map[string]any{"command": "true"}
		pre := map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": id}
		post := map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": id, "tool_response": map[string]any{"stdout": "", "stderr": ""}}
		hooked = append(hooked, h.run(h.event(s, "PreToolUse", pre), opx...)+h.run(h.event(s, "PostToolUse", post), opx...))
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = h.ws
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		git = append(git, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(msOf(pct(hooked, 0.5)), "opx-p50-ms")
	b.ReportMetric(msOf(pct(hooked, 0.99)), "opx-p99-ms")
	b.ReportMetric(msOf(pct(git, 0.5)), "git-status-p50-ms")
	b.ReportMetric(float64(pct(hooked, 0.5))/float64(pct(git, 0.5)), "opx/git-status")
	share := pct(hooked, 0.5) - pct(reads, 0.5)
	b.ReportMetric(msOf(share), "snapshot-share-p50-ms")
	b.ReportMetric(float64(share)/float64(pct(git, 0.5)), "snapshot-share/git-status")
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
