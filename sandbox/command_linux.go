package sandbox

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// commandSystemDirs are readable and executable by every command: the
// programs and libraries a shell, git or a compiler need. Missing ones are
// skipped (usrmerge systems have /bin -> usr/bin, not every system has
// /lib64 or /opt).
//
//   - /usr, /bin, /sbin: programs.
//   - /lib, /lib32, /lib64, /libx32: the dynamic loader and libraries
//     (the loader itself is opened for execution, so it needs the
//     execute right too).
//   - /etc: ld.so.cache, passwd/group for user names, resolv.conf and
//     hosts for name lookups, CA certificates, locale settings; only what
//     every user may read (see commandWalkedDirs), so not the secrets a
//     command of a root engine would otherwise read as their owner.
//   - /opt: toolchains installed outside /usr.
var commandSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

func commandSystemDirsList() []string {
	var out []string
	for _, d := range commandSystemDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Device files a command may use: /dev/null, /dev/zero and /dev/full to
// read and write (redirections, dd), /dev/urandom and /dev/random to
// read. No terminal, no /dev/shm, no disks.
var (
	commandRWDevices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	commandRODevices = []string{"/dev/urandom", "/dev/random"}
)

// Of /proc, a command may read only kernel-wide information that build
// tools and runtimes ask for: CPU and memory figures and the sysctl values
// they read (allocators read vm.overcommit_memory, libcap
// kernel.cap_last_cap), each readable by every user. Not /proc/sys as a
// whole: root alone may read some of it (net.ipv4.tcp_fastopen_key). Not
// /proc as a whole, and not
// /proc/self: the kernel lets a Landlocked process read environ and maps
// of a same-user process outside its domain (seen on 6.18; mem, fd and
// cwd are refused), so a
// readable /proc would hand the engine's environment to every command;
// and a rule on /proc/self would name the launcher's /proc/<pid> only,
// not that of the processes the command forks. /dev/fd and /dev/stdout
// still work: opening a /proc/<pid>/fd magic link reaches the pipe or
// file it names, which Landlock judges on its own.
var commandProcFiles = []string{"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime",
	"/proc/version", "/proc/filesystems",
	"/proc/sys/vm/overcommit_memory", "/proc/sys/vm/max_map_count", "/proc/sys/kernel/pid_max",
	"/proc/sys/kernel/threads-max", "/proc/sys/kernel/ngroups_max", "/proc/sys/kernel/cap_last_cap",
	"/proc/sys/kernel/osrelease", "/proc/sys/kernel/ostype", "/proc/sys/kernel/hostname",
	"/proc/sys/kernel/random/uuid", "/proc/sys/kernel/random/boot_id", "/proc/sys/fs/file-max", "/proc/sys/fs/nr_open",
	"/proc/sys/fs/inotify/max_user_watches", "/proc/sys/fs/inotify/max_user_instances", "/proc/sys/net/core/somaxconn"}

// Ioctls a command may never issue: TIOCSTI pushes bytes into a
// terminal's input queue, TIOCLINUX can read and write the Linux console.
var commandDeniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// commandDeniedSyscalls fail with EPERM in every command. A shell, make,
// git and compilers need most of the kernel (files, processes, signals,
// pipes, sockets), so an allow-list like the agent's would break commands
// nobody listed; this is a deny-list of what they never need. It is one
// layer of three: the command holds no capability (most of these would
// fail with EPERM anyway) and Landlock confines its files and ports.
var commandDeniedSyscalls = []int{
	// Reading or steering other processes.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD, unix.SYS_PROCESS_MADVISE,
	// Mounts and root changes.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG,
	unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	// New namespaces or entering others (clone with CLONE_NEW* flags is
	// refused in the filter below; clone3 gets ENOSYS).
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	// Kernel attack surface and kernel state.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_SYSLOG, unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
	unix.SYS_REBOOT, unix.SYS_QUOTACTL, unix.SYS_FANOTIFY_INIT, unix.SYS_VHANGUP,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME,
	// Other processes of the same uid (the engine's, when it is root);
	// see also commandSelfOnly.
	unix.SYS_KCMP, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES, unix.SYS_PROCESS_MRELEASE, unix.SYS_GET_ROBUST_LIST,
	// System V IPC: its objects are the IPC namespace's, keyed by
	// number, and uid 0 owns those of every root process. Commands have
	// no /dev/shm either.
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
	// Listening: listen(2) on a TCP socket never bound binds it to an
	// ephemeral port without bind(2), past Landlock's refusal of every
	// TCP bind, and would open a port to the network (seen on 6.18). The
	// filter cannot tell a unix socket's listen from a TCP one's, so
	// commands serve on neither; binding was never theirs anyway.
	unix.SYS_LISTEN,
	// Leaving the process group: the engine kills the command's group
	// when it ends or times out, and a process in a new session or group
	// would survive that (daemons, `setsid`). Programs that try anyway
	// (timeout(1)) carry on in the group.
	unix.SYS_SETSID, unix.SYS_SETPGID,
}

// commandSelfOnly take a pid as their first argument, and a process may
// use them on another of its uid: a command could lower the engine's
// limits (RLIMIT_FSIZE 0 kills it at its next write) or its scheduling.
// Commands may use them on themselves only (pid 0), as setrlimit, nice,
// taskset and chrt do when they start a program.
var commandSelfOnly = []int{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR}

// setpriority(2) and ioprio_set(2) take (which, who): who must be 0 (this
// process or its group), and which not a whole user.
const (
	prioUser      = 2 // PRIO_USER
	ioprioWhoUser = 3 // IOPRIO_WHO_USER
)

// cloneNamespaceFlags are the CLONE_NEW* flags clone(2) accepts in its
// flags argument. CLONE_NEWTIME (0x80) is left out on purpose: clone(2)
// takes it only through clone3, and in clone's flags those bits are the
// exit signal.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// ExecSandboxed applies p to the calling process and executes argv
// (argv[0] looked up in env's PATH) with exactly env. It returns only on
// failure, with an error starting with CommandErrorPrefix: ErrInvalidPolicy
// for a malformed policy (nothing restricted yet), ErrUnavailable when the
// kernel cannot enforce p (nothing restricted yet), else the failure of
// a later step, after which the process is restricted and should exit.
func ExecSandboxed(p CommandPolicy, argv []string, env []string) error {
	if len(argv) == 0 {
		return fmt.Errorf(CommandErrorPrefix+"%w: no command", ErrInvalidPolicy)
	}
	if err := ApplyCommandPolicy(p); err != nil {
		return err
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"%w", err)
	}
	if err := unix.Exec(path, argv, env); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"exec %s: %w", path, err)
	}
	return nil // not reached
}

