package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/engine/mcp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/shield"
)

// ShieldEvaluator judges proposals with Shield.
type ShieldEvaluator struct {
	S *shield.Shield
	// FS, if set, is the workspace the executors act in: Links resolves
	// the proposal's paths in it (through symlinks) before the proposal
	// is recorded and judged. Without it (what-if, replay) the links
	// recorded with the proposal are judged.
	FS *executor.Workspace
	// Declared, if set, caches what the workspace declares of its
	// toolchain between proposals (Toolchain); nil walks each time.
	Declared *Declarations
}

// PolicyHash implements Evaluator.
func (e ShieldEvaluator) PolicyHash() ledger.Hash { return e.S.PolicyHash() }

// Evaluate implements Evaluator: it turns the tool's arguments into the
// facts Shield judges (what the call reads, writes, deletes, reaches and
// carries; a command line is Shield's to read) and asks Shield.
func (e ShieldEvaluator) Evaluate(ctx context.Context, p Proposal) []Verdict {
	if why, ok := tooLarge(p); ok {
		return []Verdict{{Decision: shield.Block, Tier: -1, Rule: "input:too-large", Reason: why}}
	}
	a := e.Action(p)
	vs := e.S.Evaluate(ctx, a)
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		out[i] = Verdict{Decision: v.Decision, Tier: v.Tier, Rule: v.Rule, Reason: v.Reason}
	}
	return out
}

// Action is the shield.Action a proposal is judged as: its facts derived
// from the tool's arguments, as the executors would act on them. A tool
// Shield does not know is judged by the paths its arguments name (reads,
// or writes for a mutating tool) and the text it carries.
func (e ShieldEvaluator) Action(p Proposal) shield.Action { return e.action(p, nil) }

