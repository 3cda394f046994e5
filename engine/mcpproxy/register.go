package mcpproxy

import (
	"github.com/opx-dev/opx/engine"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Linked in, the package gives each engine its mcp-proxy sessions.
func init() {
	engine.UseMCPProxies(func() engine.MCPProxies { return newProxySessions() })
}

// Bind gives the sessions their engine (engine.MCPProxies).
func (p *proxySessions) Bind(e *engine.Engine) { p.e = e }

// Service serves McpProxyService for the engine (engine.MCPProxies).
func (p *proxySessions) Service() opxv1.McpProxyServiceServer { return &mcpProxyService{p: p} }
