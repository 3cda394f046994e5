package opxv1

// Metadata keys that carry credentials, written by hand beside the
// generated code: the engine checks them in one interceptor for every
// RPC on its port, and the agent and clients send them.
const (
	// ClientTokenHeader carries the client token (ClientService,
	// LedgerService, ChronicleService and server reflection).
	ClientTokenHeader = "opx-client-token"
	// AgentTokenHeader carries the agent's token (AgentService and
	// LLMGateway). The agent also presents it in AgentReady.
	AgentTokenHeader = "opx-agent-token"
)
