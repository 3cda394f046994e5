package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// The command sandbox is tested on the real kernel the way the engine
// uses it: the test binary re-executes itself as the launcher
// (cmdLaunchArg: ExecSandboxed, like `opx internal-sandbox-exec`), which
// confines itself and execs the test binary once more as the command
// (cmdProbeArg). The probe runs after the exec, as any command would, tries
// what the policy allows and what it forbids, and reports each errno.
// The modes are chosen in init, before TestMain, so this file needs no
// change to the package's TestMain.

const (
	cmdLaunchArg = "-opx-command-launch"
	cmdProbeArg  = "-opx-command-probe"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case cmdLaunchArg:
		p, argv, err := sandbox.ParseCommandArgs(os.Args[2:])
		if err == nil {
			err = sandbox.ExecSandboxed(p, argv, os.Environ())
		}
		fmt.Fprintf(os.Stderr, "opx: %v\n", err)
		syscall.Exit(1)
	case cmdProbeArg:
		// syscall.Exit, not os.Exit: the race runtime sleeps a second at
		// exit, and a sandboxed child cannot turn that off (it reads
		// GORACE from /proc/self/environ, which commands may not read).
		syscall.Exit(commandProbe(os.Args[2]))
	}
}

// probeConfig is what the parent planted, passed to the probe as JSON.
type probeConfig struct {
	Workspace, Writable, ReadOnly, Home, Sibling, Secret, Tmp string
	Parent, Port                                              int
	Abstract                                                  string
	RootOnly                                                  []string // files beneath /etc others may not read
}

func rawErrno(_, _ uintptr, errno syscall.Errno) error {
	if errno != 0 {
		return errno
	}
	return nil
}

