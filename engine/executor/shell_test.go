//go:build linux

package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// The shell and git tests run the executors' real code path on the real
// kernel: the launcher is this test binary (testLaunchArg: the same
// sandbox.ExecSandboxed `opx internal-sandbox-exec` calls), which confines
// itself and execs the command. Commands that need an exact errno run the
// test binary once more as a probe (testProbeArg). Both modes are chosen
// in init, so the package needs no TestMain.

const (
	testLaunchArg = "-opx-test-launch"
	testProbeArg  = "-opx-test-probe"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case testLaunchArg:
		p, argv, err := sandbox.ParseCommandArgs(os.Args[2:])
		if err == nil {
			err = sandbox.ExecSandboxed(p, argv, os.Environ())
		}
		fmt.Fprintf(os.Stderr, "opx: %v\n", err) // as the opx CLI reports it
		exitNow(1)
	case testProbeArg:
		fmt.Println(probeOutcome(probe(os.Args[2], os.Args[3])))
		exitNow(0)
	}
}

// exitNow exits at once. Unlike os.Exit it skips the race runtime's
// one-second sleep at exit, which a sandboxed child cannot turn off: the
// race runtime reads GORACE from /proc/self/environ, which commands may
// not read.
func exitNow(code int) { syscall.Exit(code) }

// probe tries one operation and returns the kernel's answer.
func probe(op, arg string) error {
	switch op {
	case "write":
		return os.WriteFile(arg, []byte("x"), 0o644)
	case "read":
		_, err := os.ReadFile(arg)
		return err
	case "connect":
		c, err := net.Dial("tcp", arg)
		if err == nil {
			c.Close()
		}
		return err
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		return unix.PtraceAttach(pid)
	case "unshare":
		return unix.Unshare(unix.CLONE_NEWUSER | unix.CLONE_NEWNS)
	}
	return fmt.Errorf("unknown probe %q", op)
}

func probeOutcome(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	default:
		return "error: " + err.Error()
	}
}

// needCommandSandbox skips when the kernel cannot enforce a command
// policy, except under CI=true where that is a failure.
func needCommandSandbox(t *testing.T) {
	t.Helper()
	if c := sandbox.New().Probe(); !c.Filesystem || !c.Seccomp || !c.Network {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the command sandbox is unavailable: %+v", c)
		}
		t.Skipf("the command sandbox is unavailable: %+v", c)
	}
}

// shellEnv is a workspace, the private temp dir, a directory beside the
// workspace with a secret, and the launcher confining commands to them.
type shellEnv struct {
	ws                *executor.Workspace
	dir, tmp, outside string
	secret, exe       string
	launcher          []string
}

