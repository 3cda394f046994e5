package sandbox_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// The escape tests run against the real kernel: the test binary re-executes
// itself as a child (childEnv names the mode), the child applies the
// agent's sandbox and tries to get out, and the parent checks every errno.

const childEnv = "OPX_SANDBOX_TEST_CHILD"

// escapeConfig is what the parent planted, passed to the child as JSON.
type escapeConfig struct {
	SSHKey, Ledger, Secret, Workspace, Outside, Symlink, Script, UnixPath string
	Abstract                                                              string
	Parent                                                                int
	AllowedPort, DeniedPort                                               int
	Targets                                                               sandbox.CanaryTargets
}

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "escape":
		os.Exit(escapeChild())
	case "walk", "walk-raw":
		os.Exit(walkChild(os.Getenv(childEnv) == "walk"))
	case "x32":
		os.Exit(x32Child())
	case "caps":
		os.Exit(capsChild())
	case "canary", "canary-unsandboxed":
		os.Exit(canaryChild(os.Getenv(childEnv) == "canary"))
	case "canary-skip":
		// The same start as "canary", minus the sandbox and the probes.
		fmt.Println(`{"status":"skipped"}`)
		os.Exit(0)
	default:
		os.Exit(2)
	}
}

func childConfig() escapeConfig {
	var c escapeConfig
	if err := json.Unmarshal([]byte(os.Getenv("OPX_SANDBOX_TEST_CFG")), &c); err != nil {
		fmt.Fprintln(os.Stderr, "child config:", err)
		os.Exit(3)
	}
	return c
}

// outcome names an error the way the parent expects it.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

func rawErr(r, _ uintptr, errno syscall.Errno) error {
	if errno != 0 {
		return errno
	}
	return nil
}

func socketErr(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// dialErr connects and closes at once: the error is the probe's result.
func dialErr(network, addr string) error {
	conn, err := net.Dial(network, addr)
	if err == nil {
		conn.Close()
	}
	return err
}

// bindLoopbackTCPErr binds a TCP socket to 127.0.0.1 (any port).
func bindLoopbackTCPErr() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
}

func escapeChild() int {
	c := childConfig()
	// Start the runtime's network poller first, as the real agent has by
	// then: ApplySelf must leave it working (allowed_port below uses it).
	r, w, err := os.Pipe()
	if err != nil || r.SetReadDeadline(time.Now().Add(time.Hour)) != nil {
		fmt.Fprintln(os.Stderr, "poller:", err)
		return 5
	}
	r.Close()
	w.Close()
	if err := sandbox.New().ApplySelf(sandbox.Config{ConnectTCP: []uint16{uint16(c.AllowedPort)}}); err != nil {
		fmt.Fprintln(os.Stderr, "ApplySelf:", err)
		return 4
	}
	// Let the parent inspect every thread's status, then attack.
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')

	ppid := strconv.Itoa(c.Parent)
	res := map[string]string{}
	try := func(name string, err error) { res[name] = outcome(err) }
	readFile := func(p string) error { _, err := os.ReadFile(p); return err }

	try("read_ssh_key", readFile(c.SSHKey))
	try("read_ledger", readFile(c.Ledger))
	try("write_outside", os.WriteFile(filepath.Join(c.Outside, "escaped"), []byte("x"), 0o600))
	try("write_workspace", os.WriteFile(filepath.Join(c.Workspace, "escaped"), []byte("x"), 0o600))
	try("symlink_out", readFile(c.Symlink))
	try("hardlink_out", os.Link(c.Secret, filepath.Join(c.Workspace, "hardlink")))
	try("rename_out", os.Rename(filepath.Join(c.Workspace, "README.md"), filepath.Join(c.Outside, "README.md")))
	try("proc_parent_root", func() error { _, err := os.ReadDir("/proc/" + ppid + "/root"); return err }())
	try("proc_parent_mem", func() error {
		f, err := os.Open("/proc/" + ppid + "/mem")
		if err == nil {
			f.Close()
		}
		return err
	}())
	try("proc_parent_environ", readFile("/proc/"+ppid+"/environ"))
	try("ptrace_parent", unix.PtraceAttach(c.Parent))
	try("kill_parent", unix.Kill(c.Parent, 0))
	try("unix_abstract", dialErr("unix", c.Abstract))
	try("unix_pathname", dialErr("unix", c.UnixPath))
	try("tcp_denied_port", dialErr("tcp", "127.0.0.1:"+strconv.Itoa(c.DeniedPort)))
	try("tcp_bind", bindLoopbackTCPErr())
	try("mptcp", socketErr(unix.AF_INET, unix.SOCK_STREAM, 262))
	try("udp", socketErr(unix.AF_INET, unix.SOCK_DGRAM, 0))
	try("raw", socketErr(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP))
	try("netlink", socketErr(unix.AF_NETLINK, unix.SOCK_RAW, 0))
	try("execve_sh", syscall.Exec("/bin/sh", []string{"sh", "-c", "true"}, nil))
	try("execve_shebang", syscall.Exec(c.Script, []string{c.Script}, nil))
	try("memfd_create", func() error {
		fd, err := unix.MemfdCreate("x", 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	try("execveat", func() error {
		empty := []byte{0}
		argv := []*byte{nil}
		return rawErr(unix.Syscall6(unix.SYS_EXECVEAT, 0, uintptr(unsafe.Pointer(&empty[0])), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&argv[0])), unix.AT_EMPTY_PATH, 0))
	}())
	try("fork", func() error {
		r, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0)
		if errno == 0 && r == 0 {
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0) // the child of a fork that should not have happened
		}
		return rawErr(r, 0, errno)
	}())
	try("clone3", func() error {
		var args [88]byte
		return rawErr(unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args[0])), uintptr(len(args)), 0))
	}())
	try("io_uring_setup", func() error {
		var params [120]byte
		r, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno == 0 {
			unix.Close(int(r))
		}
		return rawErr(r, 0, errno)
	}())
	try("inherited_fd", func() error { var b [1]byte; _, err := unix.Read(3, b[:]); return err }())
	privilegeProbes(try, c.DeniedPort)
	try("allowed_port", dialErr("tcp", "127.0.0.1:"+strconv.Itoa(c.AllowedPort)))
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func canaryChild(apply bool) int {
	c := childConfig()
	sb := sandbox.New()
	if apply {
		if err := sb.ApplySelf(sandbox.Config{ConnectTCP: []uint16{uint16(c.AllowedPort)}}); err != nil {
			fmt.Fprintln(os.Stderr, "ApplySelf:", err)
			return 4
		}
	}
	json.NewEncoder(os.Stdout).Encode(sb.VerifyCanary(c.Targets))
	return 0
}

