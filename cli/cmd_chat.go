package cli

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:      "chat",
		Usage:     "talk with the agent interactively",
		UsageText: "opx chat [--workspace DIR] [--session ID]",
		Description: "Each line you type is a message; the answer streams back with tool calls, Shield's verdicts and\n" +
			"results shown inline. Commands: /sessions (list), /session ID (switch), /new (new session),\n" +
			"/restart (restart the engine), /quit.\n\n" + exitCodesHelp(""),
		Flags: append(locationFlags(),
			&cli.StringFlag{Name: "session", Usage: "continue session `ID`"},
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
	fmt.Fprintf(w, "opx chat: engine on %s. /quit to leave, /sessions to list.\n", ec.entry.Addr())
	in := bufio.NewScanner(c.App.Reader)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		fmt.Fprint(w, "> ")
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
			session = ""
			fmt.Fprintln(w, "(the next message starts a new session)")
		case strings.HasPrefix(line, "/session "):
			session = strings.TrimSpace(strings.TrimPrefix(line, "/session "))
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
		case strings.HasPrefix(line, "/"):
			fmt.Fprintf(c.App.ErrWriter, "unknown command %s (try /sessions, /session ID, /new, /restart, /quit)\n", line)
		default:
			stream, err := ec.client.SendMessage(ec.ctx, &opxv1.ClientMessageRequest{SessionId: session, Content: line})
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "send: %v\n", err)
				continue
			}
			sid, err := printEvents(c, stream, false)
			if sid != "" {
				session = sid
			}
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "%v\n", err)
			}
		}
	}
}
