package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// A process started as root keeps root's powers through Landlock and
// seccomp: Landlock confines paths, not CAP_SYS_BOOT, CAP_SYSLOG or
// CAP_SYS_MODULE. So before it restricts anything, a sandboxed process
// sheds every capability, on every thread: capabilities, the bounding set,
// the ambient set and the securebits are per-thread in Linux, and a Go
// process has many threads, so each change goes through psx, which makes
// every thread issue the same syscall (syscall.AllThreadsSyscall does it
// without cgo; psx also covers cgo's threads).
//
// The uid is kept. A uid 0 without capabilities keeps only what Linux
// grants an owner: files owned by root (which Landlock confines, and for
// commands the system secrets are left out of the readable set, see
// commandSecrets) and root's other processes (which Landlock's scoping and
// the seccomp filters keep out of reach). Switching to an unprivileged uid
// would make a workspace owned by the engine's user unwritable to its own
// commands, and share a uid (nobody) with unrelated daemons.

// secureBits lock a process out of regaining capabilities: uid 0 earns
// none at exec (NOROOT), a uid change neither adds nor removes any
// (NO_SETUID_FIXUP: there are none to keep), keep-caps stays off, the
// ambient set cannot be raised, and each of these is locked so that not
// even a later holder of CAP_SETPCAP could undo it.
const secureBits = secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
	secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked

// The securebits of <linux/securebits.h>, and CAP_SETPCAP.
const (
	secbitNoroot                  = 1 << 0
	secbitNorootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCaps                = 1 << 4
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7

	capSetpcap = 8
)

// capsetMu guards capsetHeader and capsetData, which live in package
// variables so that the kernel reads them from memory that cannot move
// while psx hands their addresses to every thread.
var (
	capsetMu     sync.Mutex
	capsetHeader unix.CapUserHeader
	capsetData   [2]unix.CapUserData
)

// dropPrivileges takes every capability away from every thread of the
// calling process, irreversibly: the securebits above (when it may set
// them), the whole bounding set (up to /proc/sys/kernel/cap_last_cap),
// the ambient set, then the effective, permitted and inheritable sets.
// Without CAP_SETPCAP the bounding set and the securebits cannot be
// changed; such a process holds no capability to begin with, and
// no_new_privs (set by the sandbox) keeps exec from granting any. It
// checks the result in /proc/self/task/*/status and fails with
// ErrPrivileged if any thread still holds a capability.
func dropPrivileges() error {
	// A process StartUnprivileged started, or any other that holds
	// nothing, has nothing to drop: no broadcast to every thread.
	if holdsNothing() {
		return nil
	}
	capsetMu.Lock()
	defer capsetMu.Unlock()
	capsetHeader = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capget(&capsetHeader, &capsetData[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	havePcap := capsetData[0].Permitted&(1<<capSetpcap) != 0
	if havePcap {
		// CAP_SETPCAP must be effective on every thread for the prctls.
		for i := range capsetData {
			capsetData[i].Effective = capsetData[i].Permitted
		}
		if err := capsetAll(); err != nil {
			return err
		}
		// A parent may have locked some bits the other way already; then
		// they stay so. The securebits guard exec, and with an empty
		// bounding and ambient set exec grants nothing anyway: what must
		// succeed is below.
		if bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0); err == nil && bits&^secbitKeepCaps|secureBits != bits {
			if err := prctlAll(unix.PR_SET_SECUREBITS, uintptr(bits&^secbitKeepCaps|secureBits), 0); err != nil && err != unix.EPERM {
				return fmt.Errorf("securebits: %w", err)
			}
		}
		last, err := lastCap()
		if err != nil {
			return err
		}
		for c := 0; c <= last; c++ {
			if err := prctlAll(unix.PR_CAPBSET_DROP, uintptr(c), 0); err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := prctlAll(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear the ambient set: %w", err) // EINVAL: a kernel before 4.3 has none
	}
	capsetData = [2]unix.CapUserData{}
	if err := capsetAll(); err != nil {
		return err
	}
	return checkNoCapabilities(havePcap)
}

// holdsNothing reports, cheaply, that no thread holds a capability and
// the bounding set is empty: capget of every thread (effective,
// permitted, inheritable; the ambient set is a subset of the permitted
// one), and the bounding set of this thread. A thread's bounding set is
// its creator's and only shrinks, and nothing in this process changes one
// thread's alone before it is sandboxed, so this thread's stands for all;
// reading every thread's /proc status instead costs a quarter of a
// millisecond each. The slow path below checks them all.
func holdsNothing() bool {
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, e := range tids {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			return false
		}
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3, Pid: int32(tid)}
		var data [2]unix.CapUserData
		err = unix.Capget(&hdr, &data[0])
		if err == unix.ESRCH {
			continue // the thread ended
		}
		if err != nil || data != [2]unix.CapUserData{} {
			return false
		}
	}
	last, err := lastCap()
	if err != nil {
		return false
	}
	for c := 0; c <= last; c++ {
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil || in != 0 {
			return false
		}
	}
	return true
}

// capsetAll sets capsetData on every thread.
func capsetAll() error {
	capsetHeader = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	_, _, errno := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&capsetHeader)), uintptr(unsafe.Pointer(&capsetData[0])), 0)
	if errno != 0 {
		return fmt.Errorf("capset: %w", errno)
	}
	return nil
}

func prctlAll(option int, arg2, arg3 uintptr) error {
	if _, _, errno := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg2, arg3, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("last capability: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > 63 {
		return 0, fmt.Errorf("last capability: %q", b)
	}
	return n, nil
}

// checkNoCapabilities reads every thread's capability sets and fails
// unless all are empty (the bounding set only when it could be dropped).
func checkNoCapabilities(bounding bool) error {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		return fmt.Errorf("%w: no thread status to check (%v)", ErrPrivileged, err)
	}
	fields := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
	if bounding {
		fields = append(fields, "CapBnd")
	}
	for _, task := range tasks {
		caps, err := readCapabilities(task)
		if os.IsNotExist(err) {
			continue // the thread ended
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrPrivileged, err)
		}
		for _, f := range fields {
			if v, ok := caps[f]; !ok || v != 0 {
				return fmt.Errorf("%w: %s %s is %#x", ErrPrivileged, filepath.Dir(task), f, v)
			}
		}
	}
	return nil
}

// readCapabilities returns the Cap* fields of a /proc status file.
func readCapabilities(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	caps := map[string]uint64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":\t")
		if !ok || !strings.HasPrefix(name, "Cap") {
			continue
		}
		v, err := strconv.ParseUint(value, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		caps[name] = v
	}
	return caps, s.Err()
}
