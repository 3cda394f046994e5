// Package checkpoint is the engine's side of the ledger's signed
// checkpoints: it keeps the ledger's signing key, records its verifier key
// in the ledger, signs each ledger.checkpoint's tree (through
// ledger.Options.SignCheckpoint) and publishes the latest note. Latest
// finds the latest signed checkpoint for LedgerService.Prove; OnDemand
// records one when a prove needs an entry the latest does not cover.
//
// # Invariants
//
//   - The key is created only by Keeper.Setup, which the engine runs at
//     each start, once the ledger is open for writing and before anything
//     it signs: the first engine start on a ledger whose state directory
//     holds no key creates one. Other writers (offline `opx ledger note`,
//     `opx ledger import`) neither create nor use it; a checkpoint they
//     record carries no note. It lives in the state directory beside
//     ledger.db (tlog.KeyFile, 0600), never in the workspace. The agent
//     and the commands it runs cannot reach it: the agent has no
//     filesystem at all, commands are sandboxed to the workspace and a
//     private home (Landlock: the state directory is out of reach,
//     EACCES; see TestE2E_CheckpointKey in cli/opx), and Shield blocks
//     every tool path inside the state directory.
//   - Every key that signs is recorded in the ledger (ledger.key) before
//     the first checkpoint it signs; a key found different from the one
//     recorded last (the key file was lost or replaced) is recorded as
//     "replaced", so investigators see it.
//   - The key is named by the ledger's origin: tlog.Origin(id), or the
//     team's ledger.origin (Keeper.SetOrigin). When the origin changes,
//     the key this ledger recorded last is moved aside (never deleted:
//     tlog.KeyFile.retired-*), a new key is created and recorded
//     ("replaced", the detail naming ledger.origin); a key file for
//     another origin that the ledger never recorded is refused, as
//     before. Verifiers read each checkpoint's origin from the key
//     recorded before it (event.Origin), never from configuration.
//   - The note file (tlog.NoteFile) is written only after the checkpoint
//     entry holding the note is durable, atomically, so it never names a
//     tree the ledger does not hold; and only forward: Keeper.Publish is
//     serialised and never writes a checkpoint at or below the last one
//     it wrote, so the file holds the newest note published.
//   - Checkpoints on demand are at most one every OnDemand's Every (a
//     second in the engine), whoever asks and however often: each grows
//     the ledger by an entry and costs a signature.
package checkpoint
