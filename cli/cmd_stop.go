package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop the workspace's engine and agent",
		UsageText: "opx stop [--workspace DIR]",
		Description: "Asks the engine to shut down cleanly and waits until its manager has exited. An engine whose\n" +
			"manager is gone is sent SIGTERM (SIGKILL after 10 s), once its pid is checked to still be that\n" +
			"engine's.\n\n" + exitCodesHelp(""),
		Flags:  ledgerloc.WorkspaceFlags(),
		Action: runStop,
	}
}

func runStop(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	ec, err := dialEngine(c)
	if errors.Is(err, registry.ErrNotRunning) {
		return stopOrphan(c, err)
	}
	if err != nil {
		return err
	}
	defer ec.Close()
	if _, err := ec.client.Shutdown(ec.ctx, &opxv1.ShutdownRequest{Reason: "opx stop"}); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	ws, _ := ledgerloc.WorkspaceDir(c)
	dir, _ := ledgerloc.StateDir(ws)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, _, err := registry.Lookup(dir); errors.Is(err, registry.ErrNotRunning) {
			fmt.Fprintf(c.App.Writer, "opx: stopped (manager pid %d)\n", ec.entry.ManagerPID)
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the engine was asked to stop but its manager (pid %d) is still running", ec.entry.ManagerPID)
}

// stopOrphan stops the workspace's engine if it runs without its manager,
// or returns notRunning.
func stopOrphan(c *cli.Context, notRunning error) error {
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return err
	}
	e, err := registry.Orphan(dir)
	if err != nil {
		return notRunning
	}
	if err := registry.StopNoted(dir, e, 10*time.Second, fmt.Sprintf("opx stop: the engine ran without its manager (pid %d)", e.ManagerPID)); err != nil {
		return err
	}
	registry.Orphan(dir) // removes the stale entry now that its engine is gone
	fmt.Fprintf(c.App.Writer, "opx: stopped the engine (pid %d) that ran without its manager (pid %d)\n", e.EnginePID, e.ManagerPID)
	return nil
}
