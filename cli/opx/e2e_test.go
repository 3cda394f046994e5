package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/sandbox"
)

// End-to-end tests: the real opx binary, real child processes (manager,
// engine, agent), real gRPC over loopback, a real ledger file.

// syncBuffer is a bytes.Buffer safe for a child's output and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// world is a workspace with its own state dir.
type world struct {
	t     *testing.T
	bin   string
	ws    string
	state string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, bin: buildOpx(t), ws: t.TempDir(), state: t.TempDir()}
	if err := os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("# e2e\nthe workspace of an end-to-end test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) env() []string {
	return append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "XDG_STATE_HOME="+w.state, "XDG_CACHE_HOME="+filepath.Join(w.state, "cache"))
}

// run runs opx to completion in the world.
func (w *world) run(args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(w.bin, append(args, "--workspace", w.ws)...)
	cmd.Env = w.env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("run opx %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errOut.String(), code
}

// manager is a running `opx start`. exited delivers its exit once; done
// is closed when it has exited.
type manager struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan error
	done   chan struct{}
}

// start runs `opx start` and waits until the agent is connected.
func (w *world) start() *manager {
	w.t.Helper()
	m := &manager{cmd: exec.Command(w.bin, "start", "--workspace", w.ws), out: &syncBuffer{}, exited: make(chan error, 1), done: make(chan struct{})}
	m.cmd.Env = w.env()
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { err := m.cmd.Wait(); close(m.done); m.exited <- err }()
	w.t.Cleanup(func() {
		select {
		case <-m.done:
		default:
			m.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-m.done:
			case <-time.After(15 * time.Second):
				m.cmd.Process.Kill()
			}
		}
	})
	w.waitAgent(m, 0)
	return m
}

type status struct {
	Running       bool   `json:"running"`
	ManagerPID    int    `json:"manager_pid"`
	EnginePID     int    `json:"engine_pid"`
	AgentPID      int    `json:"agent_pid"`
	SandboxStatus string `json:"sandbox_status"`
	LedgerPath    string `json:"ledger_path"`
	LedgerHeadSeq uint64 `json:"ledger_head_seq"`
}

func (w *world) status() (status, int) {
	w.t.Helper()
	out, _, code := w.run("status", "--json")
	var st status
	json.Unmarshal([]byte(out), &st)
	return st, code
}

