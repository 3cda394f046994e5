package engine_test

// The engine's tests run it with its sub-agents and its mcp-proxy
// sessions, as opx does.
import (
	_ "github.com/opx-dev/opx/engine/mcpproxy"
	_ "github.com/opx-dev/opx/engine/subagent"
)
