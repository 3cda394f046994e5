package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/opx-dev/opx/internal/regularfile"
	"github.com/opx-dev/opx/ledger/tlog"
	tdnote "github.com/transparency-dev/formats/note"
	"go.yaml.in/yaml/v3"
)

// Dir is the workspace folder holding opx's configuration.
const Dir = ".opx"

// FileName is the configuration file inside Dir.
const FileName = "config.yaml"

// Provider kinds.
const (
	ProviderScripted  = "scripted"
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// ErrInvalid is returned (wrapped) for a configuration that cannot work.
var ErrInvalid = errors.New("invalid configuration")

// Config is a workspace's configuration.
type Config struct {
	Provider Provider `yaml:"provider"`
	// Policy is the Shield policy file, relative to the workspace; empty
	// means the built-in policy.
	Policy    string    `yaml:"policy"`
	Limits    Limits    `yaml:"limits"`
	Sandbox   Sandbox   `yaml:"sandbox"`
	Shield    Shield    `yaml:"shield"`
	Chronicle Chronicle `yaml:"chronicle"`
	Ledger    Ledger    `yaml:"ledger"`
	Agents    Agents    `yaml:"agents"`
	MCP       MCP       `yaml:"mcp"`
	Fleet     Fleet     `yaml:"fleet"`
	Hooks     Hooks     `yaml:"hooks"`
	Telemetry Telemetry `yaml:"telemetry"`

	// Path is the file the configuration came from ("" for defaults).
	Path string `yaml:"-"`
}

// Telemetry configures the engine's OpenTelemetry export
// (docs/telemetry.md): off unless telemetry.otlp.endpoint is set.
type Telemetry struct {
	OTLP OTLP `yaml:"otlp"`
	// Content attaches arguments, results and messages to the spans
	// (never for an off-the-record session). Off by default.
	Content bool `yaml:"content"`
}

// OTLP is where the engine sends its spans.
type OTLP struct {
	// Endpoint is the collector: host:port or http(s)://host:port[/path].
	Endpoint string `yaml:"endpoint"`
	// Protocol is grpc (the default) or http.
	Protocol string `yaml:"protocol"`
	// Headers are sent with every export (an API key): mind that the
	// configuration file holds them.
	Headers map[string]string `yaml:"headers"`
	// Insecure sends without TLS (a collector on loopback).
	Insecure bool `yaml:"insecure"`
	// Sample is the fraction of traces (turns) sent, 0 < sample <= 1;
	// 0 (unset) sends them all.
	Sample float64 `yaml:"sample"`
}

// MaxOTLPHeaders bounds telemetry.otlp.headers.
const MaxOTLPHeaders = 32

var otlpHeaderRE = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`)

// checkTelemetry checks telemetry.otlp.
func checkTelemetry(t Telemetry) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	o := t.OTLP
	if o.Endpoint == "" {
		if o.Protocol != "" || len(o.Headers) > 0 || o.Sample != 0 || o.Insecure {
			return bad("telemetry.otlp sets fields but no endpoint")
		}
		return nil
	}
	if len(o.Endpoint) > 512 || strings.ContainsAny(o.Endpoint, " \t\r\n") {
		return bad("telemetry.otlp.endpoint %q is not host:port or http(s)://host:port[/path]", clipValue(o.Endpoint))
	}
	if strings.Contains(o.Endpoint, "://") {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return bad("telemetry.otlp.endpoint %q must be http(s)://host:port[/path]", clipValue(o.Endpoint))
		}
	} else if _, port, err := net.SplitHostPort(o.Endpoint); err != nil || port == "" {
		return bad("telemetry.otlp.endpoint %q must be host:port or http(s)://host:port[/path]", clipValue(o.Endpoint))
	}
	if o.Protocol != "" && o.Protocol != "grpc" && o.Protocol != "http" {
		return bad("telemetry.otlp.protocol must be grpc or http, got %q", clipValue(o.Protocol))
	}
	if o.Sample < 0 || o.Sample > 1 || o.Sample != o.Sample {
		return bad("telemetry.otlp.sample must be between 0 and 1, got %v", o.Sample)
	}
	if len(o.Headers) > MaxOTLPHeaders {
		return bad("telemetry.otlp.headers has %d headers (at most %d)", len(o.Headers), MaxOTLPHeaders)
	}
	for k, v := range o.Headers {
		if !otlpHeaderRE.MatchString(k) {
			return bad("telemetry.otlp.headers: %q is not a header name", clipValue(k))
		}
		if len(v) > 4096 || strings.ContainsAny(v, "\r\n\x00") {
			return bad("telemetry.otlp.headers[%s]: the value holds a line break or is over 4096 bytes", k)
		}
	}
	return nil
}

// Hooks configures how opx answers the hooks of the coding-agent CLIs it
// audits (`opx hook AGENT`, docs/agents.md).
type Hooks struct {
	// OnEngineDown is what a hook answers a tool call when no engine can
	// be reached or started: deny (the default: fail closed) or allow,
	// in which case the hook writes the call down and the next engine to
	// start records it (hook.unrecorded).
	OnEngineDown string `yaml:"on_engine_down"`
	// Escalation is how a call Shield escalates to a human is answered:
	// wait (the default) for `opx approve` / `opx deny` as for opx's own
	// agent, or ask, handing the question to the CLI's own permission
	// prompt where it has one (Claude Code, Codex CLI), recorded as such.
	Escalation string `yaml:"escalation"`
	// DecisionTimeout bounds how long a hook waits for a decision (an
	// escalation waiting for a human) before it denies; below the hook
	// timeout `opx agents install` configures (600 s).
	DecisionTimeout Duration `yaml:"decision_timeout"`
	// ToolTimeout bounds how long opx waits for the end of a tool call it
	// allowed before it closes the call as interrupted.
	ToolTimeout Duration `yaml:"tool_timeout"`
	// SandboxCommands runs the agent's shell commands inside opx's
	// command sandbox where the CLI lets a hook rewrite the tool's input
	// (Claude Code's updatedInput).
	SandboxCommands bool `yaml:"sandbox_commands"`
}

// The values of hooks.on_engine_down and hooks.escalation.
const (
	HooksDeny  = "deny"
	HooksAllow = "allow"
	HooksWait  = "wait"
	HooksAsk   = "ask"
)

// Provider selects and configures the model provider.
type Provider struct {
	Kind       string `yaml:"kind"`
	Model      string `yaml:"model"`
	BaseURL    string `yaml:"base_url"`
	APIKeyEnv  string `yaml:"api_key_env"`
	Transcript string `yaml:"transcript"`
	MaxTokens  int64  `yaml:"max_tokens"`
}

// Limits bound what one message may cost.
type Limits struct {
	MaxToolCalls   int      `yaml:"max_tool_calls_per_message"`
	LLMTimeout     Duration `yaml:"llm_timeout"`
	MaxOutputBytes int64    `yaml:"max_output_bytes"`
}

// Sandbox states what the agent's sandbox must be.
type Sandbox struct {
	// Require refuses to run an agent without the kernel sandbox.
	Require bool `yaml:"require"`
}

// Shield configures who answers the policy's escalations.
type Shield struct {
	// Tier2Enabled asks a model about escalations to tier 2 (verify rules
	// with tier: 2). Off, they go to a human (tier 3).
	Tier2Enabled bool `yaml:"tier2_enabled"`
	// Tier2Provider is the model tier 2 asks; an empty kind means the
	// engine's provider.
	Tier2Provider Provider `yaml:"tier2_provider"`
	// Tier2DailyBudget bounds tier 2 model calls per UTC day; over it,
	// tier 2 escalations are blocked.
	Tier2DailyBudget int `yaml:"tier2_daily_budget"`
	// ApprovalTimeout is how long an escalation waits for a human before
	// it is denied.
	ApprovalTimeout Duration `yaml:"approval_timeout"`
}

// Chronicle configures snapshots and their retention.
type Chronicle struct {
	// MaxSnapshots is how many snapshots keep their content; older ones
	// lose what no kept snapshot shares (0: no bound).
	MaxSnapshots int `yaml:"max_snapshots"`
	// MaxBytes bounds the content the kept snapshots stored (0: no
	// bound).
	MaxBytes int64 `yaml:"max_bytes"`
	// Exclude are path patterns (relative to the workspace, path.Match
	// syntax; a matching directory is left out whole) that workspace
	// snapshots leave out. Nil means the default, .git/objects.
	Exclude []string `yaml:"exclude"`
}

// Ledger configures the engine's signed checkpoints of the ledger.
type Ledger struct {
	// CheckpointEntries: a checkpoint is signed once this many entries
	// were appended since the last one.
	CheckpointEntries int `yaml:"checkpoint_entries"`
	// CheckpointInterval: a checkpoint is signed this long after the last
	// one when anything was appended since.
	CheckpointInterval Duration `yaml:"checkpoint_interval"`
	// Witnesses are C2SP tlog-witnesses (https://c2sp.org/tlog-witness:
	// transparency-dev's omniwitness, the public witness network, an opx
	// collector's --witness-listen) the engine submits each checkpoint it
	// signs to, recording each cosignature as ledger.cosigned
	// (engine/witness). None: no witness.
	Witnesses []LedgerWitness `yaml:"witnesses"`
	// Origin is the team's own checkpoint origin (C2SP tlog-checkpoint:
	// a schema-less URL such as example.com/opx/ledger, tlog.CheckOrigin),
	// one per ledger: the signing key is named by it and every checkpoint
	// signed from then on carries it; the ledger records it (ledger.key)
	// and verifiers read it from there. Empty: opx.local/ledger/<id>.
	Origin string `yaml:"origin"`
}

// MaxWitnesses bounds ledger.witnesses: each costs a request per
// checkpoint.
const MaxWitnesses = 16

// LedgerWitness is one witness: its URL (the submission prefix; the
// engine POSTs URL/add-checkpoint) and its verifier key in the note format
// ("<name>+<hash>+<key>", Ed25519 or cosignature/v1), which the
// cosignatures it returns must verify under before they are recorded.
type LedgerWitness struct {
	URL string `yaml:"url"`
	Key string `yaml:"key"`
}

// Agents configures sub-agents: sandboxed agent processes the session's
// agent starts with spawn_agent. The engine enforces every limit.
type Agents struct {
	// Enabled offers the agent tools (spawn_agent and the others of the
	// "agents" group) to the session's agent.
	Enabled bool `yaml:"enabled"`
	// MaxConcurrent bounds the sub-agents running at once, engine-wide;
	// a spawn over it is refused.
	MaxConcurrent int `yaml:"max_concurrent"`
	// MaxRounds bounds a sub-agent's model calls; the call over it is
	// refused and the sub-agent fails (max_rounds).
	MaxRounds int `yaml:"max_rounds"`
	// Timeout is a sub-agent's wall-clock limit, from spawn; at it the
	// process is killed and the sub-agent timed out.
	Timeout Duration `yaml:"timeout"`
}

// MCP configures the MCP servers whose tools the engine offers to the
// agent (docs/mcp.md), and which `opx mcp-proxy SERVER` can front.
type MCP struct {
	Servers map[string]MCPServer `yaml:"servers"`
	// MaxProxySessions bounds the `opx mcp-proxy` sessions open at once
	// (each runs its own sandboxed upstream); one over it is refused.
	MaxProxySessions int `yaml:"max_proxy_sessions"`
}

// MCPServer is one MCP server on stdio. The engine runs it through the
// command sandbox: system directories and its own install directory
// read-only, the workspace read-only unless Writable, no network unless
// Network, a private home.
type MCPServer struct {
	// Command is the program (a name looked up in PATH, or a path) and
	// Args its arguments; "${workspace}" in either is the workspace.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	// Network lets it connect out (TCP, UDP, DNS).
	Network bool `yaml:"network"`
	// Writable lets it change the workspace: each of its calls then gets
	// a workspace snapshot first, and rollback undoes it.
	Writable bool `yaml:"writable"`
	// ReadOnly are further directories it may read (its install
	// directory is found from Command and need not be listed).
	ReadOnly []string `yaml:"read_only"`
	// Timeout bounds one request to it; default 60s.
	Timeout Duration `yaml:"timeout"`
	// Disabled servers are not started.
	Disabled bool `yaml:"disabled"`
	// TrustWorkspaceCode lets the server's code (its program, a script
	// argument, their install directory) be in the workspace. Off, such a
	// server is refused: the agent could rewrite it, and its code would
	// run with the server's network and writes at its next start.
	TrustWorkspaceCode bool `yaml:"trust_workspace_code"`
}

// Fleet configures shipping the ledger to NATS JetStream, where a
// collector verifies, witnesses and serves it (docs/fleet.md). Off by
// default.
type Fleet struct {
	Enabled bool `yaml:"enabled"`
	// URL is the NATS server, or servers comma-separated
	// (nats://host:4222, tls://host:4222).
	URL string `yaml:"url"`
	// Creds is a NATS credentials file (JWT and nkey seed), NKey an nkey
	// seed file: absolute paths, outside the workspace.
	Creds string `yaml:"creds"`
	NKey  string `yaml:"nkey"`
	// TLS: a CA bundle to trust, and a client certificate and key.
	TLS FleetTLS `yaml:"tls"`
	// Prefix is the subject prefix; default "opx".
	Prefix string `yaml:"prefix"`
	// Replicas of the streams when the engine is the first to create
	// them (an existing stream is left alone); default 1.
	Replicas int `yaml:"replicas"`
	// Witness is the collector's witness key (as `opx collector key`
	// prints it): only its cosignatures are recorded. Empty: any
	// cosignature of the ledger's own checkpoint is.
	Witness string `yaml:"witness"`
}

// FleetTLS are the TLS files of the NATS connection (absolute paths).
type FleetTLS struct {
	CA   string `yaml:"ca"`
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

var fleetPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}(\.[A-Za-z0-9_-]{1,32}){0,3}$`)