// RunSandboxedReaping applies p to the calling process, starts argv
// (as ExecSandboxed would run it) as its child in its process group, and
// waits. A stop signal (SIGTERM, SIGINT, SIGHUP: the engine's death
// signal) kills the whole group, itself included. So does the command's
// end, always, after the launcher has written how the command ended
// ("exit N" or "signal N", a line) to report, when report is not nil:
// the group's other members, the command's children, die with it
// whoever is left to care. (The launcher used to leave them to its
// parent when the parent seemed alive; but a dying engine closes its
// files, so the server reads EOF and ends, before the kernel reparents
// the launcher and sends it the death signal: in that window the parent
// looked alive, nobody killed the children, and they outlived the
// engine — TestRV16_EngineCrashOrphansServerChildren on a loaded
// machine.) The report is how the engine still learns the command's own
// exit status: the launcher itself dies of SIGKILL. It returns only on
// a failure before the child started, as ExecSandboxed.
func RunSandboxedReaping(p CommandPolicy, argv []string, env []string, report *os.File) error {
	if len(argv) == 0 {
		return fmt.Errorf(CommandErrorPrefix+"%w: no command", ErrInvalidPolicy)
	}
	// Landlock scopes signals to a domain and its nested ones, and each
	// thread restricted itself into a domain of its own: the command is
	// started, and the group killed, from this one thread, whose domain
	// the command and everything it starts are in.
	runtime.LockOSThread()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	// The launcher lets go of the command's stdin, stdout and stderr
	// once it has started it (replaced by /dev/null, opened now, before
	// the policy): a server that closes its output must be read at EOF by
	// the engine, not held open by its launcher.
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"%w", err)
	}
	keep := -1
	if report != nil {
		keep = int(report.Fd())
		// The command must not inherit it: it could write a false end.
		unix.CloseOnExec(keep)
	}
	if err := applyCommandPolicy(p, keep, int(null.Fd())); err != nil {
		return err
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"%w", err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &unix.SysProcAttr{Pdeathsig: unix.SIGKILL}}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"exec %s: %w", path, err)
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup3(int(null.Fd()), fd, 0)
	}
	null.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-stop:
		killGroup()
	case <-done:
	}
	if report != nil {
		_, _ = report.WriteString(EndReport(cmd.ProcessState))
	}
	killGroup()
	return nil // not reached
}

