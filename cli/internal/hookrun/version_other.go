//go:build !linux

package hookrun

import "github.com/opx-dev/opx/agents/hookproto"

// agentVersion is "" where there is no /proc to find the CLI from.
func agentVersion(hookproto.Agent) string { return "" }

// agentProcess is 0 and "" where there is no /proc to find the CLI from.
func agentProcess(hookproto.Agent) (int, string) { return 0, "" }
