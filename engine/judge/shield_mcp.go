package judge

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/opx-dev/opx/shield"
)

// The facts of a call of an MCP server's tool. Shield knows none of a
// server's tools, so it reads their arguments generically:
//
//   - a string under a path-like key (path, paths, file, dir, source,
//     destination, root, cwd, …, or a key ending in path, dir, directory
//     or filename), at any depth, in a list or not, is a path the call
//     acts on, whatever it looks like (a URL of a scheme Shield does not
//     know, or a path starting with "~" or holding "$", which the server
//     resolves with its own home, also asks); so is a file:// URI under
//     any key (a file URI naming another host cannot be judged: Shield
//     asks);
//   - the call reads those paths, or, for a writable server's tool
//     (ToolDef.Mutating), writes them; each as a tree, since opx cannot
//     know whether the tool recurses. A tool its server marks read-only
//     (ToolDef.ReadOnlyHint, the listing's readOnlyHint) reads them, so
//     the reasons say what it claims to do, but the claim loosens
//     nothing: a path its sandbox lets it write (in the workspace, or
//     above it) is judged as written too, as a lying server may write
//     there, and the call is snapshotted as any mutating one;
//   - a string under a content-like key (content, text, body, newText,
//     command, code, …) is text Shield reads (prompt injection, secrets,
//     scripts): written to the one path the call names when there is one;
//   - an http(s) URL under a url-like key is a request.
//
// So the policy's outside_workspace and path rules, tier -1's protection
// of opx's state and configuration, and tier 1's path and text rules see
// what an MCP call names. Relative paths are judged against the
// workspace, which is where opx starts servers.

// Bounds on the walk over an MCP call's arguments; past them, the call
// cannot be read whole and Shield asks.
const (
	mcpMaxDepth   = 32
	mcpMaxStrings = 4096
	mcpMaxTexts   = 64
)

// mcpPathKeys are the keys whose strings are paths (lower case, without
// '_' and '-').
var mcpPathKeys = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "dir": true, "dirs": true, "directory": true, "directories": true,
	"folder": true, "folders": true, "root": true, "roots": true, "source": true, "sources": true, "src": true,
	"destination": true, "dest": true, "dst": true, "target": true, "from": true, "to": true, "cwd": true, "workdir": true,
	"workingdirectory": true, "location": true, "filename": true, "filenames": true,
}

// mcpTextKeys are the keys whose strings are text the call carries.
var mcpTextKeys = map[string]bool{
	"content": true, "contents": true, "text": true, "body": true, "message": true, "new": true, "newtext": true,
	"newstring": true, "newcontent": true, "data": true, "code": true, "script": true, "command": true, "cmd": true,
	"prompt": true, "input": true, "query": true, "patch": true, "diff": true, "replacement": true,
}

// mcpURLKeys are the keys whose http(s) strings are requests.
var mcpURLKeys = map[string]bool{"url": true, "urls": true, "uri": true, "uris": true, "endpoint": true, "href": true, "link": true}

func mcpKey(k string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k))
}

