package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// What root's powers would allow, tried from inside the agent's sandbox.
// Each is refused by name (EPERM) by the agent's seccomp allow-list, and
// none would get far anyway: the sandbox drops every capability first.

// privilegeProbes adds to res the attempts at root's powers.
func privilegeProbes(try func(string, error), deniedPort int) {
	cstr := func(s string) uintptr { b := append([]byte(s), 0); return uintptr(unsafe.Pointer(&b[0])) }
	// A bad magic number: were the call reachable with CAP_SYS_BOOT, the
	// kernel would answer EINVAL, and a good one would restart the machine.
	try("reboot", rawErr(unix.Syscall6(unix.SYS_REBOOT, 0, 0, 0, 0, 0, 0)))
	try("syslog_read", func() error {
		buf := make([]byte, 4096)
		return rawErr(unix.Syscall(unix.SYS_SYSLOG, unix.SYSLOG_ACTION_READ_ALL, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))
	}())
	try("userfaultfd", func() error {
		r, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
		if errno == 0 {
			unix.Close(int(r))
		}
		return rawErr(r, 0, errno)
	}())
	try("chroot", unix.Chroot("/"))
	try("name_to_handle_at", func() error {
		_, _, err := unix.NameToHandleAt(unix.AT_FDCWD, "/etc/shadow", 0)
		return err
	}())
	try("open_by_handle_at", rawErr(unix.Syscall(unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(0), 0, unix.O_RDONLY)))
	try("init_module", rawErr(unix.Syscall(unix.SYS_INIT_MODULE, 0, 0, cstr(""))))
	try("finit_module", rawErr(unix.Syscall(unix.SYS_FINIT_MODULE, ^uintptr(0), cstr(""), 0)))
	try("kexec_load", rawErr(unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)))
	try("swapon", rawErr(unix.Syscall(unix.SYS_SWAPON, cstr("/nonexistent"), 0, 0)))
	try("mount", unix.Mount("none", "/tmp", "tmpfs", 0, ""))
	var st unix.Stat_t
	try("stat_root", unix.Stat("/root", &st))
	try("stat_shadow", unix.Stat("/etc/shadow", &st))
	try("lstat_shadow", unix.Lstat("/etc/shadow", &st))
	try("statx_shadow", func() error {
		var sx unix.Statx_t
		return unix.Statx(unix.AT_FDCWD, "/etc/shadow", 0, unix.STATX_ALL, &sx)
	}())
	try("access_shadow", unix.Access("/etc/shadow", unix.F_OK))
	try("readlink_exe", func() error { _, err := os.Readlink("/proc/self/exe"); return err }())
	try("open_path_root", func() error {
		fd, err := unix.Open("/root", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	// openat2 is not refused by name: ENOSYS, so libraries use openat.
	try("openat2", func() error {
		how := unix.OpenHow{Flags: unix.O_RDONLY}
		fd, err := unix.Openat2(unix.AT_FDCWD, "/etc/hostname", &how)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	try("ioctl_tiocsti", func() error {
		b := byte('x')
		return rawErr(unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&b))))
	}())
	try("setuid", rawErr(unix.RawSyscall(unix.SYS_SETUID, 0, 0, 0)))
	try("capset", func() error {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		data := [2]unix.CapUserData{{Effective: ^uint32(0), Permitted: ^uint32(0)}}
		return unix.Capset(&hdr, &data[0])
	}())
	try("prctl_capbset_read", rawErr(unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_READ, 0, 0, 0, 0, 0)))
	try("tgkill_parent", rawErr(unix.RawSyscall(unix.SYS_TGKILL, uintptr(os.Getppid()), uintptr(os.Getppid()), 0)))
	try("kill_all", rawErr(unix.RawSyscall(unix.SYS_KILL, ^uintptr(0), 0, 0)))
	try("kill_self", unix.Kill(os.Getpid(), 0))
	try("tcp_fastopen_denied_port", fastOpenErr(deniedPort))
	try("tcp_listen_autobind", listenAutobindErr())
	try("capget_zero", func() error {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return err
		}
		if data != [2]unix.CapUserData{} {
			return fmt.Errorf("capabilities %+v", data)
		}
		return nil
	}())
}

// fastOpenErr connects to 127.0.0.1:port the way TCP Fast Open does, by
// sendto with MSG_FASTOPEN and a destination, which does not pass through
// connect(2) and so not through Landlock's check of it.
func fastOpenErr(port int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}

// listenAutobindErr listens on a TCP socket it never bound, which makes
// the kernel bind it to an ephemeral port without bind(2).
func listenAutobindErr() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Listen(fd, 1)
}

