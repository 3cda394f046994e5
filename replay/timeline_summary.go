package replay

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// summaryLimit caps the free text quoted in an event summary; the whole
// payload is in Event.Data.
const summaryLimit = 200

// summarise says in one line what an event entry records.
func summarise(e ledger.Entry, p event.Payload) string {
	switch p := p.(type) {
	case *event.SessionCreated:
		s := "session created (mode " + p.Mode + ")"
		if p.Title != "" {
			s += ", title " + quote(p.Title)
		}
		if p.ParentSession != "" {
			s += ", sub-agent " + p.SubAgentID + " of session " + p.ParentSession
		}
		return s
	case *event.SessionTitled:
		return "titled " + quote(p.Title)
	case *event.MemoryFlush:
		if p.Blob != "" {
			return fmt.Sprintf("agent kept memory: %d bytes (blob %s)", p.Size, short(p.Blob))
		}
		return "agent kept memory: " + quote(p.Content)
	case *event.ToolDefsRequest:
		return fmt.Sprintf("agent asked for tool groups %s (call %s)", list(p.Groups), p.CallID)
	case *event.ToolDefs:
		return fmt.Sprintf("engine delivered tools %s (call %s)", list(p.Tools), p.CallID)
	case *event.Note:
		s := "note by " + p.Author + ": " + quote(p.Text)
		if p.About != 0 {
			s = fmt.Sprintf("note by %s about #%d: %s", p.Author, p.About, quote(p.Text))
		}
		if p.Attachment != "" {
			s += fmt.Sprintf(" (attachment %s, blob %s)", p.Attachment, short(p.Blob))
		}
		return s
	case *event.AgentCrashed:
		s := fmt.Sprintf("agent %s (pid %d) crashed: %s", p.AgentID, p.PID, clip(p.Detail))
		if p.Respawn {
			return s + "; the engine started another"
		}
		return s + "; not respawned"
	case *event.AgentSpawned:
		return fmt.Sprintf("agent %s started (pid %d, restart %d, sandbox %s, Landlock ABI %d, seccomp %v)",
			p.AgentID, p.PID, p.Restart, p.Sandbox.Mechanism, p.Sandbox.LandlockABI, p.Sandbox.Seccomp)
	case *event.SandboxCanary:
		s := fmt.Sprintf("sandbox canary of agent %s: %s, %s", p.AgentID, p.Result.Status, p.Action)
		if p.Reason != "" {
			s += " (" + clip(p.Reason) + ")"
		}
		return s
	case *event.AgentReady:
		return fmt.Sprintf("agent %s ready (canary %s, token valid %v)", p.AgentID, p.CanaryStatus, p.TokenValid)
	case *event.AgentExited:
		return fmt.Sprintf("agent %s (pid %d) exited with status %d: %s", p.AgentID, p.PID, p.ExitCode, clip(p.Reason))
	case *event.EngineStarted:
		return fmt.Sprintf("engine %s started (pid %d, policy %s %s, %s/%s)", p.Version, p.PID, p.Policy, short(p.PolicyHash), p.Provider, p.Model)
	case *event.EngineStopped:
		return "engine stopped: " + clip(p.Reason)
	case *event.Shutdown:
		return "engine told the agent to stop: " + clip(p.Reason)
	case *event.EngineCrashed:
		return fmt.Sprintf("the engine run that started at seq %d died (its last entry is seq %d): %s", p.StartedSeq, p.LastSeq, crashCause(p))
	case *event.Rollback:
		what := fmt.Sprintf("snapshot %d", p.Snapshot)
		if p.Session != "" {
			what = "session " + p.Session
		}
		s := fmt.Sprintf("rollback of %s: restored %d path(s)", what, len(p.Files))
		if p.Interrupted {
			s = fmt.Sprintf("rollback of %s was interrupted (recorded at the next start): %d path(s) found restored", what, len(p.Files))
		}
		if len(p.Files) > 0 {
			s += " " + list(p.Files)
		}
		s += fmt.Sprintf("; what it overwrote is snapshot %d", p.PreSnapshot)
		if p.Forced {
			s += "; forced"
		}
		if p.Error != "" {
			s += "; stopped: " + clip(p.Error)
		}
		return s
	case *event.Pruned:
		return fmt.Sprintf("retention removed %d blob(s) of snapshot(s) %v: %s", len(p.Blobs), p.Snapshots, clip(p.Reason))
	case *event.Snapshot:
		var paths []string
		for _, f := range p.Files {
			paths = append(paths, f.Path)
		}
		return fmt.Sprintf("%s snapshot %d for %s (call %s): %s", p.Kind, e.Seq, p.Tool, p.CallID, list(paths))
	case *event.AgentError:
		return "agent error " + p.Code + ": " + clip(p.Message)
	case *event.ClientRejected:
		return fmt.Sprintf("client call %s refused (%s) from %s", p.Method, p.Reason, p.Peer)
	}
	if s := summariseMCP(p); s != "" {
		return s
	}
	if s := summariseHook(p); s != "" {
		return s
	}
	return e.Type
}

