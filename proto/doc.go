// Package proto holds opx's gRPC API: the .proto sources under opx/v1 and
// the Go code generated from them (package opxv1), committed so that
// `go build` needs no protoc.
//
// # Regenerating
//
//	go generate ./proto/...
//
// runs protoc with the Go plugins. Versions used for the committed code:
// protoc 3.21.12 (Debian bookworm's protobuf-compiler), protoc-gen-go
// v1.36.12 and protoc-gen-go-grpc v1.6.2 (go install ...@version).
//
// # Services
//
//   - AgentService / SubAgentService: engine <-> sandboxed agent stream.
//   - LLMGateway: the agent's only way to the model, through the engine.
//   - ClientService: the CLI and other clients (client token required).
//   - LedgerService: the ledger while the engine holds it: entries and
//     blob frames as stored (ReadEntries, GetBlobFrame(s), Follow), for
//     clients that check them themselves; AppendNote and Rebuild, which
//     the engine runs for a client.
//   - ChronicleService: rollbacks, run by the engine that holds the ledger.
//   - McpProxyService: `opx mcp-proxy`, one stream per MCP client
//     connection (a session of mode mcp-proxy).
//   - HookService: `opx hook AGENT`, one call per hook event of a
//     coding-agent CLI (sessions of mode claude-code, codex, gemini-cli).
//
// # Credentials
//
// Every call carries a token in its metadata (headers.go): the client
// token (ClientTokenHeader) for ClientService, LedgerService,
// ChronicleService, McpProxyService, HookService and server reflection; the agent's token
// (AgentTokenHeader) for AgentService and LLMGateway.
package proto

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative opx/v1/common.proto opx/v1/agent.proto opx/v1/llm.proto opx/v1/client.proto opx/v1/ledger.proto opx/v1/chronicle.proto opx/v1/mcp.proto opx/v1/hook.proto