func commandProbe(cfgJSON string) int {
	// First, before the runtime opens anything: nothing the launcher
	// inherited may survive (the parent put a file at descriptor 3).
	var st unix.Stat_t
	inherited := unix.Fstat(3, &st)
	var c probeConfig
	if err := json.Unmarshal([]byte(cfgJSON), &c); err != nil {
		fmt.Fprintln(os.Stderr, "probe config:", err)
		return 3
	}
	res := map[string]string{}
	try := func(name string, err error) { res[name] = outcome(err) }
	write := func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) }
	read := func(p string) error { _, err := os.ReadFile(p); return err }
	ws := func(p string) string { return filepath.Join(c.Workspace, p) }

	try("inherited_fd", inherited)
	try("env_exact", func() error {
		if os.Getenv("OPX_PROBE_MARK") != "1" || len(os.Environ()) != 2 {
			return fmt.Errorf("environment %q", os.Environ())
		}
		return nil
	}())
	try("nnp_seccomp", func() error {
		nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		if err != nil {
			return err
		}
		mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
		if err == nil && (nnp != 1 || mode != 2) {
			err = fmt.Errorf("no_new_privs %d, seccomp mode %d", nnp, mode)
		}
		return err
	}())

	// The workspace and the writable directories: everything.
	try("ws_create", write(ws("new.txt")))
	try("ws_append", func() error {
		f, err := os.OpenFile(ws("existing.txt"), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString("more")
			f.Close()
		}
		return err
	}())
	try("ws_truncate", os.Truncate(ws("existing.txt"), 1))
	try("ws_mkdir", os.Mkdir(ws("dir"), 0o755))
	try("ws_rename_across_dirs", os.Rename(ws("new.txt"), ws("dir/new.txt")))
	try("ws_symlink", os.Symlink("new.txt", ws("dir/link")))
	try("ws_remove", os.Remove(ws("dir/new.txt")))
	try("ws_rmdir", func() error { os.Remove(ws("dir/link")); return os.Remove(ws("dir")) }())
	try("writable_create", write(filepath.Join(c.Writable, "cache")))
	try("readonly_read", read(filepath.Join(c.ReadOnly, "tool.txt")))
	try("readonly_write", write(filepath.Join(c.ReadOnly, "x")))
	try("system_read", read("/etc/passwd"))
	try("system_exec", exec.Command("/bin/true").Run())
	try("dev_null_write", write("/dev/null"))
	try("dev_urandom_read", func() error {
		f, err := os.Open("/dev/urandom")
		if err == nil {
			_, err = f.Read(make([]byte, 8))
			f.Close()
		}
		return err
	}())
	try("proc_cpuinfo_read", read("/proc/cpuinfo"))
	try("proc_sys_read", read("/proc/sys/vm/overcommit_memory"))
	try("dev_stderr_write", func() error {
		f, err := os.OpenFile("/dev/stderr", os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		return err
	}())

	// Everything else: nothing.
	try("home_read", read(filepath.Join(c.Home, ".ssh", "id_ed25519")))
	try("home_write", write(filepath.Join(c.Home, "x")))
	try("tmp_write", write(c.Tmp))
	try("sibling_write", write(filepath.Join(c.Sibling, "x")))
	try("secret_read", read(c.Secret))
	try("symlink_out_read", read(ws("out")))
	try("rename_out", os.Rename(ws("existing.txt"), filepath.Join(c.Sibling, "existing.txt")))
	try("hardlink_in", os.Link(c.Secret, ws("hardlink")))
	try("proc_self_status", read("/proc/self/status"))
	try("proc_parent_environ", read("/proc/"+strconv.Itoa(c.Parent)+"/environ"))
	try("proc_parent_maps", read("/proc/"+strconv.Itoa(c.Parent)+"/maps"))

	// Network.
	try("tcp_connect", dialErr("tcp", "127.0.0.1:"+strconv.Itoa(c.Port)))
	try("tcp_bind", bindLoopbackTCPErr())
	try("tcp_fastopen", fastOpenErr(c.Port))
	try("tcp_listen_autobind", listenAutobindErr())
	try("udp_socket", socketErr(unix.AF_INET, unix.SOCK_DGRAM, 0))
	try("mptcp_socket", socketErr(unix.AF_INET, unix.SOCK_STREAM, 262))
	try("netlink_socket", socketErr(unix.AF_NETLINK, unix.SOCK_RAW, 0))
	try("unix_socket", socketErr(unix.AF_UNIX, unix.SOCK_STREAM, 0))
	try("socketpair", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}())
	try("unix_abstract_connect", dialErr("unix", c.Abstract))

	// Other processes, namespaces, kernel surface.
	try("kill_parent", unix.Kill(c.Parent, 0))
	try("ptrace_parent", unix.PtraceAttach(c.Parent))
	try("ptrace_traceme", rawErrno(unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)))
	try("unshare_user", unix.Unshare(unix.CLONE_NEWUSER))
	try("unshare_net", unix.Unshare(unix.CLONE_NEWNET))
	try("setns", unix.Setns(0, 0))
	try("clone_newuser", func() error {
		r, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.CLONE_NEWUSER|unix.SIGCHLD), 0, 0)
		if errno == 0 && r == 0 {
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
		return rawErrno(r, 0, errno)
	}())
	try("clone_newpid", func() error {
		r, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.CLONE_NEWPID|unix.SIGCHLD), 0, 0)
		if errno == 0 && r == 0 {
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
		return rawErrno(r, 0, errno)
	}())
	try("fork", func() error {
		r, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0)
		if errno == 0 && r == 0 {
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
		if errno == 0 {
			var ws unix.WaitStatus
			unix.Wait4(int(r), &ws, 0, nil)
		}
		return rawErrno(r, 0, errno)
	}())
	try("clone3", func() error {
		var args [88]byte
		return rawErrno(unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args[0])), uintptr(len(args)), 0))
	}())
	try("mount", unix.Mount("none", c.Workspace, "tmpfs", 0, ""))
	try("bpf", rawErrno(unix.Syscall(unix.SYS_BPF, 0, 0, 0)))
	try("keyctl", rawErrno(unix.Syscall(unix.SYS_KEYCTL, 0, 0, 0)))
	try("io_uring_setup", func() error {
		var params [120]byte
		r, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno == 0 {
			unix.Close(int(r))
		}
		return rawErrno(r, 0, errno)
	}())
	try("userfaultfd", rawErrno(unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)))
	try("perf_event_open", rawErrno(unix.Syscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)))
	try("kexec_load", rawErrno(unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)))
	try("init_module", rawErrno(unix.Syscall(unix.SYS_INIT_MODULE, 0, 0, 0)))
	try("tiocsti", func() error {
		b := byte('x')
		return rawErrno(unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&b))))
	}())
	try("tioclinux", func() error {
		b := byte(0)
		return rawErrno(unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCLINUX, uintptr(unsafe.Pointer(&b))))
	}())
	// No set-user-ID or set-group-ID program, however the mode is set.
	try("chmod_setuid", unix.Chmod(ws("existing.txt"), 0o4755))
	try("chmod_setgid", unix.Fchmodat(unix.AT_FDCWD, ws("existing.txt"), 0o2755, 0))
	try("create_setuid", func() error {
		fd, err := unix.Open(ws("suid"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	try("mkdir_setgid", unix.Mkdir(ws("sgid"), 0o2755))
	try("mknod_setuid", unix.Mknod(ws("suid-node"), unix.S_IFREG|0o4755, 0))
	try("openat2", func() error {
		fd, err := unix.Openat2(unix.AT_FDCWD, ws("o2"), &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o4755})
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	try("chmod_plain", os.Chmod(ws("existing.txt"), 0o755))

	// Root's powers: none, after exec too (the probe was exec'd).
	try("caps_zero", func() error {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return err
		}
		if data != [2]unix.CapUserData{} {
			return fmt.Errorf("capabilities %+v", data)
		}
		amb, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_SYS_ADMIN, 0, 0)
		if err != nil || amb != 0 {
			return fmt.Errorf("ambient CAP_SYS_ADMIN: %d %v", amb, err)
		}
		return nil
	}())
	try("bounding_empty", func() error {
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil || in != 0 {
				return fmt.Errorf("capability %d in the bounding set: %d %v", c, in, err)
			}
		}
		return nil
	}())
	try("securebits_locked", func() error {
		bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		if err == nil && bits&0x3 != 0x3 {
			err = fmt.Errorf("securebits %#x: NOROOT not locked", bits)
		}
		return err
	}())
	try("reboot", rawErrno(unix.Syscall6(unix.SYS_REBOOT, 0, 0, 0, 0, 0, 0)))
	try("syslog_read", func() error {
		buf := make([]byte, 4096)
		return rawErrno(unix.Syscall(unix.SYS_SYSLOG, unix.SYSLOG_ACTION_READ_ALL, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))
	}())
	try("chroot", unix.Chroot(c.Workspace))
	try("name_to_handle_at", func() error { _, _, err := unix.NameToHandleAt(unix.AT_FDCWD, "/etc/passwd", 0); return err }())
	try("open_by_handle_at", rawErrno(unix.Syscall(unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(0), 0, unix.O_RDONLY)))
	try("finit_module", rawErrno(unix.Syscall(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0)))
	try("swapon", rawErrno(unix.Syscall(unix.SYS_SWAPON, 0, 0, 0)))
	try("sethostname", unix.Sethostname([]byte("opx-escaped")))
	try("settimeofday", rawErrno(unix.Syscall(unix.SYS_SETTIMEOFDAY, 0, 0, 0)))
	try("kcmp_parent", rawErrno(unix.Syscall6(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(c.Parent), 0, 0, 0, 0)))
	try("shadow_read", read("/etc/shadow"))
	try("gshadow_read", read("/etc/gshadow"))
	try("etc_hosts_read", read("/etc/hosts"))
	try("etc_ssl_certs_read", func() error { _, err := os.ReadDir("/etc/ssl/certs"); return err }())
	try("etc_root_only", func() error {
		for _, p := range c.RootOnly {
			if err := read(p); !errors.Is(err, unix.EACCES) {
				return fmt.Errorf("%s: %v", p, err)
			}
		}
		return nil
	}())
	try("proc_sys_fastopen_key", read("/proc/sys/net/ipv4/tcp_fastopen_key"))
	try("setuid_root", rawErrno(unix.RawSyscall(unix.SYS_SETUID, 0, 0, 0)))
	// The engine's process, same uid: its limits, priority, CPUs.
	try("prlimit_parent", func() error {
		var old unix.Rlimit
		if err := unix.Prlimit(c.Parent, unix.RLIMIT_CORE, nil, &old); err != nil {
			return err
		}
		return unix.Prlimit(c.Parent, unix.RLIMIT_CORE, &old, nil) // unchanged
	}())
	try("prlimit_self", func() error {
		var old unix.Rlimit
		return unix.Prlimit(0, unix.RLIMIT_CORE, nil, &old)
	}())
	try("setpriority_parent", func() error {
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, c.Parent)
		if err != nil {
			return err
		}
		return unix.Setpriority(unix.PRIO_PROCESS, c.Parent, 20-prio) // unchanged
	}())
	try("setpriority_user", unix.Setpriority(unix.PRIO_USER, 0, 0))
	try("setpriority_self", unix.Setpriority(unix.PRIO_PROCESS, 0, 0))
	try("sched_setaffinity_parent", func() error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(c.Parent, &set); err != nil {
			return err
		}
		return unix.SchedSetaffinity(c.Parent, &set) // unchanged
	}())
	try("sched_setaffinity_self", func() error {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return err
		}
		return unix.SchedSetaffinity(0, &set)
	}())
	try("ioprio_set_parent", rawErrno(unix.Syscall(unix.SYS_IOPRIO_SET, 1, uintptr(c.Parent), 0)))
	try("sysv_shmget", rawErrno(unix.Syscall(unix.SYS_SHMGET, unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)))
	// Every syscall of the deny-list, with an invalid descriptor or pid
	// and null pointers: refused before it runs.
	try("denied_all", func() error {
		var wrong []string
		for _, nr := range sandbox.CommandDenied {
			if _, _, errno := unix.RawSyscall6(uintptr(nr), ^uintptr(0), 0, 0, 0, 0, 0); errno != unix.EPERM {
				wrong = append(wrong, fmt.Sprintf("%d: %s", nr, unix.ErrnoName(errno)))
			}
		}
		if wrong != nil {
			return fmt.Errorf("not refused: %s", strings.Join(wrong, ", "))
		}
		return nil
	}())
	try("setsid", func() error { _, err := unix.Setsid(); return err }())
	try("setpgid", unix.Setpgid(0, 0))
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