func shellFixture(t *testing.T, network bool) shellEnv {
	t.Helper()
	needCommandSandbox(t)
	root := t.TempDir()
	e := shellEnv{dir: filepath.Join(root, "ws"), tmp: filepath.Join(root, "tmp"), outside: filepath.Join(root, "outside")}
	e.secret = filepath.Join(e.outside, "secret.txt")
	for _, d := range []string{filepath.Join(e.dir, "sub"), e.tmp, e.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(e.secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.exe = exe
	// The test binary is readable and executable so commands can run it
	// as a probe.
	policy := sandbox.CommandPolicy{Workspace: e.dir, Writable: []string{e.tmp}, ReadOnly: []string{filepath.Dir(exe)}, AllowNetwork: network}
	e.launcher = append([]string{exe, testLaunchArg}, policy.Args()...)
	ws, err := executor.OpenWorkspace(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	e.ws = ws
	return e
}

func (e shellEnv) shell(cfg executor.ShellConfig) *executor.Shell {
	if cfg.Launcher == nil {
		cfg.Launcher = e.launcher
	}
	if cfg.TempDir == "" {
		cfg.TempDir = e.tmp
	}
	return executor.NewShell(e.ws, cfg)
}

func shellCall(ctx context.Context, s *executor.Shell, args map[string]any) executor.Result {
	b, _ := json.Marshal(args)
	return s.Execute(ctx, executor.Call{ID: "c1", Tool: "execute_command", Args: b})
}

// probeCmd is a command line that runs the probe binary.
func (e shellEnv) probeCmd(op, arg string) string {
	return fmt.Sprintf("'%s' %s %s '%s'", e.exe, testProbeArg, op, arg)
}

func TestShell_Execute_Workspace(t *testing.T) {
	e := shellFixture(t, false)
	os.WriteFile(filepath.Join(e.dir, "old.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "gone.txt"), []byte("gone\n"), 0o644)
	r := shellCall(context.Background(), e.shell(executor.ShellConfig{}), map[string]any{"command": `set -e
echo new > new.txt
echo more >> old.txt
mkdir -p a/b && mv new.txt a/b/moved.txt
rm gone.txt
echo to-stderr >&2
echo via-dev-stderr > /dev/stderr
exit 3`})
	if want := "to-stderr\nvia-dev-stderr\n[exit status 3]"; r.Content != want || r.ExitCode != 3 || !r.IsError || r.Truncated {
		t.Errorf("result %+v, want content %q, exit 3", r, want)
	}
	for p, want := range map[string]string{"old.txt": "old\nmore\n", "a/b/moved.txt": "new\n"} {
		if b, err := os.ReadFile(filepath.Join(e.dir, p)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", p, b, err, want)
		}
	}
	for _, p := range []string{"gone.txt", "new.txt"} {
		if _, err := os.Lstat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("%s still exists", p)
		}
	}
}

// TestShell_Execute_Confinement runs probes as commands and checks the
// kernel's exact answer: EACCES from Landlock for files and TCP, EPERM
// from seccomp for ptrace and namespaces.
func TestShell_Execute_Confinement(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	homeFile := filepath.Join(home, fmt.Sprintf(".opx-shell-test-%d", os.Getpid()))
	tmpFile := filepath.Join("/tmp", fmt.Sprintf("opx-shell-test-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(homeFile); os.Remove(tmpFile) })
	tests := []struct {
		name    string
		network bool
		op, arg string // arg: %o is the outside dir, %w the workspace, %t the temp dir
		want    string
	}{
		{"WriteWorkspace", false, "write", "%w/sub/ok.txt", "ok"},
		{"WriteTempDir", false, "write", "%t/cache", "ok"},
		{"WriteHome", false, "write", homeFile, "EACCES"},
		{"WriteTmp", false, "write", tmpFile, "EACCES"},
		{"WriteSibling", false, "write", "%o/x", "EACCES"},
		{"ReadOutside", false, "read", "%o/secret.txt", "EACCES"},
		{"ReadEngineEnviron", false, "read", "/proc/" + strconv.Itoa(os.Getpid()) + "/environ", "EACCES"},
		{"ConnectNoNetwork", false, "connect", l.Addr().String(), "EACCES"},
		{"ConnectNetwork", true, "connect", l.Addr().String(), "ok"},
		{"PtraceEngine", false, "ptrace", strconv.Itoa(os.Getpid()), "EPERM"},
		{"Unshare", false, "unshare", "", "EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := shellFixture(t, tt.network)
			arg := strings.NewReplacer("%o", e.outside, "%w", e.dir, "%t", e.tmp).Replace(tt.arg)
			r := shellCall(context.Background(), e.shell(executor.ShellConfig{}), map[string]any{"command": e.probeCmd(tt.op, arg)})
			if want := tt.want + "\n[exit status 0]"; r.Content != want {
				t.Errorf("content %q, want %q", r.Content, want)
			}
			if tt.want != "ok" && tt.op == "write" {
				if _, err := os.Lstat(arg); err == nil {
					t.Errorf("%s was written", arg)
				}
			}
		})
	}
}

// gone waits a little for pid to be dead (gone, or a zombie nobody has
// reaped yet).
// gone waits until process pid has exited (or is a zombie). The bound
// is far beyond any scheduling delay; a process it finds alive after it
// was not killed.
// pinSleeper returns a pidfd of pid if it is still a `sleep 300` (the
// background child of TestShell_Execute_ProcessGroup), else -1.
func pinSleeper(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Equal(b, []byte("sleep\x00300\x00")) {
		unix.Close(fd)
		return -1
	}
	return fd
}

// exitedWithin reports whether the process of pidfd fd exits within d
// (a pidfd polls readable once its process has exited).
func exitedWithin(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
	return false
}

func gone(pid int) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			return true
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
				return true
			}
		}
	}
	return false
}

// readPid returns the pid a command wrote to path (written whole: the
// commands below write a temporary file and rename it), or 0.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// TestShell_Execute_ProcessGroup checks that a command's background
// children die with it: when the shell exits, on timeout and on
// cancellation, and that none can hold the engine on the output pipe.
// Nothing depends on how fast the sandboxed shell starts: cancellation
// comes once the background child's pid is written, and a timeout that
// came before it is tried again with twice the time.
func TestShell_Execute_ProcessGroup(t *testing.T) {
	t.Parallel()
	const started = "sleep 300 & echo $! > bg.tmp && mv bg.tmp bg.pid"
	tests := []struct {
		name    string
		command string
		timeout time.Duration
		cancel  bool
		content string
		exit    int
	}{
		{"ShellExits", started, 0, false, "[exit status 0]", 0},
		{"Timeout", started + "; sleep 300", 100 * time.Millisecond, false, "[killed: timed out after %v]", -1},
		{"Cancelled", started + "; sleep 300", 0, true, "[killed: context canceled]", -1},
		// A child may not leave the group the executor kills.
		{"SetsidRefused", "setsid sleep 300 & echo $! > bg.tmp && mv bg.tmp bg.pid; wait $!", 0, false, "setsid: setsid failed: Operation not permitted\n[exit status 1]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := shellFixture(t, false)
			pidFile := filepath.Join(e.dir, "bg.pid")
			for timeout := tt.timeout; ; timeout *= 2 {
				ctx, cancel := context.WithCancel(context.Background())
				if tt.cancel {
					go func() {
						for readPid(pidFile) == 0 && ctx.Err() == nil {
							time.Sleep(5 * time.Millisecond)
						}
						cancel()
					}()
				}
				start := time.Now()
				r := shellCall(ctx, e.shell(executor.ShellConfig{Timeout: timeout}), map[string]any{"command": tt.command})
				cancel()
				// Far less than the background child's 300 s: nothing
				// waited for it.
				if d := time.Since(start); d > time.Minute {
					t.Errorf("took %v", d)
				}
				want := tt.content
				if strings.Contains(want, "%v") {
					want = fmt.Sprintf(want, timeout)
				}
				if r.Content != want || r.ExitCode != tt.exit || r.IsError != (tt.exit != 0) {
					t.Fatalf("result %+v, want %q exit %d", r, want, tt.exit)
				}
				if readPid(pidFile) != 0 || timeout == 0 || timeout > time.Minute {
					break
				}
				t.Logf("the timeout of %v came before the shell started its child; trying again", timeout)
			}
			pid := readPid(pidFile)
			if pid == 0 {
				t.Fatalf("no background child's pid in bg.pid")
			}
			// By pidfd, and only while the pid is still the `sleep 300`
			// the command started: once it is gone its pid may name
			// another program's process, which must not be killed.
			if fd := pinSleeper(pid); fd >= 0 {
				if !exitedWithin(fd, time.Minute) {
					unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
					t.Errorf("background child %d survived the command", pid)
				}
				unix.Close(fd)
			}
		})
	}
}

