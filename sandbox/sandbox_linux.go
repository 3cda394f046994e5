package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfigs maps a kernel ABI to go-landlock's config of that ABI;
// the highest known one serves newer kernels.
var landlockConfigs = []landlock.Config{
	1: landlock.V1, 2: landlock.V2, 3: landlock.V3, 4: landlock.V4, 5: landlock.V5, 6: landlock.V6,
	7: landlock.V7, 8: landlock.V8, 9: landlock.V9, 10: landlock.V10, 11: landlock.V11,
}

func probe() Capabilities {
	c := Capabilities{Platform: runtime.GOOS, Mechanism: "none"}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		c.Detail = fmt.Sprintf("no Landlock: %v", err)
	} else {
		c.Mechanism, c.LandlockABI = "landlock", abi
		c.Filesystem, c.Network, c.Scoping = true, abi >= 4, abi >= 6
	}
	c.Seccomp = seccompAvailable()
	if !c.Seccomp {
		c.Detail += " no seccomp filter support"
	}
	return c
}

// seccompAvailable asks the kernel whether it can kill a process from a
// filter, which also proves filter mode exists.
func seccompAvailable() bool {
	if !seccompArch {
		return false
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return false
	}
	action := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return errno == 0
}

// ApplySelf confines the whole process, irreversibly: it closes every
// descriptor but 0, 1 and 2, drops every capability on every thread (see
// dropPrivileges), restricts all threads with Landlock at the kernel's ABI
// (filesystem: only cfg's paths; TCP: connect to cfg's ports, bind
// nowhere; scoping of abstract unix sockets and signals), and installs
// the agent's seccomp allow-list on all threads. It fails with
// ErrUnavailable when the kernel lacks Landlock or seccomp, without
// restricting anything.
func (s *Sandbox) ApplySelf(cfg Config) error {
	if !s.Available() {
		return fmt.Errorf("%w: %s", ErrUnavailable, s.caps.Detail)
	}
	if err := closeInheritedFDs(); err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	if err := dropPrivileges(); err != nil {
		return fmt.Errorf("drop privileges: %w", err)
	}
	abi := min(s.caps.LandlockABI, len(landlockConfigs)-1)
	var rules []landlock.Rule
	if len(cfg.ReadPaths) > 0 {
		rules = append(rules, landlock.RODirs(cfg.ReadPaths...))
	}
	if len(cfg.WritePaths) > 0 {
		rules = append(rules, landlock.RWDirs(cfg.WritePaths...))
	}
	if abi >= 4 {
		for _, p := range cfg.ConnectTCP {
			rules = append(rules, landlock.ConnectTCP(p))
		}
	}
	// Not BestEffort: the config is the kernel's own ABI, so everything
	// it can restrict is restricted, and a failure is an error.
	task, unpin, err := taskDirRule(abi)
	if err != nil {
		return err
	}
	defer unpin()
	if err := landlockConfigs[abi].Restrict(append(rules, task...)...); err != nil {
		return fmt.Errorf("landlock (ABI %d): %w", abi, err)
	}
	if err := installSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// WrapCommand prepares cmd to run sandboxed. On Linux the child
// sandboxes itself (ApplySelf), so there is nothing to wrap; the hook is
// for platforms where the parent must.
func (s *Sandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error { return nil }

// closeInheritedFDs closes every descriptor above 2 except the Go
// runtime's own poller (an epoll instance and its eventfd, which the
// runtime may have created before ApplySelf and cannot live without; an
// inherited one of those would grant nothing). Everything else — files,
// directories, sockets, pipes a parent left open — is closed, so no
// capability survives into the sandbox. keep are descriptors the caller
// holds on purpose (the reaping launcher's end report, ReportFD, and its
// /dev/null); they stay open.
func closeInheritedFDs(keep ...int) error {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	self := int(d.Fd())
	if err != nil {
		d.Close()
		return err
	}
	var toClose []int
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 || fd == self || slices.Contains(keep, fd) {
			continue
		}
		link, err := os.Readlink("/proc/self/fd/" + name)
		if err != nil {
			continue // closed meanwhile
		}
		if link == "anon_inode:[eventpoll]" || link == "anon_inode:[eventfd]" {
			continue
		}
		toClose = append(toClose, fd)
	}
	d.Close()
	for _, fd := range toClose {
		if err := unix.Close(fd); err != nil && err != unix.EBADF {
			return fmt.Errorf("close fd %d: %w", fd, err)
		}
	}
	return nil
}