// clipValue shortens a value quoted in an error.
func clipValue(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

func (f *Fleet) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if f.Prefix != "" && !fleetPrefixRE.MatchString(f.Prefix) {
		return bad("fleet.prefix %q: want 1 to 4 dot-separated tokens of letters, digits, _ or -", f.Prefix)
	}
	if f.Replicas < 0 || f.Replicas > 5 {
		return bad("fleet.replicas must be 0..5, got %d", f.Replicas)
	}
	for _, p := range []struct{ name, v string }{{"creds", f.Creds}, {"nkey", f.NKey}, {"tls.ca", f.TLS.CA}, {"tls.cert", f.TLS.Cert}, {"tls.key", f.TLS.Key}} {
		if p.v != "" && !filepath.IsAbs(p.v) {
			return bad("fleet.%s %q is not an absolute path", p.name, p.v)
		}
	}
	if (f.TLS.Cert == "") != (f.TLS.Key == "") {
		return bad("fleet.tls.cert and fleet.tls.key go together")
	}
	if f.Creds != "" && f.NKey != "" {
		return bad("fleet.creds and fleet.nkey: one or the other")
	}
	if f.Witness != "" {
		if _, err := tdnote.NewVerifierForCosignatureV1(strings.TrimSpace(f.Witness)); err != nil {
			return bad("fleet.witness %q is not a witness key (as opx collector key prints it): %v", clipValue(f.Witness), err)
		}
	}
	if !f.Enabled {
		return nil
	}
	if strings.TrimSpace(f.URL) == "" {
		return bad("fleet.enabled needs fleet.url")
	}
	for _, u := range strings.Split(f.URL, ",") {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(u), "://")
		if !ok || rest == "" || (scheme != "nats" && scheme != "tls" && scheme != "ws" && scheme != "wss") {
			return bad("fleet.url %q is not a NATS url (nats://host:port, tls://host:port)", u)
		}
	}
	return nil
}

