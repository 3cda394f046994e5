//go:build linux && !amd64 && !arm64

package sandbox

// No filter is written for this architecture yet, so the sandbox reports
// itself unavailable rather than run without seccomp.
const (
	seccompArch   = false
	auditArch     = 0
	x32Bit        = 0
	cloneFlagsArg = 0
)

var agentAllowed, agentRefused []int

var commandModeArgs map[int]int
