package judge

import (
	"fmt"
	"path"
	"strings"

	"github.com/opx-dev/opx/shield"
)

// Symlinks: what Shield judges is what the executor opens.
//
// Shield reads paths as written ("..", homes, /proc aliases); the
// filesystem follows symlinks. So before a proposal is recorded, Links
// resolves every path it names beneath the workspace, component by
// component (executor.Workspace.Resolve), and the proposal carries the
// resolutions that differ (tool.proposed "links"). Shield judges both
// forms — a deny or an escalation on either wins, an allow needs both —
// and the built-in executors open the resolved form following no symlink
// (executor.Call.Judged), so a link swapped in after the verdict is
// refused rather than followed. A replay or what-if judges the recorded
// links, never the filesystem of the day.

// Bounds on what Links resolves for one proposal: the paths looked up
// (a command line may name many) and the resolutions recorded. A
// proposal over either records linksTruncated, which Shield escalates.
const (
	maxLinkLookups = 256
	maxLinks       = 64
	// maxTreeEntries bounds the entries looked at beneath each tree a
	// command reads recursively, for the links in them (grep -R follows
	// them), and maxTrees the trees.
	maxTreeEntries = 50000
	maxTrees       = 8
)

// linksTruncated is the key Links records when it stopped at a bound.
const linksTruncated = ""

// Links (part of Observe) is the paths p names (as written: a tool's
// path arguments, an MCP call's path values, the paths a command line
// names, as absolute paths) that resolve through a symlink, mapped to
// where they lead (workspace-relative, or absolute when out of it). Nil
// without FS or when no path goes through a link.
func (e ShieldEvaluator) Links(p Proposal) map[string]string {
	if e.FS == nil {
		return nil
	}
	ws := e.S.ResolvePath(".")
	var raws []string
	a := e.action(Proposal{Session: p.Session, Tool: p.Tool, Args: p.Args, Def: p.Def, Known: p.Known, Paths: p.Paths},
		func(raw string) { raws = append(raws, raw) })
	var trees []string // what the command reads recursively
	if a.Command != "" {
		cf := e.S.CommandFactsIn(a.Command, a.Cwd)
		for _, r := range cf.Reads {
			if r.Tree && !r.Glob && (r.Path == ws || strings.HasPrefix(r.Path, ws+"/")) {
				trees = append(trees, r.Path)
			}
		}
		for _, refs := range [][]shield.Ref{cf.Reads, cf.Writes, cf.Deletes} {
			for _, r := range refs {
				p := r.Path
				if r.Glob {
					p = literalDir(p) // resolved up to its first pattern
				}
				if p == ws || strings.HasPrefix(p, ws+"/") {
					raws = append(raws, p)
				}
			}
		}
	}
	out := map[string]string{}
	looked := map[string]bool{}
	for _, raw := range raws {
		if raw == "" || looked[raw] {
			continue
		}
		if len(looked) >= maxLinkLookups || len(out) >= maxLinks {
			out[linksTruncated] = fmt.Sprintf("more than %d paths, or %d symlinks, to resolve", maxLinkLookups, maxLinks)
			break
		}
		looked[raw] = true
		rel := raw
		if path.IsAbs(raw) {
			switch {
			case raw == ws:
				rel = "."
			case strings.HasPrefix(raw, ws+"/"):
				rel = raw[len(ws)+1:]
			default:
				continue // outside: no executor of opx's opens it
			}
		}
		to, err := e.FS.Resolve(rel, true)
		if err != nil || to == path.Clean(rel) {
			continue // a loop or a bad path fails in the executor too
		}
		out[raw] = to
	}
	if _, full := out[linksTruncated]; !full {
		e.treeLinks(ws, trees, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// treeLinks adds to out the symlinks beneath the trees a command reads
// recursively that lead elsewhere in the workspace (out of the tree):
// a recursive read that follows links (grep -R, cp -rL, tar -h, zip)
// reads there too. Links out of the workspace are left to the command
// sandbox, links within the tree are read anyway.
func (e ShieldEvaluator) treeLinks(ws string, trees []string, out map[string]string) {
	seen := map[string]bool{}
	for _, tree := range trees {
		if seen[tree] {
			continue
		}
		seen[tree] = true
		if len(seen) > maxTrees {
			out[linksTruncated] = fmt.Sprintf("more than %d trees read recursively", maxTrees)
			return
		}
		rel := "."
		if tree != ws {
			rel = tree[len(ws)+1:]
		}
		root, err := e.FS.Resolve(rel, true)
		if err != nil || path.IsAbs(root) {
			continue
		}
		links, complete, err := e.FS.LinksBeneath(root, maxTreeEntries)
		if err != nil {
			continue
		}
		for _, l := range links {
			to, err := e.FS.Resolve(l, true)
			if err != nil || path.IsAbs(to) || to == root || strings.HasPrefix(to, root+"/") || (root == "." && !strings.HasPrefix(to, "..")) {
				continue
			}
			if len(out) >= maxLinks {
				complete = false
				break
			}
			out[path.Join(ws, l)] = to
		}
		if !complete {
			out[linksTruncated] = fmt.Sprintf("a tree read recursively (%s) with more than %d entries or %d symlinks out of it", tree, maxTreeEntries, maxLinks)
			return
		}
	}
}

// literalDir is the directory a glob pattern names before its first
// component with a pattern character.
func literalDir(glob string) string {
	d := glob
	for strings.ContainsAny(d, "*?[") && d != "/" && d != "." {
		d = path.Dir(d)
	}
	return d
}

// linked is the Ref of where the path argument raw leads through a
// symlink (p.Links), judged beside raw's own; false when it leads
// nowhere else.
func (e ShieldEvaluator) linked(p Proposal, raw string, tree bool) (shield.Ref, bool) {
	to, ok := p.Links[raw]
	if !ok || raw == linksTruncated {
		return shield.Ref{}, false
	}
	if !path.IsAbs(to) {
		to = path.Join(e.S.ResolvePath("."), to)
	}
	return shield.Ref{Path: to, Tree: tree, By: p.Tool, Via: raw}, true
}

// commandLinks are p.Links for the paths a command line names (absolute
// keys), as shield.Action.Links wants them (absolute values).
func (e ShieldEvaluator) commandLinks(p Proposal) map[string]string {
	var out map[string]string
	for k, to := range p.Links {
		if !path.IsAbs(k) {
			continue
		}
		if !path.IsAbs(to) {
			to = path.Join(e.S.ResolvePath("."), to)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = to
	}
	return out
}
