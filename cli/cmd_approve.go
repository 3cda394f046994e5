package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func approveCommand() *cli.Command { return approvalCommand("approve", true) }
func denyCommand() *cli.Command    { return approvalCommand("deny", false) }

// approvalCommand builds opx approve and opx deny, which differ only in
// the answer they give.
func approvalCommand(name string, approve bool) *cli.Command {
	effect := "the tool call runs"
	if !approve {
		effect = "the agent is told a human denied it, and nothing runs"
	}
	return &cli.Command{
		Name:      name,
		Usage:     name + " an action Shield escalated to a human",
		UsageText: "opx " + name + " [--workspace DIR] [--reason TEXT] [--json] [ID]",
		Description: "Answers the pending approval ID (apr_..., shown by opx send and opx chat when a policy rule asks a\n" +
			"human): " + effect + ".\nThe answer is recorded in the ledger (approval.resolved) before anything runs. Without ID,\n" +
			"lists the approvals waiting. An ID that is not pending (unknown, or already answered, timed out\n" +
			"or denied by an engine stop) exits 1.\n\n" + exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.StringFlag{Name: "reason", Usage: "`TEXT` saying why, recorded with the answer"},
			ui.JSONFlag(),
		),
		Action: func(c *cli.Context) error { return runApproval(c, approve) },
	}
}

// approvalJSON is the --json output of approve and deny.
type approvalJSON struct {
	ApprovalID string `json:"approval_id"`
	SubAgentID string `json:"subagent_id,omitempty"` // the sub-agent whose call it was
	Approved   bool   `json:"approved"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	By         string `json:"by"`
	Seq        uint64 `json:"seq"`
}

// pendingJSON is one approval in the --json listing.
type pendingJSON struct {
	ApprovalID string `json:"approval_id"`
	SessionID  string `json:"session_id"`
	SubAgentID string `json:"subagent_id,omitempty"` // the sub-agent whose call asks
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Arguments  string `json:"arguments"`
	Reason     string `json:"reason"`
	ExpiresAt  string `json:"expires_at"`
	Seq        uint64 `json:"seq"`
}

func runApproval(c *cli.Context, approve bool) error {
	args, err := wantArgs(c, 0, 1, "")
	if err != nil {
		return err
	}
	ec, err := dialEngine(c)
	if err != nil {
		return err
	}
	defer ec.Close()
	if len(args) == 0 {
		return listApprovals(c, ec)
	}
	res, err := resolveApproval(ec.ctx, ec.client, args[0], approve, c.String("reason"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, approvalJSON{ApprovalID: args[0], SubAgentID: res.SubagentId, Approved: res.Approved, CallID: res.CallId, Tool: res.Tool, By: res.By, Seq: res.Seq})
	}
	printResolved(c.App.Writer, args[0], res)
	return nil
}

// resolveApproval answers one approval; NotFound becomes a plain error.
func resolveApproval(ctx context.Context, client opxv1.ClientServiceClient, id string, approve bool, reason string) (*opxv1.ApprovalResponse, error) {
	res, err := client.ResolveApproval(ctx, &opxv1.ApprovalRequest{ApprovalId: id, Approved: approve, Reason: reason})
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("no pending approval %s (unknown, or already answered, timed out or denied)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", id, err)
	}
	return res, nil
}

func printResolved(w io.Writer, id string, res *opxv1.ApprovalResponse) {
	verb := ui.Green(w, "approved")
	if !res.Approved {
		verb = ui.Red(w, "denied")
	}
	call := "call " + res.CallId
	if res.SubagentId != "" {
		call += " of sub-agent " + res.SubagentId
	}
	fmt.Fprintf(w, "%s %s: %s (%s), recorded at seq %d\n", verb, id, res.Tool, call, res.Seq)
}

func listApprovals(c *cli.Context, ec *engineClient) error {
	ls, err := ec.client.ListApprovals(ec.ctx, &opxv1.ListApprovalsRequest{})
	if err != nil {
		return fmt.Errorf("list approvals: %w", err)
	}
	if c.Bool("json") {
		out := struct {
			Approvals []pendingJSON `json:"approvals"`
		}{Approvals: []pendingJSON{}}
		for _, a := range ls.Approvals {
			out.Approvals = append(out.Approvals, pendingJSON{ApprovalID: a.ApprovalId, SessionID: a.SessionId, SubAgentID: a.SubagentId, CallID: a.CallId, Tool: a.Tool,
				Arguments: a.Arguments, Reason: a.Reason, ExpiresAt: time.Unix(0, a.ExpiresAt).UTC().Format(time.RFC3339), Seq: a.Seq})
		}
		return ui.WriteJSON(c, out)
	}
	printPending(c.App.Writer, ls.Approvals)
	return nil
}

func printPending(w io.Writer, aps []*opxv1.PendingApproval) {
	if len(aps) == 0 {
		fmt.Fprintln(w, "no approvals pending")
		return
	}
	for _, a := range aps {
		left := time.Until(time.Unix(0, a.ExpiresAt)).Round(time.Second)
		who := "session " + a.SessionId
		if a.SubagentId != "" {
			who = "sub-agent " + a.SubagentId + " of session " + a.SessionId
		}
		fmt.Fprintf(w, "%s  %s %s  (%s, denied in %s unless answered)\n  %s\n", a.ApprovalId, a.Tool, ui.Clip(a.Arguments, 100),
			who, max(left, 0), a.Reason)
	}
	fmt.Fprintln(w, "answer with: opx approve ID | opx deny ID [--reason TEXT]")
}

// approvalRequest is the data of an approval_requested pipeline event.
type approvalRequest struct {
	ID        string `json:"approval_id"`
	SubAgent  string `json:"subagent_id"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Reason    string `json:"reason"`
	TimeoutMS int64  `json:"timeout_ms"`
}

func parseApprovalRequest(data []byte) (approvalRequest, bool) {
	var a approvalRequest
	return a, json.Unmarshal(data, &a) == nil && a.ID != ""
}

// printApprovalRequest shows an approval request; withHint adds the
// commands that answer it (opx send, which cannot ask).
func printApprovalRequest(w io.Writer, a approvalRequest, withHint bool) {
	by := ""
	if a.SubAgent != "" {
		by = " (sub-agent " + a.SubAgent + ")"
	}
	fmt.Fprintf(w, "  %s %s%s: %s %s\n    %s\n", ui.Red(w, "approval needed"), a.ID, by, a.Tool, ui.Clip(a.Arguments, 120), a.Reason)
	timeout := time.Duration(a.TimeoutMS) * time.Millisecond
	if withHint {
		fmt.Fprintf(w, "    answer with: opx approve %s   or: opx deny %s [--reason TEXT]   (denied after %s)\n", a.ID, a.ID, timeout)
	} else {
		fmt.Fprintf(w, "    (denied after %s unless answered)\n", timeout)
	}
}
