package event

import (
	"errors"
	"fmt"
)

// ErrNotWithholdable is returned by Withhold for an entry type that an
// off-the-record session never records (engine, ledger and chronicle
// maintenance entries) and for a payload type it does not know: the
// recorder then records nothing rather than content.
var ErrNotWithholdable = errors.New("not recordable off the record")

// Withhold returns a copy of p for an off-the-record session: every
// content member replaced by its commitment under c (withhold.go), every
// envelope member (types, ids, decisions, tiers, rules, sizes, timings,
// exit codes, sandbox facts) kept. p is not changed. Tool names, tool
// groups and model names are kept only when the engine knows them
// (Known), call ids only when plain and bounded (CallID): otherwise they
// are what a model wrote, and withheld.
//
// Each case lists exactly the members withheld; the members of a type
// that are not named are envelope. TestWithhold_EveryMemberClassified
// fails when a registered type gains a string member this switch does not
// withhold and the test's envelope list does not name, so a new member
// cannot leak silently. docs/otr.md is the same list for readers.
func Withhold(p Payload, c *Commitments) (Payload, error) {
	switch t := p.(type) {
	case *SessionCreated:
		q := *t
		q.Title = c.Text(DomainTitle, t.Title)
		return &q, nil
	case *SessionTitled:
		q := *t
		q.Title = c.Text(DomainTitle, t.Title)
		return &q, nil
	case *ClientMessage:
		q := *t
		q.Content = c.Text(DomainUserText, t.Content)
		return &q, nil
	case *ProcessRequest:
		q := *t
		q.Content = c.Text(DomainUserText, t.Content)
		q.Tools = c.tools(t.Tools)
		return &q, nil
	case *AgentTokens:
		q := *t
		q.Text = c.Text(DomainModelText, t.Text)
		return &q, nil
	case *AgentToolCall:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Arguments = c.Text(DomainArguments, t.Arguments)
		return &q, nil
	case *MemoryFlush:
		q := *t
		q.Content = c.Text(DomainMemory, t.Content)
		q.Blob = c.Blob(DomainMemory, t.Blob, t.Size)
		return &q, nil
	case *ResponseComplete:
		q := *t
		q.Content = c.Text(DomainModelText, t.Content)
		q.Thoughts = withholdThoughts(t.Thoughts, c)
		return &q, nil
	case *AgentError:
		q := *t
		q.Message = c.Text(DomainError, t.Message)
		return &q, nil
	case *AgentCrashed:
		q := *t
		q.Detail = c.Text(DomainError, t.Detail)
		q.Stderr = c.Text(DomainError, t.Stderr)
		return &q, nil
	case *LLMRequest:
		q := *t
		q.Model = c.Model(t.Model)
		q.Blob = c.Blob(DomainLLMRequest, t.Blob, t.Size)
		return &q, nil
	case *LLMResponse:
		q := *t
		q.Model = c.Model(t.Model)
		q.Blob = c.Blob(DomainLLMBody, t.Blob, t.Size)
		q.Text = c.Text(DomainModelText, t.Text)
		q.Error = c.Text(DomainError, t.Error)
		if t.ToolCalls != nil {
			q.ToolCalls = make([]ToolCall, len(t.ToolCalls))
			for i, tc := range t.ToolCalls {
				tc.CallID, tc.Tool = c.CallID(tc.CallID), c.Tool(tc.Tool)
				tc.Arguments = c.Text(DomainArguments, tc.Arguments)
				q.ToolCalls[i] = tc
			}
		}
		return &q, nil
	case *ToolProposed:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Arguments = c.Text(DomainArguments, t.Arguments)
		q.ActionHash = c.Hash(DomainActionHash, t.ActionHash)
		if t.Links != nil {
			q.Links = make([]Link, len(t.Links))
			for i, l := range t.Links {
				q.Links[i] = Link{Path: c.Text(DomainPath, l.Path), To: c.Text(DomainPath, l.To)}
			}
		}
		if t.Manifests != nil {
			q.Manifests = make([]ManifestChanges, len(t.Manifests))
			for i, m := range t.Manifests {
				w := ManifestChanges{Path: c.Text(DomainPath, m.Path), Format: m.Format, Error: c.Text(DomainError, m.Error)}
				for _, ch := range m.Changes {
					w.Changes = append(w.Changes, ManifestChange{Kind: ch.Kind, Key: c.Text(DomainArguments, ch.Key), Detail: c.Text(DomainArguments, ch.Detail)})
				}
				q.Manifests[i] = w
			}
		}
		if t.Toolchain != nil {
			q.Toolchain = make([]string, len(t.Toolchain))
			for i, s := range t.Toolchain {
				q.Toolchain[i] = c.Text(DomainPath, s)
			}
		}
		if t.Sensitive != nil {
			q.Sensitive = make([]string, len(t.Sensitive))
			for i, s := range t.Sensitive {
				q.Sensitive[i] = c.Text(DomainReason, s)
			}
		}
		if t.Taint != nil {
			q.Taint = make([]Taint, len(t.Taint))
			for i, x := range t.Taint {
				q.Taint[i] = Taint{Seq: x.Seq, SubAgentID: x.SubAgentID, CallID: c.CallID(x.CallID), What: c.Text(DomainReason, x.What)}
			}
		}
		return &q, nil
	case *ShieldVerdict:
		q := *t
		q.CallID = c.CallID(t.CallID)
		q.Reason = c.Text(DomainReason, t.Reason)
		q.ActionHash = c.Hash(DomainActionHash, t.ActionHash)
		return &q, nil
	case *ApprovalRequested:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Arguments = c.Text(DomainArguments, t.Arguments)
		q.Reason = c.Text(DomainReason, t.Reason)
		return &q, nil
	case *ApprovalResolved:
		q := *t
		q.CallID = c.CallID(t.CallID)
		q.Reason = c.Text(DomainReason, t.Reason)
		return &q, nil
	case *ToolResult:
		q := *t
		q.CallID = c.CallID(t.CallID)
		q.Content = c.Text(DomainResult, t.Content)
		q.Blob = c.Blob(DomainResult, t.Blob, t.Size)
		return &q, nil
	case *ExecStarted:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.ActionHash = c.Hash(DomainActionHash, t.ActionHash)
		return &q, nil
	case *ExecCompleted:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Result = c.Text(DomainResult, t.Result)
		q.ResultBlob = c.Blob(DomainResult, t.ResultBlob, t.Size)
		q.DiffError = c.Text(DomainError, t.DiffError)
		q.Post = withholdPost(t.Post, c)
		q.Pre = withholdFiles(t.Pre, c)
		return &q, nil
	case *ExecFailed:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Error = c.Text(DomainError, t.Error)
		return &q, nil
	case *Snapshot:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Files = withholdFiles(t.Files, c)
		q.ManifestBlob = c.Blob(DomainSnapshot, t.ManifestBlob, t.ManifestSize)
		if t.Unrecorded != nil {
			q.Unrecorded = make([]string, len(t.Unrecorded))
			for i, u := range t.Unrecorded {
				q.Unrecorded[i] = c.Text(DomainPath, u)
			}
		}
		return &q, nil
	case *SubAgentSpawned:
		q := *t
		q.ParentCallID, q.Tools = c.CallID(t.ParentCallID), c.tools(t.Tools)
		q.Model = c.Model(t.Model)
		q.Task = c.Text(DomainTask, t.Task)
		q.TaskBlob = c.Blob(DomainTask, t.TaskBlob, t.TaskSize)
		return &q, nil
	case *SubAgentCompleted:
		q := *t
		q.Result = c.Text(DomainModelText, t.Result)
		q.ResultBlob = c.Blob(DomainModelText, t.ResultBlob, t.Size)
		return &q, nil
	case *SubAgentFailed:
		q := *t
		q.Detail = c.Text(DomainError, t.Detail)
		return &q, nil
	case *SubAgentCancelled:
		q := *t
		q.ByCallID = c.CallID(t.ByCallID)
		q.Reason = c.Text(DomainReason, t.Reason)
		return &q, nil
	case *ToolDefsRequest:
		q := *t
		q.CallID, q.Groups = c.CallID(t.CallID), c.groups(t.Groups)
		return &q, nil
	case *ToolDefs:
		q := *t
		q.CallID, q.Groups, q.Tools = c.CallID(t.CallID), c.groups(t.Groups), c.tools(t.Tools)
		return &q, nil
	case *ResultFlagged:
		q := *t
		q.CallID, q.Tool = c.CallID(t.CallID), c.Tool(t.Tool)
		q.Reason = c.Text(DomainReason, t.Reason) // it quotes the result
		return &q, nil
	case *MCPToolsListed:
		// The server's and tools' names are envelope, like a configured
		// command's; what it says of them is content.
		q := *t
		q.Listing = c.Text(DomainMCP, t.Listing)
		q.ListingBlob = c.Blob(DomainMCP, t.ListingBlob, t.Size)
		return &q, nil
	case *MCPServerExited:
		q := *t
		q.StderrTail = c.Text(DomainError, t.StderrTail)
		return &q, nil
	case *MCPServerFailed:
		q := *t
		q.Error = c.Text(DomainError, t.Error)
		q.StderrTail = c.Text(DomainError, t.StderrTail)
		return &q, nil
	case *MCPProtocolError:
		q := *t
		q.CallID = c.CallID(t.CallID)
		q.Detail = c.Text(DomainError, t.Detail)
		return &q, nil
	case *MCPRequest:
		q := *t
		q.RequestID, q.Method = c.CallID(t.RequestID), c.mcpMethod(t.Method)
		q.Params = c.Text(DomainMCP, t.Params)
		q.ParamsBlob = c.Blob(DomainMCP, t.ParamsBlob, t.Size)
		return &q, nil
	case *MCPResponse:
		q := *t
		q.RequestID, q.Method = c.CallID(t.RequestID), c.mcpMethod(t.Method)
		q.Result = c.Text(DomainMCP, t.Result)
		q.ResultBlob = c.Blob(DomainMCP, t.ResultBlob, t.Size)
		q.Error = c.Text(DomainError, t.Error)
		return &q, nil
	case *MCPServerStarted, *MCPClient:
		// Envelope only: the configured server, its command and sandbox,
		// how the server and the client name themselves.
		return p, nil
	case *SubAgentTimedOut, *AgentSpawned, *AgentExited, *SandboxCanary, *AgentReady, *Shutdown:
		// Envelope only: ids, limits, the sandbox and the engine's own
		// reasons.
		return p, nil
	case *EngineStarted, *EngineStopped, *EngineCrashed, *ClientRejected, *Genesis, *Note, *Key,
		*Checkpoint, *TreeBuilt, *Pruned, *Rollback, *RollbackStarted:
		return nil, fmt.Errorf("%w: %s is not a session's entry", ErrNotWithholdable, p.Type())
	}
	return nil, fmt.Errorf("%w: unknown payload %T", ErrNotWithholdable, p)
}

