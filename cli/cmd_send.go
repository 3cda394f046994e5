package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func sendCommand() *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "send one message to the agent and stream its answer",
		UsageText: "opx send [--session ID] [--otr] [--json] TEXT...",
		Description: "Starts a new session unless --session names one. The answer streams to stdout as it is written;\n" +
			"tool calls and their results are shown on stderr. When Shield asks a human, the request is shown\n" +
			"with its ID and the commands that answer it (opx approve ID, opx deny ID, from another terminal);\n" +
			"the answer waits meanwhile. A W3C TRACEPARENT in the environment is passed on and recorded: the turn's\n" +
			"span in the OpenTelemetry export is its child (docs/telemetry.md). With --json every pipeline event is printed as one JSON object per\n" +
			"line instead.\n\n" +
			"With --otr the new session is off the record (docs/otr.md): read-only (Shield blocks every tool\n" +
			"that could change something, rule otr:read-only), and recorded as an envelope whose texts are\n" +
			"keyed commitments the engine forgets when it exits. A session's mode is fixed when it is created:\n" +
			"--otr with the --session of a normal session (or none into an off-the-record one) is refused.\n\n" + exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.StringFlag{Name: "session", Usage: "continue session `ID`"},
			&cli.BoolFlag{Name: "otr", Usage: "off the record: read-only, content not recorded (a new session, or one that is off the record)"},
			&cli.BoolFlag{Name: "json", Usage: "print events as JSON lines"},
		),
		Action: runSend,
	}
}

// sendMode is the mode a message asks for: "otr", or "" for whatever
// the session is (normal for a new one).
func sendMode(otr bool) string {
	if otr {
		return "otr"
	}
	return ""
}

// eventJSON is one --json line of send.
type eventJSON struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	MessageID string          `json:"message_id"`
	Seq       uint64          `json:"seq,omitempty"`
	Data      json.RawMessage `json:"data"`
}

func runSend(c *cli.Context) error {
	args, err := wantArgs(c, 1, -1, "TEXT (the message)")
	if err != nil {
		return err
	}
	text := strings.Join(args, " ")
	if strings.TrimSpace(text) == "" {
		return usage.Errorf(c, "TEXT is empty")
	}
	ec, err := dialEngine(c)
	if err != nil {
		return err
	}
	defer ec.Close()
	stream, err := ec.client.SendMessage(withTraceparent(ec.ctx), &opxv1.ClientMessageRequest{SessionId: c.String("session"), Content: text, Mode: sendMode(c.Bool("otr"))})
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	session, err := printEvents(c, stream, c.Bool("json"))
	if err == nil && !c.Bool("json") && session != "" {
		if c.Bool("otr") {
			// The engine refuses --otr into a session on the record, so
			// this one is off it: say what that means, and where it went.
			fmt.Fprintf(c.App.ErrWriter, "(session %s, off the record: read-only, its texts are not recorded; "+
				"`opx sessions --include-otr` lists it)\n", session)
		} else {
			fmt.Fprintf(c.App.ErrWriter, "(session %s)\n", session)
		}
	}
	return err
}

// printEvents prints a SendMessage stream until it ends and returns the
// session it belongs to. Approval requests are shown with the commands
// that answer them.
func printEvents(c *cli.Context, stream opxv1.ClientService_SendMessageClient, asJSON bool) (string, error) {
	return printEventsAsk(c, stream, asJSON, nil)
}

// printEventsAsk is printEvents that hands each approval request to ask
// (opx chat asks its user), if set, once it is shown.
func printEventsAsk(c *cli.Context, stream opxv1.ClientService_SendMessageClient, asJSON bool, ask func(approvalRequest)) (string, error) {
	w, ew := c.App.Writer, c.App.ErrWriter
	session := ""
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return session, nil
		}
		if err != nil {
			return session, fmt.Errorf("send: %w", err)
		}
		session = ev.SessionId
		if asJSON {
			data := json.RawMessage(ev.Data)
			if !json.Valid(data) {
				data = json.RawMessage("null")
			}
			if err := ui.WriteJSON(c, eventJSON{Type: ev.Type, SessionID: ev.SessionId, MessageID: ev.MessageId, Seq: ev.Seq, Data: data}); err != nil {
				return session, err
			}
			continue
		}
		var d map[string]any
		_ = json.Unmarshal(ev.Data, &d)
		str := func(k string) string { s, _ := d[k].(string); return s }
		switch ev.Type {
		case "token":
			fmt.Fprint(w, str("text"))
		case "tool_call":
			fmt.Fprintf(ew, "\n→ %s %s\n", str("tool"), ui.Clip(str("arguments"), 120))
		case "verdict":
			mark := ui.Green(ew, str("decision"))
			if str("decision") != "allow" {
				mark = ui.Red(ew, str("decision"))
			}
			if tier, ok := d["tier"].(float64); ok && str("decision") != "allow" && tier >= 2 {
				fmt.Fprintf(ew, "  shield: %s (%s, tier %d)\n", mark, str("rule"), int(tier))
			} else {
				fmt.Fprintf(ew, "  shield: %s (%s)\n", mark, str("rule"))
			}
		case "approval_requested":
			if a, ok := parseApprovalRequest(ev.Data); ok {
				printApprovalRequest(ew, a, ask == nil)
				if ask != nil {
					ask(a)
				}
			}
		case "approval_resolved":
			verdict := ui.Green(ew, "approved")
			if ok, _ := d["approved"].(bool); !ok {
				verdict = ui.Red(ew, "denied")
			}
			fmt.Fprintf(ew, "  approval %s: %s by %s\n", str("approval_id"), verdict, str("by"))
		case "tool_result":
			if isErr, _ := d["is_error"].(bool); isErr {
				fmt.Fprintf(ew, "  %s %s\n", ui.Red(ew, "✗"), ui.Clip(summaryLine(str("content")), 160))
			} else {
				fmt.Fprintf(ew, "  %s %d bytes\n", ui.Green(ew, "✓"), len(str("content")))
			}
		case "response_complete":
			fmt.Fprintln(w)
		case "error":
			fmt.Fprintln(w)
			return session, fmt.Errorf("the agent could not answer: %s: %s", str("code"), str("message"))
		}
	}
}

// summaryLine is the line that says most about a failed tool result: a
// command's closing "[exit status N]" or "[killed: ...]", else the first.
func summaryLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if last := lines[len(lines)-1]; len(lines) > 1 && (strings.HasPrefix(last, "[exit status") || strings.HasPrefix(last, "[killed")) {
		return firstLine(s) + " ... " + last
	}
	return firstLine(s)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// withTraceparent passes the W3C trace context of opx send's environment
// (TRACEPARENT, as a CI job or a traced script sets it) to the engine,
// which records it with the message: the turn's span is its child
// (docs/telemetry.md). An invalid one is ignored.
func withTraceparent(ctx context.Context) context.Context {
	if tp := strings.TrimSpace(os.Getenv("TRACEPARENT")); event.ValidTraceparent(tp) {
		return metadata.AppendToOutgoingContext(ctx, "traceparent", tp)
	}
	return ctx
}
