package mcptest_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/mcptest"
)

// TestPrograms: the pinned client drives the pinned servers (so a test
// that uses them fails for its own reasons, not the install's).
func TestPrograms(t *testing.T) {
	inspector := mcptest.Program(t, mcptest.Inspector)
	every := mcptest.Program(t, mcptest.Everything)
	fs := mcptest.Program(t, mcptest.Filesystem)
	cli := func(args ...string) *exec.Cmd {
		cmd := exec.Command(inspector, append([]string{"--cli"}, args...)...)
		cmd.Dir = mcptest.InspectorDir()
		return cmd
	}
	out, err := cli(every, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=pinned").Output()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err != nil || json.Unmarshal(out, &res) != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "pinned") {
		t.Errorf("inspector → everything: %s %v", out, err)
	}
	out, err = cli(fs, t.TempDir(), "--method", "tools/list").Output()
	if err != nil || !strings.Contains(string(out), `"read_text_file"`) {
		t.Errorf("inspector → filesystem: %.300s %v", out, err)
	}
}

// TestBadServer_Builds: the misbehaving server builds.
func TestBadServer_Builds(t *testing.T) {
	defer mcptest.Cleanup()
	if p := mcptest.BadServer(t); p == "" {
		t.Fatal("no path")
	}
}