// mcpMethods are the MCP methods a proxied client may ask: kept in
// clear; any other method name is what a client wrote, withheld.
var mcpMethods = map[string]bool{"initialize": true, "ping": true, "tools/list": true, "tools/call": true, "resources/list": true,
	"resources/read": true, "resources/templates/list": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true}

// mcpMethod returns an MCP method name as recorded.
func (c *Commitments) mcpMethod(m string) string {
	return c.name(func(n string) bool { return mcpMethods[n] }, m)
}

// withholdThoughts withholds each thought's summary and detail; the stage
// is envelope.
func withholdThoughts(ts []Thought, c *Commitments) []Thought {
	if ts == nil {
		return nil
	}
	out := make([]Thought, len(ts))
	for i, t := range ts {
		t.Summary = c.Text(DomainThought, t.Summary)
		t.Detail = c.Text(DomainThought, t.Detail)
		out[i] = t
	}
	return out
}

// withholdPost withholds each post-state's path and content hash (a
// file's BLAKE3 is guessable); absent and mode are envelope.
func withholdPost(ps []PostState, c *Commitments) []PostState {
	if ps == nil {
		return nil
	}
	out := make([]PostState, len(ps))
	for i, p := range ps {
		p.Path = c.Text(DomainPath, p.Path)
		p.Hash = c.Hash(DomainFileHash, p.Hash)
		out[i] = p
	}
	return out
}

// withholdFiles withholds each file state's path, symlink target, content
// blob and hash; state, mode, size and why content was omitted are
// envelope. No snapshot blob of an off-the-record session is stored.
func withholdFiles(fs []FileState, c *Commitments) []FileState {
	if fs == nil {
		return nil
	}
	out := make([]FileState, len(fs))
	for i, f := range fs {
		f.Path = c.Text(DomainPath, f.Path)
		f.Target = c.Text(DomainPath, f.Target)
		f.Blob = c.Blob(DomainSnapshot, f.Blob, f.Size)
		f.Hash = c.Hash(DomainFileHash, f.Hash)
		out[i] = f
	}
	return out
}
