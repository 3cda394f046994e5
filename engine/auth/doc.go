// Package auth is the engine's one way in (moved from engine/auth.go):
// which credential each service on the engine's port requires
// (RequiredCredential, failing closed for a service it does not name),
// the Authenticator whose interceptors check it before every handler, and
// the tokens (NewToken, TokenEqual) and metadata (MetadataValue) they
// compare.
//
// It owns no state of the engine's: the engine builds the Authenticator
// with the tokens it knows and the record of a refusal (engine/auth.go:
// recordRejection), and holds a client's unary answers until they are
// durable (durableAnswer) itself.
//
// Imports: the protocol and gRPC only; never the engine.
package auth
