package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/opx-dev/opx/agent"
	"github.com/urfave/cli/v2"
)

// EnvAgentToken carries the agent's token from the engine; the agent
// removes it from its environment at once.
const EnvAgentToken = "OPX_AGENT_TOKEN"

func internalAgentCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-agent",
		Usage:  "run the agent (started by the engine; not for direct use)",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "engine", Usage: "the engine's gRPC `ADDR`", Required: true},
			&cli.StringFlag{Name: "agent-id", Value: "agent-1", Usage: "agent `ID`"},
		},
		Action: runInternalAgent,
	}
}

func runInternalAgent(c *cli.Context) error {
	token := os.Getenv(EnvAgentToken)
	os.Unsetenv(EnvAgentToken)
	if token == "" {
		return usagef(c, "no agent token in $%s (the engine starts the agent)", EnvAgentToken)
	}
	// Until the sandbox package exists the agent runs unconfined and says
	// so: the engine records status "unavailable" and warns loudly. The
	// sandbox issue applies Landlock and seccomp here and runs the probes.
	canary, err := json.Marshal(map[string]any{
		"verified": false, "status": "unavailable", "platform": runtime.GOOS, "mechanism": "none",
		"probes": []any{}, "summary": "sandbox not applied: opx has no sandbox yet",
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = agent.Run(ctx, agent.Config{Addr: c.String("engine"), Token: token, AgentID: c.String("agent-id"), CanaryJSON: canary})
	if err != nil && ctx.Err() != nil {
		return nil // stopped by a signal: a clean stop
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
