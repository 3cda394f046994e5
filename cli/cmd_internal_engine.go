package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/shield"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// Version is opx's version, recorded in engine.started.
const Version = "0.1.0-dev"

// internalEngineCommand is the engine process the manager starts.
func internalEngineCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-engine",
		Usage:  "run the engine (started by opx start; not for direct use)",
		Hidden: true,
		Flags: append(locationFlags(),
			&cli.StringFlag{Name: "token-file", Usage: "client token `FILE`", Required: true},
			&cli.IntFlag{Name: "manager-pid", Usage: "the manager's `PID`, for status"},
			&cli.BoolFlag{Name: "require-sandbox", Usage: "refuse an agent that cannot be sandboxed"},
		),
		Action: runInternalEngine,
	}
}

func runInternalEngine(c *cli.Context) error {
	ws, err := workspaceDir(c)
	if err != nil {
		return err
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return err
	}
	provider, err := engine.NewProvider(cfg.Provider, ws)
	if err != nil {
		return err
	}
	tok, err := os.ReadFile(c.String("token-file"))
	if err != nil {
		return fmt.Errorf("client token: %w", err)
	}
	path, err := ledgerPath(c)
	if err != nil {
		return err
	}
	l, err := ledger.Open(path, ledger.Options{})
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, ledger.Options{})
	}
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	defer l.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfgHash := ledger.Sum(nil)
	if cfg.Path != "" {
		b, err := os.ReadFile(cfg.Path)
		if err != nil {
			return err
		}
		cfgHash = ledger.Sum(b)
	}
	evaluator, policyName, err := newShield(ws, cfg, path)
	if err != nil {
		return err
	}
	errw := c.App.ErrWriter
	e, err := engine.New(engine.Options{
		Workspace: ws, Ledger: l, Provider: provider, ConfigHash: cfgHash, Policy: policyName, Evaluator: evaluator,
		Version: Version, ClientToken: strings.TrimSpace(string(tok)), MaxToolCalls: cfg.Limits.MaxToolCalls,
		ManagerPID: c.Int("manager-pid"), Stdout: c.App.Writer,
		Logf:           func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) },
		RequireSandbox: cfg.Sandbox.Require || c.Bool("require-sandbox"),
		SpawnAgent: func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
			cmd := exec.Command(self, "internal-agent", "--engine", l.Addr,
				"--canary-file", l.Canary.ReadFile, "--canary-dir", l.Canary.WriteDir, "--canary-addr", l.Canary.ConnectAddr)
			// The token goes through the environment only, never argv or
			// disk; the agent gets nothing else from ours.
			cmd.Env = []string{EnvAgentToken + "=" + l.Token}
			cmd.Stdout, cmd.Stderr = errw, errw
			return cmd, cmd.Start()
		},
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return e.Run(ctx)
}

// newShield loads the workspace's policy (config `policy:`, relative to the
// workspace) or the built-in default, and protects opx's own state: the
// ledger's directory.
func newShield(ws string, cfg config.Config, ledgerPath string) (engine.Evaluator, string, error) {
	text, name := fixtures.DefaultPolicy, "default (built in)"
	if cfg.Policy != "" {
		p := filepath.Join(ws, cfg.Policy)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("policy: %w", err)
		}
		text, name = b, cfg.Policy
	}
	policy, err := shield.ParsePolicy(text)
	if err != nil {
		return nil, "", fmt.Errorf("policy %s: %w", name, err)
	}
	home, _ := os.UserHomeDir()
	state, err := filepath.Abs(filepath.Dir(ledgerPath))
	if err != nil {
		return nil, "", err
	}
	return engine.ShieldEvaluator{S: shield.New(shield.Config{Workspace: ws, Home: home, Protected: []string{state}, Policy: policy})}, name, nil
}
