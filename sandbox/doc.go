// Package sandbox confines the agent process with the kernel, and proves it:
// the process first sheds every capability (root's powers are not Landlock's
// to take), Landlock takes away the filesystem and every TCP port but the
// engine's, a seccomp allow-list takes away everything else the Go runtime
// and a gRPC client do not need, and canary probes try the forbidden things
// and report what the kernel said. Commands the engine runs get a looser
// sandbox of their own (CommandPolicy): no capabilities either, Landlock
// beneath the workspace (read-only for an MCP server that may not write:
// WorkspaceReadOnly), and a seccomp deny-list.
//
// # Invariants
//
//   - ApplySelf is irreversible and covers the whole process, every
//     thread: capabilities dropped through psx on every thread (bounding,
//     ambient, effective, permitted, inheritable; securebits locked),
//     Landlock through go-landlock at the kernel's own ABI (checked here,
//     never best-effort: a kernel without Landlock is an error, not a
//     silent no-op), seccomp with SECCOMP_FILTER_FLAG_TSYNC, no_new_privs.
//   - The engine starts the agent with StartUnprivileged, so that it holds
//     no capability from its first instruction; ApplySelf then finds
//     nothing to drop and only checks.
//   - The agent's seccomp filter is an allow-list: a syscall not on it
//     fails with EPERM when it is one an escape would try (agentRefused),
//     with ENOSYS otherwise; foreign architectures and x32 are killed.
//   - Neither sandbox lets a process connect or listen past Landlock's
//     port rules by other means (TCP Fast Open, listen's autobind).
//   - Before restricting, every inherited descriptor but 0, 1 and 2 is
//     closed, so nothing opened by the parent survives into the sandbox.
//   - A canary probe counts as blocked only on the errno the sandbox gives
//     (EACCES from Landlock, EPERM or ENOSYS from seccomp); any other error
//     is "failed", with the errno, because only the expected denial is
//     evidence.
//   - CanaryResult, ProbeResult, their JSON fields, the status values and
//     the status computation are those of the seed document on canary
//     probes.
//   - The canary's targets (PlantCanaryTargets) are planted in a directory
//     named after the engine's pid; a later engine removes those whose
//     engine is gone, and only those.
package sandbox
