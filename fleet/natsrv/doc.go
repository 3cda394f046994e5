// Package natsrv runs NATS servers with JetStream inside opx's own
// process: one for a single machine (`opx collector --embedded-nats DIR`)
// and clusters of them on loopback for tests and benchmarks. It is
// nats-server itself (github.com/nats-io/nats-server/v2), configured,
// never a stand-in.
package natsrv
