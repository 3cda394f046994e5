package event

import (
	"errors"
	"sort"
)

// Types of the security area.
const (
	TypeToolProposed      = "tool.proposed"
	TypeShieldVerdict     = "shield.verdict"
	TypeApprovalRequested = "approval.requested"
	TypeApprovalResolved  = "approval.resolved"
)

func init() {
	register(func() Payload { return &ToolProposed{} })
	register(func() Payload { return &ShieldVerdict{} })
	register(func() Payload { return &ApprovalRequested{} })
	register(func() Payload { return &ApprovalResolved{} })
}

// Verdict decisions.
const (
	Allow    = "allow"
	Block    = "block"
	Escalate = "escalate"
)

// ToolProposed records a tool call the engine accepted for evaluation,
// after parsing. ActionHash is BLAKE3 of the canonical action (tool and
// canonical arguments); the engine re-checks it before executing. Mutating
// says whether the tool changes the workspace, so verify can demand a
// snapshot before it runs without knowing the tool.
type ToolProposed struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	MessageID  string `json:"message_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Arguments  string `json:"arguments"` // canonical JSON text
	ActionHash string `json:"action_hash"`
	Mutating   bool   `json:"mutating"`
	// Links, when present, are where paths the call names led through
	// symlinks beneath the workspace when it was proposed, sorted by
	// Path. Shield judged both forms; a replay judges these rather than
	// today's filesystem. Absent in ledgers written before it.
	Links []Link `json:"links,omitempty"`
	// Manifests, when present, are the changes the call makes to files a
	// toolchain reads to fetch or run code (go.mod, package.json, lockfiles,
	// registry settings ...), computed by parsing each before and after
	// when it was proposed (shield/manifest): Shield judged these, and a
	// replay judges them rather than the files of the day. Only files with
	// a change, or that could not be parsed, are listed. Absent in ledgers
	// written before it.
	Manifests []ManifestChanges `json:"manifests,omitempty"`
	// Sensitive, when present, says what the call reads that is sensitive
	// (credentials, the environment, key material, a file the policy marks
	// secret), as Shield named it: once the call runs, the session holds
	// that data, and what can carry data out is judged as such (Taint).
	// An entry that begins "changed: " names instead a build or test file
	// the call changes that a tool runs as code (conftest.py, a Makefile,
	// a lifecycle script): a later run of that tool is judged with it
	// (shield's flow:changed-then-run). Absent in ledgers written before it.
	Sensitive []string `json:"sensitive,omitempty"`
	// Taint, when present, are the earlier calls of the session that read
	// something sensitive and ran, as the engine knew them when this call
	// was proposed: Shield judged with them, and a replay does too.
	// Absent in ledgers written before it.
	Taint []Taint `json:"taint,omitempty"`
	// Toolchain, when present, are the programs the command runs that
	// the workspace declared it uses when it was proposed, each as
	// "program=file" (the workspace file that declares it): Shield's
	// policy judged with them (toolchain: workspace), and a replay does
	// too. Absent in ledgers written before it.
	Toolchain []string `json:"toolchain,omitempty"`
}

// ManifestChanges are the changes a call makes to one manifest.
type ManifestChanges struct {
	// Path is the file, relative to the workspace as the call names it.
	Path   string `json:"path"`
	Format string `json:"format"`
	// Changes are what the change does (none when Error is set).
	Changes []ManifestChange `json:"changes,omitempty"`
	// Error says why the file, before or after, could not be judged: it
	// could not be parsed, or is over the size judged.
	Error string `json:"error,omitempty"`
}

// ManifestChange is one change to a manifest: where code comes from
// ("source"), code that runs at build, install or test time ("runs"), a
// checksum or its verification ("checksum").
type ManifestChange struct {
	Kind   string `json:"kind"`
	Key    string `json:"key"`
	Detail string `json:"detail,omitempty"`
}

// Taint is an earlier call of a session that read something sensitive.
type Taint struct {
	Seq        uint64 `json:"seq"` // its tool.proposed
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	What       string `json:"what"`
}

// Link is one path a call named and where the filesystem resolved it.
type Link struct {
	// Path is the path as written: a tool's argument, or an absolute
	// path a command line names.
	Path string `json:"path"`
	// To is where it leads: workspace-relative, or absolute when it
	// leads out of the workspace. A Path of "" marks a call with more
	// paths or links than were resolved; To then says why.
	To string `json:"to"`
}

// LinksOf is m (path as written -> resolution) as recorded: sorted by
// path; nil for none.
func LinksOf(m map[string]string) []Link {
	if len(m) == 0 {
		return nil
	}
	out := make([]Link, 0, len(m))
	for p, to := range m {
		out = append(out, Link{Path: p, To: to})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// LinkMap is the map LinksOf recorded; nil for none.
func LinkMap(ls []Link) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Path] = l.To
	}
	return m
}

func (*ToolProposed) Type() string { return TypeToolProposed }

func (p *ToolProposed) Validate() error {
	return firstErr(need("call_id", p.CallID, "tool", p.Tool), needHash("action_hash", p.ActionHash, false))
}

// ShieldVerdict records one decision about a proposal: which tier decided,
// by which rule, why, on which action and under which policy, so the
// verdict can be re-derived later.
type ShieldVerdict struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	CallID     string `json:"call_id"`
	Decision   string `json:"decision"`
	// Tier is the tier that decided: 0 policy, 1 heuristics, 2 LLM
	// evaluator, 3 human; -1 hard-coded protection. An escalation names
	// the tier it asks instead (2 or 3): a policy rule that wants a human
	// records escalate with tier 3.
	Tier       int    `json:"tier"`
	Rule       string `json:"rule"`
	Reason     string `json:"reason"`
	ActionHash string `json:"action_hash"`
	PolicyHash string `json:"policy_hash"`
}

func (*ShieldVerdict) Type() string { return TypeShieldVerdict }

func (v *ShieldVerdict) Validate() error {
	if v.Tier < -1 || v.Tier > 3 {
		return errors.New("tier must be -1..3")
	}
	return firstErr(need("call_id", v.CallID, "rule", v.Rule), oneOf("decision", v.Decision, Allow, Block, Escalate),
		needHash("action_hash", v.ActionHash, false), needHash("policy_hash", v.PolicyHash, false))
}

// ApprovalRequested records an escalation to a human, with what the human
// is shown: the call's message, tool and arguments, and why it was
// escalated. (Ledgers written before message_id and arguments were
// recorded lack them: the call's tool.proposed has them.)
type ApprovalRequested struct {
	// SubAgentID names the sub-agent whose call asks ("" the session's
	// own agent).
	SubAgentID string `json:"subagent_id,omitempty"`
	ApprovalID string `json:"approval_id"`
	MessageID  string `json:"message_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Arguments  string `json:"arguments,omitempty"` // canonical JSON, as in tool.proposed
	Reason     string `json:"reason"`
	TimeoutMS  int64  `json:"timeout_ms"`
}

func (*ApprovalRequested) Type() string { return TypeApprovalRequested }

func (a *ApprovalRequested) Validate() error {
	if a.TimeoutMS <= 0 {
		return errors.New("timeout_ms must be positive")
	}
	return need("approval_id", a.ApprovalID, "call_id", a.CallID, "tool", a.Tool)
}

// ApprovalResolved records the human's answer, or the timeout that denied.
type ApprovalResolved struct {
	SubAgentID string `json:"subagent_id,omitempty"`
	ApprovalID string `json:"approval_id"`
	CallID     string `json:"call_id"`
	Approved   bool   `json:"approved"`
	By         string `json:"by"` // who answered, or "timeout"
	Reason     string `json:"reason,omitempty"`
}

func (*ApprovalResolved) Type() string { return TypeApprovalResolved }

func (a *ApprovalResolved) Validate() error {
	if a.By == "timeout" && a.Approved {
		return errors.New("a timeout cannot approve")
	}
	return need("approval_id", a.ApprovalID, "call_id", a.CallID, "by", a.By)
}