// waitAgent waits until an agent other than notPID is connected.
func (w *world) waitAgent(m *manager, notPID int) status {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, code := w.status()
		if code == 0 && st.AgentPID != 0 && st.AgentPID != notPID && st.SandboxStatus != "no agent" {
			return st
		}
		select {
		case err := <-m.exited:
			w.t.Fatalf("opx start exited (%v):\n%s", err, m.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	w.t.Fatalf("no agent came up:\n%s", m.out.String())
	return status{}
}

// types returns the ledger's entry types in order, after verifying it
// strictly (the engine must be stopped).
func (w *world) types(path string) []string {
	w.t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(event.StrictOptions())
	if err != nil || !rep.OK {
		w.t.Fatalf("ledger does not verify: %v %v", err, rep.Err())
	}
	var out []string
	l.Range(0, rep.HeadSeq, func(e ledger.Entry) error { out = append(out, e.Type); return nil })
	return out
}

func (w *world) stop(m *manager) {
	w.t.Helper()
	if out, errOut, code := w.run("stop"); code != 0 {
		w.t.Fatalf("opx stop: %d\n%s%s", code, out, errOut)
	}
	select {
	case err := <-m.exited:
		if err != nil {
			w.t.Fatalf("opx start exited with %v after opx stop:\n%s", err, m.out.String())
		}
	case <-time.After(20 * time.Second):
		w.t.Fatal("opx start still running after opx stop")
	}
}

func count(types []string, typ string) int {
	n := 0
	for _, t := range types {
		if t == typ {
			n++
		}
	}
	return n
}

// TestE2E_Demo runs `opx demo` as a newcomer would and checks the story
// it tells against the ledger it leaves: the README's prompt injection
// is proposed and blocked by Shield (three calls, none executed), the
// agent's edit is snapshotted, the tests run through the sandboxed shell,
// and the session's rollback restores the file and is recorded.
func TestE2E_Demo(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	cmd := exec.Command(bin, "demo")
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opx demo: %v\n%s", err, out)
	}
	for _, want := range []string{"== opx start", "→ read_file", "shield: allow",
		"shield: block (credential-path)", "shield: block (pipe-to-shell)", "[exit status 1]", "refund.csv = 700",
		"== opx snapshots", "== opx diff", "+awk -F, '{ total += $2 }", "rolled back: 1 path restored",
		"invoice.sh is back as it was: \"awk -F, '$2 > 0", "== opx ledger verify --strict", "ok: ", "The demo's workspace and ledger stay in ",
		"→ spawn_agent", "shield: allow (policy:agent-tools)", "The first (read_file) answered: invoice.sh has 4 lines",
		"The second (execute_command) answered: The tests pass", "== opx replay ses_", "└─ #", "→ completed: \"Run the tests with sh test.sh",
		// The MCP scene: the demo's tracker (opx internal-demo-mcp-server)
		// answers with an issue that carries a prompt injection.
		"→ mcp__tracker__get_issue {\"id\": 7}", "shield: allow (policy:demo-tracker)",
		"Issue #7 Refunds are not subtracted from the total", "opx Shield flagged the tracker's answer",
		"(the tracker's turn)", "result flagged by Shield (prompt-injection)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	path := ""
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "ledger    "); ok {
			path = p
		}
	}
	// Every command the demo suggests works as printed (start and chat
	// aside: they would start an engine), writing into the test's dir.
	// The binary is not on PATH: the hints name it by its path, never
	// as a bare "opx" the shell would not find.
	if strings.Contains(string(out), "\n  opx ") {
		t.Errorf("the demo suggests a bare `opx`, which is not on PATH:\n%s", out)
	}
	hints := 0
	tmp := t.TempDir()
	for _, line := range strings.Split(string(out), "\n") {
		hint, ok := strings.CutPrefix(line, "  "+bin+" ")
		if !ok || strings.HasPrefix(hint, "start ") {
			continue
		}
		hints++
		hint = strings.NewReplacer("/tmp/demo.jsonl.zst", filepath.Join(tmp, "demo.jsonl.zst"),
			"/tmp/demo-session.jsonl", filepath.Join(tmp, "demo-session.jsonl")).Replace(hint)
		if o, e, code := runOpx(t, bin, strings.Fields(hint)...); code != 0 {
			t.Errorf("the demo suggests `opx %s`: exit %d\n%s%s", hint, code, o, e)
		}
	}
	if hints < 5 || !strings.Contains(string(out), "XDG_STATE_HOME=") {
		t.Errorf("the demo suggests %d commands (want 5), or starts an engine without its state dir:\n%s", hints, out)
	}
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("the demo's ledger %q: %v", path, err)
	}
	defer l.Close()
	rep, err := l.Verify(event.StrictOptions())
	if err != nil || !rep.OK {
		t.Fatalf("the demo's ledger does not verify: %v %v", err, rep.Err())
	}
	blocked := map[string]bool{}
	var rollbacks, workspaceSnaps int
	// The MCP call: its verdicts, its execution and Shield's finding in
	// its result, by call id.
	const mcpTool = "mcp__tracker__get_issue"
	mcpCall, mcpStarted, mcpTools := "", 0, ""
	var mcpVerdicts []string
	var mcpExec *event.ExecCompleted
	var flagged []*event.ResultFlagged
	l.Range(0, rep.HeadSeq, func(e ledger.Entry) error {
		p, err := event.Decode(e)
		if err != nil {
			return err
		}
		switch x := p.(type) {
		case *event.ToolProposed:
			if x.Tool == mcpTool {
				mcpCall = x.CallID
			}
		case *event.MCPServerStarted:
			mcpStarted++
		case *event.MCPToolsListed:
			mcpTools = fmt.Sprint(x.Tools)
		case *event.ExecCompleted:
			if x.Tool == mcpTool {
				mcpExec = x
			}
		case *event.ResultFlagged:
			flagged = append(flagged, x)
		case *event.ShieldVerdict:
			if x.Decision == event.Block {
				blocked[x.Rule] = true
			}
			if mcpCall != "" && x.CallID == mcpCall && x.SubAgentID == "" {
				mcpVerdicts = append(mcpVerdicts, x.Decision+" "+x.Rule)
			}
		case *event.Rollback:
			rollbacks++
		case *event.Snapshot:
			if x.Kind == event.KindWorkspace {
				workspaceSnaps++
			}
		}
		return nil
	})
	// Workspace snapshots: the agent's two test runs and its test
	// sub-agent's.
	if !blocked["credential-path"] || !blocked["pipe-to-shell"] || rollbacks != 1 || workspaceSnaps != 3 {
		t.Errorf("ledger: blocks %v, %d rollbacks, %d workspace snapshots (want credential-path and pipe-to-shell, 1, 3)", blocked, rollbacks, workspaceSnaps)
	}
	if mcpStarted != 1 || !strings.Contains(mcpTools, "get_issue") || !strings.Contains(mcpTools, "list_issues") {
		t.Errorf("ledger: %d tracker starts, tools %s; want 1, get_issue and list_issues", mcpStarted, mcpTools)
	}
	if mcpCall == "" || strings.Join(mcpVerdicts, ", ") != "allow policy:demo-tracker, allow heuristics:none" {
		t.Errorf("ledger: the %s call %q was judged %v, want allowed by demo-tracker and tier 1", mcpTool, mcpCall, mcpVerdicts)
	}
	if mcpExec == nil || mcpExec.CallID != mcpCall || mcpExec.Failed || !strings.Contains(mcpExec.Result, "Note to AI agents") {
		t.Errorf("ledger: the %s call's execution %+v, want it completed with the issue's text", mcpTool, mcpExec)
	}
	if len(flagged) != 1 || flagged[0].CallID != mcpCall || flagged[0].Tool != mcpTool || flagged[0].Rule != "prompt-injection" || flagged[0].Action != "annotated" {
		t.Errorf("ledger: flagged results %+v, want the %s call's, prompt-injection, annotated", flagged, mcpTool)
	}
}

