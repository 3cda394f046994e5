package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/manager"
	"github.com/opx-dev/opx/engine/mcp"
	// The sessions of the agents audited through their hooks (opx hook)
	// register with it when linked in.
	_ "github.com/opx-dev/opx/engine/hooks"
	// The mcp-proxy sessions (opx mcp-proxy) register with it when linked in.
	_ "github.com/opx-dev/opx/engine/mcpproxy"
	"github.com/opx-dev/opx/engine/registry"
	// The engine's sub-agents (agents:) register with it when linked in.
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine/judge"
	_ "github.com/opx-dev/opx/engine/subagent"
	"github.com/opx-dev/opx/engine/supervise"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/sandbox"
	"github.com/opx-dev/opx/shield"
	"github.com/urfave/cli/v2"
)

// internalEngineCommand is the engine process the manager starts.
func internalEngineCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-engine",
		Usage:  "run the engine (started by opx start; not for direct use)",
		Hidden: true,
		Flags: append(ledgerloc.Flags(),
			&cli.StringFlag{Name: "token-file", Usage: "client token `FILE`", Required: true},
			&cli.IntFlag{Name: "manager-pid", Usage: "the manager's `PID`, for status"},
			&cli.IntFlag{Name: "manager-fd", Usage: "the liveness pipe from the manager, as descriptor `FD`: EOF means the manager is gone"},
			&cli.BoolFlag{Name: "require-sandbox", Usage: "refuse an agent that cannot be sandboxed"},
		),
		Action: runInternalEngine,
	}
}

// runInternalEngine runs the engine. Whatever keeps it from starting is a
// refusal (exit 78, the reason on stdout for the manager): a retry would
// meet the same locked or unreadable ledger, the same bad configuration.
func runInternalEngine(c *cli.Context) error {
	// First, so a manager that dies while the engine starts is noticed.
	ctx, cancel := context.WithCancelCause(c.Context)
	defer cancel(nil)
	var e *engine.Engine
	var closeAll func()
	err := watchManager(c, cancel)
	if err == nil {
		// Before any key or conversation is in memory.
		err = keepMemoryOffDisk()
	}
	if err == nil {
		e, closeAll, err = newEngine(c)
	}
	if err != nil {
		fmt.Fprintf(c.App.Writer, "REFUSED:%s\n", oneLine(err.Error()))
		return &refusedError{err: err}
	}
	defer closeAll()
	return e.Run(ctx)
}

// watchManager cancels ctx with engine.ErrManagerGone when the manager
// dies (its liveness pipe, --manager-fd, reads EOF, or the parent-death
// signal, manager.DeathSignal, arrives), and with engine.ErrSignalled on
// SIGTERM or SIGINT.
func watchManager(c *cli.Context, cancel context.CancelCauseFunc) error {
	mpid := c.Int("manager-pid")
	gone := fmt.Errorf("%w (pid %d)", engine.ErrManagerGone, mpid)
	if c.IsSet("manager-fd") {
		fd := c.Int("manager-fd")
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); fd < 3 || err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return fmt.Errorf("--manager-fd %d is not the manager's liveness pipe (%v)", fd, err)
		}
		syscall.CloseOnExec(fd) // for this process only: not the agent's, not a command's
		pipe := os.NewFile(uintptr(fd), "manager-liveness")
		go func() {
			var b [1]byte
			for {
				if _, err := pipe.Read(b[:]); err != nil {
					cancel(gone) // EOF: the write end's only holder is gone
					return
				}
			}
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, manager.DeathSignal)
	go func() {
		sig := <-sigs
		if sig == manager.DeathSignal || (mpid > 0 && os.Getppid() != mpid) {
			cancel(gone)
			return
		}
		cancel(fmt.Errorf("%w: %v", engine.ErrSignalled, sig))
	}()
	return nil
}