// EndReport is the line RunSandboxedReaping writes when its command has
// ended: "exit N" or "signal N".
func EndReport(st *os.ProcessState) string {
	ws, _ := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "signal " + strconv.Itoa(int(ws.Signal())) + "\n"
	}
	return "exit " + strconv.Itoa(ws.ExitStatus()) + "\n"
}

// killGroup kills the calling process's group, itself included, from the
// thread it is called on (RunSandboxedReaping's, whose Landlock domain
// its command is in), and never returns.
func killGroup() {
	_ = unix.Kill(0, unix.SIGKILL)
	select {}
}

// ApplyCommandPolicy confines the calling process, all its threads and
// everything it later starts by p, irreversibly: it closes inherited
// descriptors above 2, drops every capability (see dropPrivileges: the
// command keeps the engine's uid, and with it the workspace the engine's
// user owns, but none of root's powers, and the locked securebits keep
// exec from granting them again), sets no_new_privs, restricts with Landlock at the
// kernel's own ABI and installs the commands' seccomp filter. It fails,
// before restricting anything, with ErrUnavailable when the kernel lacks
// Landlock or seccomp, cannot restrict TCP (Landlock ABI < 4) while p
// forbids the network, or cannot refuse truncation (ABI < 3) while p
// makes the workspace read-only.
func ApplyCommandPolicy(p CommandPolicy) error { return applyCommandPolicy(p) }

// applyCommandPolicy is ApplyCommandPolicy keeping the descriptors keep
// open (negative ones ignored).
func applyCommandPolicy(p CommandPolicy, keep ...int) error {
	if err := p.Validate(); err != nil {
		return err
	}
	caps := probe()
	if err := commandPolicyUnavailable(p, caps); err != nil {
		return err
	}
	// Build the filter first: nothing is restricted if it cannot be.
	ins, err := commandFilter(p.AllowNetwork, caps.LandlockABI)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"seccomp: %w", err)
	}
	if err := closeInheritedFDs(keep...); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"close inherited descriptors: %w", err)
	}
	abi := min(caps.LandlockABI, len(landlockConfigs)-1)
	cfg := landlockConfigs[abi]
	if p.AllowNetwork && abi >= 4 {
		// Connecting is not handled, so it is allowed; binding stays
		// handled without a rule, so it is refused.
		cfg.HandledAccessNet = llsys.AccessNetBindTCP
	}
	rwDirs, roDirs := append([]string{p.Workspace}, p.Writable...), p.ReadOnly
	if p.WorkspaceReadOnly {
		rwDirs, roDirs = p.Writable, append([]string{p.Workspace}, p.ReadOnly...)
	}
	system, err := systemRules(commandSystemDirs, commandWalkedDirs, commandSecrets)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"%w", err)
	}
	if err := dropPrivileges(); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"drop privileges: %w", err)
	}
	rules := append(system,
		landlock.ROFiles(commandProcFiles...).IgnoreIfMissing(),
		landlock.RWFiles(commandRWDevices...).IgnoreIfMissing(),
		landlock.ROFiles(commandRODevices...).IgnoreIfMissing(),
	)
	if len(rwDirs) > 0 {
		rw := landlock.RWDirs(rwDirs...)
		if abi >= 2 {
			// Refer: renames and links between directories of the
			// workspace (git moves objects into place that way).
			// Landlock never lets them gain rights, and every rw
			// directory has the same ones. ABI 1 cannot grant it (nor
			// handle it).
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if len(roDirs) > 0 {
		rules = append(rules, landlock.RODirs(roDirs...))
	}
	// Not BestEffort: the config is the kernel's own ABI, so all it can
	// restrict is restricted (scoping of signals and abstract sockets
	// from ABI 6), and a failure is an error.
	task, unpin, err := taskDirRule(abi)
	if err != nil {
		return fmt.Errorf(CommandErrorPrefix+"%w", err)
	}
	defer unpin()
	if err := cfg.Restrict(append(rules, task...)...); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"landlock (ABI %d): %w", abi, err)
	}
	if err := installFilter(ins); err != nil {
		return fmt.Errorf(CommandErrorPrefix+"seccomp: %w", err)
	}
	return nil
}

