// Package broadcast fans the engine's pipeline events out to the clients
// following a session (Broadcaster, Subscription), releasing each only
// once the ledger is durable up to every entry appended before it was
// published.
//
// It imports only ledger and the generated proto: it is below the core,
// which publishes into it (Engine.publish) and hands its subscriptions to
// the rooms above (Engine.Subscribe).
//
// # Invariants
//
//   - No event reaches a subscriber before every entry appended before
//     its publication is durable (the ledger's watermark); events are
//     released in publication order.
//   - Publishing never blocks: a subscriber that falls too far behind
//     (subscriberBuffer events, subscriberBytes of data, its unread
//     tokens joined) is dropped, its channel closed; the ledger holds
//     the rest.
//   - Once the ledger fails, every subscription is closed and none is
//     taken (Broken).
package broadcast