// refusedError is an engine's refusal to start: exit 78
// (supervise.ExitRefused), reported on stdout only, since its manager
// repeats it.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// newEngine builds the engine from the flags and the workspace's
// configuration; closeAll closes what it opened.
func newEngine(c *cli.Context) (e *engine.Engine, closeAll func(), err error) {
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(ws)
	if err != nil {
		return nil, nil, err
	}
	provider, err := llm.FromConfig(cfg.Provider, ws)
	if err != nil {
		return nil, nil, err
	}
	tok, err := regularfile.Read(c.String("token-file"), 4096)
	if err != nil {
		return nil, nil, fmt.Errorf("client token: %w", err)
	}
	path, err := ledgerloc.Path(c)
	if err != nil {
		return nil, nil, err
	}
	opts := writeOptions()
	// A reader that holds the file for a moment (an offline verify) is
	// waited for; an engine that holds it is not (the manager stopped
	// any engine it knew of before starting this one).
	opts.LockTimeout = 5 * time.Second
	// The signing key lives beside the ledger, in the state directory;
	// the engine loads (or creates) and records it once the ledger is
	// open, and signs every checkpoint with it from then on.
	keeper := checkpoint.ForLedger(path)
	keeper.SetOrigin(cfg.Ledger.Origin)
	opts.SignCheckpoint = keeper.Sign
	l, err := ledger.Open(path, opts)
	if errors.Is(err, ledger.ErrNotExist) {
		l, err = ledger.Create(path, opts)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cfgHash := ledger.Sum(nil)
	if cfg.Path != "" {
		b, err := regularfile.Read(cfg.Path, config.MaxBytes)
		if err != nil {
			return nil, nil, err
		}
		cfgHash = ledger.Sum(b)
	}
	sh, err := newShield(ws, cfg, path)
	if err != nil {
		return nil, nil, err
	}
	shell, git, err := commandTools(self, ws, sh.policy)
	if err != nil {
		return nil, nil, err
	}
	var tier2 llm.Provider
	if cfg.Shield.Tier2Enabled {
		tier2 = provider
		if cfg.Shield.Tier2Provider.Kind != "" {
			if tier2, err = llm.FromConfig(cfg.Shield.Tier2Provider, ws); err != nil {
				return nil, nil, fmt.Errorf("shield.tier2_provider: %w", err)
			}
		}
	}
	errw := c.App.ErrWriter
	mcpCfg, err := mcpConfig(self, ws, cfg, errw)
	if err != nil {
		return nil, nil, err
	}
	state, err := ledgerloc.StateDir(ws)
	if err != nil {
		return nil, nil, err
	}
	// How the previous engine ended, as its manager or opx stop wrote it
	// down: it goes into the engine.crashed this engine records, if that
	// engine died. Removed once this engine has started on the ledger.
	prevEnd, err := previousEnd(state)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "engine: %v (left out)\n", err)
	}
	fleet, err := fleetConfig(cfg.Fleet)
	if err != nil {
		return nil, nil, err
	}
	e, err = engine.New(engine.Options{
		Workspace: ws, Ledger: l, Provider: provider, ConfigHash: cfgHash, Policy: sh.name, Evaluator: sh.evaluator,
		PolicyText: sh.text, ShieldEnv: sh.env, ProviderMaxTokens: cfg.Provider.MaxTokens,
		Version: Version, ClientToken: strings.TrimSpace(string(tok)), MaxToolCalls: cfg.Limits.MaxToolCalls,
		ManagerPID: c.Int("manager-pid"), PreviousEnd: prevEnd, Stdout: c.App.Writer, RunDir: filepath.Join(string(state), "run"),
		Logf:           func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) },
		RequireSandbox: cfg.Sandbox.Require || c.Bool("require-sandbox"),
		Tier2Provider:  tier2, Tier2DailyBudget: cfg.Shield.Tier2DailyBudget,
		ApprovalTimeout: time.Duration(cfg.Shield.ApprovalTimeout),
		Agents: engine.AgentsConfig{Enabled: cfg.Agents.Enabled, MaxConcurrent: cfg.Agents.MaxConcurrent,
			MaxRounds: cfg.Agents.MaxRounds, Timeout: time.Duration(cfg.Agents.Timeout)},
		Shell: shell, Git: git, MCP: mcpCfg,
		Retention:       chronicle.Retention{MaxSnapshots: cfg.Chronicle.MaxSnapshots, MaxBytes: cfg.Chronicle.MaxBytes},
		SnapshotExclude: cfg.Chronicle.Exclude,
		Protected:       protectedPaths(ws, cfg),
		HTTP:            &executor.HTTPConfig{AllowHost: allowHosts(sh.policy)},
		SpawnAgent:      agentSpawner(self, errw),
		Checkpoints:     keeper, CheckpointEntries: uint64(cfg.Ledger.CheckpointEntries),
		CheckpointInterval: time.Duration(cfg.Ledger.CheckpointInterval),
		Fleet:              fleetStarter(fleet, l, ws, keeper, func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) }),
		Witnesses:          witnessStarter(cfg.Ledger.Witnesses, cfg.Ledger.Origin, l, func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) }),
		Telemetry:          telemetryStarter(cfg.Telemetry, l, func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) }),
		Services:           grpcapi.Register,
	})
	if err != nil {
		return nil, nil, err
	}
	registry.RemoveEnd(state) // recorded, if it was about a crash
	return e, func() { l.Close() }, nil
}

