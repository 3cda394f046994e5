// Package ledgertest builds small ledgers for tests and damages
// copies of them on disk, the way an attacker or a bad disk would: by
// editing the bbolt file underneath the ledger package.
//
// # Invariants
//
// A ledger made by New verifies when it is made and is checked again when
// the test ends (t.Cleanup), so a command that wrongly writes to a ledger
// it should only read fails the test. Damage is only ever done to copies
// (Copy), never to the ledger New made.
package ledgertest
