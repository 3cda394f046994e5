package sandbox

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CommandPolicy is the sandbox of a process the engine starts on the
// agent's behalf (a shell command, git). Unlike the agent's sandbox it
// lets the process run programs and work on files, but only here:
//
//   - read, write, create, remove and rename beneath Workspace (only
//     read and execute when WorkspaceReadOnly) and Writable;
//   - read and execute beneath the system directories (see
//     commandSystemDirs) and ReadOnly; read a few kernel-wide /proc
//     files and /proc/sys; use /dev/null, /dev/zero, /dev/urandom;
//   - nothing else: $HOME, /tmp, the engine's state directory and the
//     ledger are out of reach;
//   - no TCP bind ever, and no TCP connect unless AllowNetwork;
//   - no signals to, and no abstract unix sockets of, processes outside
//     the sandbox (the engine, the agent);
//   - no ptrace, mounts, namespaces, bpf, keyrings, io_uring, kernel
//     modules, kexec, terminal injection, and no leaving the process
//     group the engine kills when the command ends.
//
// The child applies it to itself (ExecSandboxed) just before it execs the
// command, so the command and everything it starts inherit it and cannot
// shed it.
type CommandPolicy struct {
	// Workspace is the directory the command may change, and its
	// working directory.
	Workspace string
	// WorkspaceReadOnly lets the command read and execute beneath
	// Workspace but change no content there (an MCP server that is not
	// writable): creating, writing, truncating, removing, renaming,
	// linking and making nodes fail with EACCES, while Writable stays
	// read-write. It needs Landlock ABI 3 (truncation); below it the
	// policy is refused (ErrUnavailable). Landlock does not govern metadata, so a file's mode and
	// times can still be changed (chmod, utimes); seccomp cannot tell the
	// workspace's files from the private home's, where package managers
	// need chmod.
	WorkspaceReadOnly bool
	// Writable are further read-write directories, e.g. a private
	// directory for HOME, TMPDIR and build caches.
	Writable []string
	// ReadOnly are further read-and-execute directories, e.g. a Go
	// toolchain outside /usr.
	ReadOnly []string
	// AllowNetwork lets the command connect (TCP, UDP, DNS); binding a
	// TCP port stays refused either way.
	AllowNetwork bool
	// ReapGroup keeps the launcher as the command's parent instead of
	// executing it: when the launcher is told to stop (SIGTERM, SIGINT,
	// SIGHUP: the engine's death signal for MCP servers), and when the
	// command ends, it kills its whole process group, the command's
	// children included, which a parent-death signal on the command
	// alone would leave running. How the command ended it first writes
	// to descriptor ReportFD when that is open (RunSandboxedReaping).
	ReapGroup bool
}

// ReportFD is the descriptor on which a reaping launcher (ReapGroup)
// writes how its command ended, for its parent: the write end of a pipe
// whose read end the parent keeps (ExtraFiles[0]).
const ReportFD = 3

// Launch is the launcher's whole work (`opx internal-sandbox-exec ARGS`):
// it parses args as ParseCommandArgs does, then runs the command as
// RunSandboxedReaping when the policy says ReapGroup (reporting on
// ReportFD when its parent handed that on), else as ExecSandboxed. It
// returns only on failure; a policy error wraps ErrInvalidPolicy.
func Launch(args []string, env []string) error {
	p, argv, err := ParseCommandArgs(args)
	if err != nil {
		return err
	}
	if p.ReapGroup {
		return RunSandboxedReaping(p, argv, env, inheritedReport())
	}
	return ExecSandboxed(p, argv, env)
}

// ParseEndReport reads what a reaping launcher wrote on ReportFD: the
// command's exit code, or (code -1) the signal that ended it. ok is false
// for anything else (nothing written: the launcher was killed or failed
// before its command ended).
func ParseEndReport(b []byte) (code int, sig syscall.Signal, ok bool) {
	line, rest, found := strings.Cut(string(b), "\n")
	if !found || rest != "" {
		return 0, 0, false
	}
	kind, num, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > 255 {
		return 0, 0, false
	}
	switch kind {
	case "exit":
		return n, 0, true
	case "signal":
		if n == 0 || n > 64 {
			return 0, 0, false
		}
		return -1, syscall.Signal(n), true
	}
	return 0, 0, false
}

