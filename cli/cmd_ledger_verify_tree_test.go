package cli_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// treeLedger makes a ledger of 301 entries with a checkpoint (recording
// the Merkle tree) at seq 150.
func treeLedger(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 300; i++ {
		if i == 150 {
			_, err = l.Checkpoint(ctx, ledger.Async)
		} else {
			_, err = l.Append(ctx, ledger.Async, ledger.Record{Type: ledger.TypeNote, Data: map[string]any{"author": "t", "text": fmt.Sprint("note ", i)}})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// TestLedgerVerify_TreeTamper: damage to the Merkle tree, or to a root an
// entry records with the chain re-hashed over it, exits 4 with
// tree-mismatch where the chain alone would pass.
func TestLedgerVerify_TreeTamper(t *testing.T) {
	base := treeLedger(t)
	tests := []struct {
		name string
		edit func(tx *bolt.Tx) error
		want string
	}{
		{"tile byte changed", func(tx *bolt.Tx) error {
			k := append([]byte{0}, seqKey(0)...)
			v := bytes.Clone(tx.Bucket([]byte("tree")).Get(k))
			v[32*9] ^= 1
			return tx.Bucket([]byte("tree")).Put(k, v)
		}, "seq 9  tree-mismatch  "},
		{"tile deleted", func(tx *bolt.Tx) error { return tx.Bucket([]byte("tree")).Delete(append([]byte{0}, seqKey(0)...)) },
			"seq 0  tree-mismatch  "},
		{"checkpoint root changed, chain re-hashed", func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("entries"))
			v := bytes.Clone(b.Get(seqKey(150)))
			i := bytes.Index(v, []byte(`"tree_root":"`)) + len(`"tree_root":"`)
			v[i] ^= 1
			if err := b.Put(seqKey(150), v); err != nil {
				return err
			}
			return relink(tx, 150)
		}, "seq 150  tree-mismatch  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := ledgertest.Copy(t, base, filepath.Join(t.TempDir(), "bad.db"))
			ledgertest.Edit(t, bad, tt.edit)
			r := run(t, "ledger", "verify", "--ledger", bad)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantOut(t, tt.want)
		})
	}
}

// relink recomputes every prev after seq and the meta head, as an
// attacker covering an edit would.
func relink(tx *bolt.Tx, seq uint64) error {
	b := tx.Bucket([]byte("entries"))
	prev := ledger.Sum(b.Get(seqKey(seq)))
	last := seq
	for s := seq + 1; b.Get(seqKey(s)) != nil; s++ {
		v := b.Get(seqKey(s))
		e, err := ledger.ParseEntry(v)
		if err != nil {
			return err
		}
		nv := bytes.Replace(v, []byte(e.Prev.String()), []byte(prev.String()), 1)
		if err := b.Put(seqKey(s), nv); err != nil {
			return err
		}
		prev, last = ledger.Sum(nv), s
	}
	meta := tx.Bucket([]byte("meta"))
	if err := meta.Put([]byte("head_seq"), []byte(fmt.Sprint(last))); err != nil {
		return err
	}
	return meta.Put([]byte("head_hash"), []byte(prev.String()))
}