// privilegeWant is what privilegeProbes must find.
var privilegeWant = map[string]string{
	"reboot": "EPERM", "syslog_read": "EPERM", "userfaultfd": "EPERM", "chroot": "EPERM",
	"name_to_handle_at": "EPERM", "open_by_handle_at": "EPERM", "init_module": "EPERM", "finit_module": "EPERM",
	"kexec_load": "EPERM", "swapon": "EPERM", "mount": "EPERM",
	"stat_root": "EPERM", "stat_shadow": "EPERM", "lstat_shadow": "EPERM", "statx_shadow": "EPERM",
	"access_shadow": "EPERM", "readlink_exe": "EPERM", "open_path_root": "EPERM", "openat2": "ENOSYS", "ioctl_tiocsti": "ENOSYS",
	"setuid": "EPERM", "capset": "EPERM", "prctl_capbset_read": "EPERM",
	"tgkill_parent": "EPERM", "kill_all": "EPERM", "kill_self": "ok", "capget_zero": "ok",
	"tcp_fastopen_denied_port": "EPERM", "tcp_listen_autobind": "EPERM",
}

// checkNoCapabilities fails t unless every thread of pid holds no
// capability. The bounding set can be emptied only by a holder of
// CAP_SETPCAP, so it is checked when this test process holds it.
func checkNoCapabilities(t *testing.T, pid int) {
	t.Helper()
	fields := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
	if ownCapabilities(t, "CapEff")&(1<<8) != 0 {
		fields = append(fields, "CapBnd")
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if len(tasks) < 2 {
		t.Errorf("child has %d threads; the Go runtime always has several", len(tasks))
	}
	for _, task := range tasks {
		caps := statusCapabilities(t, task)
		for _, f := range fields {
			if v, ok := caps[f]; !ok || v != 0 {
				t.Errorf("%s: %s %#x, want 0", task, f, v)
			}
		}
	}
}

func ownCapabilities(t *testing.T, field string) uint64 {
	return statusCapabilities(t, "/proc/self/status")[field]
}

func statusCapabilities(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, value, ok := strings.Cut(line, ":\t"); ok && strings.HasPrefix(name, "Cap") {
			v, err := strconv.ParseUint(value, 16, 64)
			if err != nil {
				t.Fatalf("%s: %q", path, line)
			}
			caps[name] = v
		}
	}
	return caps
}

// walkLimit is past the highest syscall number of any kernel so far
// (about 470), and walkExtra are numbers far beyond it but below the x32
// bit, which a filter must refuse, not kill.
const walkLimit = 1024

var walkExtra = []int{4095, 1 << 16, 1<<30 - 1}

// walkTargets are the numbers the walk calls: all up to walkLimit and
// walkExtra but those the agent's filter allows (they run in every
// sandboxed agent anyway, and some, such as exit, would end the walk).
func walkTargets() []int {
	var nrs []int
	for nr := range walkLimit {
		nrs = append(nrs, nr)
	}
	return slices.DeleteFunc(append(nrs, walkExtra...), func(nr int) bool {
		return slices.Contains(sandbox.AgentAllowed, nr) || slices.Contains(sandbox.AgentConditional, nr)
	})
}

// walkChild applies the agent's sandbox (unless the mode is walk-raw) and
// calls the walk's numbers from OPX_WALK_FROM on (walk-raw: the one
// number OPX_WALK_NR), with a first argument of -1 (no descriptor, no
// process) and null pointers and zero lengths after it: arguments that
// would do nothing harmful were a call not refused. It prints each
// number's errno on a line of its own as soon as the call returns.
func walkChild(sandboxed bool) int {
	nrs := walkTargets()
	from, _ := strconv.Atoi(os.Getenv("OPX_WALK_FROM"))
	if !sandboxed {
		nr, _ := strconv.Atoi(os.Getenv("OPX_WALK_NR"))
		nrs, from = []int{nr}, 0
	} else if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, "ApplySelf:", err)
		return 4
	}
	for _, nr := range nrs[from:] {
		_, _, errno := unix.RawSyscall6(uintptr(nr), ^uintptr(0), 0, 0, 0, 0, 0)
		fmt.Printf("%d %s\n", nr, unix.ErrnoName(errno))
	}
	return 0
}

