package ocsf

import (
	"fmt"
	"path"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// The events of a tool call's life: Shield's finding when it blocked or
// escalated, the approval, the call itself when it ran (an API call or
// a process) and the files it changed.

// callFacts fills the unmapped call coordinates and the correlation uid.
func (m *Mapper) callFacts(ev *Event, e *ledger.Entry, subagent, callID string) {
	id, _ := clip(callID, MaxName)
	sa, _ := clip(subagent, MaxName)
	ev.Unmapped.OPX.CallID, ev.Unmapped.OPX.SubAgentID = id, sa
	if id != "" {
		ev.Metadata.CorrelationUID = ev.Unmapped.OPX.Session + "/" + sa + "/" + id
	}
}

// toolName is a tool's name as an event shows it.
func (m *Mapper) toolName(session, tool string) string {
	if withheld(tool) {
		return "(withheld)"
	}
	if tool == "" {
		return "(unknown tool)"
	}
	t, _ := clip(tool, MaxName)
	return t
}

// callAPI is the API object of a call.
func (m *Mapper) callAPI(session, tool, callID string) *API {
	t := m.toolName(session, tool)
	_, _, service := toolKind(t)
	id, _ := clip(callID, MaxName)
	a := &API{Operation: t, Service: &Service{Name: service}}
	if id != "" {
		a.Request = &Request{UID: id}
	}
	return a
}

// verdict maps a block or an escalation to a Detection Finding; an allow
// is noted on the call.
func (m *Mapper) verdict(e *ledger.Entry, p *event.ShieldVerdict) []Event {
	k := m.key(e.Session, p.SubAgentID, p.CallID)
	c := m.calls[k]
	if p.Decision == event.Allow {
		return nil
	}
	ev := m.base(e, detectionFinding, 1)
	m.callFacts(&ev, e, p.SubAgentID, p.CallID)
	tool := ""
	if c != nil {
		tool = c.tool
		c.decided = true
	}
	rule, _ := clip(p.Rule, MaxName)
	if withheld(rule) {
		rule = "(withheld)"
	}
	uid := fmt.Sprintf("%s:%d", m.o.LedgerID, e.Seq)
	title := "opx Shield blocked a call of " + m.toolName(e.Session, tool)
	ev.dispose(dispBlocked, actDenied)
	ev.severity(3)
	if p.Decision == event.Escalate {
		title = "opx Shield held a call of " + m.toolName(e.Session, tool) + " for approval"
		ev.dispose(dispDelayed, actOther)
		ev.severity(2)
	}
	ev.FindingInfo = &FindingInfo{UID: uid, Title: title, Types: []string{"opx.shield." + p.Decision},
		Analytic: &Analytic{Name: rule, UID: rule, TypeID: 1, Type: "Rule"}}
	ev.IsAlert = true
	ev.StatusID, ev.Status = 1, "New"
	var cut bool
	ev.Message, cut = m.text(e.Session, p.Reason, MaxText)
	ev.Metadata.IsTruncated = cut
	tier := p.Tier
	ev.Unmapped.OPX.Tier = &tier
	ev.Unmapped.OPX.PolicyHash, _ = clip(p.PolicyHash, MaxName)
	ev.Evidences = []Evidence{m.callEvidence(e, p.SubAgentID, p.CallID, c)}
	return []Event{ev}
}

// callEvidence is a call as a finding's evidence: the agent, and the
// process or API call it proposed.
func (m *Mapper) callEvidence(e *ledger.Entry, subagent, callID string, c *call) Evidence {
	a := m.agent(e.Session, subagent)
	ev := Evidence{AIAgent: a, Actor: &Actor{AppName: a.Name}}
	if e.Session != "" {
		s, _ := clip(e.Session, MaxName)
		ev.Actor.Session = &Session{UID: s}
	}
	tool := ""
	if c != nil {
		tool = c.tool
	}
	if isProc, _, _ := toolKind(tool); isProc {
		ev.Process = m.process(e.Session, callID, c)
	} else {
		ev.API = m.callAPI(e.Session, tool, callID)
	}
	return ev
}

// process is a shell command's process.
func (m *Mapper) process(session, callID string, c *call) *Process {
	id, _ := clip(callID, MaxName)
	p := &Process{UID: m.o.LedgerID + "/" + id, Name: "sh"}
	if c != nil && !m.otr(session) && !withheld(c.cmd) {
		p.CmdLine = c.cmd
	}
	return p
}

// approval maps a human's (or a timeout's) answer to an escalation to
// Authorize Session: the privilege to run that one call, assigned to the
// agent's session or refused.
func (m *Mapper) approval(e *ledger.Entry, p *event.ApprovalResolved) []Event {
	k := m.key(e.Session, p.SubAgentID, p.CallID)
	c := m.calls[k]
	if c != nil {
		c.approved = p.Approved
	}
	ev := m.base(e, authorizeSession, 1, "ai_operation")
	m.callFacts(&ev, e, p.SubAgentID, p.CallID)
	m.actorOf(&ev, e.Session, p.SubAgentID)
	by, _ := clip(p.By, MaxName)
	ev.User = &User{Name: by, TypeID: 1, Type: "User"}
	if p.By == "timeout" {
		ev.User.TypeID, ev.User.Type = 3, "System"
	}
	s, _ := clip(e.Session, MaxName)
	ev.Session = &Session{UID: s}
	tool := ""
	if c != nil {
		tool = c.tool
	}
	ev.Privileges = []string{"opx:call:" + m.toolName(e.Session, tool)}
	ev.status(p.Approved)
	if p.Approved {
		ev.dispose(dispApproved, actAllowed)
	} else {
		ev.dispose(dispRejected, actDenied)
		ev.severity(2)
	}
	var cut bool
	ev.Message, cut = m.text(e.Session, p.Reason, MaxText)
	ev.Metadata.IsTruncated = cut
	return []Event{ev}
}

// flagged maps a tool result Shield flagged as a prompt injection to a
// Detection Finding: annotated results were delivered (an alert),
// withheld ones blocked.
func (m *Mapper) flagged(e *ledger.Entry, p *event.ResultFlagged) []Event {
	ev := m.base(e, detectionFinding, 1)
	m.callFacts(&ev, e, p.SubAgentID, p.CallID)
	rule, _ := clip(p.Rule, MaxName)
	if withheld(rule) {
		rule = "(withheld)"
	}
	ev.FindingInfo = &FindingInfo{UID: fmt.Sprintf("%s:%d", m.o.LedgerID, e.Seq),
		Title:    "opx Shield flagged the result of " + m.toolName(e.Session, p.Tool),
		Types:    []string{"opx.shield.result_flagged"},
		Analytic: &Analytic{Name: rule, UID: rule, TypeID: 1, Type: "Rule"}}
	ev.IsAlert = true
	ev.StatusID, ev.Status = 1, "New"
	ev.severity(3)
	if p.Action == "withheld" {
		ev.dispose(dispBlocked, actDenied)
	} else {
		ev.dispose(dispAlert, actAllowed)
	}
	var cut bool
	ev.Message, cut = m.text(e.Session, p.Reason, MaxText)
	ev.Metadata.IsTruncated = cut
	c := m.calls[m.key(e.Session, p.SubAgentID, p.CallID)]
	if c == nil {
		c = &call{tool: p.Tool}
	}
	ev.Evidences = []Evidence{m.callEvidence(e, p.SubAgentID, p.CallID, c)}
	return []Event{ev}
}

// callEvent is a call that ran: a Process Activity for a shell command,
// an API Activity for any other tool, allowed or approved.
func (m *Mapper) callEvent(e *ledger.Entry, subagent, callID, tool string, c *call) Event {
	isProc, activity, _ := toolKind(m.toolName(e.Session, tool))
	var ev Event
	if isProc {
		ev = m.base(e, processActivity, 1, "ai_operation")
		ev.Process = m.process(e.Session, callID, c)
		ev.Metadata.IsTruncated = c != nil && c.cut && ev.Process.CmdLine != ""
	} else {
		ev = m.base(e, apiActivity, activity, "ai_operation")
		ev.API = m.callAPI(e.Session, tool, callID)
		ev.SrcEndpoint = &Endpoint{Name: "opx agent", Hostname: m.host.Hostname}
	}
	m.callFacts(&ev, e, subagent, callID)
	m.actorOf(&ev, e.Session, subagent)
	if c != nil && c.approved {
		ev.dispose(dispApproved, actAllowed)
	} else {
		ev.dispose(dispAllowed, actAllowed)
	}
	return ev
}

// completed maps an execution's end to its call's event and one File
// System Activity per path whose state it changed.
func (m *Mapper) completed(e *ledger.Entry, p *event.ExecCompleted) []Event {
	k := m.key(e.Session, p.SubAgentID, p.CallID)
	c := m.calls[k]
	delete(m.calls, k)
	ev := m.callEvent(e, p.SubAgentID, p.CallID, p.Tool, c)
	ev.Duration = max(p.DurationMS, 0)
	out := p.Outcome()
	ev.status(out == event.ExecOK)
	if out == event.ExecExited {
		ev.StatusDetail = fmt.Sprintf("exit %d", p.ExitCode)
	}
	if ev.ClassUID == processActivity.uid {
		code := p.ExitCode
		ev.ExitCode = &code
	} else if ev.API != nil {
		code := p.ExitCode
		ev.API.Response = &Response{Code: &code}
	}
	evs := []Event{ev}
	if m.otr(e.Session) {
		return evs
	}
	pre := p.Pre
	if len(pre) == 0 && c != nil {
		pre = c.pre
	}
	for _, post := range p.Post {
		if len(evs) > MaxFileEvents {
			evs[0].Unmapped.OPX.MoreFiles++
			continue
		}
		if fe, ok := m.fileEvent(e, p, c, pre, post); ok {
			evs = append(evs, fe)
		}
	}
	return evs
}

// fileEvent is one path's change: pre-state from the snapshot (or the
// execution's own pre for a workspace-wide tool), post-state from the
// execution.
func (m *Mapper) fileEvent(e *ledger.Entry, p *event.ExecCompleted, c *call, pre []event.FileState, post event.PostState) (Event, bool) {
	if withheld(post.Path) || post.Path == "" {
		return Event{}, false
	}
	var before *event.FileState
	for i := range pre {
		if pre[i].Path == post.Path {
			before = &pre[i]
			break
		}
	}
	existed := before == nil || before.State != event.StateAbsent
	activity := 3
	switch {
	case post.Absent && before != nil && !existed:
		return Event{}, false // absent before and after
	case post.Absent:
		activity = 4
	case before != nil && !existed:
		activity = 1
	case before != nil && before.ContentHash() == post.Hash && before.Mode == post.Mode:
		return Event{}, false // unchanged
	case before != nil && before.ContentHash() == post.Hash:
		activity = 6
	}
	ev := m.base(e, fileActivity, activity, "ai_operation")
	m.callFacts(&ev, e, p.SubAgentID, p.CallID)
	m.actorOf(&ev, e.Session, p.SubAgentID)
	if c != nil && c.approved {
		ev.dispose(dispApproved, actAllowed)
	} else {
		ev.dispose(dispAllowed, actAllowed)
	}
	ev.status(true)
	fpath, cut := clip(post.Path, MaxText)
	ev.Metadata.IsTruncated = cut
	f := &File{Name: path.Base(fpath), Path: fpath, TypeID: 1, Type: "Regular File"}
	if before != nil && existed {
		bf := *f
		switch before.State {
		case event.StateDir:
			bf.TypeID, bf.Type = 2, "Folder"
		case event.StateSymlink:
			bf.TypeID, bf.Type = 7, "Symbolic Link"
		}
		bf.Size = before.Size
		if h := before.ContentHash(); h != "" && !withheld(h) {
			bf.Hashes = []Fingerprint{blake3Hex(h)}
		}
		ev.File = &bf
	} else {
		ev.File = f
	}
	if !post.Absent {
		af := *f
		af.TypeID, af.Type = ev.File.TypeID, ev.File.Type
		af.Size = 0
		if post.Hash != "" && !withheld(post.Hash) {
			af.Hashes = []Fingerprint{blake3Hex(post.Hash)}
		}
		ev.FileResult = &af
	}
	return ev, true
}

// failed maps an execution that failed to its call's event.
func (m *Mapper) failed(e *ledger.Entry, p *event.ExecFailed) []Event {
	k := m.key(e.Session, p.SubAgentID, p.CallID)
	c := m.calls[k]
	delete(m.calls, k)
	ev := m.callEvent(e, p.SubAgentID, p.CallID, p.Tool, c)
	ev.Duration = max(p.DurationMS, 0)
	ev.status(false)
	msg, cut := m.text(e.Session, p.Error, MaxText)
	ev.StatusDetail = msg
	ev.Metadata.IsTruncated = ev.Metadata.IsTruncated || cut
	if ev.API != nil {
		ev.API.Response = &Response{Error: "failed", ErrorMessage: msg}
	}
	return []Event{ev}
}

// mcpResponse maps a request a client made through opx mcp-proxy (other
// than tools/call, which is a tool call) to an API Activity.
func (m *Mapper) mcpResponse(e *ledger.Entry, p *event.MCPResponse) []Event {
	method, _ := clip(p.Method, MaxName)
	if withheld(method) {
		method = "(withheld)"
	}
	activity := 99
	switch {
	case len(method) > 5 && (method[len(method)-5:] == "/list" || method[len(method)-5:] == "/read" || method[len(method)-4:] == "/get"):
		activity = 2
	}
	ev := m.base(e, apiActivity, activity, "ai_operation")
	id, _ := clip(p.RequestID, MaxName)
	ev.API = &API{Operation: method, Service: &Service{Name: "mcp-proxy upstream"}, Request: &Request{UID: id}}
	ev.SrcEndpoint = &Endpoint{Name: "mcp client", Hostname: m.host.Hostname}
	m.actorOf(&ev, e.Session, "")
	ev.dispose(dispAllowed, actAllowed)
	ev.Duration = max(p.DurationMS, 0)
	ev.status(p.Error == "")
	if p.Error != "" {
		msg, cut := m.text(e.Session, p.Error, MaxText)
		ev.API.Response = &Response{Error: "error", ErrorMessage: msg}
		ev.Metadata.IsTruncated = cut
	}
	return []Event{ev}
}

// blake3Hex is a content hash as recorded (64 hex BLAKE3-256).
func blake3Hex(h string) Fingerprint {
	v, _ := clip(h, 128)
	return Fingerprint{AlgorithmID: 99, Algorithm: "BLAKE3-256", EncodingID: 1, Value: v}
}