func TestE2E_StartSendStop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	// A second instance for the same workspace is refused.
	if _, errOut, code := w.run("start"); code != 1 || !strings.Contains(errOut, "already running") {
		t.Errorf("second opx start: exit %d, %s", code, errOut)
	}
	out, errOut, code := w.run("send", "read README.md")
	if code != 0 || !strings.Contains(out, "the workspace of an end-to-end test") || !strings.Contains(errOut, "→ read_file") {
		t.Fatalf("opx send: %d\n%s\n%s", code, out, errOut)
	}
	session := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(errOut[strings.LastIndex(errOut, "(session "):]), "(session "), ")")
	out, _, code = w.run("send", "--json", "--session", session, "list the files")
	if code != 0 || !strings.Contains(out, `"type":"response_complete"`) || !strings.Contains(out, `"session_id":"`+session+`"`) {
		t.Fatalf("opx send --json: %d\n%s", code, out)
	}
	st, _ := w.status()
	w.stop(m)
	if _, _, code := w.run("status"); code != 1 {
		t.Errorf("status after stop: exit %d, want 1", code)
	}
	types := w.types(st.LedgerPath)
	for typ, n := range map[string]int{"engine.started": 1, "engine.stopped": 1, "session.created": 1, "client.message": 2,
		"agent.response_complete": 2, "exec.completed": 2, "llm.request": 4, "llm.response": 4, "sandbox.canary": 1} {
		if got := count(types, typ); got != n {
			t.Errorf("%d %s entries, want %d", got, typ, n)
		}
	}
}

