package engine

import "github.com/opx-dev/opx/engine/mcp"

// newMCPManager builds the Manager of the engine's servers.
var newMCPManager = func(sb mcp.Sandbox, specs []mcp.Spec, rec mcp.Recorder) MCPServers {
	return mcp.NewManager(sb, specs, rec)
}
