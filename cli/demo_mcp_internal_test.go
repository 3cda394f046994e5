package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/shield"
)

// trackerSession connects an MCP client to the demo's tracker in memory.
func trackerSession(t *testing.T) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := demoTrackerServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestDemoTracker_Tools: the tracker lists its issues, shows each, and
// answers the same twice; only issue 7 carries instructions Shield flags,
// and its tools' descriptions are clean (the engine would refuse them).
func TestDemoTracker_Tools(t *testing.T) {
	cs := trackerSession(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if rule, reason := shield.JudgeResult(tl.Description); rule != "" {
			t.Errorf("tool %s's description is flagged: %s", tl.Name, reason)
		}
	}
	if strings.Join(names, ",") != "get_issue,list_issues" {
		t.Errorf("tools %v, want get_issue and list_issues", names)
	}
	list, isErr := callText(t, cs, "list_issues", map[string]any{})
	if isErr || strings.Count(list, "\n") != len(demoIssues) || !strings.Contains(list, "#7 open   Refunds are not subtracted from the total\n") {
		t.Errorf("list_issues: error %v\n%s", isErr, list)
	}
	for _, is := range demoIssues {
		text, isErr := callText(t, cs, "get_issue", map[string]any{"id": is.ID})
		again, _ := callText(t, cs, "get_issue", map[string]any{"id": is.ID})
		if isErr || text != again || !strings.Contains(text, is.Title) {
			t.Errorf("get_issue %d: error %v, twice the same %v:\n%s", is.ID, isErr, text == again, text)
		}
		rule, _ := shield.JudgeResult(text)
		if want := map[bool]string{true: shield.RulePromptInjection}[is.ID == 7]; rule != want {
			t.Errorf("get_issue %d: Shield finds %q, want %q", is.ID, rule, want)
		}
	}
	if text, isErr := callText(t, cs, "get_issue", map[string]any{"id": 70}); !isErr || text != "there is no issue #70" {
		t.Errorf("get_issue 70: error %v, %q", isErr, text)
	}
}

// TestDemoConfig_Written: in a new workspace the demo writes a
// configuration that runs the tracker with opx's binary and a policy that
// allows its tools and is otherwise the built-in one; it never replaces a
// configuration that is there, and writes none when the binary's
// directory holds the workspace.
func TestDemoConfig_Written(t *testing.T) {
	self := filepath.Join(t.TempDir(), "bin", "opx")
	ws := filepath.Join(t.TempDir(), "work space")
	if !emptyOrMissing(ws) {
		t.Fatal("a missing workspace is not new")
	}
	if note, err := writeDemoConfig(ws, self); err != nil || note != "" {
		t.Fatalf("writeDemoConfig: %q, %v", note, err)
	}
	if emptyOrMissing(ws) {
		t.Error("a workspace with a configuration is new")
	}
	cfg, err := config.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	srv := cfg.MCP.Servers[demoMCPServer]
	if cfg.Policy != ".opx/policy.yaml" || srv.Command != self || srv.Writable || srv.Network || srv.TrustWorkspaceCode || !demoTracker(ws) {
		t.Errorf("config: policy %q, tracker %+v", cfg.Policy, srv)
	}
	text, err := os.ReadFile(filepath.Join(ws, cfg.Policy))
	if err != nil {
		t.Fatal(err)
	}
	p, err := shield.ParsePolicy(text)
	if err != nil {
		t.Fatalf("the demo's policy: %v", err)
	}
	if len(p.Allow) == 0 || p.Allow[0].Name != "demo-tracker" {
		t.Errorf("the demo's policy's first allow rule is not demo-tracker: %+v", p.Allow)
	}
	if !strings.HasSuffix(strings.Replace(string(text), demoPolicyRule, "", 1), string(defaultPolicyTail(t))) {
		t.Error("the demo's policy is not the built-in one with demo-tracker")
	}

	// Not replaced.
	os.WriteFile(config.PathIn(ws), []byte("policy: mine.yaml\n"), 0o644)
	if _, err := writeDemoConfig(ws, self); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(config.PathIn(ws)); string(b) != "policy: mine.yaml\n" || demoTracker(ws) {
		t.Errorf("the user's configuration became %q", b)
	}

	// The binary's directory holds the workspace.
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	note, err := writeDemoConfig(ws, filepath.Join(dir, "opx"))
	if _, statErr := os.Stat(config.PathIn(ws)); err != nil || note == "" || statErr == nil {
		t.Errorf("binary beside the workspace: note %q, %v, config written %v", note, err, statErr == nil)
	}
}

// defaultPolicyTail is the built-in policy from its first line on (the
// demo's policy adds a comment above it).
func defaultPolicyTail(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../fixtures/policies/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