// action is Action, telling seen (if set) every path argument it judges
// as written, for Links to resolve.
func (e ShieldEvaluator) action(p Proposal, seen func(raw string)) shield.Action {
	// The arguments the known tools take, decoded at once; a tool Shield
	// does not know is read as a map (below).
	var known struct {
		Path, From, To, Content, New, Old, Text, Message, URL, Method, Body, Command, Cwd, Glob, Query, Pattern string
		Headers                                                                                                 map[string]any
		Paths                                                                                                   []string
	}
	_ = json.Unmarshal(p.Args, &known) // canonical JSON object: cannot fail (a field of another type stays empty)
	args := map[string]any{"path": known.Path, "from": known.From, "to": known.To, "content": known.Content, "new": known.New,
		"text": known.Text, "message": known.Message, "url": known.URL, "method": known.Method, "body": known.Body,
		"command": known.Command, "cwd": known.Cwd, "glob": known.Glob, "query": known.Query, "pattern": known.Pattern}
	if known.Headers != nil {
		args["headers"] = known.Headers
	}
	if known.Paths != nil {
		list := make([]any, len(known.Paths))
		for i, p := range known.Paths {
			list[i] = p
		}
		args["paths"] = list
	}
	if !knownTools[p.Tool] {
		args = nil
		_ = json.Unmarshal(p.Args, &args)
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	a := shield.Action{Session: p.Session, Tool: p.Tool, Mutating: p.Def.Mutating, Taint: taintOf(p.Taint)}
	f := &a.Facts
	f.Unknown = append(f.Unknown, p.Unknown...)
	if why, ok := p.Links[linksTruncated]; ok {
		f.Unknown = append(f.Unknown, "the call names "+why+" before it was judged: where the rest lead is not known")
	}
	// Tools take paths literally (no glob expansion): a "*" in one is
	// a file name character.
	ref := func(rel string, tree bool) shield.Ref {
		return shield.Ref{Path: e.S.ResolvePath(rel), Tree: tree, By: p.Tool}
	}
	// add appends the ref of a path argument to refs, and, when the path
	// went through a symlink (p.Links), the ref of where it led: both
	// are judged, so a deny of either wins and an allow needs both.
	add := func(refs *[]shield.Ref, rel string, tree bool) {
		*refs = append(*refs, ref(rel, tree))
		if seen != nil {
			seen(rel)
		}
		if r, ok := e.linked(p, rel, tree); ok {
			*refs = append(*refs, r)
		}
	}
	ws := e.S.ResolvePath(".")
	for _, rel := range p.Paths {
		// What the call acts on beside its arguments (executor.Pather):
		// MEMORY.md for the memory tools.
		if p.Def.Mutating {
			add(&f.Writes, rel, false)
		} else {
			add(&f.Reads, rel, false)
		}
	}
	if _, _, ok := mcp.SplitToolName(p.Tool); ok {
		e.mcpFacts(p, args, &a, seen)
		return a
	}
	switch p.Tool {
	case "read_file", "list_directory":
		add(&f.Reads, orDot(str("path")), false)
	case "search_files":
		// Every file under path whose base name matches glob, searched
		// for pattern (rules 20: what it hunts for is judged too).
		dir := orDot(str("path"))
		if pat := str("pattern"); pat != "" {
			f.Searches = append(f.Searches, pat)
		}
		if g := str("glob"); g != "" {
			r := ref(path.Join(dir, "**", g), false)
			r.Glob = true
			f.Reads = append(f.Reads, r)
			if seen != nil {
				seen(dir)
			}
			if l, ok := e.linked(p, dir, false); ok {
				l.Path, l.Glob = path.Join(l.Path, "**", g), true
				f.Reads = append(f.Reads, l)
			}
		} else {
			add(&f.Reads, dir, true)
		}
	case "git_status", "git_diff", "git_log":
		// Reads never need a path: without one, the whole repository.
		if s := str("path"); s != "" {
			add(&f.Reads, s, true)
		} else {
			f.Reads = append(f.Reads, shield.Ref{Path: ws, Tree: true, By: p.Tool})
		}
	case "git_commit":
		add(&f.Writes, ".git", false)
		// What it commits is read into the repository (and leaves with
		// the next push): each path given, or the workspace.
		if list, ok := args["paths"].([]any); ok && len(list) > 0 {
			for _, v := range list {
				if s, ok := v.(string); ok && s != "" {
					add(&f.Reads, s, true)
				}
			}
		}
		f.Texts = append(f.Texts, shield.Text{Source: "commit message", Body: str("message")})
	case "write_file":
		r := ref(str("path"), false)
		add(&f.Writes, str("path"), false)
		f.Texts = append(f.Texts, shield.Text{Source: "content:" + r.Path, Body: str("content")})
		f.Supply = append(f.Supply, supplyOf(e.S.ResolvePath("."), p)...)
	case "edit_file":
		r := ref(str("path"), false)
		add(&f.Writes, str("path"), false)
		f.Texts = append(f.Texts, shield.Text{Source: "content:" + r.Path, Body: str("new")})
		if known.Old != "" {
			f.Removed = append(f.Removed, shield.Text{Source: "content:" + r.Path, Body: known.Old})
		}
		f.Supply = append(f.Supply, supplyOf(e.S.ResolvePath("."), p)...)
	case "delete_file":
		add(&f.Deletes, str("path"), false)
	case "move_file":
		// A move carries the file's content to where it can be read
		// under another name: a read of it too.
		add(&f.Reads, str("from"), false)
		add(&f.Deletes, str("from"), false)
		add(&f.Writes, str("to"), false)
		f.Supply = append(f.Supply, supplyOf(e.S.ResolvePath("."), p)...)
	case "make_dir":
		add(&f.Writes, str("path"), false)
	case "memory_append":
		if len(p.Paths) == 0 {
			add(&f.Writes, executor.MemoryFile, false)
		}
		f.Texts = append(f.Texts, shield.Text{Source: "memory", Body: str("text")})
	case "memory_read", "memory_search":
		if len(p.Paths) == 0 {
			add(&f.Reads, executor.MemoryFile, false)
		}
		if q := str("query"); q != "" {
			// What a search asks for (a hunt for credentials is judged).
			f.Texts = append(f.Texts, shield.Text{Source: "memory query", Body: q})
		}
	case "http_request":
		q := httpRequest(args)
		f.Requests = append(f.Requests, q)
		if q.Host == "" {
			f.Unknown = append(f.Unknown, "the request's URL names no host Shield can read")
		}
		f.Texts = append(f.Texts, shield.Text{Source: "url", Body: str("url")})
		if b := str("body"); b != "" {
			f.Texts = append(f.Texts, shield.Text{Source: "body", Body: b})
		}
		if h := headerText(args); h != "" {
			// What the headers carry is judged as what the request
			// sends (a token in a User-Agent leaves as surely as in a
			// body).
			f.Texts = append(f.Texts, shield.Text{Source: "headers", Body: h})
		}
	case "web_search":
		// A coding agent's search (agents/toolmap): the query goes to
		// its search provider.
		// query goes to its search provider, a host opx cannot name:
		// tier 1 reads it as what a request there carries.
		if q, _ := args["query"].(string); q != "" {
			f.Requests = append(f.Requests, shield.Request{Host: "the agent's search provider", Method: "GET", By: p.Tool})
			f.Texts = append(f.Texts, shield.Text{Source: "search query", Body: q})
		}
	case "spawn_agent", "agent_message":
		// What a sub-agent is told is text Shield reads like any other
		// (prompt injection, secrets); the tools it asks are names, and
		// its own calls are judged one by one when it makes them.
		f.Texts = append(f.Texts, shield.Text{Source: "task", Body: str("task")})
		if m := str("message"); m != "" {
			f.Texts = append(f.Texts, shield.Text{Source: "message", Body: m})
		}
	case "execute_command":
		a.Command, a.Cwd = str("command"), str("cwd")
		if cwd := a.Cwd; cwd != "" {
			c := e.S.ResolvePath(cwd)
			if seen != nil {
				seen(cwd)
			}
			if l, ok := e.linked(p, cwd, false); ok {
				c = l.Path // where the command runs (the executor opens it so)
			}
			if c != ws && !strings.HasPrefix(c, ws+"/") {
				f.Unknown = append(f.Unknown, "the command runs in "+c+", outside the workspace, where its relative paths cannot be judged")
			}
		}
		a.Links = e.commandLinks(p)
		a.Toolchain = p.Toolchain
		// What a copy, move or link over a manifest changes (Manifests).
		f.Supply = append(f.Supply, supplyOf(e.S.ResolvePath("."), p)...)
	default:
		for _, k := range PathArgs {
			if s := str(k); s != "" {
				if p.Def.Mutating {
					add(&f.Writes, s, false)
				} else {
					add(&f.Reads, s, false)
				}
			}
		}
		for _, k := range []string{"content", "new", "body", "text", "message"} {
			if s := str(k); s != "" {
				f.Texts = append(f.Texts, shield.Text{Source: k, Body: s})
			}
		}
		if u := str("url"); u != "" {
			f.Requests = append(f.Requests, httpRequest(args))
		}
	}
	return a
}

// argCaps are the executors' own caps on a tool's large arguments: an
// argument over its cap is refused by the executor anyway, so Shield
// refuses it first, before reading it (judging megabytes of text costs
// time no proposal should be able to buy).
var argCaps = map[string]map[string]int{
	"execute_command": {"command": executor.MaxCommandBytes},
	"memory_append":   {"text": executor.MaxMemoryAppend},
	"write_file":      {"content": executor.MaxWriteBytes},
	"edit_file":       {"new": executor.MaxWriteBytes, "old": executor.MaxWriteBytes},
	"http_request":    {"body": executor.MaxHTTPRequestBody},
	"git_commit":      {"message": executor.MaxCommitMessage},
}

// tooLarge reports whether one of p's arguments is over the executor's
// cap for it. Arguments are only decoded when the whole of them is over
// the smallest cap (JSON only grows a string).
func tooLarge(p Proposal) (string, bool) {
	caps, ok := argCaps[p.Tool]
	if !ok {
		return "", false
	}
	least := -1
	for _, n := range caps {
		if least < 0 || n < least {
			least = n
		}
	}
	if len(p.Args) <= least {
		return "", false
	}
	var args map[string]any
	_ = json.Unmarshal(p.Args, &args)
	for k, n := range caps {
		if s, _ := args[k].(string); len(s) > n {
			return fmt.Sprintf("%s's %s is %d bytes, over the %d the tool accepts: refused before it is judged", p.Tool, k, len(s), n), true
		}
	}
	return "", false
}

// knownTools are the tools whose arguments Action reads by name.
var knownTools = map[string]bool{"read_file": true, "list_directory": true, "search_files": true, "git_status": true, "git_diff": true,
	"git_log": true, "git_commit": true, "write_file": true, "edit_file": true, "delete_file": true, "move_file": true, "make_dir": true,
	"memory_append": true, "memory_read": true, "memory_search": true, "http_request": true, "execute_command": true}

// PathArgs are the argument names tools use for paths (the tier 2
// evaluator shows them too).
var PathArgs = []string{"path", "from", "to", "source", "destination", "dir"}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// plainHeaders are request headers that carry no data of the agent's.
var plainHeaders = map[string]bool{"accept": true, "accept-language": true, "accept-encoding": true, "content-type": true,
	"if-none-match": true, "if-modified-since": true, "cache-control": true, "range": true, "x-github-api-version": true}

// maxPlainUserAgent is the longest User-Agent a request may carry and
// still be judged a plain read.
const maxPlainUserAgent = 64

// maxPlainQuery is the longest query string a request may carry and
// still be judged a plain read: a longer one can carry data out.
const maxPlainQuery = 256

// httpRequest is what an http_request call sends: its host, method, and
// whether it carries data (a body, a method that sends one, headers
// beyond the plain ones, a long query or user info in the URL).
func httpRequest(args map[string]any) shield.Request {
	q := shield.Request{By: "http_request", Method: "GET"}
	if m, _ := args["method"].(string); m != "" {
		q.Method = strings.ToUpper(m)
	}
	raw, _ := args["url"].(string)
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		q.Host = strings.ToLower(u.Hostname())
		q.Query = shield.QueryOf(raw)
		if len(u.RawQuery) > maxPlainQuery || u.User != nil {
			q.Data = true
		}
	}
	if b, _ := args["body"].(string); b != "" || (q.Method != "GET" && q.Method != "HEAD") {
		q.Data = true
	}
	if h, ok := args["headers"].(map[string]any); ok {
		for k, v := range h {
			lk := strings.ToLower(k)
			if vs, _ := v.(string); lk == "user-agent" && len(vs) <= maxPlainUserAgent && !strings.ContainsAny(vs, "=") && !shield.EncodedData(vs) {
				continue // a client's name and version
			}
			if vs, _ := v.(string); (q.Method == "GET" || q.Method == "HEAD") && shield.OwnServiceToken(vs, q.Host) {
				continue // rules 16: a read sent with a reference to the service's own token
			}
			if !plainHeaders[lk] {
				q.Data = true
			}
		}
	}
	return q
}

// headerText is an http_request's headers as lines of "name: value",
// sorted by name; "" for none.
func headerText(args map[string]any) string {
	h, _ := args["headers"].(map[string]any)
	if len(h) == 0 {
		return ""
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		v, _ := h[k].(string)
		b.WriteString(k + ": " + v + "\n")
	}
	return b.String()
}
