package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/opx-dev/opx/agent"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/sandbox"
	"github.com/urfave/cli/v2"
)

// EnvAgentToken carries the agent's token from the engine; the agent
// removes it from its environment at once.
const EnvAgentToken = "OPX_AGENT_TOKEN"

// EnvSubAgentToken carries a sub-agent's own token the same way.
const EnvSubAgentToken = "OPX_SUB_AGENT_TOKEN"

func internalAgentCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-agent",
		Usage:  "run the agent (started by the engine; not for direct use)",
		Hidden: true,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "engine", Usage: "the engine's gRPC `ADDR` (127.0.0.1:port)", Required: true},
			&cli.StringFlag{Name: "agent-id", Value: "agent-1", Usage: "agent `ID`"},
			&cli.StringFlag{Name: "subagent", Usage: "run as the sub-agent `ID` (token in $" + EnvSubAgentToken + ")"},
			&cli.StringFlag{Name: "parent-session", Usage: "the sub-agent's parent `SESSION`"},
			&cli.IntFlag{Name: "max-rounds", Usage: "model calls per message (`N`; default 25)"},
		}, canaryFlags()...),
		Action: runInternalAgent,
	}
}

// canaryFlags name the canary probes' targets the engine planted.
func canaryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "canary-file", Usage: "a readable `FILE` the sandbox must hide"},
		&cli.StringFlag{Name: "canary-dir", Usage: "a writable `DIR` the sandbox must protect"},
		&cli.StringFlag{Name: "canary-addr", Usage: "a listening `HOST:PORT` the sandbox must not reach"},
	}
}

func canaryTargets(c *cli.Context) sandbox.CanaryTargets {
	return sandbox.CanaryTargets{ReadFile: c.String("canary-file"), WriteDir: c.String("canary-dir"),
		ConnectAddr: c.String("canary-addr"), SpawnPath: "/proc/self/exe", SpawnArgs: []string{"--help"}}
}

// sandboxSelf applies the agent's sandbox (nothing but TCP to port) and
// runs the canary probes. Where no sandbox exists the result says
// "unavailable"; the engine decides what to do with either.
func sandboxSelf(port uint16, targets sandbox.CanaryTargets) sandbox.CanaryResult {
	sb := sandbox.New()
	if !sb.Available() {
		return sb.UnavailableCanary(targets, "no kernel sandbox: "+sb.Probe().Detail)
	}
	if err := sb.ApplySelf(sandbox.Config{ConnectTCP: []uint16{port}}); err != nil {
		return sb.UnavailableCanary(targets, "sandbox not applied: "+err.Error())
	}
	return sb.VerifyCanary(targets)
}

func runInternalAgent(c *cli.Context) error {
	env := EnvAgentToken
	if c.String("subagent") != "" {
		env = EnvSubAgentToken
	}
	token := os.Getenv(env)
	os.Unsetenv(EnvAgentToken)
	os.Unsetenv(EnvSubAgentToken)
	if token == "" {
		return usage.Errorf(c, "no agent token in $%s (the engine starts the agent)", env)
	}
	_, portText, err := net.SplitHostPort(c.String("engine"))
	port, perr := strconv.ParseUint(portText, 10, 16)
	if err != nil || perr != nil || port == 0 {
		return usage.Errorf(c, "--engine %q is not HOST:PORT", c.String("engine"))
	}
	// Its memory holds the token and, off the record, the conversation:
	// keep it out of core dumps (the engine's limit is inherited already).
	if err := keepMemoryOffDisk(); err != nil {
		return err
	}
	// First thing, before any connection or any other read: the sandbox.
	result := sandboxSelf(uint16(port), canaryTargets(c))
	canary, err := json.Marshal(result)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = agent.Run(ctx, agent.Config{Addr: c.String("engine"), Token: token, AgentID: c.String("agent-id"), CanaryJSON: canary,
		SubAgentID: c.String("subagent"), ParentSession: c.String("parent-session"), MaxRounds: c.Int("max-rounds")})
	if err != nil && ctx.Err() != nil {
		return nil // stopped by a signal: a clean stop
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
