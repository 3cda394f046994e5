// Package jaegertest runs Jaeger v2 (the real OTLP receiver and trace
// store, built by .ci/run from .ci/jaeger) on loopback with in-memory
// storage for tests, and reads traces back through its HTTP query API.
//
// # Invariants
//
//   - Every port is chosen free by the test, on 127.0.0.1 only.
//   - Start waits for a condition (the query API answering), never a bare
//     sleep; Stop kills only the process it started.
//   - A missing binary skips the test locally and fails it under CI=true.
package jaegertest