// CommandErrorPrefix starts every error ExecSandboxed returns, so that a
// launcher's report ("opx: command sandbox: ...") can be told from the
// command's own output.
const CommandErrorPrefix = "command sandbox: "

// Validate checks that every directory is absolute and clean and that
// the workspace is given.
func (p CommandPolicy) Validate() error {
	if p.Workspace == "" {
		return fmt.Errorf(CommandErrorPrefix+"%w: no workspace", ErrInvalidPolicy)
	}
	for _, d := range append(append([]string{p.Workspace}, p.Writable...), p.ReadOnly...) {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return fmt.Errorf(CommandErrorPrefix+"%w: %q is not an absolute, clean path", ErrInvalidPolicy, d)
		}
		if strings.IndexByte(d, 0) >= 0 {
			return fmt.Errorf(CommandErrorPrefix+"%w: %q contains a NUL byte", ErrInvalidPolicy, d)
		}
	}
	return nil
}

// Args renders p as the flags of `opx internal-sandbox-exec`, without the
// "--" that ends them; ParseCommandArgs reads them back. The engine's
// launcher is [opx, internal-sandbox-exec, p.Args()...].
func (p CommandPolicy) Args() []string {
	args := []string{"--workspace", p.Workspace}
	if p.WorkspaceReadOnly {
		args = append(args, "--workspace-read-only")
	}
	for _, d := range p.Writable {
		args = append(args, "--writable", d)
	}
	for _, d := range p.ReadOnly {
		args = append(args, "--read-only", d)
	}
	if p.AllowNetwork {
		args = append(args, "--allow-network")
	}
	if p.ReapGroup {
		args = append(args, "--reap-group")
	}
	return args
}

// ParseCommandArgs reads the flags Args writes (also in the --flag=value
// form), then "--" and the command's argv, which must not be empty.
func ParseCommandArgs(args []string) (CommandPolicy, []string, error) {
	var p CommandPolicy
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			argv := args[i+1:]
			if len(argv) == 0 {
				return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: no command after --", ErrInvalidPolicy)
			}
			if err := p.Validate(); err != nil {
				return p, nil, err
			}
			return p, argv, nil
		}
		name, value, inline := strings.Cut(a, "=")
		if name == "--allow-network" || name == "--workspace-read-only" || name == "--reap-group" {
			if inline {
				return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: %s takes no value", ErrInvalidPolicy, name)
			}
			switch name {
			case "--allow-network":
				p.AllowNetwork = true
			case "--workspace-read-only":
				p.WorkspaceReadOnly = true
			default:
				p.ReapGroup = true
			}
			continue
		}
		var dst *[]string
		switch name {
		case "--workspace":
		case "--writable":
			dst = &p.Writable
		case "--read-only":
			dst = &p.ReadOnly
		default:
			return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: unknown flag %q (the command follows --)", ErrInvalidPolicy, a)
		}
		if !inline {
			if i+1 >= len(args) {
				return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: %s needs a directory", ErrInvalidPolicy, name)
			}
			i++
			value = args[i]
		}
		if dst == nil {
			if p.Workspace != "" {
				return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: --workspace given twice", ErrInvalidPolicy)
			}
			p.Workspace = value
		} else {
			*dst = append(*dst, value)
		}
	}
	return p, nil, fmt.Errorf(CommandErrorPrefix+"%w: missing -- before the command", ErrInvalidPolicy)
}

// CommandSystemDirs are the directories every command may read and
// execute beneath (those of them that exist on this system), for a
// launcher that grants a program's own directory only when it is not
// already among them.
func CommandSystemDirs() []string { return commandSystemDirsList() }