// MCPServerNameRE is what a server's name may be: it is part of its
// tools' names (mcp__<server>__<tool>), so no "__".
var MCPServerNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(_[a-z0-9-]+)*$`)

// ReservedMCPServerName names the upstream of an `opx mcp-proxy --
// COMMAND` session; no configured server may take it.
const ReservedMCPServerName = "upstream"

// Duration is a time.Duration written as "30s", "5m".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("line %d: %q is not a positive duration like 30s or 5m", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// Default returns the offline configuration.
func Default() Config {
	return Config{
		Provider:  Provider{Kind: ProviderScripted},
		Limits:    Limits{MaxToolCalls: 25, LLMTimeout: Duration(5 * time.Minute), MaxOutputBytes: 256 << 10},
		Shield:    Shield{Tier2DailyBudget: 100, ApprovalTimeout: Duration(5 * time.Minute)},
		Chronicle: Chronicle{MaxSnapshots: 1000, MaxBytes: 4 << 30},
		Ledger:    Ledger{CheckpointEntries: 1000, CheckpointInterval: Duration(10 * time.Second)},
		Agents:    Agents{Enabled: true, MaxConcurrent: 4, MaxRounds: 15, Timeout: Duration(5 * time.Minute)},
		MCP:       MCP{MaxProxySessions: 32},
		Hooks: Hooks{OnEngineDown: HooksDeny, Escalation: HooksWait, DecisionTimeout: Duration(9 * time.Minute),
			ToolTimeout: Duration(30 * time.Minute)},
	}
}

