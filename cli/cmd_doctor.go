package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/opx-dev/opx/sandbox"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check the kernel sandbox, a live canary, the engine and the ledger",
		UsageText: "opx doctor [--workspace DIR] [--json]",
		Description: "Reports the kernel, the Landlock ABI and what it restricts, seccomp, a live canary run in a\n" +
			"sandboxed child, what commands run in the command sandbox cannot read (it tries, as the engine\n" +
			"would run them: /etc/shadow, your home and ~/.ssh, opx's state directory), whether an engine runs\n" +
			"for the workspace, and the ledger's head and a strict verify of it (through the engine when it\n" +
			"runs, from the file otherwise), the C2SP witnesses of ledger.witnesses (one with a standing alert is a\n" +
			"problem), and the configured MCP servers: a server the engine could not start\n" +
			"(or, with no engine, whose command cannot be found) is a problem. Then the agent CLIs hooked into opx\n" +
			"(opx agents install), in the workspace and the user's settings: a hook that will not run (its opx gone,\n" +
			"an event or a tool left out, hooks turned off, a folder the CLI does not trust, or, asking codex, hooks\n" +
			"Codex does not trust) is a problem.\n\n" +
			"EXIT CODES:\n   0  everything is in order\n   1  something is wrong (listed under problems)\n   2  usage error",
		Flags:  append(ledgerloc.Flags(), ui.JSONFlag()),
		Action: runDoctor,
	}
}

// doctorReport is the --json output of doctor.
type doctorReport struct {
	OK       bool                 `json:"ok"`
	Kernel   string               `json:"kernel"`
	Sandbox  sandbox.Capabilities `json:"sandbox"`
	Canary   sandbox.CanaryResult `json:"canary"`
	Engine   doctorEngine         `json:"engine"`
	Ledger   doctorLedger         `json:"ledger"`
	Commands *doctorCommands      `json:"commands"`
	// MCPServers are the configured MCP servers: as the engine runs them,
	// or, without one, whether each command can be found.
	MCPServers []mcpServerJSON `json:"mcp_servers"`
	// Witnesses are the C2SP witnesses of ledger.witnesses as the engine
	// sees them (none without an engine): one with a standing alert is a
	// problem.
	Witnesses []witnessStatusJSON `json:"witnesses"`
	// CheckpointOrigin and CheckpointKey: the ledger's checkpoints'
	// origin and verifier key, as the engine signs them.
	CheckpointOrigin string `json:"checkpoint_origin,omitempty"`
	CheckpointKey    string `json:"checkpoint_key,omitempty"`
	// Agents are the agent CLIs hooked into opx (agents_hooks.go).
	Agents   []install.Status `json:"agents"`
	Problems []string         `json:"problems"`
}

type doctorEngine struct {
	Running   bool   `json:"running"`
	Addr      string `json:"addr,omitempty"`
	EnginePID int    `json:"engine_pid,omitempty"`
}

type doctorLedger struct {
	Path   string         `json:"path"`
	Exists bool           `json:"exists"`
	Head   *ledger.Head   `json:"head,omitempty"`
	Verify *ledger.Report `json:"verify,omitempty"`
}

func runDoctor(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	rep := doctorReport{Problems: []string{}, MCPServers: []mcpServerJSON{}, Witnesses: []witnessStatusJSON{}}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }

	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		rep.Kernel = unix.ByteSliceToString(uts.Sysname[:]) + " " + unix.ByteSliceToString(uts.Release[:]) + " " + unix.ByteSliceToString(uts.Machine[:])
	}
	rep.Sandbox = sandbox.New().Probe()
	switch {
	case rep.Sandbox.Mechanism == "none":
		problem("no Landlock: the agent cannot be sandboxed on this kernel (%s)", strings.TrimSpace(rep.Sandbox.Detail))
	case !rep.Sandbox.Network:
		problem("Landlock ABI %d cannot restrict TCP (ABI 4+, kernel 6.7+ needed): the agent's network is not confined", rep.Sandbox.LandlockABI)
	}
	if !rep.Sandbox.Seccomp {
		problem("no seccomp filters: process creation cannot be blocked")
	}
	canary, err := liveCanary()
	if err != nil {
		problem("live canary could not run: %v", err)
	} else if rep.Canary = canary; canary.Status != sandbox.StatusSandboxed {
		problem("live canary: %s: %s", canary.Status, canary.Summary)
	}

	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return err
	}
	if rep.Ledger.Path, err = ledgerloc.Path(c); err != nil {
		return err
	}
	rep.Commands = checkCommandSandbox(ws, string(dir), problem)
	if e, _, err := registry.Lookup(dir); err == nil {
		rep.Engine = doctorEngine{Running: true, Addr: e.Addr(), EnginePID: e.EnginePID}
		doctorLedgerViaEngine(c, &rep, problem)
	} else if !errors.Is(err, registry.ErrNotRunning) {
		problem("registry: %v", err)
	} else {
		doctorLedgerFile(&rep, problem)
		if cfg, err := config.Load(ws); err != nil {
			problem("configuration: %v", err)
		} else {
			rep.MCPServers = mcpConfigured(ws, cfg, problem)
		}
	}
	rep.Agents = agentHooks(context.Background(), ws, true)
	agentHookProblems(rep.Agents, problem)
	rep.OK = len(rep.Problems) == 0
	if c.Bool("json") {
		if err := ui.WriteJSON(c, rep); err != nil {
			return err
		}
	} else {
		printDoctor(c, rep)
	}
	if !rep.OK {
		return fmt.Errorf("%d problem(s) found", len(rep.Problems))
	}
	return nil
}