// summariseMCP says in one line what an MCP entry records; "" for others.
func summariseMCP(p event.Payload) string {
	switch p := p.(type) {
	case *event.MCPServerStarted:
		s := fmt.Sprintf("MCP server %s started (instance %d, pid %d): %s", p.Server, p.Instance, p.PID, clip(strings.Join(p.Command, " ")))
		if p.ServerName != "" {
			s += fmt.Sprintf("; it is %s %s", clip(p.ServerName), clip(p.ServerVersion))
		}
		return s + "; " + mcpSandbox(p.Sandbox)
	case *event.MCPToolsListed:
		names := make([]string, 0, len(p.Tools))
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		s := fmt.Sprintf("MCP server %s offers %d tool(s): %s", p.Server, len(p.Tools), list(names))
		if len(p.Refused) > 0 {
			s += fmt.Sprintf("; refused %d: %s", len(p.Refused), list(p.Refused))
		}
		return s
	case *event.MCPServerExited:
		how := fmt.Sprintf("exit %d", p.ExitCode)
		if p.Signal != "" {
			how = "signal " + p.Signal
		}
		s := fmt.Sprintf("MCP server %s (instance %d, pid %d) exited, %s: %s", p.Server, p.Instance, p.PID, p.Reason, how)
		if p.Reason == "stopped" {
			// opx ended it (its session or the engine ended, e.g. an
			// mcp-proxy client disconnected): however it went, that is
			// no failure of the server.
			s = fmt.Sprintf("MCP server %s (instance %d, pid %d) stopped by opx, as its session or the engine ended (%s)", p.Server, p.Instance, p.PID, how)
		}
		if p.RestartInMS > 0 {
			s += fmt.Sprintf("; restarted in %d ms", p.RestartInMS)
		}
		if p.StderrTail != "" {
			s += "; stderr: " + quote(p.StderrTail)
		}
		return s
	case *event.MCPServerFailed:
		s := fmt.Sprintf("MCP server %s did not start (attempt %d): %s", p.Server, p.Attempt, clip(p.Error))
		if p.RetryInMS > 0 {
			return s + fmt.Sprintf("; tried again in %d ms", p.RetryInMS)
		}
		return s + "; given up"
	case *event.MCPProtocolError:
		s := fmt.Sprintf("MCP server %s sent %s (%d bytes): %s", p.Server, p.Kind, p.Size, clip(p.Detail))
		if p.CallID != "" {
			s += " (call " + p.CallID + ")"
		}
		if p.Suppressed > 0 {
			s += fmt.Sprintf("; %d more not recorded one by one", p.Suppressed)
		}
		return s
	case *event.MCPClient:
		s := fmt.Sprintf("MCP client %s %s connected, in front of %s: %s", quote(p.ClientName), clip(p.ClientVersion), p.Upstream, clip(strings.Join(p.Command, " ")))
		if len(p.Capabilities) > 0 {
			s += "; client capabilities: " + list(p.Capabilities)
		}
		return s
	case *event.MCPRequest:
		return fmt.Sprintf("MCP client asked %s (request %s, %d bytes of params)", p.Method, p.RequestID, p.Size)
	case *event.MCPResponse:
		if p.Error != "" {
			return fmt.Sprintf("MCP %s answered with an error (request %s, %d ms): %s", p.Method, p.RequestID, p.DurationMS, clip(p.Error))
		}
		return fmt.Sprintf("MCP %s answered (request %s, %d bytes, %d ms)", p.Method, p.RequestID, p.Size, p.DurationMS)
	case *event.ResultFlagged:
		return fmt.Sprintf("Shield flagged the result of %s (call %s), %s: %s", p.Tool, p.CallID, p.Action, clip(p.Reason))
	}
	return ""
}

// mcpSandbox says how an MCP server is sandboxed.
func mcpSandbox(s event.MCPSandbox) string {
	ws, net := "workspace read-only", "no network"
	if s.Writable {
		ws = "workspace writable"
	}
	if s.Network {
		net = "network"
	}
	return ws + ", " + net
}

// list joins names, at most five, saying how many more.
func list(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" (+%d more)", len(names)-5)
	}
	return strings.Join(names, ", ")
}

func quote(s string) string { return fmt.Sprintf("%q", clip(s)) }

// clip shortens s to summaryLimit runes, marking the cut.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= summaryLimit {
		return s
	}
	return string([]rune(s)[:summaryLimit-3]) + "..."
}

// short abbreviates a hash for a summary.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// crashCause says how a crashed engine's process ended when its
// engine.crashed says (the signal, who sent it and why), else its detail.
func crashCause(p *event.EngineCrashed) string {
	switch {
	case p.Signal == "" && p.PID > 0:
		return fmt.Sprintf("its process (pid %d) exited with code %d", p.PID, p.ExitCode)
	case p.Signal == "":
		return clip(p.Detail)
	case p.Sender == event.CrashSenderManager:
		return fmt.Sprintf("its process (pid %d) was killed by %s, sent by its manager: %s", p.PID, p.Signal, clip(p.Reason))
	case p.Sender == event.CrashSenderStop:
		return fmt.Sprintf("its process (pid %d) was sent %s by opx: %s", p.PID, p.Signal, clip(p.Reason))
	default:
		return fmt.Sprintf("its process (pid %d) was killed by %s, not sent by opx (sender unknown)", p.PID, p.Signal)
	}
}