// previousEnd reads the end note of the workspace's last engine
// (registry.ReadEnd) as the engine takes it; nil when there is none.
func previousEnd(state registry.Dir) (*engine.ProcessEnd, error) {
	end, ok, err := registry.ReadEnd(state)
	if !ok || err != nil {
		return nil, err
	}
	return &engine.ProcessEnd{PID: end.PID, ExitCode: end.ExitCode, Signal: end.Signal, Sender: end.Sender,
		Reason: end.Reason, Unconfirmed: end.Sent}, nil
}

// agentSpawner starts the sandboxed agent, `opx internal-agent`, for a
// live engine or a rerun.
func agentSpawner(self string, errw io.Writer) func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
	return func(ctx context.Context, l engine.AgentLaunch) (*exec.Cmd, error) {
		cmd := exec.Command(self, "internal-agent", "--engine", l.Addr,
			"--canary-file", l.Canary.ReadFile, "--canary-dir", l.Canary.WriteDir, "--canary-addr", l.Canary.ConnectAddr)
		// The token goes through the environment only, never argv or
		// disk; the agent gets nothing else from ours.
		cmd.Env = []string{EnvAgentToken + "=" + l.Token}
		if l.SubAgentID != "" {
			cmd.Args = append(cmd.Args, "--agent-id", l.SubAgentID, "--subagent", l.SubAgentID, "--parent-session", l.ParentSession)
			cmd.Env = []string{EnvSubAgentToken + "=" + l.Token}
		}
		if l.MaxRounds > 0 {
			cmd.Args = append(cmd.Args, "--max-rounds", strconv.Itoa(l.MaxRounds))
		}
		cmd.Stdout, cmd.Stderr = errw, errw
		// Without any capability from its start, even when the engine is
		// root (its sandbox then has nothing left to drop), and SIGKILLed
		// when the engine dies, however it dies: StartUnprivileged forks
		// from a thread it keeps until the agent exits, so the
		// parent-death signal fires only with the engine itself.
		supervise.ArmDeathSignal(cmd, syscall.SIGKILL)
		return cmd, sandbox.StartUnprivileged(cmd)
	}
}

// shieldSetup is Shield as newShield configured it, with what
// engine.started records of it for reruns.
type shieldSetup struct {
	evaluator judge.Evaluator
	config    shield.Config // what evaluator's Shield was built from (opx shield eval builds its own)
	policy    *shield.Policy
	name      string
	text      []byte
	env       *event.ShieldEnv
}

// newShield loads the workspace's policy (config `policy:`, relative to the
// workspace) or the built-in default, and protects opx's own state: the
// ledger's directory.
func newShield(ws string, cfg config.Config, ledgerPath string) (shieldSetup, error) {
	policyFile := ""
	if cfg.Policy != "" {
		policyFile = filepath.Join(ws, cfg.Policy)
	}
	sh, err := loadShield(ws, policyFile, cfg.Policy, ledgerPath, trustedServerCode(ws, cfg)...)
	return sh, err
}

