package shield

import (
	"path"
	"strings"
)

// Files coding agents read as instructions: whatever they say is obeyed
// by the next agent that starts in the directory, so any write to one is
// a prompt to a later agent, whatever its wording. This table is the one
// list (docs/shield-rules.md shows it): agentInstructions, the rules
// that spare these files' addressing agents (prompt-injection), the
// rules that judge their grants (memory:instruction) and
// instructions:agent-file all read it.

// instructionFile is one entry: a pattern and the agents that read it.
// Patterns are matched against a path's trailing segments, at any depth:
// "NAME" is a base name, "DIR/NAME" a name in a directory of that name,
// "DIR/**" anything beneath such a directory; a segment may end in "*"
// (a prefix: ".roo/rules*/**").
type instructionFile struct {
	pattern, agents string
}

var instructionFiles = []instructionFile{
	{"AGENTS.md", "Codex, Jules, Amp, Cursor, Zed, opencode, Copilot (the AGENTS.md convention)"},
	{"AGENTS.override.md", "Codex"},
	{"AGENT.md", "Amp"}, // rules 16: Amp's own name for it
	{"CLAUDE.md", "Claude Code"},
	{"CLAUDE.local.md", "Claude Code"},
	{".claude/**", "Claude Code (CLAUDE.md, commands, agents, settings and hooks)"},
	{"GEMINI.md", "Gemini CLI"},
	{".gemini/**", "Gemini CLI"},
	{".cursorrules", "Cursor"},
	{".cursor/rules/**", "Cursor"},
	{".windsurfrules", "Windsurf"},
	{".windsurf/rules/**", "Windsurf"},
	{".clinerules", "Cline"},
	{".clinerules/**", "Cline"},
	{".roo/rules*/**", "Roo Code"},
	{".roorules", "Roo Code"},
	{".roorules-*", "Roo Code"},
	{".github/copilot-instructions.md", "GitHub Copilot"},
	{".github/instructions/**", "GitHub Copilot"},
	{".github/prompts/**", "GitHub Copilot (*.prompt.md)"},
	{"CONVENTIONS.md", "aider"},
	{".aider.conf.yml", "aider"},
	{".continuerules", "Continue"},
	{".continue/**", "Continue"},
	{".junie/guidelines.md", "JetBrains Junie"},
	{".kiro/steering/**", "Kiro"},
	{".idx/airules.md", "Firebase Studio"},
	{".rules", "Zed"},
	{"opencode.json", "opencode"},
	{".opencode/**", "opencode"},
	{".codex/**", "Codex"},
	{".amazonq/rules/**", "Amazon Q Developer"},
	{".augment-guidelines", "Augment Code"},
	{".augment/rules/**", "Augment Code"},
	{".aiassistant/rules/**", "JetBrains AI Assistant"},
	{".trae/rules/**", "Trae"},
	{".goosehints", "Goose"},
	{".openhands/microagents/**", "OpenHands"},
	{".github/chatmodes/**", "GitHub Copilot (*.chatmode.md)"},
	{".github/agents/**", "GitHub Copilot (custom agents, *.agent.md)"},
}

// memoryFiles are where agents keep memory between sessions: what is
// written there is read back into a later agent's context.
var memoryFiles = []instructionFile{
	{"MEMORY.md", "opx, Claude Code and others (memory notes)"},
	{"memory-bank/**", "Cline and Roo Code (memory bank)"},
}

// instructionPattern is an entry compiled: its segments, last first.
type instructionPattern struct {
	segs   []string // reversed: segs[0] is the base name or "**"
	agents string
}

func compileInstructions(list []instructionFile) []instructionPattern {
	out := make([]instructionPattern, len(list))
	for i, e := range list {
		segs := strings.Split(e.pattern, "/")
		for a, b := 0, len(segs)-1; a < b; a, b = a+1, b-1 {
			segs[a], segs[b] = segs[b], segs[a]
		}
		out[i] = instructionPattern{segs, e.agents}
	}
	return out
}

var (
	instructionPats = compileInstructions(instructionFiles)
	memoryPats      = compileInstructions(memoryFiles)
)

