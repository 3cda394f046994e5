package agenttest_test

import (
	"os"
	"testing"

	"github.com/opx-dev/opx/internal/agenttest"
)

func TestExplore(t *testing.T) {
	cli := agenttest.CLI(os.Getenv("X_CLI"))
	var srv *agenttest.Server
	var events []string
	turns := []agenttest.Turn{agenttest.Shell("echo hi > made.txt")}
	switch cli {
	case agenttest.Claude:
		srv = agenttest.NewAnthropic(t, turns...)
		events = []string{"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
	case agenttest.Codex:
		srv = agenttest.NewOpenAI(t, turns...)
		events = []string{"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
	case agenttest.Gemini:
		srv = agenttest.NewGemini(t, turns...)
		events = []string{"BeforeTool", "AfterTool", "SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "Notification", "PreCompress"}
	}
	log := agenttest.NewHookLog(t)
	cmd := log.Command(t, "exit 0")
	var hooks []agenttest.Hook
	for _, e := range events {
		m := ""
		if e == "PreToolUse" || e == "PostToolUse" || e == "BeforeTool" || e == "AfterTool" {
			m = "*"
		}
		hooks = append(hooks, agenttest.Hook{Event: e, Matcher: m, Command: cmd})
	}
	res := agenttest.Run(t, cli, srv, agenttest.Options{Hooks: hooks})
	t.Logf("err=%v\nstdout=%.3000s\nstderr=%.3000s\nreqs:\n%s", res.Err, res.Stdout, res.Stderr, srv.Describe())
	for _, e := range log.Events(t) {
		t.Logf("EVENT %s %v", e.Name(), e.Input)
	}
	t.Logf("results %+v", srv.ToolResults())
	b, _ := os.ReadFile(res.Dir + "/made.txt")
	t.Logf("made.txt=%q", b)
}