// TestE2E_RestartIsNotACrash restarts the engine more times than the crash
// budget allows: exit 75 respawns at once and is never counted.
func TestE2E_RestartIsNotACrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	st := w.waitAgent(m, 0)
	for i := 0; i < 6; i++ {
		before := st.EnginePID
		if _, errOut, code := w.run("restart"); code != 0 {
			t.Fatalf("restart %d: %s", i, errOut)
		}
		deadline := time.Now().Add(30 * time.Second)
		for st.EnginePID == before && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			st, _ = w.status()
		}
		st = w.waitAgent(m, 0)
	}
	if strings.Contains(m.out.String(), "crashed") {
		t.Errorf("a restart was reported as a crash:\n%s", m.out.String())
	}
	w.stop(m)
	types := w.types(st.LedgerPath)
	if n := count(types, "engine.started"); n != 7 {
		t.Errorf("%d engine.started, want 7", n)
	}
	if n := count(types, "engine.crashed"); n != 0 {
		t.Errorf("%d engine.crashed after clean restarts", n)
	}
}

// TestE2E_AgentKilledMidSession: the agent dies, the crash is recorded, a
// new agent comes up and the session goes on.
func TestE2E_AgentKilledMidSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	out, errOut, code := w.run("send", "read README.md")
	if code != 0 {
		t.Fatalf("send: %s %s", out, errOut)
	}
	session := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(errOut[strings.LastIndex(errOut, "(session "):]), "(session "), ")")
	st, _ := w.status()
	w.kill(st.AgentPID)
	st2 := w.waitAgent(m, st.AgentPID)
	if out, errOut, code := w.run("send", "--session", session, "read README.md"); code != 0 || !strings.Contains(out, "end-to-end") {
		t.Fatalf("send after the agent was killed: %d\n%s\n%s", code, out, errOut)
	}
	w.stop(m)
	types := w.types(st2.LedgerPath)
	if count(types, "agent.crashed") != 1 || count(types, "agent.spawned") != 2 || count(types, "agent.response_complete") != 2 {
		t.Errorf("ledger: %v", types)
	}
}

// TestE2E_EngineCrashBudget kills the engine with SIGKILL until the manager
// gives up: within six kills, with a clear message; the next engine start
// records that the previous one crashed.
func TestE2E_EngineCrashBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	kills := 0
	for kills < 6 {
		w.signal(st.EnginePID, syscall.SIGKILL)
		kills++
		deadline := time.Now().Add(20 * time.Second)
		gaveUp := false
		for time.Now().Before(deadline) {
			select {
			case err := <-m.exited:
				if err == nil {
					t.Fatal("manager exited 0 after repeated crashes")
				}
				gaveUp = true
			case <-time.After(50 * time.Millisecond):
			}
			if gaveUp {
				break
			}
			if s, code := w.status(); code == 0 && s.EnginePID != st.EnginePID && s.AgentPID != 0 {
				st = s
				break
			}
		}
		if gaveUp {
			break
		}
	}
	if kills > 6 || !strings.Contains(m.out.String(), "giving up") || !strings.Contains(m.out.String(), "keeps crashing") {
		t.Fatalf("after %d kills:\n%s", kills, m.out.String())
	}
	types := w.types(st.LedgerPath)
	if n := count(types, "engine.crashed"); n != kills-1 {
		t.Errorf("%d engine.crashed entries after %d kills (the last crash is recorded at the next start)", n, kills)
	}
}

