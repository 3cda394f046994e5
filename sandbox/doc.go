// Package sandbox confines the agent process with the kernel, and proves it:
// Landlock takes away the filesystem and every TCP port but the engine's,
// seccomp takes away process creation and the syscalls Landlock does not
// cover, and canary probes try the forbidden things and report what the
// kernel said.
//
// # Invariants
//
//   - ApplySelf is irreversible and covers the whole process, every
//     thread: Landlock through go-landlock at the kernel's own ABI (checked
//     here, never best-effort: a kernel without Landlock is an error, not a
//     silent no-op), seccomp with SECCOMP_FILTER_FLAG_TSYNC, no_new_privs.
//   - Before restricting, every inherited descriptor but 0, 1 and 2 is
//     closed, so nothing opened by the parent survives into the sandbox.
//   - A canary probe counts as blocked only on the errno the sandbox gives
//     (EACCES from Landlock, EPERM or ENOSYS from seccomp); any other error
//     is "failed", with the errno, because only the expected denial is
//     evidence.
//   - CanaryResult, ProbeResult, their JSON fields, the status values and
//     the status computation are those of the seed document on canary
//     probes.
package sandbox
