package engine_test

import "github.com/opx-dev/opx/internal/mcptest"

// mcpPolicy is the policy docs/mcp.md suggests for the filesystem server.
const mcpPolicy = mcptest.FilesystemPolicy
