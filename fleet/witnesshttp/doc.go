// Package witnesshttp is the HTTP face of a C2SP tlog-witness
// (https://c2sp.org/tlog-witness): it serves POST /add-checkpoint for a
// Witness (the collector) and maps what the witness decides to the
// protocol's status codes, content types and bodies. It owns the
// transport's defences, nothing of the witness's state.
//
// # What it owns
//
//   - The request: POST only, a body of at most
//     tlog.MaxAddCheckpointBytes (read through a limit, never more),
//     parsed by tlog.ParseAddCheckpointRequest; anything else is 400
//     (405 for another method, 413 for a larger body, 408 for a body
//     not read within Options.Timeout).
//   - The answers: 200 with the cosignature lines (text/plain;
//     charset=utf-8); 409 with the witness's latest size
//     (tlog.ContentTypeSize, tlog.FormatSize) for a stale old size, 409
//     with text/plain for another root at the size cosigned; 404
//     unknown origin; 403 no trusted signature; 400 old size above the
//     checkpoint's or a malformed body; 422 a proof that does not
//     verify; 429 beyond a client address's or an origin's rate; 503
//     when MaxInFlight requests are being served.
//   - Bounds: a token bucket per client address (an IPv6 client's /64),
//     taken before the body is read, at most Options.MaxClients of them
//     (the one seen least recently is forgotten for a new one:
//     clients.go); a token bucket per known origin (origins the witness
//     does not know get 404 before any state is made for them, so
//     memory grows with the witness's configuration, not with what
//     clients send); a bound on requests in flight; and Serve's bound
//     on connections and its handshake, header, read, write and idle
//     timeouts, in HTTPS when given a TLS configuration.
//
// # What it does not
//
// The checks of signature and consistency, their atomicity per origin
// and the durable record before the answer are the Witness's
// (fleet/collector): this package never answers 200 without the
// Witness's cosignature.
package witnesshttp
