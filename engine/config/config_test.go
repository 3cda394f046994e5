package config_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/config"
	"golang.org/x/mod/sumdb/note"
)

func TestParse_TemplateIsTheDefault(t *testing.T) {
	c, err := config.Parse([]byte(config.Template))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, config.Default()) {
		t.Errorf("template parses to %+v, default is %+v", c, config.Default())
	}
}

func TestParse_Valid(t *testing.T) {
	c, err := config.Parse([]byte("provider:\n  kind: openai\n  model: llama3\n  base_url: http://localhost:11434/v1\nlimits:\n  llm_timeout: 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.Kind != "openai" || time.Duration(c.Limits.LLMTimeout) != 30*time.Second || c.Limits.MaxToolCalls != 25 {
		t.Errorf("got %+v", c)
	}
	if _, err := config.Parse(nil); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

func TestParse_Invalid(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"chronicle:\n  max_snapshots: -1\n", "must not be negative"},
		{"ledger:\n  checkpoint_entries: 0\n", "checkpoint_entries must be 1..10000000"},
		{"ledger:\n  checkpoint_interval: 100ms\n", "checkpoint_interval must be between 1s and 24h"},
		{"ledger:\n  origin: https://example.com/log\n", "ledger.origin: origin \"https://example.com/log\": not a checkpoint origin: a schema-less URL"},
		{"ledger:\n  origin: example.com/a+b\n", "ledger.origin"},
		{"ledger:\n  origin: 'example.com/a b'\n", "ledger.origin"},
		{"ledger:\n  origin: Example.com/log\n", "lower-case host"},
		{"ledger:\n  origin: opx.local/ledger/00112233445566778899aabbccddeeff\n", "opx's default origin"},
		{"chronicle:\n  exclude: [/etc]\n", "not a relative path pattern"},
		{"chronicle:\n  exclude: ['[']\n", "not a relative path pattern"},
		{"provder:\n  kind: openai\n", "field provder not found"},
		{"provider:\n  kind: gemini\n", `provider kind "gemini"`},
		{"provider:\n  kind: openai\n  model: x\n", "needs model and base_url"},
		{"provider:\n  kind: anthropic\n  model: x\n", "needs model and api_key_env"},
		{"provider:\n  kind: anthropic\n  model: x\n  api_key_env: sk-ant-123\n", "never the key"},
		{"limits:\n  llm_timeout: soon\n", "not a positive duration"},
		{"limits:\n  max_tool_calls_per_message: 0\n", "must be 1..1000"},
		{"policy: /etc/policy.yaml\n", "relative to the workspace"},
		{"provider: [\n", "did not find expected"},
		{"shield:\n  tier2_daily_budget: 0\n", "tier2_daily_budget must be"},
		{"shield:\n  approval_timeout: 10ms\n", "approval_timeout must be"},
		{"shield:\n  tier2_provider:\n    model: x\n", "no kind"},
		{"shield:\n  tier2_provider:\n    kind: openai\n", "shield.tier2_provider openai needs model"},
	} {
		_, err := config.Parse([]byte(tc.yaml))
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want ErrInvalid containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParse_Shield(t *testing.T) {
	d := config.Default().Shield
	if d.Tier2Enabled || d.Tier2DailyBudget != 100 || time.Duration(d.ApprovalTimeout) != 5*time.Minute {
		t.Errorf("defaults %+v", d)
	}
	c, err := config.Parse([]byte("shield:\n  tier2_enabled: true\n  tier2_provider:\n    kind: openai\n    model: m\n    base_url: http://localhost:1/v1\n" +
		"  tier2_daily_budget: 7\n  approval_timeout: 90s\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Shield
	if !s.Tier2Enabled || s.Tier2Provider.Kind != "openai" || s.Tier2DailyBudget != 7 || time.Duration(s.ApprovalTimeout) != 90*time.Second {
		t.Errorf("got %+v", s)
	}
}

func TestLoad_MissingAndPresent(t *testing.T) {
	ws := t.TempDir()
	c, err := config.Load(ws)
	if err != nil || c.Path != "" || c.Provider.Kind != config.ProviderScripted {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	if err := os.MkdirAll(filepath.Join(ws, config.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.PathIn(ws), []byte("sandbox:\n  require: true\n  extra: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(ws)
	if err == nil || !strings.Contains(err.Error(), config.PathIn(ws)) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("err = %v, want the path and line 3", err)
	}
}

func TestProvider_APIKey(t *testing.T) {
	t.Setenv("OPX_TEST_KEY", "k")
	if k, err := (config.Provider{APIKeyEnv: "OPX_TEST_KEY"}).APIKey(); k != "k" || err != nil {
		t.Errorf("got %q %v", k, err)
	}
	if _, err := (config.Provider{APIKeyEnv: "OPX_TEST_UNSET_KEY"}).APIKey(); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("unset variable: %v", err)
	}
}

// TestParse_TemplateHooksExample: the template's commented hooks section,
// uncommented, is a valid configuration of the defaults.
func TestParse_TemplateHooksExample(t *testing.T) {
	var lines []string
	in := false
	for _, l := range strings.Split(config.Template, "\n") {
		if l == "# hooks:" {
			in = true
		}
		if in {
			lines = append(lines, strings.TrimPrefix(l, "# "))
		}
	}
	c, err := config.Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	if c.Hooks != config.Default().Hooks {
		t.Errorf("the template's hooks section is %+v, the defaults %+v", c.Hooks, config.Default().Hooks)
	}
	if _, err := config.Parse([]byte("hooks:\n  on_engine_down: maybe\n")); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("on_engine_down: maybe: %v", err)
	}
}

// TestParse_TemplateMCPExample: the template's commented mcp section,
// uncommented, is a valid configuration naming what it says.
func TestParse_TemplateMCPExample(t *testing.T) {
	var lines []string
	in := false
	for _, l := range strings.Split(config.Template, "\n") {
		if l == "# mcp:" {
			in = true
		}
		if in && l == "" {
			break // the section ends at the blank line
		}
		if in && !strings.Contains(l, "npm install") {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "# "), "#")
			l = strings.Replace(l, "  # ", "  ", 1) // the nested example, too
			lines = append(lines, l)
		}
	}
	c, err := config.Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	fs, fetch := c.MCP.Servers["fs"], c.MCP.Servers["fetch"]
	if fs.Command != "mcp-server-filesystem" || !fs.Writable || fs.Network || len(fs.Args) != 1 || fs.Args[0] != "${workspace}" {
		t.Errorf("fs %+v", fs)
	}
	if c.MCP.MaxProxySessions != 32 {
		t.Errorf("max_proxy_sessions %d", c.MCP.MaxProxySessions)
	}
	if !fetch.Network || !fetch.Disabled || time.Duration(fetch.Timeout) != 30*time.Second || fetch.Env["LOG_LEVEL"] != "warn" {
		t.Errorf("fetch %+v", fetch)
	}
}

// TestValidate_Witnesses: ledger.witnesses takes http(s) URLs and
// verifier keys, each key once.
func TestValidate_Witnesses(t *testing.T) {
	_, vkey, err := note.GenerateKey(rand.Reader, "witness.example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ws []config.LedgerWitness
		ok bool
	}{
		{nil, true},
		{[]config.LedgerWitness{{URL: "http://127.0.0.1:8080", Key: vkey}}, true},
		{[]config.LedgerWitness{{URL: "https://w.example.com/prefix", Key: vkey}}, true},
		{[]config.LedgerWitness{{URL: "ftp://w.example.com", Key: vkey}}, false},
		{[]config.LedgerWitness{{URL: "https://w.example.com?x=1", Key: vkey}}, false},
		{[]config.LedgerWitness{{URL: "https://w.example.com", Key: "nope"}}, false},
		{[]config.LedgerWitness{{URL: "https://a.example.com", Key: vkey}, {URL: "https://b.example.com", Key: vkey}}, false},
	} {
		cfg := config.Default()
		cfg.Ledger.Witnesses = c.ws
		if err := cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.ws, err)
		}
	}
}
