package config

// Template is what `opx init` writes: every setting with its default and
// a comment, so the file documents itself.
const Template = `# opx configuration for this workspace (written by opx init).
# The ledger is not kept here: it lives in your state directory
# ($XDG_STATE_HOME/opx/<workspace-id>/ledger.db), out of the agent's reach.

provider:
  # scripted: an offline, deterministic model that follows a transcript.
  # openai: any OpenAI-compatible chat completions API (OpenAI, Ollama,
  #         vLLM, llama.cpp server). anthropic: the Anthropic Messages API.
  kind: scripted
  # Model name, e.g. gpt-4o or claude-sonnet-4-5 (scripted: unused).
  model: ""
  # openai only: the API base, e.g. https://api.openai.com/v1 or
  # http://localhost:11434/v1 for Ollama.
  base_url: ""
  # The NAME of the environment variable holding the API key. Never put
  # the key itself in this file.
  api_key_env: ""
  # scripted only: a transcript file relative to the workspace; empty uses
  # the built-in one, which answers any message.
  transcript: ""
  # Most tokens per model answer (anthropic needs one; 0 = provider default).
  max_tokens: 0

# Shield policy file relative to the workspace; empty uses the built-in
# policy (fixtures/policies/default.yaml in opx's source, commented). Tools
# can neither read nor write it. Whatever it allows, Shield's built-in rules
# (docs/shield-rules.md) still judge every action; try a policy with
# opx shield eval --policy FILE.
policy: ""

limits:
  # Tool calls the agent may make while answering one message.
  max_tool_calls_per_message: 25
  # Longest wait for one model call, stream included.
  llm_timeout: 5m
  # Largest tool output passed back to the model, in bytes.
  max_output_bytes: 262144

sandbox:
  # true: refuse to start the agent where the kernel sandbox is unavailable
  # (by default opx starts with a loud warning instead).
  require: false

shield:
  # Tier 2: ask a model whether an action a policy verify rule with
  # "tier: 2" escalated is safe. It answers allow or block; a failed or
  # malformed answer blocks. Off: those escalations go to a human (tier 3).
  tier2_enabled: false
  # The model tier 2 asks, with the same fields as provider above; an
  # empty kind uses the engine's provider.
  tier2_provider:
    kind: ""
  # Most tier 2 model calls per day (UTC), counted from the ledger so a
  # restart does not refill it. Over it, tier 2 escalations are blocked.
  tier2_daily_budget: 100
  # How long an escalation waits for a human (opx approve / opx deny, or
  # y/n in opx chat) before it is denied.
  approval_timeout: 5m

chronicle:
  # Retention: how many snapshots keep their content, and how many bytes
  # of content they may hold. Older snapshots lose only the content no
  # kept snapshot shares; the ledger records what was pruned and stays
  # verifiable. 0 means no bound.
  max_snapshots: 1000
  max_bytes: 4294967296
  # Paths workspace snapshots (before shell commands and git commit) leave
  # out, as path patterns relative to the workspace; a matching directory
  # is left out whole. Unset: just .git/objects, which git only adds to.
  # exclude: [.git/objects, node_modules]

ledger:
  # The engine signs a checkpoint of the ledger (its Merkle tree size and
  # root, as a C2SP signed note; opx ledger checkpoint prints the latest)
  # once this many entries were appended since the last one, or this long
  # after it when anything was, and at stop. Save one elsewhere and
  # opx ledger verify --since proves the ledger only grew since.
  checkpoint_entries: 1000
  checkpoint_interval: 10s
  # C2SP tlog-witnesses (transparency-dev's omniwitness, the public witness
  # network, an opx collector) the engine submits each checkpoint to; each
  # cosignature is recorded (ledger.cosigned), a refusal is an alert
  # (ledger.witness_alert, opx status). The witness must list this log's
  # origin and verifier key (opx ledger key). For example:
  # witnesses:
  #   - url: https://witness.example.com
  #     key: witness.example.com+2b5f9c0e+BM5k...

agents:
  # Sub-agents: the agent may start helpers (spawn_agent), each its own
  # sandboxed process with only the tools granted at spawn (by default the
  # read-only ones; never the agent tools, memory writes or load_tools).
  # Their every step is in the ledger under the parent session, with the
  # sub-agent's id. false: the agent tools are not offered.
  enabled: true
  # Most sub-agents running at once; a spawn over it is refused.
  max_concurrent: 4
  # Most model calls one sub-agent may make; the engine refuses the next
  # and the sub-agent fails (max_rounds).
  max_rounds: 15
  # Wall-clock limit of one sub-agent, from its spawn; at it the engine
  # kills the process and records subagent.timed_out.
  timeout: 5m

# Fleet (docs/fleet.md): ship every durable entry of the ledger, the blobs
# it names and its signed checkpoints to NATS JetStream, where a collector
# (opx collector) verifies them, keeps a copy off this machine and cosigns
# the checkpoints as a witness; its cosignatures are recorded here
# (ledger.cosigned) and opx ledger verify --witness KEY checks the ledger
# against them. The engine never waits for NATS: while it is unreachable
# the backlog is the ledger itself, shipped from a durable cursor once it
# is back. opx status shows the shipping state.
# fleet:
#   enabled: true
#   url: nats://collector.example:4222      # or several, comma-separated
#   # creds: /etc/opx/fleet.creds           # NATS credentials (or nkey: seed file)
#   # tls: {ca: /etc/opx/ca.pem, cert: /etc/opx/client.pem, key: /etc/opx/client.key}
#   # prefix: opx                           # subject prefix
#   # witness: <key from opx collector key> # record only this witness's cosignatures

# MCP servers (docs/mcp.md): their tools are offered to the agent as
# mcp__<server>__<tool> (tool group mcp:<server>), each call judged by Shield
# like any tool (policy rules can name them: tools: ["mcp__fs__*"]), recorded,
# and its result read for prompt injection before the model sees it. Each
# server runs in the command sandbox: system directories and its own install
# directory read-only, the workspace read-only unless writable (then every call
# gets a workspace snapshot first, and opx rollback undoes it), no network
# unless network, a private home; its stderr goes to the engine's log. One that
# dies is restarted with backoff; one that will not start is shown by
# opx status and opx doctor, and the engine runs on without it.
# "${workspace}" in command, args or env is the workspace.
# mcp:
#   servers:
#     fs:
#       # npm install -g @modelcontextprotocol/server-filesystem
#       command: mcp-server-filesystem
#       args: ["${workspace}"]
#       writable: true
#     # fetch:
#     #   command: /opt/mcp/fetch/bin/mcp-server-fetch
#     #   network: true
#     #   env: {LOG_LEVEL: warn}
#     #   read_only: [/opt/mcp/fetch]   # more directories it may read
#     #   timeout: 30s                  # per request; default 60s
#     #   disabled: true                # configured, not started
#   max_proxy_sessions: 32 # opx mcp-proxy sessions open at once (each runs its own upstream)

# OpenTelemetry (docs/telemetry.md): the engine sends each turn, model
# call, tool call, MCP call and sub-agent as spans (the GenAI and MCP
# conventions), Shield's verdicts, approvals and snapshots as events, each
# naming its ledger entry (opx.ledger.seq, opx.ledger.hash), as entries
# become durable, in the background: a collector that is down only counts
# failures (opx status). opx ledger export --format otlp sends the past.
# telemetry:
#   otlp:
#     endpoint: localhost:4317   # or http(s)://host:4318 with protocol: http
#     protocol: grpc             # or http
#     insecure: true             # no TLS (a collector on loopback)
#     headers: {x-api-key: "..."}
#     sample: 1                  # fraction of turns sent
#   content: false               # true: arguments, results and messages too (never off the record)

# Claude Code, Codex CLI and Gemini CLI audited through their hooks
# (docs/agents.md; opx agents install claude|codex|gemini): every tool call
# the agent makes is recorded, judged by Shield and snapshotted before it
# runs, and opx rollback --session undoes what it changed.
# hooks:
#   on_engine_down: deny     # or allow: calls pass unjudged while no engine runs (recorded at the next start)
#   escalation: wait         # or ask: hand escalations to the CLI's own prompt (Claude Code, Codex)
#   decision_timeout: 9m     # an escalation unanswered by then is denied (below the 600 s hook timeout)
#   tool_timeout: 30m        # an allowed call whose end never comes is closed as interrupted
#   sandbox_commands: false  # run the agent's shell commands in opx's command sandbox (Claude Code)
`