// TestE2E_Grpcurl: a standard tool lists the engine's services through
// reflection and calls ClientService with the client token (grpcurl's -H
// goes with reflection requests too), and is refused both without it.
func TestE2E_Grpcurl(t *testing.T) {
	t.Parallel()
	grpcurl, err := exec.LookPath("grpcurl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("grpcurl is not installed (.ci/run installs it): %v", err)
		}
		t.Skip("grpcurl is not installed; .ci/run installs it")
	}
	w := newWorld(t)
	m := w.start()
	defer w.stop(m)
	tokens, _ := filepath.Glob(filepath.Join(w.state, "opx", "*", "client.token"))
	if len(tokens) != 1 {
		t.Fatalf("client token files: %v", tokens)
	}
	tok, _ := os.ReadFile(tokens[0])
	st, _ := w.status()
	out, _, code := w.run("status")
	addr := out[strings.Index(out, "gRPC ")+len("gRPC ") : strings.Index(out, "\nagent")]
	if code != 0 || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("status: %q", out)
	}
	run := func(args ...string) (string, error) {
		b, err := exec.Command(grpcurl, append([]string{"-plaintext"}, args...)...).CombinedOutput()
		return string(b), err
	}
	header := "opx-client-token: " + strings.TrimSpace(string(tok))
	if out, err := run("-H", header, addr, "list"); err != nil || !strings.Contains(out, "opx.v1.ClientService") || !strings.Contains(out, "opx.v1.LedgerService") {
		t.Errorf("grpcurl list: %v\n%s", err, out)
	}
	if out, err := run(addr, "list"); err == nil || !strings.Contains(out, "Unauthenticated") {
		t.Errorf("grpcurl list without the token: %v\n%s", err, out)
	}
	out, err = run("-H", header, addr, "opx.v1.ClientService/GetStatus")
	if err != nil || !strings.Contains(out, fmt.Sprintf(`"enginePid": "%d"`, st.EnginePID)) {
		t.Errorf("grpcurl GetStatus with the token: %v\n%s", err, out)
	}
	if out, err := run(addr, "opx.v1.ClientService/GetStatus"); err == nil || !strings.Contains(out, "Unauthenticated") {
		t.Errorf("grpcurl GetStatus without the token: %v\n%s", err, out)
	}
}

// TestE2E_Daemon: --daemon returns once the engine is up, the manager runs
// on in its own session, and opx stop ends it.
func TestE2E_Daemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	out, errOut, code := w.run("start", "--daemon")
	if code != 0 || !strings.Contains(out, "in the background") {
		t.Fatalf("opx start --daemon: %d\n%s%s", code, out, errOut)
	}
	st, code := w.status()
	if code != 0 || !st.Running {
		t.Fatalf("status after --daemon: %d %+v", code, st)
	}
	defer func() {
		if _, c := w.status(); c == 0 {
			w.signal(st.ManagerPID, syscall.SIGTERM)
		}
	}()
	if _, errOut, code := w.run("start", "--daemon"); code != 1 || !strings.Contains(errOut, "already running") {
		t.Errorf("second --daemon: %d %s", code, errOut)
	}
	if out, errOut, code := w.run("stop"); code != 0 {
		t.Fatalf("stop: %s%s", out, errOut)
	}
	if _, code := w.status(); code != 1 {
		t.Errorf("status after stop: exit %d, want 1", code)
	}
	logs, _ := filepath.Glob(filepath.Join(w.state, "opx", "*", "engine.log"))
	if len(logs) != 1 {
		t.Errorf("engine.log: %v", logs)
	}
}

// TestE2E_Chat drives opx chat through its stdin: a message, the session
// list, a new session, quit.
func TestE2E_Chat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	defer w.stop(m)
	cmd := exec.Command(w.bin, "chat", "--workspace", w.ws)
	cmd.Env = w.env()
	cmd.Stdin = strings.NewReader("read README.md\n/sessions\n/bogus\n/new\nlist the files\n/sessions\n/quit\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opx chat: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"→ read_file", "shield: allow", "the workspace of an end-to-end test", "* ses_", "2 messages", "unknown command /bogus", "(the next message starts a new session)", "→ list_directory"} {
		if !strings.Contains(s, want) {
			t.Errorf("chat output lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "  ses_") + strings.Count(s, "* ses_"); n < 3 {
		t.Errorf("want one session listed, then two:\n%s", s)
	}
}

// needSandbox skips where the kernel has no sandbox, except under CI=true.
func needSandbox(t *testing.T) {
	t.Helper()
	if !sandbox.New().Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the kernel sandbox is unavailable")
		}
		t.Skip("the kernel sandbox is unavailable")
	}
}

