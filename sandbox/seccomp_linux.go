package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The agent's seccomp filter allows what the Go runtime and the agent
// need and nothing else: no processes, no debugging or reading of other
// processes, no kernel attack surface, no socket but TCP over IPv4/IPv6,
// no stat; Landlock confines files and ports. The commands' filter (see
// commandFilter) is a deny-list, because a shell needs nearly everything.
//
// Layout of struct seccomp_data: nr at 0, arch at 4, instruction pointer
// at 8, args[i] at 16+8i (64-bit, low word first on little-endian).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func argLow(i int) uint32  { return uint32(offArg0 + 8*i) }
func argHigh(i int) uint32 { return argLow(i) + 4 }

// Return values of the filter.
var (
	retAllow  = uint32(unix.SECCOMP_RET_ALLOW)
	retKill   = uint32(unix.SECCOMP_RET_KILL_PROCESS)
	retEPERM  = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
	retENOSYS = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
)

// Socket arguments the filter allows.
const (
	sockTypeMask = 0xf // SOCK_NONBLOCK and SOCK_CLOEXEC live above it
	ipprotoTCP   = 6
)

// program assembles BPF with symbolic jump targets.
type program struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at         int
	jt, jf, ja string // labels; "" means fall through
}

func (p *program) stmt(code uint16, k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

// retIf returns ret when A == k and else goes on: two instructions and a
// jump of one, so a list of any length needs no long jumps.
func (p *program) retIf(k, ret uint32) { p.retOn(unix.BPF_JEQ, k, true, ret) }

// retOn returns ret when the comparison op of A with k is when, and else
// goes on.
func (p *program) retOn(op uint16, k uint32, when bool, ret uint32) {
	jt, jf := uint8(0), uint8(1)
	if !when {
		jt, jf = 1, 0
	}
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k, Jt: jt, Jf: jf},
		unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: ret})
}

// argZero goes to then ("" = the next instruction) when the 64-bit
// argument i is 0, else to eperm.
func (p *program) argZero(i int, then string) {
	p.load(argHigh(i))
	p.jeq(0, "", "eperm")
	p.load(argLow(i))
	p.jeq(0, then, "eperm")
}

// jeq jumps to jt when A == k, else to jf ("" = next instruction).
func (p *program) jeq(k uint32, jt, jf string) {
	p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, jt, jf)
}

// jset jumps to jt when A & k != 0, else to jf.
func (p *program) jset(k uint32, jt, jf string) {
	p.jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, k, jt, jf)
}

func (p *program) jump(code uint16, k uint32, jt, jf string) {
	p.fixups = append(p.fixups, fixup{at: len(p.ins), jt: jt, jf: jf})
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

func (p *program) load(off uint32) { p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func (p *program) ret(k uint32)    { p.stmt(unix.BPF_RET|unix.BPF_K, k) }
func (p *program) and(k uint32)    { p.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k) }
func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

// resolve fills in the jump offsets; BPF jumps are forward and at most
// 255 instructions for conditional jumps.
func (p *program) resolve() error {
	off := func(from int, name string) (uint8, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := p.labels[name]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("bad jump from %d to %q", from, name)
		}
		return uint8(to - from - 1), nil
	}
	for _, f := range p.fixups {
		jt, err := off(f.at, f.jt)
		if err != nil {
			return err
		}
		jf, err := off(f.at, f.jf)
		if err != nil {
			return err
		}
		p.ins[f.at].Jt, p.ins[f.at].Jf = jt, jf
	}
	return nil
}

// syscallNr starts a program: it kills foreign architectures (and, on
// amd64, the x32 ABI, whose numbers alias the 64-bit ones), which would
// bypass every syscall number after it, and loads the syscall number.
func (p *program) syscallNr() {
	p.load(offArch)
	p.retOn(unix.BPF_JEQ, auditArch, false, retKill)
	p.load(offNr)
	if x32Bit != 0 {
		p.retOn(unix.BPF_JGE, x32Bit, true, retKill)
	}
}

// finish ends a program with the returns its jumps name (allow, eperm,
// enosys, kill) and resolves the jumps.
func (p *program) finish() ([]unix.SockFilter, error) {
	p.label("allow")
	p.ret(retAllow)
	p.label("eperm")
	p.ret(retEPERM)
	p.label("enosys")
	p.ret(retENOSYS)
	p.label("kill")
	p.ret(retKill)
	if err := p.resolve(); err != nil {
		return nil, err
	}
	return p.ins, nil
}

