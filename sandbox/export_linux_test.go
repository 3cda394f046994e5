package sandbox

// The agent filter's lists, for the test that walks every syscall number.
var (
	AgentAllowed     = agentAllowed
	AgentConditional = agentConditional
	AgentRefused     = agentRefused
)

// CommandDenied is the commands' deny-list.
var CommandDenied = commandDeniedSyscalls
