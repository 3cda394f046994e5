package toolmap

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/ledger"
)

// MaxCalls bounds the opx calls one agent call maps to (edits of a
// multi-edit, files of a patch, URLs of a fetch, patterns of a read of
// many files); past it the call is unknown.
const MaxCalls = 256

// Kind is what a call does, in a word.
type Kind string

// The kinds of call.
const (
	KindShell    Kind = "shell"    // runs a command line
	KindRead     Kind = "read"     // reads, lists or searches files
	KindWrite    Kind = "write"    // creates, edits, moves or deletes files
	KindWeb      Kind = "web"      // fetches a URL or searches the web
	KindMemory   Kind = "memory"   // writes the agent's memory
	KindMCP      Kind = "mcp"      // an MCP server's tool
	KindSubagent Kind = "subagent" // starts a sub-agent (whose calls come through the hooks one by one)
	KindInternal Kind = "internal" // the agent's own bookkeeping (plans, todos, questions to the user): touches nothing
	KindUnknown  Kind = "unknown"  // not understood: judged and snapshotted as the worst
)

// WebSearch is the opx name of a web search ({"query": ...}): opx's agent
// has no such tool, so Shield judges it by its default rules.
const WebSearch = "web_search"

// Call is one opx tool call: a tool name opx's pipeline knows (or an MCP
// tool's mcp__server__tool, or WebSearch, or for an unknown tool the
// agent's name "agent:Tool") and its canonical JSON arguments.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Ref is a path a call reads: a file or directory, a tree (everything
// under it), or a glob pattern.
type Ref struct {
	Path string `json:"path"`
	Tree bool   `json:"tree,omitempty"`
	Glob bool   `json:"glob,omitempty"`
}

// Mapping is what one agent tool call does in opx's vocabulary.
type Mapping struct {
	Agent hookproto.Agent `json:"agent"`
	// AgentTool and AgentInput are the agent's call, verbatim.
	AgentTool  string          `json:"agent_tool"`
	AgentInput json.RawMessage `json:"agent_input"`

	Kind  Kind   `json:"kind"`
	Calls []Call `json:"calls"`
	// Reads, Writes and Deletes are the paths the call names (see the
	// package documentation for their form). A moved file is deleted
	// where it was and written where it goes. Writes and Deletes are what
	// to snapshot before a call that is not WorkspaceWide.
	Reads   []Ref    `json:"reads,omitempty"`
	Writes  []string `json:"writes,omitempty"`
	Deletes []string `json:"deletes,omitempty"`
	// Mutating reports a call that can change files or memory.
	Mutating bool `json:"mutating"`
	// WorkspaceWide reports a call whose changes cannot be listed before
	// it runs (a command, an MCP tool, anything unknown): snapshot the
	// workspace.
	WorkspaceWide bool `json:"workspace_wide"`
	// Unknown says what could not be understood; Shield must judge it as
	// such (never allow it unasked).
	Unknown []string `json:"unknown,omitempty"`
}

// Map maps agent's call of tool with input (the hook's tool_input, a JSON
// object), made in the directory cwd, for the workspace ws (both absolute
// and clean; see hookproto). It never fails: what it cannot map is
// KindUnknown.
func Map(agent hookproto.Agent, tool string, input json.RawMessage, ws, cwd string) Mapping {
	m := &mapper{Mapping: Mapping{Agent: agent, AgentTool: tool, AgentInput: input}, ws: ws, cwd: cwd}
	if cwd == "" {
		m.cwd = ws
	}
	var args map[string]any
	if err := json.Unmarshal(input, &args); err != nil || args == nil {
		m.unknown(fmt.Sprintf("the input of %s is not a JSON object", tool))
		return m.Mapping
	}
	m.in = args
	if server, name, ok := mcpName(agent, tool); ok {
		m.mcp(server, name)
		return m.done()
	}
	var known bool
	switch agent {
	case hookproto.Claude:
		known = m.claude(tool)
	case hookproto.Codex:
		known = m.codex(tool)
	case hookproto.Gemini:
		known = m.gemini(tool)
	}
	if !known {
		m.unknown(fmt.Sprintf("%s tool %s is not known to opx", agent, tool))
	}
	return m.done()
}

// mapper builds one Mapping.
type mapper struct {
	Mapping
	ws, cwd string
	in      map[string]any
}

// done enforces the bounds and the fail-closed rule on the result.
func (m *mapper) done() Mapping {
	if len(m.Calls) > MaxCalls {
		m.unknown(fmt.Sprintf("%s maps to %d opx calls, more than the %d judged", m.AgentTool, len(m.Calls), MaxCalls))
	}
	return m.Mapping
}

// unknown turns the mapping into the fail-closed one: mutating,
// workspace-wide, one call under the agent's own name.
func (m *mapper) unknown(why string) {
	m.Kind = KindUnknown
	m.Mutating, m.WorkspaceWide = true, true
	m.Reads, m.Writes, m.Deletes = nil, nil, nil
	args, err := ledger.Canonicalize(m.AgentInput)
	if err != nil || len(args) == 0 || args[0] != '{' {
		args = []byte("{}")
	}
	m.Calls = []Call{{Tool: string(m.Agent) + ":" + m.AgentTool, Args: args}}
	m.Unknown = append(m.Unknown, why)
}

// call appends an opx call with args (a map of strings, bools and lists
// of strings: canonical JSON cannot fail on them).
func (m *mapper) call(tool string, args map[string]any) {
	b, err := ledger.MarshalCanonical(args)
	if err != nil {
		b = []byte("{}")
		m.Unknown = append(m.Unknown, fmt.Sprintf("the arguments of %s cannot be written as canonical JSON: %v", tool, err))
	}
	m.Calls = append(m.Calls, Call{Tool: tool, Args: b})
}

