package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger"
)

// mcpSpecs turns the configuration's mcp.servers into the specs the
// engine runs, sorted by name, without the disabled ones: "${workspace}"
// in a command, an argument or an environment value is the workspace.
func mcpSpecs(ws string, cfg config.Config) []mcp.Spec {
	expand := func(s string) string { return strings.ReplaceAll(s, "${workspace}", ws) }
	var out []mcp.Spec
	for name, srv := range cfg.MCP.Servers {
		if srv.Disabled {
			continue
		}
		argv := []string{expand(srv.Command)}
		for _, a := range srv.Args {
			argv = append(argv, expand(a))
		}
		var env map[string]string
		if len(srv.Env) > 0 {
			env = map[string]string{}
			for k, v := range srv.Env {
				env[k] = expand(v)
			}
		}
		out = append(out, mcp.Spec{Name: name, Argv: argv, Env: env, Workspace: ws, Writable: srv.Writable, Network: srv.Network,
			ReadOnly: append([]string(nil), srv.ReadOnly...), Timeout: time.Duration(srv.Timeout), TrustWorkspaceCode: srv.TrustWorkspaceCode})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mcpSandbox is how the engine runs MCP servers: through `opx
// internal-sandbox-exec` (self), each with a private home in the user's
// cache directory, outside the workspace and opx's state (beside the
// commands' home, commandTools), its stderr into log (the engine's).
func mcpSandbox(self, ws string, log io.Writer) (mcp.Sandbox, error) {
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		return mcp.Sandbox{}, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return mcp.Sandbox{}, fmt.Errorf("MCP servers' home: %w", err)
	}
	root := filepath.Join(cache, "opx", id, "mcp-home")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return mcp.Sandbox{}, fmt.Errorf("MCP servers' home: %w", err)
	}
	return mcp.Sandbox{Self: self, HomeRoot: root, Log: log}, nil
}

// mcpConfig is the engine's MCP configuration: the configured servers
// (Specs, and the Disabled ones by name) and the sandbox they, and an
// `opx mcp-proxy -- COMMAND` upstream, run in. Set even without servers.
func mcpConfig(self, ws string, cfg config.Config, log io.Writer) (*mcp.Config, error) {
	var disabled []string
	for name, srv := range cfg.MCP.Servers {
		if srv.Disabled {
			disabled = append(disabled, name)
		}
	}
	sort.Strings(disabled)
	sb, err := mcpSandbox(self, ws, log)
	if err != nil {
		return nil, err
	}
	return &mcp.Config{Sandbox: sb, Specs: mcpSpecs(ws, cfg), Disabled: disabled, MaxProxySessions: cfg.MCP.MaxProxySessions}, nil
}