func mcpPathKey(k string) bool {
	if mcpPathKeys[k] {
		return true
	}
	for _, s := range []string{"path", "paths", "dir", "directory", "filename"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// mcpArgs is what a walk over an MCP call's arguments found.
type mcpArgs struct {
	paths   []string
	texts   []shield.Text
	urls    []string
	unknown []string
	strings int
	deep    bool
}

func (w *mcpArgs) walk(key string, v any, depth int) {
	if depth > mcpMaxDepth {
		w.deep = true
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the facts, and so the reasons, in a stable order
		for _, k := range keys {
			w.walk(mcpKey(k), x[k], depth+1)
		}
	case []any:
		for _, item := range x {
			w.walk(key, item, depth+1)
		}
	case string:
		w.strings++
		if w.strings > mcpMaxStrings {
			w.deep = true
			return
		}
		w.value(key, x)
	}
}

// value files one string of the arguments under its key.
func (w *mcpArgs) value(key, s string) {
	if s == "" {
		return
	}
	pathKey := mcpPathKey(key)
	if pathKey && (strings.HasPrefix(s, "~") || strings.Contains(s, "$")) {
		// A server runs with a private home of its own, not the user's
		// Shield resolves "~" and "$HOME" against: "~/../../ws/secret"
		// may name the workspace to the server and elsewhere to Shield.
		// It is judged as Shield reads it and asks a human.
		w.unknown = append(w.unknown, fmt.Sprintf("the argument %s is %q: relative to a home or a variable, which the server resolves with its own (private) home and environment", key, clipArg(s)))
	}
	if len(s) > 5 && strings.EqualFold(s[:5], "file:") {
		if pathKey {
			// The server may read it as the relative path it also is
			// (review #1).
			w.paths = append(w.paths, s)
		}
		u, err := url.Parse(s)
		switch {
		case err != nil:
			w.unknown = append(w.unknown, fmt.Sprintf("the argument %s is a file URI Shield cannot read", key))
		case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
			w.unknown = append(w.unknown, fmt.Sprintf("the argument %s is a file URI on host %q", key, u.Host))
		case u.Path != "":
			w.paths = append(w.paths, u.Path)
		case u.Opaque != "":
			w.paths = append(w.paths, u.Opaque)
		}
		return
	}
	scheme, _, isURL := strings.Cut(s, "://")
	isURL = isURL && !strings.ContainsAny(scheme, "/ \n")
	web := false
	if l := strings.ToLower(scheme); isURL && (l == "http" || l == "https") {
		web = true
	}
	switch {
	case pathKey:
		// Every string under a path key is a path to Shield, whatever
		// it looks like: a server may read "zz://../secret" as the
		// relative path it also is (review #1). One that looks like a
		// URL is also judged as one, and one with a scheme Shield does
		// not know asks a human.
		w.paths = append(w.paths, s)
		switch {
		case web:
			w.urls = append(w.urls, s)
		case isURL:
			w.unknown = append(w.unknown, fmt.Sprintf("the argument %s is %q: a path or a URL of scheme %q, which Shield cannot tell", key, clipArg(s), scheme))
		}
	case mcpURLKeys[key]:
		switch {
		case web:
			w.urls = append(w.urls, s)
		case isURL:
			// A URI of a scheme Shield does not know: the server may
			// read it as a path ("zz://../secret"), or fetch it.
			w.unknown = append(w.unknown, fmt.Sprintf("the argument %s is %q: a URI of scheme %q, which Shield cannot judge", key, clipArg(s), scheme))
		}
	case mcpTextKeys[key]:
		w.texts = append(w.texts, shield.Text{Source: key, Body: s})
	}
}

// mcpFacts adds the facts of an MCP call's arguments (args, decoded) to a.
func (e ShieldEvaluator) mcpFacts(p Proposal, args map[string]any, a *shield.Action, judged func(raw string)) {
	f := &a.Facts
	var w mcpArgs
	w.walk("", args, 0)
	if w.deep {
		f.Unknown = append(f.Unknown, fmt.Sprintf("the arguments of %s are nested deeper than %d levels or hold more than %d strings: Shield cannot read them whole", p.Tool, mcpMaxDepth, mcpMaxStrings))
	}
	if len(w.texts) > mcpMaxTexts {
		f.Unknown = append(f.Unknown, fmt.Sprintf("the arguments of %s carry %d texts, more than the %d Shield reads", p.Tool, len(w.texts), mcpMaxTexts))
		w.texts = w.texts[:mcpMaxTexts]
	}
	f.Unknown = append(f.Unknown, w.unknown...)
	// file files a path the call names: read, written, or, for a tool
	// marked read-only, read and, where its sandbox lets it write,
	// written too.
	ws := e.S.ResolvePath(".")
	file := func(r shield.Ref) {
		switch {
		case !p.Def.Mutating:
			f.Reads = append(f.Reads, r)
		case !p.Def.ReadOnlyHint:
			f.Writes = append(f.Writes, r)
		default:
			f.Reads = append(f.Reads, r)
			if mcpWritable(ws, r.Path) {
				f.Writes = append(f.Writes, r)
			}
		}
	}
	seen := map[string]bool{}
	var named []string
	for _, raw := range w.paths {
		if judged != nil {
			judged(raw)
		}
		// A server follows every symlink: where the path leads, as the
		// filesystem resolved it when the call was judged, is judged too.
		// (What a server does with a link swapped in later is beyond
		// opx's reach: docs/mcp.md.)
		if l, ok := e.linked(p, raw, true); ok {
			file(l)
		}
		// A server may find a file by any Unicode-equivalent spelling
		// of its name (the filesystem server does), while a policy's
		// globs match bytes: the path is judged in its NFC and NFD
		// forms too, so "se\u0301cret" meets a rule on "s\u00e9cret".
		for _, sp := range []string{raw, norm.NFC.String(raw), norm.NFD.String(raw)} {
			r := shield.Ref{Path: e.S.ResolvePath(sp), Tree: true, By: p.Tool}
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			if sp == raw {
				named = append(named, r.Path)
			}
			file(r)
		}
	}
	for _, t := range w.texts {
		if len(named) == 1 && p.Def.Mutating && (!p.Def.ReadOnlyHint || mcpWritable(ws, named[0])) {
			// What a writing tool carries is what it writes there: the
			// script and instruction-file rules read it as that file's.
			t.Source = "content:" + named[0]
		}
		f.Texts = append(f.Texts, t)
	}
	for _, u := range w.urls {
		q := httpRequest(map[string]any{"url": u})
		q.By = p.Tool
		if len(w.texts) > 0 {
			q.Data = true // what else the call carries may go with it
		}
		f.Requests = append(f.Requests, q)
	}
}

// mcpWritable says whether a writable server's sandbox lets it write
// under path (a tree): it is in the workspace ws, or above it. Anywhere
// else the kernel refuses its writes (engine/mcp/launch.go: the
// workspace and its private home are all it may change).
func mcpWritable(ws, path string) bool {
	return path == ws || strings.HasPrefix(path, ws+"/") || path == "/" || strings.HasPrefix(ws, path+"/")
}

// clipArg shortens an argument quoted in a reason.
func clipArg(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
