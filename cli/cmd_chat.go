package cli

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:      "chat",
		Usage:     "talk with the agent interactively",
		UsageText: "opx chat [--workspace DIR] [--session ID] [--otr]",
		Description: "Each line you type is a message; the answer streams back with tool calls, Shield's verdicts and\n" +
			"results shown inline. When Shield asks a human, the request is shown and you answer y or n (a\n" +
			"reason may follow: \"n not in prod\"). Commands: /sessions (list), /session ID (switch), /new (new\n" +
			"session), /otr (new off-the-record session), /approvals (pending approvals), /approve ID [REASON],\n" +
			"/deny ID [REASON], /restart (restart the engine), /quit.\n\n" +
			"With --otr (or after /otr) the next message starts an off-the-record session (docs/otr.md):\n" +
			"read-only, and recorded as an envelope whose texts are keyed commitments the engine forgets when\n" +
			"it exits; the prompt is \"otr> \" meanwhile.\n\n" + exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.StringFlag{Name: "session", Usage: "continue session `ID`"},
			&cli.BoolFlag{Name: "otr", Usage: "start off the record: read-only, content not recorded"},
		),
		Action: runChat,
	}
}

func runChat(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	ec, err := dialEngine(c)
	if err != nil {
		return err
	}
	defer ec.Close()
	w := c.App.Writer
	session := c.String("session")
	// otr: the session is, or the next message starts, off the record.
	otr := c.Bool("otr")
	fmt.Fprintf(w, "opx chat: engine on %s. /quit to leave, /sessions to list.\n", ec.entry.Addr())
	in := bufio.NewScanner(c.App.Reader)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	ask := func(a approvalRequest) { askApproval(c, ec, in, a) }
	for {
		if otr {
			fmt.Fprint(w, "otr> ")
		} else {
			fmt.Fprint(w, "> ")
		}
		if !in.Scan() {
			fmt.Fprintln(w)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		switch {
		case line == "":
			continue
		case line == "/quit" || line == "/exit":
			return nil
		case line == "/new":
			session, otr = "", false
			fmt.Fprintln(w, "(the next message starts a new session)")
		case line == "/otr":
			session, otr = "", true
			fmt.Fprintln(w, "(the next message starts a new off-the-record session: read-only, its text not recorded)")
		case strings.HasPrefix(line, "/session "):
			// The session's own mode applies.
			session, otr = strings.TrimSpace(strings.TrimPrefix(line, "/session ")), false
		case line == "/sessions":
			ls, err := ec.client.ListSessions(ec.ctx, &opxv1.ListSessionsRequest{})
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "sessions: %v\n", err)
				continue
			}
			for _, s := range ls.Sessions {
				mark := " "
				if s.Id == session {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  %s  %d messages  %s\n", mark, s.Id, time.Unix(0, s.UpdatedAt).Format("2006-01-02 15:04"), s.MessageCount, s.Title)
			}
		case line == "/restart":
			if _, err := ec.client.Restart(ec.ctx, &opxv1.RestartRequest{Reason: "opx chat /restart"}); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "restart: %v\n", err)
				continue
			}
			fmt.Fprintln(w, "(engine restarting; reconnect with opx chat in a moment)")
			return nil
		case line == "/approvals":
			ls, err := ec.client.ListApprovals(ec.ctx, &opxv1.ListApprovalsRequest{})
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "approvals: %v\n", err)
				continue
			}
			printPending(w, ls.Approvals)
		case strings.HasPrefix(line, "/approve ") || strings.HasPrefix(line, "/deny "):
			chatResolve(c, ec, line)
		case strings.HasPrefix(line, "/"):
			fmt.Fprintf(c.App.ErrWriter, "unknown command %s (try /sessions, /session ID, /new, /otr, /approvals, /approve ID, /deny ID, /restart, /quit)\n", line)
		default:
			stream, err := ec.client.SendMessage(ec.ctx, &opxv1.ClientMessageRequest{SessionId: session, Content: line, Mode: sendMode(otr)})
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "send: %v\n", err)
				continue
			}
			sid, err := printEventsAsk(c, stream, false, ask)
			if sid != "" {
				session = sid
			}
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "%v\n", err)
			}
		}
	}
}

// askApproval asks the chat's user to answer an approval request the
// stream showed: y or n, optionally followed by a reason, or a /approve or
// /deny command. At the end of input the request is left pending.
func askApproval(c *cli.Context, ec *engineClient, in *bufio.Scanner, a approvalRequest) {
	w := c.App.Writer
	for {
		fmt.Fprintf(w, "approve %s? [y/n] ", a.ID)
		if !in.Scan() {
			fmt.Fprintf(w, "\n(left pending: opx approve %s or opx deny %s)\n", a.ID, a.ID)
			return
		}
		line := strings.TrimSpace(in.Text())
		word, reason, _ := strings.Cut(line, " ")
		switch strings.ToLower(word) {
		case "y", "yes":
			chatAnswer(c, ec, a.ID, true, strings.TrimSpace(reason))
			return
		case "n", "no":
			chatAnswer(c, ec, a.ID, false, strings.TrimSpace(reason))
			return
		case "/approve", "/deny":
			chatResolve(c, ec, line)
			if id, _, _ := strings.Cut(strings.TrimSpace(reason), " "); id == a.ID {
				return
			}
		default:
			fmt.Fprintln(c.App.ErrWriter, "answer y or n (a reason may follow), or /approve ID, /deny ID")
		}
	}
}

// chatResolve runs "/approve ID [REASON]" or "/deny ID [REASON]" and
// reports whether it answered.
func chatResolve(c *cli.Context, ec *engineClient, line string) bool {
	cmd, rest, _ := strings.Cut(line, " ")
	id, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if id == "" {
		fmt.Fprintf(c.App.ErrWriter, "usage: %s ID [REASON]\n", cmd)
		return false
	}
	return chatAnswer(c, ec, id, cmd == "/approve", strings.TrimSpace(reason))
}

func chatAnswer(c *cli.Context, ec *engineClient, id string, approve bool, reason string) bool {
	res, err := resolveApproval(ec.ctx, ec.client, id, approve, reason)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "%v\n", err)
		return false
	}
	printResolved(c.App.Writer, id, res)
	return true
}