// needSandbox skips when the kernel has no sandbox, except under CI=true
// where that is a failure.
func needSandbox(t *testing.T) {
	t.Helper()
	if sb := sandbox.New(); !sb.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the kernel sandbox is unavailable: %+v", sb.Probe())
		}
		t.Skipf("the kernel sandbox is unavailable: %+v", sb.Probe())
	}
}

// plant creates the parent's secrets and fixtures.
func plant(t testing.TB) (escapeConfig, *os.File) {
	t.Helper()
	root := t.TempDir()
	c := escapeConfig{
		SSHKey: filepath.Join(root, "home", ".ssh", "id_rsa"), Ledger: filepath.Join(root, "state", "ledger.db"),
		Secret: filepath.Join(root, "secret.txt"), Workspace: filepath.Join(root, "ws"), Outside: filepath.Join(root, "outside"),
		Script: filepath.Join(root, "ws", "run.sh"), Parent: os.Getpid(),
	}
	for _, d := range []string{filepath.Dir(c.SSHKey), filepath.Dir(c.Ledger), c.Workspace, c.Outside} {
		os.MkdirAll(d, 0o700)
	}
	for p, content := range map[string]string{c.SSHKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n", c.Ledger: "ledger", c.Secret: "secret",
		filepath.Join(c.Workspace, "README.md"): "readme", c.Script: "#!/bin/sh\necho escaped\n"} {
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c.Symlink = filepath.Join(c.Workspace, "link")
	os.Symlink(c.Secret, c.Symlink)
	c.Targets = sandbox.CanaryTargets{ReadFile: c.Secret, WriteDir: c.Outside, SpawnPath: "/proc/self/exe", SpawnArgs: []string{"-test.run=^$"}}
	// Listeners: one the sandbox allows, one it must not reach, a unix socket.
	for _, port := range []*int{&c.AllowedPort, &c.DeniedPort} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				conn.Close()
			}
		}()
		*port = l.Addr().(*net.TCPAddr).Port
	}
	c.Targets.ConnectAddr = "127.0.0.1:" + strconv.Itoa(c.DeniedPort)
	c.Abstract = fmt.Sprintf("@opx-sandbox-test-%d", os.Getpid())
	al, err := net.Listen("unix", c.Abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	c.UnixPath = filepath.Join(root, "engine.sock")
	ul, err := net.Listen("unix", c.UnixPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	secret, err := os.Open(c.Secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { secret.Close() })
	return c, secret
}

func newAvailable() bool { return sandbox.New().Available() }

func child(t testing.TB, mode string, c escapeConfig) *exec.Cmd {
	b, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "OPX_SANDBOX_TEST_CFG="+string(b))
	return cmd
}