// needCommandSandbox skips when the kernel cannot enforce a command
// policy without network, except under CI=true where that is a failure.
func needCommandSandbox(t *testing.T) {
	t.Helper()
	needSandbox(t)
	if c := sandbox.New().Probe(); !c.Network {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Landlock ABI %d cannot restrict TCP: %+v", c.LandlockABI, c)
		}
		t.Skipf("Landlock ABI %d cannot restrict TCP", c.LandlockABI)
	}
}

// plantCommand builds a workspace and the things around it a command must
// not reach, and a listener it may or may not connect to.
func plantCommand(t *testing.T) (probeConfig, *os.File) {
	t.Helper()
	root := t.TempDir()
	c := probeConfig{
		Workspace: filepath.Join(root, "ws"), Writable: filepath.Join(root, "cache"), ReadOnly: filepath.Join(root, "tools"),
		Home: filepath.Join(root, "home"), Sibling: filepath.Join(root, "sibling"), Secret: filepath.Join(root, "secret.txt"),
		Tmp: filepath.Join("/tmp", fmt.Sprintf("opx-command-test-%d", os.Getpid())), Parent: os.Getpid(),
		Abstract: fmt.Sprintf("@opx-command-test-%d", os.Getpid()),
	}
	for _, d := range []string{c.Workspace, c.Writable, c.ReadOnly, filepath.Join(c.Home, ".ssh"), c.Sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{filepath.Join(c.Workspace, "existing.txt"): "existing", c.Secret: "secret",
		filepath.Join(c.ReadOnly, "tool.txt"): "tool", filepath.Join(c.Home, ".ssh", "id_ed25519"): "key"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(c.Secret, filepath.Join(c.Workspace, "out")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(c.Tmp) })
	filepath.WalkDir("/etc", func(p string, d fs.DirEntry, err error) error {
		if info, ierr := os.Lstat(p); err == nil && ierr == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o004 == 0 {
			c.RootOnly = append(c.RootOnly, p)
		}
		return nil
	})
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
	c.Port = l.Addr().(*net.TCPAddr).Port
	al, err := net.Listen("unix", c.Abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	secret, err := os.Open(c.Secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { secret.Close() })
	return c, secret
}

// launch runs the probe through the launcher under p.
func launch(t *testing.T, p sandbox.CommandPolicy, c probeConfig, extra *os.File) map[string]string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	defer sandbox.PinCommandPaths()() // as the engine does
	cfg, _ := json.Marshal(c)
	args := append(append([]string{cmdLaunchArg}, p.Args()...), "--", exe, cmdProbeArg, string(cfg))
	cmd := exec.Command(exe, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "OPX_PROBE_MARK=1"}
	cmd.Dir = c.Workspace
	cmd.ExtraFiles = []*os.File{extra}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("probe said %q: %v\n%s", out, err, stderr.String())
	}
	return got
}