// commandPolicyUnavailable says why this kernel (caps) cannot enforce p,
// or nil. The sandbox is never weaker than its policy says: a kernel
// without Landlock or seccomp runs nothing; one whose Landlock cannot
// restrict TCP (ABI < 4) runs nothing that must not have the network;
// and one whose Landlock cannot refuse truncation (ABI < 3: truncate(2)
// and open with O_TRUNC need only the right to read there) runs nothing
// whose workspace is read-only, since such a process could empty any
// workspace file and, not being writable, has no snapshot to undo it.
func commandPolicyUnavailable(p CommandPolicy, caps Capabilities) error {
	switch {
	case !caps.Filesystem || !caps.Seccomp:
		return fmt.Errorf(CommandErrorPrefix+"%w: %s", ErrUnavailable, strings.TrimSpace(caps.Detail))
	case !p.AllowNetwork && !caps.Network:
		return fmt.Errorf(CommandErrorPrefix+"%w: Landlock ABI %d cannot restrict TCP (ABI 4 can), and the policy forbids the network", ErrUnavailable, caps.LandlockABI)
	case p.WorkspaceReadOnly && caps.LandlockABI < 3:
		return fmt.Errorf(CommandErrorPrefix+"%w: Landlock ABI %d cannot refuse truncating a file (ABI 3 can), and the policy makes the workspace read-only", ErrUnavailable, caps.LandlockABI)
	}
	return nil
}

