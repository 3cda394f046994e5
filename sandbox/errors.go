package sandbox

import "errors"

// Errors of applying a sandbox.
var (
	// ErrUnavailable is returned when the kernel has no Landlock or no
	// seccomp filter support: the sandbox cannot be applied.
	ErrUnavailable = errors.New("kernel sandbox unavailable")
	// ErrPrivileged is returned when a thread of the process still holds
	// a capability after the sandbox dropped them all.
	ErrPrivileged = errors.New("capabilities remain")
)

// Errors of CommandPolicy and ExecSandboxed.
var (
	// ErrInvalidPolicy is returned when a CommandPolicy or the launcher's
	// arguments are malformed: a missing or relative directory, no
	// command.
	ErrInvalidPolicy = errors.New("invalid command policy")
)