// TestExecSandboxed_Kernel runs the probe under a policy without and with
// the network and checks every errno: EACCES where Landlock decides,
// EPERM where the seccomp filter (or Landlock's scoping) does, ENOSYS for
// clone3, which libc then retries as clone.
func TestExecSandboxed_Kernel(t *testing.T) {
	needCommandSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Unix sockets are allowed only where Landlock (ABI 9) confines
	// connecting to pathname ones.
	unixSocket := "EPERM"
	if sandbox.New().Probe().LandlockABI >= 9 {
		unixSocket = "ok"
	}
	// The bounding set and the securebits can be changed only by a holder
	// of CAP_SETPCAP, as root is; /etc/shadow is unreadable to others by
	// its mode, to root because it is not granted; setuid(0) is a no-op
	// for root.
	bounding, securebits, secret, setuid := "ok", "ok", "EACCES", "ok"
	if ownCapabilities(t, "CapEff")&(1<<unix.CAP_SETPCAP) == 0 {
		securebits = "error: securebits 0x0: NOROOT not locked"
		if ownCapabilities(t, "CapBnd") != 0 {
			bounding = "error: capability 0 in the bounding set: 1 <nil>"
		}
	}
	if os.Geteuid() != 0 {
		setuid = "EPERM"
	}
	certs := "ok" // CA certificates: world-readable, so granted whole
	if _, err := os.Stat("/etc/ssl/certs"); err != nil {
		certs = "ENOENT"
	}
	common := map[string]string{
		"inherited_fd": "EBADF", "env_exact": "ok", "nnp_seccomp": "ok",
		"ws_create": "ok", "ws_append": "ok", "ws_truncate": "ok", "ws_mkdir": "ok", "ws_rename_across_dirs": "ok",
		"ws_symlink": "ok", "ws_remove": "ok", "ws_rmdir": "ok", "writable_create": "ok",
		"readonly_read": "ok", "readonly_write": "EACCES", "system_read": "ok", "system_exec": "ok",
		"dev_null_write": "ok", "dev_urandom_read": "ok", "dev_stderr_write": "ok", "proc_cpuinfo_read": "ok", "proc_sys_read": "ok",
		"home_read": "EACCES", "home_write": "EACCES", "tmp_write": "EACCES", "sibling_write": "EACCES",
		"secret_read": "EACCES", "symlink_out_read": "EACCES", "rename_out": "EACCES",
		// Linking in from outside is a "refer" Landlock refuses with EXDEV.
		"hardlink_in":      "EXDEV",
		"proc_self_status": "EACCES", "proc_parent_environ": "EACCES", "proc_parent_maps": "EACCES",
		"tcp_bind": "EACCES", "tcp_listen_autobind": "EPERM", "netlink_socket": "EPERM", "unix_socket": unixSocket, "socketpair": "ok",
		"unix_abstract_connect": "EPERM",
		"kill_parent":           "EPERM", "ptrace_parent": "EPERM", "ptrace_traceme": "EPERM",
		"unshare_user": "EPERM", "unshare_net": "EPERM", "setns": "EPERM",
		"clone_newuser": "EPERM", "clone_newpid": "EPERM", "fork": "ok", "clone3": "ENOSYS",
		"mount": "EPERM", "bpf": "EPERM", "keyctl": "EPERM", "io_uring_setup": "EPERM", "userfaultfd": "EPERM",
		"perf_event_open": "EPERM", "kexec_load": "EPERM", "init_module": "EPERM",
		"tiocsti": "EPERM", "tioclinux": "EPERM", "setsid": "EPERM", "setpgid": "EPERM",
		"caps_zero": "ok", "bounding_empty": bounding, "securebits_locked": securebits,
		"reboot": "EPERM", "syslog_read": "EPERM", "chroot": "EPERM", "name_to_handle_at": "EPERM",
		"open_by_handle_at": "EPERM", "finit_module": "EPERM", "swapon": "EPERM", "sethostname": "EPERM",
		"settimeofday": "EPERM", "kcmp_parent": "EPERM",
		"shadow_read": secret, "gshadow_read": secret, "etc_hosts_read": "ok", "setuid_root": setuid,
		"etc_ssl_certs_read": certs, "etc_root_only": "ok", "proc_sys_fastopen_key": "EACCES",
		"prlimit_parent": "EPERM", "prlimit_self": "ok", "setpriority_parent": "EPERM", "setpriority_user": "EPERM",
		"setpriority_self": "ok", "sched_setaffinity_parent": "EPERM", "sched_setaffinity_self": "ok",
		"ioprio_set_parent": "EPERM", "sysv_shmget": "EPERM", "denied_all": "ok",
		"chmod_setuid": "EPERM", "chmod_setgid": "EPERM", "create_setuid": "EPERM", "mkdir_setgid": "EPERM",
		"mknod_setuid": "EPERM", "openat2": "ENOSYS", "chmod_plain": "ok",
	}
	tests := []struct {
		name    string
		network bool
		want    map[string]string // on top of common
	}{
		{"NoNetwork", false, map[string]string{"tcp_connect": "EACCES", "tcp_fastopen": "EPERM", "udp_socket": "EPERM", "mptcp_socket": "EPERM"}},
		// mptcp_socket depends on the kernel's MPTCP support: not checked.
		{"Network", true, map[string]string{"tcp_connect": "ok", "tcp_fastopen": "ok", "udp_socket": "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, secret := plantCommand(t)
			p := sandbox.CommandPolicy{Workspace: c.Workspace, Writable: []string{c.Writable},
				ReadOnly: []string{filepath.Dir(exe), c.ReadOnly}, AllowNetwork: tt.network}
			got := launch(t, p, c, secret)
			want := map[string]string{}
			for k, v := range common {
				want[k] = v
			}
			for k, v := range tt.want {
				want[k] = v
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %s, want %s", name, got[name], w)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok && name != "mptcp_socket" {
					t.Errorf("unchecked probe %s: %s", name, got[name])
				}
			}
			// What was refused left no trace.
			for _, p := range []string{filepath.Join(c.Workspace, "suid"), filepath.Join(c.Workspace, "sgid"),
				filepath.Join(c.Workspace, "suid-node"), filepath.Join(c.Workspace, "o2"), c.Tmp, filepath.Join(c.Home, "x"), filepath.Join(c.Sibling, "x"), filepath.Join(c.Sibling, "existing.txt"),
				filepath.Join(c.ReadOnly, "x"), filepath.Join(c.Workspace, "hardlink")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists: the command wrote it", p)
				}
			}
			if b, err := os.ReadFile(filepath.Join(c.Writable, "cache")); err != nil || string(b) != "x" {
				t.Errorf("writable dir: %q %v", b, err)
			}
		})
	}
}