// str is the string member k of the input ("" if absent or not a string);
// the first of several names present wins.
func (m *mapper) str(keys ...string) string {
	for _, k := range keys {
		if s, ok := m.in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// path is p as opx names it: see the package documentation.
func (m *mapper) path(p string) string {
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		return path.Clean(p)
	}
	if !path.IsAbs(p) {
		p = path.Join(m.cwd, p)
	}
	p = path.Clean(p)
	if m.ws == "" || !path.IsAbs(p) {
		return p
	}
	if p == m.ws {
		return "."
	}
	if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(m.ws, "/")+"/"); ok {
		return rel
	}
	return p
}

// read, write and del record what the call touches.
func (m *mapper) read(p string, tree bool) { m.Reads = append(m.Reads, Ref{Path: p, Tree: tree}) }
func (m *mapper) write(p string) {
	m.Mutating = true
	m.Writes = append(m.Writes, p)
}
func (m *mapper) del(p string) {
	m.Mutating = true
	m.Deletes = append(m.Deletes, p)
}

// The opx calls common to the three agents.

func (m *mapper) shell(command, dir string) {
	m.Kind, m.Mutating, m.WorkspaceWide = KindShell, true, true
	args := map[string]any{"command": command}
	if d := m.path(dir); d != "" && d != "." {
		args["cwd"] = d
	} else if dir == "" {
		if c := m.path(m.cwd); c != "." {
			args["cwd"] = c
		}
	}
	m.call("execute_command", args)
}

func (m *mapper) readFile(p string) {
	m.Kind = KindRead
	p = m.path(p)
	m.read(p, false)
	m.call("read_file", map[string]any{"path": p})
}

func (m *mapper) listDir(p string) {
	m.Kind = KindRead
	p = orDot(m.path(p))
	m.read(p, false)
	m.call("list_directory", map[string]any{"path": p})
}

// glob lists the names that match pattern under dir: a listing of the
// pattern's literal directory (opx has no glob tool), with the pattern
// kept as the read.
func (m *mapper) glob(pattern, dir string) {
	m.Kind = KindRead
	full := pattern
	if !path.IsAbs(pattern) && !strings.HasPrefix(pattern, "~") {
		full = path.Join(orDot(dir), pattern)
	}
	base := literalDir(full)
	m.Reads = append(m.Reads, Ref{Path: m.path(full), Glob: true})
	m.call("list_directory", map[string]any{"path": orDot(m.path(base))})
}

// search reads the files under dir (whose base names match glob) for
// lines that match pattern.
func (m *mapper) search(pattern, dir, glob string) {
	m.Kind = KindRead
	d := orDot(m.path(dir))
	args := map[string]any{"pattern": pattern, "path": d}
	if glob != "" {
		args["glob"] = glob
		m.Reads = append(m.Reads, Ref{Path: path.Join(d, "**", glob), Glob: true})
	} else {
		m.read(d, true)
	}
	m.call("search_files", args)
}

func (m *mapper) writeFile(p, content string) {
	m.Kind = KindWrite
	p = m.path(p)
	m.write(p)
	m.call("write_file", map[string]any{"path": p, "content": content})
}

func (m *mapper) editFile(p, old, new string, all bool) {
	m.Kind = KindWrite
	p = m.path(p)
	if !contains(m.Writes, p) {
		m.write(p)
	}
	args := map[string]any{"path": p, "old": old, "new": new}
	if all {
		args["replace_all"] = true
	}
	m.call("edit_file", args)
}

func (m *mapper) fetch(url string) {
	m.Kind = KindWeb
	m.call("http_request", map[string]any{"url": url, "method": "GET"})
}

func (m *mapper) webSearch(query string) {
	m.Kind = KindWeb
	m.call(WebSearch, map[string]any{"query": query})
}

func (m *mapper) subagent(task string) {
	m.Kind = KindSubagent
	m.call("spawn_agent", map[string]any{"task": task})
}

// internal is a call of the agent's own bookkeeping: judged by Shield's
// default rules under the agent's name, touching nothing.
func (m *mapper) internal() {
	m.Kind = KindInternal
	args, err := ledger.Canonicalize(m.AgentInput)
	if err != nil {
		args = []byte("{}")
	}
	m.Calls = append(m.Calls, Call{Tool: string(m.Agent) + ":" + m.AgentTool, Args: args})
}

// mcp is a call of an MCP server's tool, judged as opx judges MCP calls.
func (m *mapper) mcp(server, tool string) {
	m.Kind, m.Mutating, m.WorkspaceWide = KindMCP, true, true
	args, err := ledger.Canonicalize(m.AgentInput)
	if err != nil {
		m.unknown(fmt.Sprintf("the arguments of MCP tool %s are not canonical JSON: %v", m.AgentTool, err))
		return
	}
	m.Calls = append(m.Calls, Call{Tool: "mcp__" + server + "__" + tool, Args: args})
}

// mcpName splits an agent's MCP tool name: mcp__server__tool for Claude
// and Codex, mcp_server_tool for Gemini (whose server names hold no "_").
func mcpName(agent hookproto.Agent, name string) (server, tool string, ok bool) {
	if agent == hookproto.Gemini {
		rest, ok := strings.CutPrefix(name, "mcp_")
		if !ok {
			return "", "", false
		}
		server, tool, ok = strings.Cut(rest, "_")
		return server, tool, ok && server != "" && tool != ""
	}
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// literalDir is the directory part of a glob pattern before its first
// element with a metacharacter.
func literalDir(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, "*?[{") {
			d := strings.Join(parts[:i], "/")
			if d == "" && strings.HasPrefix(pattern, "/") {
				return "/"
			}
			return orDot(d)
		}
	}
	return path.Dir(pattern)
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
