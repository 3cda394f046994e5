package agenttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/agents/codextrust"
)

// codexConfig is ~/.codex/config.toml for a run against the fake: its
// provider, no approvals or sandbox of Codex's own (the hooks decide), no
// update check, no analytics.
const codexConfig = `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "opx fake"
base_url = "%s/v1"
env_key = "OPX_FAKE_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`

// codexSetup writes ~/.codex/config.toml and hooks.json, trusts the
// hooks through `codex app-server` (codextrust), and returns the
// environment and arguments of a headless run:
// codex exec --json --skip-git-repo-check --disable ... PROMPT.
func codexSetup(t testing.TB, argv []string, home string, srv *Server, o Options, env []string) ([]string, []string, error) {
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), fmt.Appendf(nil, codexConfig, srv.URL), 0o600); err != nil {
		return nil, nil, err
	}
	env = append(env, "CODEX_HOME="+dir, "OPX_FAKE_KEY=opx-test-key")
	if len(o.Hooks) > 0 {
		if err := writeJSON(filepath.Join(dir, "hooks.json"), map[string]any{"hooks": hooksJSON(o.Hooks, false)}); err != nil {
			return nil, nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s := codextrust.Server{Argv: argv, Env: env, Dir: o.Dir}
		if _, err := s.Trust(ctx, func(codextrust.Hook) bool { return true }, o.Dir); err != nil {
			return nil, nil, err
		}
	}
	args := []string{"exec", "--json", "--skip-git-repo-check",
		"--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin", "--disable", "tool_suggest",
		o.Prompt}
	return env, args, nil
}