// TestExecSandboxed_Refused checks that the launcher reports, with
// CommandErrorPrefix, a policy it cannot apply or a command it cannot
// find, and runs nothing.
func TestExecSandboxed_Refused(t *testing.T) {
	needCommandSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"RelativeWorkspace", []string{"--workspace", "ws", "--", "/bin/sh", "-c", "touch " + marker}, "invalid command policy"},
		{"MissingWorkspace", []string{"--workspace", filepath.Join(ws, "nope"), "--", "/bin/sh", "-c", "touch " + marker}, "landlock"},
		{"NoSuchCommand", []string{"--workspace", ws, "--", "opx-no-such-command"}, "command not found"},
		{"NoDash", []string{"--workspace", ws, "/bin/true"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(exe, append([]string{cmdLaunchArg}, tt.args...)...)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v\n%s", err, out)
			}
			if !strings.HasPrefix(string(out), "opx: "+sandbox.CommandErrorPrefix) || !strings.Contains(string(out), tt.want) {
				t.Errorf("output %q, want the prefix and %q", out, tt.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran")
			}
		})
	}
}

func TestParseCommandArgs_RoundTrip(t *testing.T) {
	p := sandbox.CommandPolicy{Workspace: "/w,1", WorkspaceReadOnly: true, Writable: []string{"/tmp/a", "/c"}, ReadOnly: []string{"/go"}, AllowNetwork: true}
	got, argv, err := sandbox.ParseCommandArgs(append(p.Args(), "--", "sh", "-c", "--workspace /x"))
	if err != nil || !reflect.DeepEqual(got, p) || !reflect.DeepEqual(argv, []string{"sh", "-c", "--workspace /x"}) {
		t.Errorf("got %+v %q %v", got, argv, err)
	}
	got, _, err = sandbox.ParseCommandArgs([]string{"--workspace=/w", "--read-only=/r", "--", "x"})
	if err != nil || got.Workspace != "/w" || !reflect.DeepEqual(got.ReadOnly, []string{"/r"}) {
		t.Errorf("--flag=value: %+v %v", got, err)
	}
}

