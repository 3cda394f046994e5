// Package ocsf maps ledger entries to OCSF events for SIEMs (Splunk,
// Elastic, Sentinel, Security Lake): one JSON object per line, the class
// chosen by what happened, each carrying the proof that its entry is in
// the ledger. docs/ocsf.md is the mapping's reference.
//
// # Schema
//
// The events declare OCSF 1.9.0-dev (metadata.version), the schema at
// github.com/ocsf/ocsf-schema commit a5cfc68e (no 1.9.0 release is
// tagged yet): the first with the record_integrity profile (attestation)
// and the ai_agent object of the ai_operation profile. The schema files
// the emitted classes resolve to are in testdata/schema with their
// licence (Apache-2.0), and the tests check every event against them.
//
// # What it owns
//
//   - Mapper: entries in seq order in, events out. Classes: API Activity
//     (6003) for tool and MCP calls, Process Activity (1007) for shell
//     commands, File System Activity (1001) for each path an execution
//     changed, Detection Finding (2004) for Shield's blocks and
//     escalations and flagged results, Authorize Session (3003) for the
//     answer to an approval.
//   - The integrity data (attestation): the entry's BLAKE3-256, the
//     previous entry's hash, the ledger id as the chain, and the latest
//     signed checkpoint covering the entry (SetCheckpoint; ParseCheckpoint
//     reads one from the ledger).
//
// It reads entries only; it never reads blobs, so no file body, tool
// output or model text reaches an event.
//
// # Invariants
//
//   - Every event is one line: encoding/json escapes newlines and
//     U+2028/U+2029, and Map writes one '\n' after each object.
//   - Every string copied from an entry is cut to a bound (MaxName,
//     MaxText, MaxCmdLine) at a rune boundary, with control characters
//     and bidirectional overrides replaced; one entry yields at most
//     1+MaxFileEvents events. metadata.is_truncated says a value was cut.
//   - Nothing of an off-the-record session's content appears: no command
//     line, path, reason, error or file hash of such a session, and no
//     withheld value (otr:v1:…) of any session.
//   - metadata.uid is "<ledger id>:<seq>" (a file event of an execution
//     adds "/<n>"), unique per ledger; the attestation's uid and
//     prev_event name entries the same way.
//   - A Mapper's state is bounded (maxCalls calls in flight, maxSessions
//     sessions), whatever the ledger holds; beyond it the oldest is
//     forgotten and the later events say less (no command line), never
//     something wrong.
package ocsf
