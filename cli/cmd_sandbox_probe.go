package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/sandbox"
	"github.com/urfave/cli/v2"
)

// sandboxCommand is the "opx sandbox" group.
func sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:      "sandbox",
		Usage:     "inspect the agent's kernel sandbox",
		UsageText: "opx sandbox COMMAND [options]",
		Action:    unknownCommand,
		Subcommands: []*cli.Command{{
			Name:      "probe",
			Usage:     "apply the agent's sandbox in a child process and print its canary result",
			UsageText: "opx sandbox probe [--json]",
			Description: "Plants a readable file, a writable directory and a listening port, starts a child that sandboxes\n" +
				"itself exactly as the agent does (Landlock + seccomp, one allowed TCP port), and reports what\n" +
				"each probe got from the kernel: file_read, file_write, network, process_spawn.\n\n" +
				"EXIT CODES:\n   0  sandboxed: every probe blocked\n   1  partial, unsandboxed or unavailable, or the probe could not run\n   2  usage error",
			Flags:  []cli.Flag{ui.JSONFlag()},
			Action: runSandboxProbe,
		}},
	}
}

// errNotSandboxed is returned when a canary result is not "sandboxed".
var errNotSandboxed = errors.New("the sandbox is not in force")

func runSandboxProbe(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	r, err := liveCanary()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := ui.WriteJSON(c, r); err != nil {
			return err
		}
	} else {
		printCanary(c.App.Writer, r)
	}
	if r.Status != sandbox.StatusSandboxed {
		return fmt.Errorf("%w: %s", errNotSandboxed, r.Summary)
	}
	return nil
}

// printCanary shows a canary result, a probe a line.
func printCanary(w io.Writer, r sandbox.CanaryResult) {
	status := r.Status
	if r.Verified {
		status = ui.Green(w, status)
	} else {
		status = ui.Red(w, status)
	}
	fmt.Fprintf(w, "%s (%s on %s)\n%s\n", status, r.Mechanism, r.Platform, r.Summary)
	for _, p := range r.Probes {
		line := fmt.Sprintf("  %-14s %-8s %s", p.Name, p.Status, p.Target)
		if p.Error != "" {
			line += "  (" + p.Error + ")"
		}
		fmt.Fprintln(w, line)
	}
}