// runWalk runs a walk child and returns what it printed and, if a
// signal ended it (the Go runtime reports a synchronous one on stderr and
// exits 2), which.
func runWalk(t *testing.T, env ...string) (map[int]string, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	got := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var nr int
		var errno string
		if _, serr := fmt.Sscanf(line, "%d %s", &nr, &errno); serr == nil {
			got[nr] = errno
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return got, len(got), ""
	case !errors.As(err, &ee):
		t.Fatalf("walk child: %v", err)
	case ee.Sys().(syscall.WaitStatus).Signaled():
		return got, len(got), ee.Sys().(syscall.WaitStatus).Signal().String()
	case ee.ExitCode() == 2 && strings.HasPrefix(stderr.String(), "SIG"):
		first, _, _ := strings.Cut(stderr.String(), "\n")
		return got, len(got), first
	}
	t.Fatalf("walk child: %v\n%s", err, stderr.String())
	return nil, 0, ""
}

// unassigned are the numbers no upstream syscall of this architecture
// has (x86_64: 335 to 423; arm64: 295 to 423, where 32-bit ABIs have
// their time64 calls). A kernel may add calls of its own there and
// answer them before any filter runs: this test machine's kernel does,
// at 335 (SIGILL) and 336 (ENXIO).
func unassigned(nr int) bool {
	switch runtime.GOARCH {
	case "amd64":
		return nr >= 335 && nr <= 423
	case "arm64":
		return nr >= 295 && nr <= 423
	}
	return false
}

// TestSeccomp_AllowList walks every syscall number the agent's filter
// does not allow, in a sandboxed child, and checks each is refused: EPERM
// for those refused by name, ENOSYS for all others. A number that ends
// the child restarts the walk after it. An unassigned number that answers
// the same in an unsandboxed process is the kernel's own, answered before
// any filter, and is reported but not failed.
func TestSeccomp_AllowList(t *testing.T) {
	needSandbox(t)
	nrs := walkTargets()
	got := map[int]string{}
	for from := 0; from < len(nrs); {
		part, n, crash := runWalk(t, childEnv+"=walk", "OPX_WALK_FROM="+strconv.Itoa(from))
		for nr, errno := range part {
			got[nr] = errno
		}
		if crash == "" {
			break
		}
		got[nrs[from+n]] = crash
		from += n + 1
	}
	if len(got) != len(nrs) || len(nrs) < walkLimit-len(sandbox.AgentAllowed)-len(sandbox.AgentConditional) {
		t.Errorf("walked %d numbers of %d", len(got), len(nrs))
	}
	for _, nr := range nrs {
		want := "ENOSYS"
		if slices.Contains(sandbox.AgentRefused, nr) {
			want = "EPERM"
		}
		if got[nr] == want {
			continue
		}
		if unassigned(nr) {
			raw, _, crash := runWalk(t, childEnv+"=walk-raw", "OPX_WALK_NR="+strconv.Itoa(nr))
			if crash == got[nr] || raw[nr] == got[nr] {
				t.Logf("syscall %d (unassigned upstream): %s, the kernel's own answer, before any filter", nr, got[nr])
				continue
			}
		}
		t.Errorf("syscall %d: %q, want %s", nr, got[nr], want)
	}
	// The allow-list holds none of what the escape probes try.
	for _, nr := range []int{unix.SYS_REBOOT, unix.SYS_SYSLOG, unix.SYS_CHROOT, unix.SYS_USERFAULTFD, unix.SYS_NAME_TO_HANDLE_AT,
		unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_NEWFSTATAT, unix.SYS_STATX, unix.SYS_EXECVE, unix.SYS_PTRACE,
		unix.SYS_SETUID, unix.SYS_CAPSET, unix.SYS_PRCTL, unix.SYS_BIND, unix.SYS_LINKAT, unix.SYS_UNLINKAT, unix.SYS_IOCTL} {
		if slices.Contains(sandbox.AgentAllowed, nr) {
			t.Errorf("syscall %d is on the allow-list", nr)
		}
	}
}

// x32Child applies the agent's sandbox and makes an x32 call, whose
// number would alias a 64-bit one past every check: the filter kills the
// process.
func x32Child() int {
	if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, "ApplySelf:", err)
		return 4
	}
	fmt.Println("ready")
	unix.RawSyscall(uintptr(unix.SYS_GETPID|0x40000000), 0, 0, 0)
	return 0
}

func TestSeccomp_X32Killed(t *testing.T) {
	needSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 is an amd64 ABI")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=x32")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !strings.HasPrefix(string(out), "ready") || !errors.As(err, &ee) {
		t.Fatalf("child: %q %v", out, err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGSYS {
		t.Errorf("child ended %v, want killed by SIGSYS", ws)
	}
}
