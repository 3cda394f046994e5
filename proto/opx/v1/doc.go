// Package opxv1 is the Go code generated from opx's gRPC API (the .proto
// files beside it, `go generate ./proto/...` with protoc-gen-go and
// protoc-gen-go-grpc): the agent, client, ledger, Chronicle, sub-agent,
// MCP-proxy and hook services and their messages. Never edited by hand.
package opxv1