// PathIn returns the configuration path of a workspace.
func PathIn(workspace string) string { return filepath.Join(workspace, Dir, FileName) }

// MaxBytes bounds a configuration file: a larger one (or anything that is
// not a regular file) is refused before it is parsed.
const MaxBytes = 1 << 20

// Load reads the workspace's configuration, or the defaults when the file
// does not exist.
func Load(workspace string) (Config, error) {
	path := PathIn(workspace)
	b, err := regularfile.Read(path, MaxBytes)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// Parse decodes and validates configuration text over the defaults.
func Parse(b []byte) (Config, error) {
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // EOF: empty file, defaults
		return Config{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the configuration is usable.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if err := validateProvider("provider", c.Provider); err != nil {
		return err
	}
	if t2 := c.Shield.Tier2Provider; t2 != (Provider{}) {
		if t2.Kind == "" {
			return bad("shield.tier2_provider sets fields but no kind (leave it empty to use the engine's provider)")
		}
		if err := validateProvider("shield.tier2_provider", t2); err != nil {
			return err
		}
	}
	if b := c.Shield.Tier2DailyBudget; b < 1 || b > 1000000 {
		return bad("shield.tier2_daily_budget must be 1..1000000, got %d", b)
	}
	if t := time.Duration(c.Shield.ApprovalTimeout); t < time.Second || t > 24*time.Hour {
		return bad("shield.approval_timeout must be between 1s and 24h, got %s", t)
	}
	if c.Limits.MaxToolCalls <= 0 || c.Limits.MaxToolCalls > 1000 {
		return bad("limits.max_tool_calls_per_message must be 1..1000, got %d", c.Limits.MaxToolCalls)
	}
	if c.Limits.MaxOutputBytes < 1024 || c.Limits.MaxOutputBytes > 64<<20 {
		return bad("limits.max_output_bytes must be 1024..67108864, got %d", c.Limits.MaxOutputBytes)
	}
	if filepath.IsAbs(c.Policy) {
		return bad("policy %q must be relative to the workspace", c.Policy)
	}
	if c.Chronicle.MaxSnapshots < 0 || c.Chronicle.MaxBytes < 0 {
		return bad("chronicle.max_snapshots and chronicle.max_bytes must not be negative (0: no bound)")
	}
	if n := c.Ledger.CheckpointEntries; n < 1 || n > 10000000 {
		return bad("ledger.checkpoint_entries must be 1..10000000, got %d", n)
	}
	if t := time.Duration(c.Ledger.CheckpointInterval); t < time.Second || t > 24*time.Hour {
		return bad("ledger.checkpoint_interval must be between 1s and 24h, got %s", t)
	}
	if o := c.Ledger.Origin; o != "" {
		if err := tlog.CheckOrigin(o); err != nil {
			return bad("ledger.origin: %v", err)
		}
	}
	if err := checkWitnesses(c.Ledger.Witnesses); err != nil {
		return err
	}
	if err := checkTelemetry(c.Telemetry); err != nil {
		return err
	}
	if n := c.Agents.MaxConcurrent; n < 1 || n > 64 {
		return bad("agents.max_concurrent must be 1..64, got %d", n)
	}
	if n := c.Agents.MaxRounds; n < 1 || n > 1000 {
		return bad("agents.max_rounds must be 1..1000, got %d", n)
	}
	if t := time.Duration(c.Agents.Timeout); t < 100*time.Millisecond || t > 24*time.Hour {
		return bad("agents.timeout must be between 100ms and 24h, got %s", t)
	}
	if v := c.Hooks.OnEngineDown; v != HooksDeny && v != HooksAllow {
		return bad("hooks.on_engine_down must be deny or allow, got %q", v)
	}
	if v := c.Hooks.Escalation; v != HooksWait && v != HooksAsk {
		return bad("hooks.escalation must be wait or ask, got %q", v)
	}
	if t := time.Duration(c.Hooks.DecisionTimeout); t < time.Second || t > 590*time.Second {
		return bad("hooks.decision_timeout must be between 1s and 590s (the hook timeout opx agents install sets is 600s), got %s", t)
	}
	if t := time.Duration(c.Hooks.ToolTimeout); t < time.Second || t > 24*time.Hour {
		return bad("hooks.tool_timeout must be between 1s and 24h, got %s", t)
	}
	if n := c.MCP.MaxProxySessions; n < 1 || n > 1024 {
		return bad("mcp.max_proxy_sessions must be 1..1024, got %d", n)
	}
	for name, srv := range c.MCP.Servers {
		if len(name) > 32 || !MCPServerNameRE.MatchString(name) {
			return bad("mcp.servers: %q is not a server name (lower-case letters, digits, '-' and single '_', at most 32)", name)
		}
		if name == ReservedMCPServerName {
			return bad("mcp.servers: %q is reserved for the upstream of `opx mcp-proxy -- COMMAND`", name)
		}
		if strings.TrimSpace(srv.Command) == "" {
			return bad("mcp.servers.%s.command is required", name)
		}
		if t := time.Duration(srv.Timeout); t != 0 && (t < 100*time.Millisecond || t > time.Hour) {
			return bad("mcp.servers.%s.timeout must be between 100ms and 1h, got %s", name, t)
		}
		for _, d := range srv.ReadOnly {
			if !filepath.IsAbs(d) {
				return bad("mcp.servers.%s.read_only: %q is not an absolute path", name, d)
			}
		}
		for k := range srv.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return bad("mcp.servers.%s.env: %q is not a variable name", name, k)
			}
		}
	}
	if err := c.Fleet.validate(); err != nil {
		return err
	}
	for _, p := range c.Chronicle.Exclude {
		if _, err := path.Match(p, ""); err != nil || p == "" || path.IsAbs(p) {
			return bad("chronicle.exclude %q is not a relative path pattern", p)
		}
	}
	return nil
}