// loadShield is newShield with the policy file given as a path (absolute,
// or "" for the built-in default) and the name it is recorded under.
// The policy file, and readOnly (absolute), are read-only to tools.
func loadShield(ws, policyFile, policyName, ledgerPath string, readOnly ...string) (shieldSetup, error) {
	text, name := fixtures.DefaultPolicy, "default (built in)"
	if policyFile != "" {
		b, err := regularfile.Read(policyFile, shield.MaxPolicyBytes)
		if err != nil {
			return shieldSetup{}, fmt.Errorf("policy: %w", err)
		}
		text, name = b, policyName
	}
	policy, err := shield.ParsePolicy(text)
	if err != nil {
		return shieldSetup{}, fmt.Errorf("policy %s: %w", name, err)
	}
	home, _ := os.UserHomeDir()
	state, err := filepath.Abs(filepath.Dir(ledgerPath))
	if err != nil {
		return shieldSetup{}, err
	}
	readOnly = append([]string{}, readOnly...)
	if policyFile != "" {
		readOnly = append([]string{policyFile}, readOnly...)
	}
	env := &event.ShieldEnv{Home: home, Protected: []string{state}, ReadOnly: readOnly, Rules: shield.RulesVersion}
	sc := shield.Config{Workspace: ws, Home: home, Protected: env.Protected, ReadOnly: readOnly, Policy: policy}
	return shieldSetup{evaluator: judge.ShieldEvaluator{S: shield.New(sc)}, config: sc, policy: policy, name: name, text: text, env: env}, nil
}

// commandTools configures execute_command and the git tools: each command
// runs through `opx internal-sandbox-exec` (Landlock read-write in the
// workspace and a private home only, no network unless the policy's
// network.commands allows it). The private home lives in the user's cache
// directory, outside both the workspace and opx's state.
func commandTools(self, ws string, policy *shield.Policy) (*executor.ShellConfig, *executor.GitConfig, error) {
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		return nil, nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, nil, fmt.Errorf("command home: %w", err)
	}
	home := filepath.Join(cache, "opx", id, "cmd-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, fmt.Errorf("command home: %w", err)
	}
	p := sandbox.CommandPolicy{Workspace: ws, Writable: []string{home}, AllowNetwork: policy.Network.Commands}
	env := []string{"GOTOOLCHAIN=local", "GOTELEMETRY=off"}
	// A Go toolchain outside the system directories (~/sdk/go, say) is
	// made readable, and its bin put on the command's PATH.
	if goBin, err := exec.LookPath("go"); err == nil {
		if real, err := filepath.EvalSymlinks(goBin); err == nil {
			root := filepath.Dir(filepath.Dir(real))
			if !strings.HasPrefix(root, "/usr/") && !strings.HasPrefix(root, "/opt/") {
				p.ReadOnly = append(p.ReadOnly, root)
				env = append(env, "PATH="+filepath.Join(root, "bin")+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
			}
		}
	}
	launcher := append([]string{self, "internal-sandbox-exec"}, p.Args()...)
	gitPolicy := p
	gitPolicy.AllowNetwork = false
	gitLauncher := append([]string{self, "internal-sandbox-exec"}, gitPolicy.Args()...)
	return &executor.ShellConfig{Launcher: launcher, TempDir: home, Env: env}, &executor.GitConfig{Launcher: gitLauncher}, nil
}

// allowHosts is the policy's network.allow_hosts as a check: the HTTP
// executor's defence in depth behind Shield, and the only check a
// redirect's host gets.
func allowHosts(policy *shield.Policy) func(string) bool {
	return func(host string) bool {
		for _, g := range policy.Network.AllowHosts {
			if ok, _ := path.Match(g, host); ok {
				return true
			}
		}
		return false
	}
}

// protectedPaths are the workspace paths no tool may change: opx's
// configuration directory and the policy file, wherever it is.
func protectedPaths(ws string, cfg config.Config) []string {
	out := []string{config.Dir}
	if cfg.Policy != "" {
		out = append(out, filepath.ToSlash(filepath.Clean(cfg.Policy)))
	}
	for _, p := range trustedServerCode(ws, cfg) {
		if rel, err := filepath.Rel(ws, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// trustedServerCode is the code in the workspace of the MCP servers
// configured with trust_workspace_code (absolute paths): read-only to
// the agent's tools (Shield) and restored after a command that changes
// it (protected), as opx's own configuration is, so that what the agent
// writes never runs with a server's sandbox (review #3). A server whose
// code cannot be found is left to fail at its start.
func trustedServerCode(ws string, cfg config.Config) []string {
	var out []string
	for _, spec := range mcpSpecs(ws, cfg) {
		if !spec.TrustWorkspaceCode {
			continue
		}
		code, err := mcp.WorkspaceCode(spec)
		if err != nil {
			continue
		}
		for _, rel := range code {
			if p := filepath.Join(ws, filepath.FromSlash(rel)); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