func doctorLedgerFile(rep *doctorReport, problem func(string, ...any)) {
	if _, err := os.Stat(rep.Ledger.Path); err != nil {
		return // no ledger yet: nothing has run in this workspace
	}
	rep.Ledger.Exists = true
	l, err := ledger.OpenReadOnly(rep.Ledger.Path)
	if err != nil {
		problem("ledger %s: %v", rep.Ledger.Path, err)
		return
	}
	defer l.Close()
	if h, err := l.Head(); err == nil {
		rep.Ledger.Head = &h
	}
	v, err := l.Verify(event.StrictOptions())
	if err != nil {
		problem("ledger verify: %v", err)
		return
	}
	rep.Ledger.Verify = v
	if !v.OK {
		problem("ledger does not verify: %v", v.Err())
	}
}

func doctorLedgerViaEngine(c *cli.Context, rep *doctorReport, problem func(string, ...any)) {
	rep.Ledger.Exists = true
	ec, err := dialEngine(c)
	if err != nil {
		problem("engine: %v", err)
		return
	}
	defer ec.Close()
	if st, err := ec.client.GetStatus(ec.ctx, &opxv1.StatusRequest{}); err != nil {
		problem("engine status: %v", err)
	} else {
		rep.MCPServers = mcpServersJSON(st.McpServers)
		for _, s := range rep.MCPServers {
			if why := mcpNotRunning(s); why != "" {
				problem("%s", why)
			}
		}
		rep.Witnesses = witnessesJSON(st.Witnesses)
		rep.CheckpointOrigin, rep.CheckpointKey = st.CheckpointOrigin, st.CheckpointKey
		witnessProblems(rep.Witnesses, problem)
	}
	h, err := ec.ledger.Head(ec.ctx, &opxv1.HeadRequest{})
	if err != nil {
		problem("engine ledger head: %v", err)
		return
	}
	hash, _ := ledger.ParseHash(h.Hash)
	rep.Ledger.Head = &ledger.Head{LedgerID: h.LedgerId, Seq: h.Seq, Hash: hash}
	v, err := ec.ledger.Verify(ec.ctx, &opxv1.VerifyRequest{Strict: true})
	if err != nil {
		problem("engine ledger verify: %v", err)
		return
	}
	var r ledger.Report
	if err := json.Unmarshal(v.ReportJson, &r); err != nil {
		problem("engine ledger verify: %v", err)
		return
	}
	rep.Ledger.Verify = &r
	if !r.OK {
		problem("ledger does not verify: %v", r.Err())
	}
}

func printDoctor(c *cli.Context, rep doctorReport) {
	w := c.App.Writer
	s := rep.Sandbox
	fmt.Fprintf(w, "kernel    %s\n", rep.Kernel)
	if s.Mechanism == "landlock" {
		fmt.Fprintf(w, "landlock  ABI %d: filesystem %s, TCP bind/connect %s, abstract sockets and signals %s\n", s.LandlockABI,
			yesNo(c, s.Filesystem), yesNo(c, s.Network), yesNo(c, s.Scoping))
	} else {
		fmt.Fprintf(w, "landlock  %s\n", ui.Red(w, "not available"))
	}
	fmt.Fprintf(w, "seccomp   %s\n", yesNo(c, s.Seccomp))
	fmt.Fprintf(w, "canary    ")
	printCanary(w, rep.Canary)
	printDoctorCommands(w, rep.Commands)
	if rep.Engine.Running {
		fmt.Fprintf(w, "engine    running on %s (pid %d)\n", rep.Engine.Addr, rep.Engine.EnginePID)
	} else {
		fmt.Fprintf(w, "engine    not running\n")
	}
	printMCPServers(w, "mcp       ", rep.MCPServers)
	if rep.Engine.Running {
		printCheckpointKey(w, rep.CheckpointOrigin, rep.CheckpointKey)
		printWitnesses(w, rep.Witnesses)
	}
	printAgentHooks(w, "hooks     ", rep.Agents)
	switch {
	case !rep.Ledger.Exists:
		fmt.Fprintf(w, "ledger    none yet at %s\n", rep.Ledger.Path)
	case rep.Ledger.Head != nil && rep.Ledger.Verify != nil:
		verdict := ui.Green(w, "verifies (strict)")
		if !rep.Ledger.Verify.OK {
			verdict = ui.Red(w, fmt.Sprintf("%d failure(s)", rep.Ledger.Verify.Total()))
		}
		fmt.Fprintf(w, "ledger    %s\n          head %d %s, %s\n", filepath.Clean(rep.Ledger.Path), rep.Ledger.Head.Seq, rep.Ledger.Head.Hash, verdict)
	default:
		fmt.Fprintf(w, "ledger    %s\n", rep.Ledger.Path)
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintf(w, "\n%s\n", ui.Green(w, "no problems found"))
		return
	}
	fmt.Fprintf(w, "\n%s\n", ui.Red(w, "problems:"))
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

func yesNo(c *cli.Context, ok bool) string {
	if ok {
		return ui.Green(c.App.Writer, "yes")
	}
	return ui.Red(c.App.Writer, "no")
}
