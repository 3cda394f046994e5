// Package witness submits the engine's signed checkpoints to C2SP
// tlog-witnesses (https://c2sp.org/tlog-witness), the protocol of the
// public witness network and of transparency-dev's omniwitness, and
// records what they answer: each cosignature as ledger.cosigned, each
// refusal that says something is wrong as ledger.witness_alert.
//
// It imports ledger/tlog (the protocol's wire form), ledger/event (the
// entries) and nothing of the engine: the engine hands it each checkpoint
// it signed (Submitter.Submit) and a Recorder, and the CLI starts it
// (config ledger.witnesses) as it starts the fleet shipper.
//
// # Invariants
//
//   - The tool path never waits on a witness: Submit only replaces the
//     checkpoint pending for each witness (a queue of one: only the latest
//     checkpoint matters, a later one covers an earlier one) and wakes its
//     goroutine.
//   - Per witness, CosignedSize is the largest tree size it cosigned,
//     rebuilt at start from the ledger's ledger.cosigned entries whose
//     note carries a valid cosignature of the witness's configured key,
//     and raised by every cosignature recorded since. It never goes down.
//   - A request's old size is the size the witness holds: CosignedSize,
//     or the size the witness stated in a 409. A stated size below
//     CosignedSize is not taken (alert "rewound"); one above the
//     checkpoint's is not either (alert "ahead": the ledger was truncated
//     or restored from an older copy). The consistency proof is built
//     from the ledger's own tree, so a ledger that does not extend what
//     the witness saw can only get a 422 (alert "bad-proof"), never a
//     cosignature: a fork is never silent.
//   - A cosignature is recorded only after the returned lines verify
//     under the witness's configured key (cosignature/v1) over the exact
//     checkpoint submitted.
//   - 403, 404, 422 and answers the protocol does not allow are recorded
//     (ledger.witness_alert) once per kind until the witness cosigns
//     again, and not retried until the next checkpoint; network errors,
//     5xx and 429 are retried with exponential backoff (MinBackoff to
//     MaxBackoff) and shown by Status only.
//   - Every answer is read in memory bounded by MaxAnswerBytes.
package witness
