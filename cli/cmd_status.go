package cli

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/agents/install"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the workspace's manager, engine and agent, the sandbox, the ledger head, the MCP servers, fleet shipping, the C2SP witnesses and the agent CLIs hooked",
		UsageText: "opx status [--workspace DIR] [--verbose] [--json]",
		Description: "Exits 1 when no engine runs for the workspace, so scripts can test it. The agent CLIs hooked into\n" +
			"opx (opx agents install) are listed either way, with whether their hooks will run; whether Codex\n" +
			"trusts its hooks is asked of codex only with --verbose (it starts codex app-server; opx doctor\n" +
			"always asks).\n\n" +
			exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(), ui.JSONFlag(),
			&cli.BoolFlag{Name: "verbose", Usage: "also ask codex whether it trusts opx's hooks"}),
		Action: runStatus,
	}
}

// statusJSON is the --json output of status.
type statusJSON struct {
	Running        bool   `json:"running"`
	Workspace      string `json:"workspace"`
	Version        string `json:"version,omitempty"`
	ManagerPID     int64  `json:"manager_pid,omitempty"`
	EnginePID      int64  `json:"engine_pid,omitempty"`
	AgentPID       int64  `json:"agent_pid,omitempty"`
	GRPCPort       int64  `json:"grpc_port,omitempty"`
	SandboxStatus  string `json:"sandbox_status,omitempty"`
	SandboxSummary string `json:"sandbox_summary,omitempty"`
	LedgerPath     string `json:"ledger_path,omitempty"`
	LedgerHeadSeq  uint64 `json:"ledger_head_seq"`
	LedgerHeadHash string `json:"ledger_head_hash,omitempty"`
	// MCPServers are the configured MCP servers and their state.
	MCPServers []mcpServerJSON `json:"mcp_servers"`
	// Fleet is the shipping state (status_fleet.go); absent when off.
	Fleet *fleetStatusJSON `json:"fleet,omitempty"`
	// Witnesses are the C2SP witnesses of ledger.witnesses
	// (status_witness.go).
	Witnesses []witnessStatusJSON `json:"witnesses"`
	// CheckpointOrigin and CheckpointKey are what a witness lists the
	// ledger's log by: its checkpoints' origin and verifier key.
	CheckpointOrigin string `json:"checkpoint_origin,omitempty"`
	CheckpointKey    string `json:"checkpoint_key,omitempty"`
	// Telemetry is the OpenTelemetry export (status_telemetry.go);
	// absent when off.
	Telemetry *telemetryStatusJSON `json:"telemetry,omitempty"`
	// Agents are the agent CLIs hooked into opx (agents_hooks.go).
	Agents []install.Status `json:"agents"`
}

func runStatus(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	agents := agentHooks(context.Background(), ws, c.Bool("verbose"))
	ec, err := dialEngine(c)
	if err != nil {
		if c.Bool("json") {
			ui.WriteJSON(c, statusJSON{Running: false, Workspace: ws, MCPServers: []mcpServerJSON{}, Witnesses: []witnessStatusJSON{}, Agents: agents})
		} else {
			printAgentHooks(c.App.Writer, "hooks     ", agents)
		}
		return err
	}
	defer ec.Close()
	st, err := ec.client.GetStatus(ec.ctx, &opxv1.StatusRequest{})
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	out := statusJSON{Running: true, Workspace: st.Workspace, Version: st.Version, ManagerPID: st.ManagerPid, EnginePID: st.EnginePid,
		AgentPID: st.AgentPid, GRPCPort: st.GrpcPort, SandboxStatus: st.SandboxStatus, SandboxSummary: st.SandboxSummary,
		LedgerPath: st.LedgerPath, LedgerHeadSeq: st.LedgerHeadSeq, LedgerHeadHash: st.LedgerHeadHash, MCPServers: mcpServersJSON(st.McpServers),
		Fleet: fleetJSON(st.Fleet), Witnesses: witnessesJSON(st.Witnesses), CheckpointOrigin: st.CheckpointOrigin,
		CheckpointKey: st.CheckpointKey, Telemetry: telemetryJSON(st.Telemetry), Agents: agents}
	if c.Bool("json") {
		return ui.WriteJSON(c, out)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "running   opx %s for %s\n", out.Version, out.Workspace)
	fmt.Fprintf(w, "manager   pid %d\nengine    pid %d, gRPC 127.0.0.1:%d\nagent     pid %d\n", out.ManagerPID, out.EnginePID, out.GRPCPort, out.AgentPID)
	sandbox := out.SandboxStatus
	if out.SandboxSummary != "" {
		sandbox += " (" + out.SandboxSummary + ")"
	}
	if out.SandboxStatus != "sandboxed" {
		sandbox = ui.Red(w, sandbox)
	} else {
		sandbox = ui.Green(w, sandbox)
	}
	fmt.Fprintf(w, "sandbox   %s\nledger    %s\n          head %d %s\n", sandbox, out.LedgerPath, out.LedgerHeadSeq, out.LedgerHeadHash)
	printMCPServers(w, "mcp       ", out.MCPServers)
	printFleet(w, out.Fleet)
	printCheckpointKey(w, out.CheckpointOrigin, out.CheckpointKey)
	printWitnesses(w, out.Witnesses)
	printTelemetry(w, out.Telemetry)
	printAgentHooks(w, "hooks     ", out.Agents)
	return nil
}