// validateProvider checks one provider section; name is its key.
func validateProvider(name string, p Provider) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch p.Kind {
	case ProviderScripted:
	case ProviderOpenAI:
		if p.Model == "" || p.BaseURL == "" {
			return bad("%s openai needs model and base_url (e.g. https://api.openai.com/v1 or http://localhost:11434/v1 for Ollama)", name)
		}
	case ProviderAnthropic:
		if p.Model == "" || p.APIKeyEnv == "" {
			return bad("%s anthropic needs model and api_key_env", name)
		}
	default:
		return bad("%s kind %q: want scripted, openai or anthropic", name, p.Kind)
	}
	if p.APIKeyEnv != "" && !isEnvName(p.APIKeyEnv) {
		return bad("%s.api_key_env %q is not an environment variable name (put the variable's name here, never the key)", name, p.APIKeyEnv)
	}
	return nil
}

func isEnvName(s string) bool {
	for i, r := range s {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return s != ""
}

// APIKey reads the provider's key from its environment variable.
func (p Provider) APIKey() (string, error) {
	if p.APIKeyEnv == "" {
		return "", nil
	}
	k := os.Getenv(p.APIKeyEnv)
	if k == "" {
		return "", fmt.Errorf("%w: environment variable %s (provider.api_key_env) is empty", ErrInvalid, p.APIKeyEnv)
	}
	return k, nil
}

// checkWitnesses checks ledger.witnesses: http(s) URLs without query or
// fragment, keys that parse, no key twice, at most MaxWitnesses.
func checkWitnesses(ws []LedgerWitness) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if len(ws) > MaxWitnesses {
		return bad("ledger.witnesses lists %d witnesses (at most %d)", len(ws), MaxWitnesses)
	}
	seen := map[string]bool{}
	for i, w := range ws {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return bad("ledger.witnesses[%d].url %q must be http(s)://host[:port][/prefix], the witness's submission prefix", i, w.URL)
		}
		v, err := tdnote.NewVerifierForCosignatureV1(strings.TrimSpace(w.Key))
		if err != nil {
			return bad("ledger.witnesses[%d].key: %v (want the witness's verifier key, <name>+<hash>+<key>)", i, err)
		}
		id := fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())
		if seen[id] {
			return bad("ledger.witnesses[%d]: the key %s is listed twice", i, id)
		}
		seen[id] = true
	}
	return nil
}
