package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/opx-dev/opx/cli/internal/daemon"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/manager"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/urfave/cli/v2"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "start the engine and its sandboxed agent for a workspace",
		UsageText: "opx start [--workspace DIR] [--daemon]",
		Description: "Runs the process manager: it refuses a second instance for the workspace, starts the engine\n" +
			"(which starts the agent), restarts it after a crash (at most 5 crashes in 60 s) or when it asks\n" +
			"to (exit 75), and stops it on SIGTERM/SIGINT (SIGKILL after 5 s). An engine that refuses to start\n" +
			"(its ledger locked or unreadable, its configuration bad) is not retried: opx start says why, once,\n" +
			"and exits 1. The engine and agent never outlive the manager, however it dies; an engine left\n" +
			"running by an older manager is stopped first. Every signal it sends the engine is logged, with\n" +
			"the reason, before it is sent; the next engine's engine.crashed says which signal ended a crashed\n" +
			"engine and whether opx sent it (docs/process-signals.md).\n\n" +
			"Without --daemon it stays in the foreground and logs to stderr; with --daemon it detaches, logs\n" +
			"to engine.log in the state directory, and returns once the engine is up.\n\n" + exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.BoolFlag{Name: "daemon", Usage: "run in the background"},
			&cli.BoolFlag{Name: "require-sandbox", Usage: "refuse to run the agent unsandboxed where the kernel has no sandbox (default: a loud warning)"},
		),
		Action: runStart,
	}
}

func runStart(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	if _, err := config.Load(ws); err != nil {
		return usage.Errorf(c, "%v", err)
	}
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return err
	}
	path, err := ledgerloc.WorkspaceLedger(ws) // the engine keeps the workspace's own ledger
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if c.Bool("daemon") {
		return startDaemon(c, self, ws, dir, path)
	}
	errw := c.App.ErrWriter
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return manager.Run(ctx, manager.Options{
		Workspace: ws, StateDir: dir, Ledger: path,
		Engine: func(spec manager.EngineSpec) *exec.Cmd {
			args := []string{"internal-engine", "--workspace", ws, "--ledger", path,
				"--token-file", spec.TokenFile, "--manager-pid", strconv.Itoa(os.Getpid()), "--manager-fd", strconv.Itoa(spec.LivenessFD)}
			if c.Bool("require-sandbox") {
				args = append(args, "--require-sandbox")
			}
			cmd := exec.Command(self, args...)
			cmd.Stderr = errw
			return cmd
		},
		Logf: func(format string, args ...any) { fmt.Fprintf(errw, format+"\n", args...) },
		OnReady: func(e registry.Entry) {
			fmt.Fprintf(c.App.Writer, "opx: engine running on %s (engine pid %d, manager pid %d)\n  workspace %s\n  ledger    %s\n",
				e.Addr(), e.EnginePID, e.ManagerPID, e.Workspace, e.Ledger)
		},
	})
}

// startDaemon re-runs `opx start` detached (its own session, output to
// engine.log) and waits until the engine is in the registry.
func startDaemon(c *cli.Context, self, ws string, dir registry.Dir, path string) error {
	return spawnDaemon(c, c.App.Writer, self, ws, dir, path)
}

// spawnDaemon is startDaemon saying what it did on w.
func spawnDaemon(c *cli.Context, w io.Writer, self, ws string, dir registry.Dir, path string) error {
	var extra []string
	if c.Bool("require-sandbox") {
		extra = append(extra, "--require-sandbox")
	}
	return daemon.Start(w, self, ws, dir, extra...)
}
