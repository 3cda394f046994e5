//go:build !linux

package cli

import "github.com/opx-dev/opx/agents/hookproto"

// agentVersion is "" where there is no /proc to find the CLI from.
func agentVersion(hookproto.Agent) string { return "" }