// TestE2E_SandboxedAgent: the agent opx start runs is sandboxed, says so in
// status, and the canary is on record.
func TestE2E_SandboxedAgent(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	if st.SandboxStatus != "sandboxed" {
		t.Errorf("sandbox status %q, want sandboxed", st.SandboxStatus)
	}
	out, _, code := runOpx(t, w.bin, "sandbox", "probe", "--json")
	var r sandbox.CanaryResult
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Status != "sandboxed" || r.Blocked() != 4 {
		t.Errorf("opx sandbox probe: %d %s", code, out)
	}
	out, _, code = w.run("doctor", "--json")
	var d struct {
		OK     bool `json:"ok"`
		Engine struct {
			Running bool `json:"running"`
		} `json:"engine"`
		Ledger struct {
			Verify struct {
				OK bool `json:"ok"`
			} `json:"verify"`
		} `json:"ledger"`
		Commands struct {
			Checks []struct {
				Path     string `json:"path"`
				Readable bool   `json:"readable"`
				Detail   string `json:"detail"`
			} `json:"checks"`
		} `json:"commands"`
		Problems []string `json:"problems"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || !d.OK || !d.Engine.Running || !d.Ledger.Verify.OK {
		t.Errorf("opx doctor with the engine running: %d %s", code, out)
	}
	// Doctor tried, through the engine's own command sandbox, to read the
	// state directory (and /etc/shadow, where there is one): denied.
	want := map[string]bool{filepath.Dir(st.LedgerPath): true}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		want["/etc/shadow"] = true
	}
	for _, c := range d.Commands.Checks {
		if c.Readable || c.Detail != "permission denied" {
			t.Errorf("doctor: a sandboxed command reading %s: %+v", c.Path, c)
		}
		delete(want, c.Path)
	}
	if len(want) > 0 {
		t.Errorf("doctor did not check %v: %+v", want, d.Commands.Checks)
	}
	w.stop(m)
	// Offline, doctor verifies the file; a damaged ledger is a problem.
	if out, _, code := w.run("doctor"); code != 0 || !strings.Contains(out, "verifies (strict)") {
		t.Errorf("opx doctor offline: %d\n%s", code, out)
	}
	ledgertest.FlipEntryByte(t, st.LedgerPath, 3)
	if out, _, code := w.run("doctor"); code != 1 || !strings.Contains(out, "ledger does not verify") {
		t.Errorf("opx doctor on a damaged ledger: %d\n%s", code, out)
	}
}

// TestE2E_Demo_PlainWorkspace runs `opx demo --workspace DIR` on a
// workspace of the user's own, whose README holds no injection and whose
// tests pass: the story says what happened there, not the demo's usual
// one (no blocks, no fix, no rollback of an edit that never was).
func TestE2E_Demo_PlainWorkspace(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	ws, state := t.TempDir(), t.TempDir()
	for name, content := range map[string]string{"README.md": "# my project\n\nRun make.\n", "test.sh": "#!/bin/sh\necho all good\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "demo", "--workspace", ws)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=", "TMPDIR="+t.TempDir(), "XDG_STATE_HOME="+state, "XDG_CACHE_HOME="+filepath.Join(state, "cache"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opx demo: %v\n%s", err, out)
	}
	for _, want := range []string{"README.md gives me no setup steps to run, so I did nothing", "The tests pass, so there is nothing to fix",
		"all good", "verdict (0 blocks above among them)", "== opx ledger verify --strict",
		"The first (read_file) answered: invoice.sh has 4 lines", "The second (execute_command) answered: The tests pass:\nall good"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"refused each one", "tests pass now", "invoice.sh is back", "the three blocks", "and the rollback", "== opx diff",
		"look up issue 7", "mcp__tracker", "finding in an MCP result"} {
		if strings.Contains(string(out), not) {
			t.Errorf("demo output says %q:\n%s", not, out)
		}
	}
	// A workspace of the user's keeps its configuration: the demo's MCP
	// server and policy are written only where it created the workspace.
	if _, err := os.Stat(filepath.Join(ws, ".opx")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the demo configured the user's workspace: %v", err)
	}
}
