package hookproto

import "fmt"

// Agent names a coding-agent CLI whose hooks opx answers.
type Agent string

// The agents, as `opx hook AGENT` names them.
const (
	Claude Agent = "claude"
	Codex  Agent = "codex"
	Gemini Agent = "gemini"
)

// Agents lists every Agent, in a stable order.
var Agents = []Agent{Claude, Codex, Gemini}

// ParseAgent returns the Agent named s.
func ParseAgent(s string) (Agent, error) {
	switch a := Agent(s); a {
	case Claude, Codex, Gemini:
		return a, nil
	}
	return "", fmt.Errorf("%w %q: want claude, codex or gemini", ErrUnknownAgent, clip(s, 40))
}

// Kind is what an event is, in terms common to the three CLIs.
type Kind string

// The kinds of event.
const (
	KindSessionStart Kind = "session-start"
	KindPrompt       Kind = "prompt"   // the user's prompt, before the model sees it
	KindPreTool      Kind = "pre-tool" // before a tool call: the one event that takes a decision
	KindPostTool     Kind = "post-tool"
	KindStop         Kind = "stop" // the end of the model's turn
	KindSessionEnd   Kind = "session-end"
	KindOther        Kind = "other" // any other event; Event.Name keeps its name
)

// eventKinds maps each CLI's hook_event_name to its Kind. Names absent
// here are KindOther. Claude's PostToolUseFailure is a post-tool event
// whose tool failed (Event.Failed).
var eventKinds = map[Agent]map[string]Kind{
	Claude: {
		"SessionStart": KindSessionStart, "UserPromptSubmit": KindPrompt,
		"PreToolUse": KindPreTool, "PostToolUse": KindPostTool, "PostToolUseFailure": KindPostTool,
		"Stop": KindStop, "SessionEnd": KindSessionEnd,
	},
	Codex: {
		"SessionStart": KindSessionStart, "UserPromptSubmit": KindPrompt,
		"PreToolUse": KindPreTool, "PostToolUse": KindPostTool,
		"Stop": KindStop, "SessionEnd": KindSessionEnd,
	},
	Gemini: {
		"SessionStart": KindSessionStart, "BeforeAgent": KindPrompt,
		"BeforeTool": KindPreTool, "AfterTool": KindPostTool,
		"AfterAgent": KindStop, "SessionEnd": KindSessionEnd,
	},
}

// KindOf is the Kind of agent's event named name (hook_event_name):
// KindOther for a name this package does not know.
func KindOf(agent Agent, name string) Kind {
	if k := eventKinds[agent][name]; k != "" {
		return k
	}
	return KindOther
}

// preToolEvent is the hook_event_name each CLI's pre-tool answer names.
var preToolEvent = map[Agent]string{Claude: "PreToolUse", Codex: "PreToolUse", Gemini: "BeforeTool"}

// ProjectDirEnv is the environment variable in which each CLI gives its
// hooks the project directory (Codex sets none).
var ProjectDirEnv = map[Agent]string{Claude: "CLAUDE_PROJECT_DIR", Gemini: "GEMINI_PROJECT_DIR"}