func TestEscape(t *testing.T) {
	needSandbox(t)
	c, secret := plant(t)
	cmd := child(t, "escape", c)
	cmd.ExtraFiles = []*os.File{secret} // fd 3 in the child: must not survive ApplySelf
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child: %q %v\n%s", line, err, stderr.String())
	}
	// Every thread of the sandboxed child is filtered, has no_new_privs
	// and holds no capability.
	checkNoCapabilities(t, cmd.Process.Pid)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", cmd.Process.Pid))
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "Seccomp:\t2\n") || !strings.Contains(string(b), "NoNewPrivs:\t1\n") {
			t.Errorf("%s lacks Seccomp: 2 or NoNewPrivs: 1", task)
		}
	}
	stdin.Write([]byte("go\n"))
	var got map[string]string
	if err := json.NewDecoder(out).Decode(&got); err != nil {
		t.Fatalf("child results: %v\n%s", err, stderr.String())
	}
	want := map[string]string{
		"read_ssh_key": "EACCES", "read_ledger": "EACCES", "write_outside": "EACCES", "write_workspace": "EACCES",
		"symlink_out": "EACCES", "hardlink_out": "EPERM", "rename_out": "EPERM",
		"proc_parent_root": "EACCES", "proc_parent_mem": "EACCES", "proc_parent_environ": "EACCES",
		"ptrace_parent": "EPERM", "kill_parent": "EPERM",
		"unix_abstract": "EPERM", "unix_pathname": "EPERM", "tcp_denied_port": "EACCES", "tcp_bind": "EPERM",
		"mptcp": "EPERM", "udp": "EPERM", "raw": "EPERM", "netlink": "EPERM",
		"execve_sh": "EPERM", "execve_shebang": "EPERM", "memfd_create": "EPERM", "execveat": "EPERM",
		"fork": "EPERM", "clone3": "ENOSYS", "io_uring_setup": "EPERM", "inherited_fd": "EBADF",
		"allowed_port": "ok",
	}
	for name, w := range privilegeWant {
		want[name] = w
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("untested attack %s: %s", name, got[name])
		}
	}
	// Nothing was written where the child tried.
	for _, p := range []string{filepath.Join(c.Outside, "escaped"), filepath.Join(c.Workspace, "escaped"), filepath.Join(c.Workspace, "hardlink")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists: the child wrote it", p)
		}
	}
}

// TestCanary_Sandboxed runs the probes in a sandboxed child (every probe
// blocked) and in an unsandboxed one (every probe fails), which proves the
// targets are real.
func TestCanary_Sandboxed(t *testing.T) {
	needSandbox(t)
	c, _ := plant(t)
	run := func(mode string) sandbox.CanaryResult {
		out, err := child(t, mode, c).Output()
		if err != nil {
			t.Fatalf("%s child: %v", mode, err)
		}
		var r sandbox.CanaryResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		return r
	}
	r := run("canary")
	if r.Status != sandbox.StatusSandboxed || !r.Verified || r.Blocked() != 4 || r.Mechanism != "landlock" {
		t.Errorf("sandboxed canary: %+v", r)
	}
	u := run("canary-unsandboxed")
	if u.Status != sandbox.StatusUnsandboxed || u.Failed() != 4 {
		t.Errorf("unsandboxed canary: %+v", u)
	}
	for _, p := range u.Probes {
		if !strings.HasPrefix(p.Error, "sandbox did not block") {
			t.Errorf("unsandboxed probe %s failed for another reason: %s", p.Name, p.Error)
		}
	}
}

func TestProbe_Kernel(t *testing.T) {
	needSandbox(t)
	c := sandbox.New().Probe()
	if c.Mechanism != "landlock" || c.LandlockABI < 1 || !c.Filesystem || !c.Seccomp {
		t.Errorf("capabilities %+v", c)
	}
	if os.Getenv("CI") == "true" && (!c.Network || !c.Scoping) {
		t.Errorf("CI kernel lacks Landlock network or scoping (ABI %d)", c.LandlockABI)
	}
}
