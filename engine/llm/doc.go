// Package llm is the engine's side of the LLM gateway: providers that turn
// a provider-neutral Request into an API call and parse the streamed answer
// back into Chunks.
//
// # Recording and replay
//
// A provider is split so that what goes over the wire is exact bytes the
// engine can record: Encode builds the request body, Send returns the raw
// response stream, and Parse turns raw response bytes into chunks. Complete
// runs the three and returns an Exchange holding both bodies. Replay calls
// Parse on the recorded response, so the agent sees the same chunks byte
// for byte without any network.
//
// # Providers
//
//   - OpenAI-compatible chat completions with streaming and tool calls
//     (OpenAI, Ollama, vLLM, llama.cpp server).
//   - Anthropic Messages with streaming and tool_use.
//   - Scripted: a deterministic model that follows a transcript; it writes
//     its answers in the OpenAI streaming format, so it is recorded and
//     replayed through the same parser as a real provider.
//
// FromConfig builds the one a workspace's configuration names (the
// scripted provider by default, so everything works offline). The
// package imports nothing of the engine but its configuration
// (engine/config) and the built-in transcript (fixtures).
package llm