// match reports whether a path, split into its segments, ends as the
// pattern says.
func (ip *instructionPattern) match(parts []string) bool {
	segs := ip.segs
	if segs[0] == "**" {
		// Anything beneath a directory named segs[1:] (reversed), at
		// any depth.
		dir := segs[1:]
		for k := len(parts) - 2; k >= len(dir)-1; k-- {
			ok := true
			for d := range dir {
				if !segEq(dir[d], parts[k-d]) {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	if len(segs) > len(parts) {
		return false
	}
	for d, sg := range segs {
		if !segEq(sg, parts[len(parts)-1-d]) {
			return false
		}
	}
	return true
}

// pathParts splits a slash-separated path into its segments, into buf
// when it is large enough (no allocation for ordinary paths).
func pathParts(p string, buf []string) []string {
	parts := buf[:0]
	for p != "" {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			parts = append(parts, p)
			break
		}
		if i > 0 {
			parts = append(parts, p[:i])
		}
		p = p[i+1:]
	}
	return parts
}

func segEq(pat, seg string) bool {
	if p, ok := strings.CutSuffix(pat, "*"); ok {
		return strings.HasPrefix(seg, p)
	}
	return pat == seg
}

// instructionAgents returns who reads p as instructions, or "".
func instructionAgents(p string) string {
	var buf [32]string
	parts := pathParts(p, buf[:])
	if len(parts) == 0 {
		return ""
	}
	for i := range instructionPats {
		if instructionPats[i].match(parts) {
			return instructionPats[i].agents
		}
	}
	return ""
}

// agentInstructions reports whether p holds instructions agents obey.
func agentInstructions(p string) bool { return instructionAgents(p) != "" }

// memoryFile reports whether p is an agent's memory file.
func memoryFile(p string) bool {
	var buf [32]string
	parts := pathParts(p, buf[:])
	if len(parts) == 0 {
		return false
	}
	for i := range memoryPats {
		if memoryPats[i].match(parts) {
			return true
		}
	}
	return false
}

// agentFiles are the instruction files known by their base name alone.
var agentFiles = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range instructionFiles {
		if !strings.Contains(e.pattern, "/") && !strings.Contains(e.pattern, "*") && path.Ext(e.pattern) == ".md" || e.pattern == ".cursorrules" ||
			e.pattern == ".windsurfrules" || e.pattern == ".clinerules" {
			m[e.pattern] = true
		}
	}
	m["copilot-instructions.md"] = true
	return m
}()

// agentFileWrite is `instructions:agent-file`: a write (a file tool's
// write, edit, move or copy onto it, or any shell write the facts
// report) to a file that coding agents read as instructions. Whatever it
// says, it is a prompt to every later agent in the repository, so a
// human reads it first. Reading one is not this rule's; deleting
// one is a change to the instructions too (removing a rule is changing
// them): deleting or moving one away in the workspace is asked about as
// well. A recursive rewrite (gofmt -w .) is judged by where it starts.
func (s *Shield) agentFileWrite(_ *Action, f *Facts, j *judgement) {
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if r.Glob || !s.inWorkspace(r.Path) {
			continue
		}
		if who := instructionAgents(r.Path); who != "" {
			j.escalate("instructions:agent-file", "%s removes %s, which %s read as instructions: removing instructions changes them", by(r), r.Path, who)
			return
		}
	}
	for i := range f.Writes {
		r := &f.Writes[i]
		if r.Glob || metaWriters[r.By] {
			continue
		}
		if who := instructionAgents(r.Path); who != "" && (s.inWorkspace(r.Path) || s.scratch(r.Path)) {
			j.escalate("instructions:agent-file", "%s writes %s, which %s read as instructions", by(r), r.Path, who)
			return
		}
	}
}

// agentFileOutside is `instructions:agent-file` outside the workspace
// (run after runs-later, whose agent-config rule names the agents' own
// directories in home): another project's instruction files, beyond
// scratch directories, where nothing rolls a write back.
func (s *Shield) agentFileOutside(_ *Action, f *Facts, j *judgement) {
	for i := range f.Writes {
		r := &f.Writes[i]
		if r.Glob || metaWriters[r.By] || s.inWorkspace(r.Path) || s.scratch(r.Path) {
			continue
		}
		if who := instructionAgents(r.Path); who != "" {
			j.block("instructions:agent-file", "%s writes %s, outside the workspace, which %s read as instructions", by(r), r.Path, who)
			return
		}
	}
}
