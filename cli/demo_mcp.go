package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/fixtures"
)

// The demo's MCP scene: a workspace the demo creates gets a configuration
// (.opx/config.yaml) that runs the demo's issue tracker, an MCP server
// that is opx itself (opx internal-demo-mcp-server, read-only, no
// network), and a policy (.opx/policy.yaml: the built-in one with a rule
// that allows the tracker's tools). Its program is opx's binary, outside
// the workspace, so the agent cannot change the server's code and
// trust_workspace_code is not needed.

// demoPolicyRule is the allow rule the demo's policy adds to the built-in
// policy, first among its allow rules.
const demoPolicyRule = "" +
	"  # opx demo: the issue tracker's tools only read (the server runs read-only,\n" +
	"  # without network); what they answer is read for prompt injection.\n" +
	"  - name: demo-tracker\n" +
	"    tools: [\"mcp__" + demoMCPServer + "__*\"]\n"

// demoPolicy returns the built-in policy with demoPolicyRule.
func demoPolicy() ([]byte, error) {
	const allow = "\nallow:\n"
	i := bytes.Index(fixtures.DefaultPolicy, []byte(allow))
	if i < 0 {
		return nil, errors.New("demo: the built-in policy has no allow rules to extend")
	}
	i += len(allow)
	var b bytes.Buffer
	b.WriteString("# opx demo's policy: the built-in one (fixtures/policies/default.yaml in opx's\n" +
		"# source) and one rule, demo-tracker, that allows the demo's MCP server's tools.\n")
	b.Write(fixtures.DefaultPolicy[:i])
	b.WriteString(demoPolicyRule)
	b.Write(fixtures.DefaultPolicy[i:])
	return b.Bytes(), nil
}

// demoConfig is the demo's .opx/config.yaml: the policy and the tracker,
// run by the opx binary self.
func demoConfig(self string) string {
	cmd, _ := json.Marshal(self) // a JSON string is a YAML double-quoted scalar
	return "# Written by opx demo (docs/mcp.md): its issue tracker is an MCP server that is\n" +
		"# opx itself, read-only in the workspace and without network; its tools are\n" +
		"# offered to the agent as mcp__" + demoMCPServer + "__list_issues and mcp__" + demoMCPServer + "__get_issue.\n" +
		"policy: .opx/policy.yaml\n" +
		"mcp:\n" +
		"  servers:\n" +
		"    " + demoMCPServer + ":\n" +
		"      command: " + string(cmd) + "\n" +
		"      args: [internal-demo-mcp-server]\n"
}

// writeDemoConfig writes the demo's configuration and policy into ws,
// unless .opx/config.yaml is there already. It writes nothing, and says
// why, when the opx binary self is in a directory that holds ws: the
// engine refuses a server whose code the agent could change.
func writeDemoConfig(ws, self string) (note string, err error) {
	cfgPath := config.PathIn(ws)
	if _, err := os.Lstat(cfgPath); err == nil {
		return "", nil // never overwrite the user's files
	}
	real := self
	if r, err := filepath.EvalSymlinks(self); err == nil {
		real = r
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	if inside(abs, filepath.Dir(real)) {
		return fmt.Sprintf("(no MCP scene: opx's binary is in %s, which holds the workspace; the engine would refuse to run it as an MCP server)",
			filepath.Dir(real)), nil
	}
	policy, err := demoPolicy()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(ws, config.Dir, "policy.yaml"), policy, 0o644); err != nil {
		return "", err
	}
	return "", os.WriteFile(cfgPath, []byte(demoConfig(self)), 0o644)
}

// demoTracker reports whether the workspace's configuration runs the
// demo's issue tracker.
func demoTracker(ws string) bool {
	cfg, err := config.Load(ws)
	if err != nil {
		return false
	}
	srv, ok := cfg.MCP.Servers[demoMCPServer]
	return ok && !srv.Disabled && len(srv.Args) == 1 && srv.Args[0] == "internal-demo-mcp-server"
}

// emptyOrMissing reports whether dir does not exist or is an empty
// directory.
func emptyOrMissing(dir string) bool {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// inside reports whether path is dir or beneath it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