// filter builds the agent's seccomp program for this architecture, an
// allow-list: the syscalls the Go runtime and a gRPC client over TCP need
// (agentAllowed), some of them only with safe arguments (see the labels
// below). What the sandbox refuses by name (agentRefused: what an escape
// would try) fails with EPERM, as the kernel answers an unprivileged
// caller; every other number, including ones newer than this list, fails
// with ENOSYS, so that a library probing for a newer call (clone3,
// openat2, epoll_pwait2) falls back to an older one as on an older
// kernel.
func filter() ([]unix.SockFilter, error) {
	if !seccompArch {
		return nil, fmt.Errorf("%w: no seccomp filter for this architecture", ErrUnavailable)
	}
	pid := uint32(unix.Getpid())
	var p program
	p.syscallNr()
	for _, nr := range agentAllowed {
		p.retIf(uint32(nr), retAllow)
	}
	for _, nr := range agentRefused {
		p.retIf(uint32(nr), retEPERM)
	}
	p.jeq(uint32(unix.SYS_CLONE), "clone", "")
	p.jeq(uint32(unix.SYS_SOCKET), "socket", "")
	p.jeq(uint32(unix.SYS_OPENAT), "openat", "")
	p.jeq(uint32(unix.SYS_KILL), "self", "")
	p.jeq(uint32(unix.SYS_TGKILL), "self", "")
	p.jeq(uint32(unix.SYS_SENDTO), "sendto", "")
	p.jeq(uint32(unix.SYS_SENDMSG), "sendmsg", "")
	p.ret(retENOSYS)

	// clone: threads only (CLONE_THREAD), never a new process.
	p.label("clone")
	p.load(argLow(cloneFlagsArg))
	p.jset(unix.CLONE_THREAD, "allow", "eperm")

	// socket(domain, type, protocol): AF_INET or AF_INET6, SOCK_STREAM,
	// protocol 0 or TCP. No unix, netlink, packet, vsock, UDP, raw, MPTCP.
	p.label("socket")
	p.load(argLow(0))
	p.jeq(unix.AF_INET, "socket-type", "")
	p.jeq(unix.AF_INET6, "socket-type", "eperm")
	p.label("socket-type")
	p.load(argLow(1))
	p.and(sockTypeMask)
	p.jeq(unix.SOCK_STREAM, "", "eperm")
	p.load(argLow(2))
	p.jeq(0, "allow", "")
	p.jeq(ipprotoTCP, "allow", "eperm")

	// openat: Landlock decides, except for O_PATH, which Landlock does
	// not check and which would hand out descriptors to anything.
	p.label("openat")
	p.load(argLow(2))
	p.jset(unix.O_PATH, "eperm", "allow")

	// kill and tgkill: this process only (the runtime signals its own
	// threads); Landlock's scoping stops the rest too.
	p.label("self")
	p.load(argHigh(0))
	p.jeq(0, "", "eperm")
	p.load(argLow(0))
	p.jeq(pid, "allow", "eperm")

	p.fastOpen()
	return p.finish()
}

// fastOpen adds the labels sendto, sendmsg and sendmmsg, which refuse
// MSG_FASTOPEN (TCP Fast Open): a send with it connects without
// connect(2), past Landlock's check of the port (seen on 6.18).
func (p *program) fastOpen() {
	p.label("sendto")
	p.load(argLow(3))
	p.jset(unix.MSG_FASTOPEN, "eperm", "allow")
	p.label("sendmsg")
	p.load(argLow(2))
	p.jset(unix.MSG_FASTOPEN, "eperm", "allow")
	p.label("sendmmsg")
	p.load(argLow(3))
	p.jset(unix.MSG_FASTOPEN, "eperm", "allow")
}

// agentConditional are the syscalls the agent's filter allows with some
// arguments only: clone, socket, openat, kill, tgkill, sendto and sendmsg.
var agentConditional = []int{unix.SYS_CLONE, unix.SYS_SOCKET, unix.SYS_OPENAT, unix.SYS_KILL, unix.SYS_TGKILL,
	unix.SYS_SENDTO, unix.SYS_SENDMSG}

// installSeccomp sets no_new_privs and installs the filter on every
// thread of the process (SECCOMP_FILTER_FLAG_TSYNC).
func installSeccomp() error {
	ins, err := filter()
	if err != nil {
		return err
	}
	return installFilter(ins)
}

// installFilter sets no_new_privs and installs a seccomp program on every
// thread of the process (SECCOMP_FILTER_FLAG_TSYNC).
func installFilter(ins []unix.SockFilter) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return errno
	}
	if r != 0 {
		// With TSYNC a positive return is the id of a thread that could
		// not be synchronised.
		return fmt.Errorf("thread %d could not take the filter", r)
	}
	return nil
}
