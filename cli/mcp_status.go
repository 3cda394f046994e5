package cli

import (
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/config"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// mcpServerJSON is one configured MCP server as opx status and opx
// doctor report it.
type mcpServerJSON struct {
	Name      string `json:"name"`
	State     string `json:"state"` // starting, running, restarting, failed, disabled, stopped; "configured" when no engine runs
	PID       int64  `json:"pid,omitempty"`
	Instance  int64  `json:"instance,omitempty"`
	Tools     int64  `json:"tools"`
	Restarts  int64  `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
	Since     string `json:"since,omitempty"`
	Writable  bool   `json:"writable"`
	Network   bool   `json:"network"`
	Command   string `json:"command,omitempty"` // doctor without an engine: what the command resolves to
}

func mcpServersJSON(st []*opxv1.McpServerStatus) []mcpServerJSON {
	out := []mcpServerJSON{}
	for _, s := range st {
		out = append(out, mcpServerJSON{Name: s.Name, State: s.State, PID: s.Pid, Instance: s.Instance, Tools: s.Tools, Restarts: s.Restarts,
			LastError: s.LastError, Since: s.Since, Writable: s.Writable, Network: s.Network})
	}
	return out
}

// mcpNotRunning is why a server an engine runs is a problem: it failed
// (or is waiting to be restarted after failing); "" when it is not one.
func mcpNotRunning(s mcpServerJSON) string {
	switch s.State {
	case "failed", "restarting":
		why := s.LastError
		if why == "" {
			why = "no error recorded"
		}
		return fmt.Sprintf("MCP server %s is %s: %s", s.Name, s.State, why)
	}
	return ""
}

// mcpConfigured is the configuration's servers when no engine runs: each
// command looked up as the engine would (a name in PATH, or a path), a
// problem for one that cannot be found.
func mcpConfigured(ws string, cfg config.Config, problem func(string, ...any)) []mcpServerJSON {
	out := []mcpServerJSON{}
	for name, srv := range cfg.MCP.Servers {
		s := mcpServerJSON{Name: name, State: "configured", Writable: srv.Writable, Network: srv.Network}
		if srv.Disabled {
			s.State = "disabled"
		} else if p, err := exec.LookPath(strings.ReplaceAll(srv.Command, "${workspace}", ws)); err != nil {
			s.LastError = err.Error()
			problem("MCP server %s cannot start: %v", name, err)
		} else {
			s.Command = p
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// printMCPServers prints the servers, one a line, under a label.
func printMCPServers(w io.Writer, label string, servers []mcpServerJSON) {
	for i, s := range servers {
		l := label
		if i > 0 {
			l = strings.Repeat(" ", len(label))
		}
		access := "read-only"
		if s.Writable {
			access = "writable"
		}
		if s.Network {
			access += ", network"
		}
		line := fmt.Sprintf("%s (%s)", clean(s.Name, 40), access)
		switch s.State {
		case "running":
			line += " " + ui.Green(w, "running") + fmt.Sprintf(", pid %d, %d tools", s.PID, s.Tools)
			if s.Restarts > 0 {
				line += fmt.Sprintf(", restarted %d times", s.Restarts)
			}
		case "failed", "restarting":
			line += " " + ui.Red(w, strings.ToUpper(s.State))
			if s.LastError != "" {
				line += ": " + clean(s.LastError, 300)
			}
		case "configured":
			if s.Command != "" {
				line += " configured: " + s.Command
			} else {
				line += " " + ui.Red(w, "cannot start") + ": " + clean(s.LastError, 300)
			}
		default:
			line += " " + s.State
			if s.LastError != "" {
				line += ": " + clean(s.LastError, 300)
			}
		}
		fmt.Fprintf(w, "%s%s\n", l, line)
	}
}
