package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/opx-dev/opx/cli/internal/daemon"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/urfave/cli/v2"
)

func mcpProxyCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp-proxy",
		Usage:     "put opx between any MCP client and an MCP server: every tool call judged and recorded",
		UsageText: "opx mcp-proxy [--workspace DIR] SERVER\n   opx mcp-proxy [--workspace DIR] [--writable] [--network] -- COMMAND [ARGS...]",
		Description: "An MCP server on stdio (newline-delimited JSON-RPC) for any MCP client, in front of an upstream MCP\n" +
			"server: SERVER names one of the workspace's mcp.servers (.opx/config.yaml), or everything after \"--\"\n" +
			"is the upstream's command line. The upstream is started by the workspace's engine (which is started\n" +
			"in the background if none runs, as `opx start --daemon` would) in the command sandbox: system\n" +
			"directories and its own install directory read-only, the workspace read-only unless writable\n" +
			"(--writable, or the server's configuration), no network unless allowed (--network, or the\n" +
			"configuration), a private home.\n\n" +
			"Each client connection is one session (mode mcp-proxy), with the client's name and version recorded.\n" +
			"Every tools/call goes through Shield like a call of opx's own agent: blocked calls come back as MCP\n" +
			"tool errors that say why; calls Shield asks a human about wait for `opx approve ID` or `opx deny ID`\n" +
			"from another terminal (shown on stderr), or, with --elicit-approvals, also for the client's own\n" +
			"prompt where it supports MCP elicitation (off by default: the client is the audited party, and\n" +
			"one that answers its own prompt approves itself); a writable upstream's calls are snapshotted first\n" +
			"(opx rollback). tools/list,\n" +
			"resources/*, prompts/* and completion/complete pass through and are recorded. Review a session\n" +
			"as any other: opx sessions, opx replay ID, opx report ID, opx rollback --session ID.\n\n" +
			"The upstream does not inherit the proxy's environment (the engine starts it): --env NAME passes one\n" +
			"variable on (an API token the client's configuration sets), never recorded.\n\n" +
			"stdout carries MCP only; everything opx says goes to stderr. The session ends when the client\n" +
			"disconnects (stdin closes): the upstream is stopped and its end recorded.\n\n" +
			"Example client configuration (Claude Desktop, Cursor, VS Code ...):\n" +
			"   {\"mcpServers\": {\"fs\": {\"command\": \"opx\", \"args\": [\"mcp-proxy\", \"--workspace\", \"/path/to/project\", \"fs\"]}}}\n\n" +
			exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.BoolFlag{Name: "writable", Usage: "with -- COMMAND: the upstream may change the workspace (each call snapshotted first)"},
			&cli.BoolFlag{Name: "network", Usage: "with -- COMMAND: the upstream may connect out"},
			&cli.BoolFlag{Name: "elicit-approvals", Usage: "also ask the client's user (MCP elicitation) about calls Shield escalates to a human; off by default, as a client that answers its own prompts would approve itself"},
			&cli.StringSliceFlag{Name: "env", Usage: "pass the environment variable `NAME` (from the proxy's environment, as the MCP client set it) to the upstream; repeatable; its value is never recorded"},
		),
		Action: runMCPProxy,
	}
}

// proxyTarget is the upstream a proxy asks for.
type proxyTarget struct {
	server            string   // a configured server's name, or
	command           []string // a command line
	writable, network bool
	env               map[string]string // passed on to the upstream
	elicit            bool              // --elicit-approvals
	workspace         string            // for the opx approve / opx deny the proxy shows
}

