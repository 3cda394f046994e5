package console

import "errors"

// Errors of starting a console.
var (
	// ErrNoSource is returned by New without a Source.
	ErrNoSource = errors.New("console: no ledger source")
	// ErrNotLoopback is returned by Listen for an address off loopback
	// without TLS or InsecureListen.
	ErrNotLoopback = errors.New("not a loopback address: serve it with --tls-cert and --tls-key, or pass --insecure-listen to serve plain HTTP anyway")
	// ErrTLSHalf is returned by Listen when only one of the TLS
	// certificate and key is given.
	ErrTLSHalf = errors.New("give both --tls-cert and --tls-key, or neither")
)

// Errors of a request (each answered with its status, never a page).
var (
	// ErrBadRequest is returned by a handler for a malformed path or
	// query (400).
	ErrBadRequest = errors.New("bad request")
	// ErrNotFound is returned by a handler or Source for what the ledger
	// does not hold (404).
	ErrNotFound = errors.New("not found")
	// ErrOffline is returned by a Source for what needs the running
	// engine (the approvals) when no engine holds the ledger (409).
	ErrOffline = errors.New("no engine holds this ledger: nothing waits for an answer")
)