// commandFilter builds the commands' seccomp program for this
// architecture. It is lighter than the agent's: processes, exec and
// files are allowed (Landlock confines files), while what Landlock
// cannot see is refused with EPERM. Sockets: unix sockets only where
// Landlock (ABI >= 9) confines connecting to pathname ones (socketpair
// always); without the network only TCP, whose connect and bind Landlock
// refuses, so UDP, ICMP, raw and MPTCP cannot slip past it; with it any
// IPv4 or IPv6 socket. No netlink, packet, vsock or other family. Some
// calls are allowed with safe arguments only: clone without namespaces,
// modes without the set-user-ID or set-group-ID bit, limits and
// scheduling of the caller only, sends without TCP Fast Open when the
// network is forbidden, ioctl but commandDeniedIoctls.
func commandFilter(allowNetwork bool, landlockABI int) ([]unix.SockFilter, error) {
	if !seccompArch {
		return nil, fmt.Errorf("%w: no seccomp filter for this architecture", ErrUnavailable)
	}
	var p program
	p.syscallNr()
	for _, nr := range commandDeniedSyscalls {
		p.retIf(uint32(nr), retEPERM)
	}
	// clone3 passes its flags in memory the filter cannot read; libc
	// falls back to clone, whose flags it can.
	p.jeq(uint32(unix.SYS_CLONE3), "enosys", "")
	p.jeq(uint32(unix.SYS_CLONE), "clone", "")
	p.jeq(uint32(unix.SYS_SOCKET), "socket", "")
	p.jeq(uint32(unix.SYS_IOCTL), "ioctl", "")
	for _, nr := range commandSelfOnly {
		p.jeq(uint32(nr), "self-only", "")
	}
	for _, nr := range slices.Sorted(maps.Keys(commandModeArgs)) {
		p.jeq(uint32(nr), "mode-"+strconv.Itoa(commandModeArgs[nr]), "")
	}
	// openat2 passes its mode in memory the filter cannot read; libc
	// and Go use openat.
	p.jeq(uint32(unix.SYS_OPENAT2), "enosys", "")
	p.jeq(uint32(unix.SYS_SETPRIORITY), "setpriority", "")
	p.jeq(uint32(unix.SYS_IOPRIO_SET), "ioprio", "")
	if !allowNetwork {
		p.jeq(uint32(unix.SYS_SENDTO), "sendto", "")
		p.jeq(uint32(unix.SYS_SENDMSG), "sendmsg", "")
		p.jeq(uint32(unix.SYS_SENDMMSG), "sendmmsg", "")
	}
	p.ret(retAllow)

	if !allowNetwork {
		p.fastOpen() // it would connect past Landlock
	}
	p.label("clone")
	p.load(argLow(cloneFlagsArg))
	p.jset(cloneNamespaceFlags, "eperm", "allow")

	// A mode with the set-user-ID or set-group-ID bit: a command of a root
	// engine would leave a setuid-root program in the workspace, for
	// whoever runs it later outside the sandbox (a host user of a
	// bind-mounted workspace).
	for i := 1; i <= 3; i++ {
		p.label("mode-" + strconv.Itoa(i))
		p.load(argLow(i))
		p.jset(unix.S_ISUID|unix.S_ISGID, "eperm", "allow")
	}

	// (pid, ...) with pid 0; (which, who, ...) with who 0 and which not
	// a user.
	p.label("self-only")
	p.argZero(0, "allow")
	p.label("setpriority")
	p.argZero(1, "")
	p.load(argLow(0))
	p.jeq(prioUser, "eperm", "allow")
	p.label("ioprio")
	p.argZero(1, "")
	p.load(argLow(0))
	p.jeq(ioprioWhoUser, "eperm", "allow")

	p.label("socket")
	p.load(argLow(0))
	if landlockABI >= 9 {
		p.jeq(unix.AF_UNIX, "allow", "")
	}
	p.jeq(unix.AF_INET, "inet", "")
	p.jeq(unix.AF_INET6, "inet", "eperm")
	p.label("inet")
	if allowNetwork {
		p.ret(retAllow)
	} else {
		p.load(argLow(1))
		p.and(sockTypeMask)
		p.jeq(unix.SOCK_STREAM, "", "eperm")
		p.load(argLow(2))
		p.jeq(0, "allow", "")
		p.jeq(ipprotoTCP, "allow", "eperm")
	}

	p.label("ioctl")
	p.load(argLow(1))
	for _, req := range commandDeniedIoctls {
		p.jeq(req, "eperm", "")
	}
	p.ret(retAllow)

	return p.finish()
}

// lookPath finds name in env's PATH the way execvp does, without
// consulting the launcher's own environment.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathList := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v // the last one wins, as in getenv
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, name)
		if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() && unix.Access(candidate, unix.X_OK) == nil {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("%s: command not found in PATH %q", name, pathList)
}

// inheritedReport is descriptor ReportFD when the parent handed it on
// (open), else nil: run by hand, the command's end is not reported.
func inheritedReport() *os.File {
	if _, err := unix.FcntlInt(ReportFD, unix.F_GETFD, 0); err != nil {
		return nil
	}
	return os.NewFile(ReportFD, "end report")
}