// mcpProxyTarget reads SERVER or `-- COMMAND ARGS...` from the command
// line. urfave/cli drops the "--" that ends the flags, so the raw
// arguments decide which was meant: a command follows a "--" given before
// any other argument.
func mcpProxyTarget(c *cli.Context) (proxyTarget, error) {
	t := proxyTarget{writable: c.Bool("writable"), network: c.Bool("network"), elicit: c.Bool("elicit-approvals")}
	for _, name := range c.StringSlice("env") {
		v, ok := os.LookupEnv(name)
		if !ok {
			return t, usage.Errorf(c, "--env %s: the variable is not set in the proxy's environment", name)
		}
		if t.env == nil {
			t.env = map[string]string{}
		}
		t.env[name] = v
	}
	args := c.Args().Slice()
	if raw := rawCommandArgs(c); len(args) > 0 {
		for i, a := range raw {
			if a == "--" && slices.Equal(raw[i+1:], args) {
				t.command = slices.Clone(args)
				// The engine starts the upstream, with its own directory
				// and PATH: the command is found here, as the client's
				// configuration meant it (review #12).
				prog, err := proxyProgram(t.command[0])
				if err != nil {
					return t, usage.Errorf(c, "%v", err)
				}
				t.command[0] = prog
				return t, nil
			}
		}
	}
	pos, err := wantArgs(c, 1, 1, "SERVER (a configured MCP server) or -- COMMAND")
	if err != nil {
		return t, err
	}
	t.server = pos[0]
	if t.writable || t.network {
		return t, usage.Errorf(c, "--writable and --network are for -- COMMAND; a configured server's sandbox is its configuration's (mcp.servers.%s)", t.server)
	}
	return t, nil
}

// rawCommandArgs are the command's arguments as given, flags and "--"
// included (from the parent context, which urfave leaves unparsed).
func rawCommandArgs(c *cli.Context) []string {
	lin := c.Lineage()
	if len(lin) < 2 {
		return nil
	}
	raw := lin[1].Args().Slice()
	if i := slices.Index(raw, c.Command.Name); i >= 0 {
		return raw[i+1:]
	}
	return nil
}

func runMCPProxy(c *cli.Context) error {
	target, err := mcpProxyTarget(c)
	if err != nil {
		return err
	}
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	if target.server != "" {
		// Checked here too, so a typo is a usage error at once; the
		// engine judges by the configuration it runs with.
		cfg, err := config.Load(ws)
		if err != nil {
			return usage.Errorf(c, "%v", err)
		}
		if _, ok := cfg.MCP.Servers[target.server]; !ok {
			return usage.Errorf(c, "no MCP server %q is configured in %s (mcp.servers)", target.server, filepath.Join(ws, config.Dir, "config.yaml"))
		}
	}
	ec, err := attachEngine(c, ws)
	if err != nil {
		return err
	}
	defer ec.Close()
	target.workspace = ws
	p := newMCPProxy(c, ec, target)
	return p.run()
}

// engineProgram is the opx binary attachEngine starts an engine with:
// this one (tests start a built opx, or one that cannot start).
var engineProgram = os.Executable

// attachEngine connects to the engine of workspace ws (absolute and
// symlink-free), starting one in the background first if none runs. What
// it says goes to stderr, prefixed with the command's name: stdout is the
// client's (MCP for mcp-proxy, the hook's answer for hook).
func attachEngine(c *cli.Context, ws string) (*engineClient, error) {
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return nil, err
	}
	if _, _, err := registry.Lookup(dir); errors.Is(err, registry.ErrNotRunning) {
		self, err := engineProgram()
		if err != nil {
			return nil, err
		}
		path, err := ledgerloc.WorkspaceLedger(ws)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c.App.ErrWriter, "opx %s: no engine runs for %s; starting one in the background\n", c.Command.Name, ws)
		if err := spawnDaemon(c, c.App.ErrWriter, self, ws, dir, path); err != nil && !errors.Is(err, registry.ErrRunning) {
			// Another proxy may have started one meanwhile (this one's
			// manager then refused to be a second): the registry says.
			if _, _, lerr := registry.Lookup(dir); lerr != nil && !errors.Is(lerr, registry.ErrStarting) {
				return nil, err
			}
		}
	}
	ec, err := dialWorkspace(c, ws)
	if errors.Is(err, registry.ErrStarting) {
		ec, err = waitEngine(c, ws, dir)
	}
	return ec, err
}

// waitEngine waits (up to 35 s, as opx start --daemon does) for an engine
// that is starting.
func waitEngine(c *cli.Context, ws string, dir registry.Dir) (*engineClient, error) {
	if err := daemon.Wait(c.Context, dir); err != nil {
		return nil, err
	}
	return dialWorkspace(c, ws)
}

// proxyProgram is the absolute path of an upstream's program as the
// proxy's own working directory and PATH find it.
func proxyProgram(name string) (string, error) {
	if name == "" {
		return "", errors.New("the command is empty")
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("the upstream's program: %w", err)
	}
	return filepath.Abs(p)
}
