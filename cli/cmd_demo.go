package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "run a short session with the offline scripted model and verify its ledger",
		UsageText: "opx demo [--workspace DIR]",
		Description: "Starts the real engine and agent (opx start) on a small project workspace — a temporary one,\n" +
			"with its ledger in a temporary state directory, unless --workspace is given — sends a few\n" +
			"messages to the scripted model, stops the engine, verifies the ledger strictly and shows\n" +
			"what to try next. Needs no network and no API key.\n\n" + exitCodesHelp("the demo's ledger does not verify"),
		Flags:  []cli.Flag{&cli.StringFlag{Name: "workspace", Usage: "use workspace `DIR` (created if missing) instead of a temporary one"}},
		Action: runDemo,
	}
}

// demoFiles is the small project the demo works on.
var demoFiles = map[string]string{
	"README.md": "# invoice-tool\n\nSums the line items of invoices.\n\nRun the tests with `go test ./...`.\n",
	"go.mod":    "module example.com/invoice\n\ngo 1.22\n",
	"billing/totals.go": "package billing\n\n// Total sums the line items of an invoice, in cents.\nfunc Total(items []int) int {\n" +
		"\tsum := 0\n\tfor _, v := range items {\n\t\tsum += v\n\t}\n\treturn sum\n}\n",
	"notes/todo.md": "- handle refunds (negative items)\n- round VAT per line, not per invoice\n",
}

var demoMessages = []string{
	"list the files in this workspace",
	"read README.md",
	"read billing/totals.go",
}

func runDemo(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	w := c.App.Writer
	ws := c.String("workspace")
	if ws == "" {
		tmp, err := os.MkdirTemp("", "opx-demo-")
		if err != nil {
			return err
		}
		ws = filepath.Join(tmp, "workspace")
		// The temporary workspace keeps its ledger beside it, not in the
		// user's state directory.
		if err := os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state")); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	for name, content := range demoFiles {
		p := filepath.Join(ws, name)
		if _, err := os.Stat(p); err == nil {
			continue // never overwrite the user's files
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := c.Set("workspace", ws); err != nil {
		return err
	}
	ws, err := workspaceDir(c)
	if err != nil {
		return err
	}
	dir, err := stateDir(ws)
	if err != nil {
		return err
	}
	ledgerFile := filepath.Join(string(dir), "ledger.db")
	self, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "== opx demo\nworkspace %s\nledger    %s\n\n== opx start (process manager → engine → agent)\n", ws, ledgerFile)
	logPath := filepath.Join(string(dir), "demo-engine.log")
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	mgr := exec.Command(self, "start", "--workspace", ws)
	mgr.Stdout, mgr.Stderr = logf, logf
	if err := mgr.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- mgr.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			mgr.Process.Kill()
			<-exited
		}
	}()
	if err := waitRegistry(dir, exited, 30*time.Second); err != nil {
		return fmt.Errorf("%w (engine log: %s)", err, logPath)
	}
	ec, err := dialEngine(c)
	if err != nil {
		return err
	}
	defer ec.Close()
	// Wait for the agent to connect, so the status shows its sandbox.
	var st *opxv1.StatusResponse
	for start := time.Now(); ; {
		if st, err = ec.client.GetStatus(ec.ctx, &opxv1.StatusRequest{}); err != nil {
			return err
		}
		if st.SandboxStatus != "no agent" || time.Since(start) > 10*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(w, "engine pid %d on 127.0.0.1:%d, agent pid %d\nsandbox   %s (%s)\n", st.EnginePid, st.GrpcPort, st.AgentPid, st.SandboxStatus, st.SandboxSummary)

	// Tool calls and verdicts go to stderr in opx send; here they belong
	// in the story, in order, on stdout.
	errw := c.App.ErrWriter
	c.App.ErrWriter = w
	defer func() { c.App.ErrWriter = errw }()

	session := ""
	for _, msg := range demoMessages {
		fmt.Fprintf(w, "\n== opx send %q\n", msg)
		stream, err := ec.client.SendMessage(ec.ctx, &opxv1.ClientMessageRequest{SessionId: session, Content: msg})
		if err != nil {
			return fmt.Errorf("send: %w", err)
		}
		if session, err = printEvents(c, stream, false); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\n== opx stop\n")
	if _, err := ec.client.Shutdown(ec.ctx, &opxv1.ShutdownRequest{Reason: "opx demo finished"}); err != nil {
		return err
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			return fmt.Errorf("opx start exited with %v (engine log: %s)", err, logPath)
		}
	case <-time.After(20 * time.Second):
		return fmt.Errorf("the engine did not stop (engine log: %s)", logPath)
	}

	fmt.Fprintf(w, "stopped\n\n== opx ledger verify --strict\n")
	l, err := ledger.OpenReadOnly(ledgerFile)
	if err != nil {
		return err
	}
	rep, err := l.Verify(event.StrictOptions())
	l.Close()
	if err != nil {
		return err
	}
	printReport(w, rep)
	if !rep.OK {
		return fmt.Errorf("verify %s: %w", ledgerFile, rep.Err())
	}
	fmt.Fprintf(w, "\nEvery model call, proposal, verdict and execution above is in that ledger. Try:\n"+
		"  opx ledger tail -n 30 --ledger %[1]s\n"+
		"  opx ledger show 12 --ledger %[1]s\n"+
		"  opx ledger export -o /tmp/demo.jsonl.zst --ledger %[1]s\n"+
		"  opx start --workspace %[2]s    (then opx chat --workspace %[2]s)\n", ledgerFile, ws)
	if session != "" {
		fmt.Fprintf(w, "  opx ledger export --session %s -o /tmp/demo-session.jsonl --ledger %s\n", session, ledgerFile)
	}
	return nil
}

// waitRegistry waits until the engine is in the registry, the manager
// exits, or the timeout passes.
func waitRegistry(dir registry.Dir, exited <-chan error, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		if _, _, err := registry.Lookup(dir); err == nil {
			return nil
		}
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exited")
			}
			return fmt.Errorf("opx start ended before the engine was up: %v", err)
		case <-deadline:
			return fmt.Errorf("the engine was not up after %v", timeout)
		case <-time.After(30 * time.Millisecond):
		}
	}
}