func TestShell_Execute_OutputCap(t *testing.T) {
	e := shellFixture(t, false)
	var full strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	r := shellCall(context.Background(), e.shell(executor.ShellConfig{OutputCap: 1000}), map[string]any{"command": "seq 1 20000"})
	s := full.String()
	want := s[:500] + fmt.Sprintf("[... %d bytes omitted ...]\n", len(s)-1000) + s[len(s)-500:] + "[exit status 0]"
	if r.Content != want || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("content %q...%q truncated=%v, want %q...%q", r.Content[:40], r.Content[len(r.Content)-60:], r.Truncated, want[:40], want[len(want)-60:])
	}
	// Under the cap: everything, not truncated.
	r = shellCall(context.Background(), e.shell(executor.ShellConfig{OutputCap: 1000}), map[string]any{"command": "seq 1 3"})
	if r.Content != "1\n2\n3\n[exit status 0]" || r.Truncated {
		t.Errorf("small output %+v", r)
	}
}

func TestShell_Execute_ScrubbedEnv(t *testing.T) {
	t.Setenv("OPX_TEST_API_KEY", "sk-should-not-leak")
	e := shellFixture(t, false)
	r := shellCall(context.Background(), e.shell(executor.ShellConfig{Env: []string{"GOFLAGS=-mod=mod", "LANG=C", "BROKEN"}}), map[string]any{"command": "env"})
	if strings.Contains(r.Content, "sk-should-not-leak") || strings.Contains(r.Content, "OPX_TEST_API_KEY") {
		t.Fatalf("the engine's environment leaked:\n%s", r.Content)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(r.Content, "\n[exit status 0]"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	want := map[string]string{"HOME": e.tmp, "TMPDIR": e.tmp, "LANG": "C", "GOFLAGS": "-mod=mod", "PWD": e.dir}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if !strings.HasPrefix(got["PATH"], executor.CommandPath) {
		t.Errorf("PATH=%q", got["PATH"])
	}
	for k := range got {
		if _, ok := want[k]; !ok && k != "PATH" && k != "OLDPWD" && k != "SHLVL" && k != "_" {
			t.Errorf("unexpected variable %s=%q", k, got[k])
		}
	}
}

func TestShell_Execute_Cwd(t *testing.T) {
	e := shellFixture(t, false)
	os.Symlink(e.outside, filepath.Join(e.dir, "out"))
	os.Symlink("sub", filepath.Join(e.dir, "in"))
	os.WriteFile(filepath.Join(e.dir, "file.txt"), nil, 0o644)
	tests := []struct {
		cwd  string
		want string // the directory, or "" when refused
	}{
		{"", e.dir},
		{".", e.dir},
		{"sub", filepath.Join(e.dir, "sub")},
		{"sub/", filepath.Join(e.dir, "sub")},
		{"in", ""}, // a link: followed only as judged (below)
		{"../", ""},
		{"sub/../..", ""},
		{e.outside, ""},
		{"/etc", ""},
		{"out", ""},
		{"file.txt", ""},
		{"missing", ""},
	}
	s := e.shell(executor.ShellConfig{})
	for _, tt := range tests {
		t.Run(tt.cwd, func(t *testing.T) {
			r := shellCall(context.Background(), s, map[string]any{"command": "pwd -P", "cwd": tt.cwd})
			if tt.want == "" {
				if !r.IsError || !strings.HasPrefix(r.Content, "execute_command: cwd: ") {
					t.Errorf("cwd %q was not refused: %+v", tt.cwd, r)
				}
				return
			}
			if r.Content != tt.want+"\n[exit status 0]" {
				t.Errorf("cwd %q: %q, want %q", tt.cwd, r.Content, tt.want)
			}
		})
	}
	// A cwd through a link runs where Shield judged it to lead
	// (Call.Links), following no symlink.
	b, _ := json.Marshal(map[string]any{"command": "pwd -P", "cwd": "in"})
	r := s.Execute(context.Background(), executor.Call{ID: "c1", Tool: "execute_command", Args: b, Links: map[string]string{"in": "sub"}})
	if want := filepath.Join(e.dir, "sub") + "\n[exit status 0]"; r.Content != want {
		t.Errorf("cwd in, judged as sub: %q, want %q", r.Content, want)
	}
}

func TestShell_Execute_BadArgs(t *testing.T) {
	e := shellFixture(t, false)
	s := e.shell(executor.ShellConfig{})
	tests := []struct {
		name string
		args string
		want string
	}{
		{"NoCommand", `{}`, "command must not be empty"},
		{"Blank", `{"command":"  "}`, "command must not be empty"},
		{"UnknownField", `{"command":"true","shell":"bash"}`, "unknown field"},
		{"ZeroTimeout", `{"command":"true","timeout_seconds":0}`, "at least 1"},
		{"FloatTimeout", `{"command":"true","timeout_seconds":1.5}`, "invalid arguments"},
		{"NUL", `{"command":"true\u0000"}`, "NUL"},
		{"TooLong", `{"command":"` + strings.Repeat("x", executor.MaxCommandBytes+1) + `"}`, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Execute(context.Background(), executor.Call{Tool: "execute_command", Args: json.RawMessage(tt.args)})
			if !r.IsError || !strings.Contains(r.Content, tt.want) {
				t.Errorf("%+v, want an error with %q", r, tt.want)
			}
		})
	}
}

// TestShell_Execute_TimeoutCapped: a call cannot ask for more than
// MaxTimeout.
func TestShell_Execute_TimeoutCapped(t *testing.T) {
	t.Parallel()
	e := shellFixture(t, false)
	s := e.shell(executor.ShellConfig{MaxTimeout: 300 * time.Millisecond})
	r := shellCall(context.Background(), s, map[string]any{"command": "sleep 30", "timeout_seconds": 100})
	if r.Content != "[killed: timed out after 300ms]" || r.ExitCode != -1 {
		t.Errorf("%+v", r)
	}
}

// TestShell_Execute_FailClosed: when the launcher cannot apply the sandbox
// the command does not run, and the result says so.
func TestShell_Execute_FailClosed(t *testing.T) {
	e := shellFixture(t, false)
	marker := filepath.Join(e.dir, "ran")
	tests := []struct {
		name     string
		launcher []string
		want     string
	}{
		{"NoLauncher", []string{}, "no command sandbox is configured"},
		{"MissingWritableDir", append(append([]string(nil), e.launcher...), "--writable", filepath.Join(e.tmp, "missing")), "the command did not run: opx: command sandbox: landlock"},
		{"BadPolicy", []string{e.exe, testLaunchArg, "--workspace", "relative"}, "the command did not run: opx: command sandbox: invalid command policy"},
		{"NoLauncherBinary", []string{filepath.Join(e.tmp, "no-such-opx")}, "cannot start the command launcher"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := shellCall(context.Background(), e.shell(executor.ShellConfig{Launcher: tt.launcher}), map[string]any{"command": "touch " + marker})
			if !r.IsError || !strings.HasPrefix(r.Content, "execute_command: "+tt.want) {
				t.Errorf("%+v, want an error starting %q", r, tt.want)
			}
			if r.ExitCode != 0 {
				// No command ran: an exit status would make the engine
				// record a command that exited, not a tool that failed.
				t.Errorf("exit code %d for a command that did not run, want 0", r.ExitCode)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran")
			}
		})
	}
}

func TestShell_Tools_Definition(t *testing.T) {
	e := shellFixture(t, false)
	defs := e.shell(executor.ShellConfig{MaxTimeout: 5 * time.Minute}).Tools()
	if len(defs) != 1 {
		t.Fatalf("%d tools", len(defs))
	}
	d := defs[0]
	var schema struct {
		Properties map[string]struct {
			Maximum int `json:"maximum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatalf("schema: %v\n%s", err, d.InputSchema)
	}
	if d.Name != "execute_command" || d.Group != executor.GroupShell || !d.Mutating || !d.WorkspaceWide ||
		len(schema.Properties) != 3 || schema.Properties["timeout_seconds"].Maximum != 300 || len(schema.Required) != 1 {
		t.Errorf("definition %+v %+v", d, schema)
	}
}