func TestParseCommandArgs_Invalid(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"Empty", nil},
		{"NoCommand", []string{"--workspace", "/w", "--"}},
		{"NoWorkspace", []string{"--", "sh"}},
		{"RelativeWorkspace", []string{"--workspace", "w", "--", "sh"}},
		{"UncleanWritable", []string{"--workspace", "/w", "--writable", "/a/../b", "--", "sh"}},
		{"RelativeReadOnly", []string{"--workspace", "/w", "--read-only", "r", "--", "sh"}},
		{"MissingValue", []string{"--workspace"}},
		{"TwoWorkspaces", []string{"--workspace", "/a", "--workspace", "/b", "--", "sh"}},
		{"UnknownFlag", []string{"--workspace", "/w", "--net", "--", "sh"}},
		{"NetworkValue", []string{"--workspace", "/w", "--allow-network=no", "--", "sh"}},
		{"ReadOnlyValue", []string{"--workspace", "/w", "--workspace-read-only=yes", "--", "sh"}},
		{"CommandWithoutDash", []string{"--workspace", "/w", "sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := sandbox.ParseCommandArgs(tt.args)
			if !errors.Is(err, sandbox.ErrInvalidPolicy) || !strings.HasPrefix(err.Error(), sandbox.CommandErrorPrefix) {
				t.Errorf("err %v, want ErrInvalidPolicy with the prefix", err)
			}
		})
	}
}
