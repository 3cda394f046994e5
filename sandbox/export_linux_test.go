package sandbox

// The agent filter's lists, for the test that walks every syscall number.
var (
	AgentAllowed     = agentAllowed
	AgentConditional = agentConditional
	AgentRefused     = agentRefused
)

// CommandDenied is the commands' deny-list.
var CommandDenied = commandDeniedSyscalls

// CommandPolicyUnavailable is the check of a policy against a kernel's
// capabilities, for the table test of kernels this machine is not.
var CommandPolicyUnavailable = commandPolicyUnavailable
