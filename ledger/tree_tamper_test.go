package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// treeBase makes a ledger of 301 entries (tiles 0/0 full, 0/1 partial,
// 1/0 holding one hash) with a checkpoint recording the tree at seq 150.
func treeBase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "base.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 300; i++ {
		if i == 150 {
			if _, err := l.Checkpoint(ctx, ledger.Async); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := l.Append(ctx, ledger.Async, noteRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path)
	return path
}

func treeBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("tree")) }

// editTile changes tile (lvl, idx) with fn.
func editTile(lvl uint8, idx uint64, fn func(v []byte) []byte) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		k := append([]byte{lvl}, key(idx)...)
		v := treeBucket(tx).Get(k)
		if v == nil {
			return fmt.Errorf("no tile %d/%d", lvl, idx)
		}
		return treeBucket(tx).Put(k, fn(bytes.Clone(v)))
	}
}

func flipAt(i int) func(v []byte) []byte {
	return func(v []byte) []byte {
		v[i] ^= 1
		return v
	}
}

// TestVerify_TreeTamper damages the tree, or what the entries record of
// it, in ways the chain alone does not see, and checks that verify
// reports each (tree-mismatch) where it is, strict or not.
func TestVerify_TreeTamper(t *testing.T) {
	base := treeBase(t)
	tm := ledger.KindTreeMismatch
	tests := []struct {
		name string
		edit func(tx *bolt.Tx) error
		want []finding
	}{
		{"leaf hash byte changed", editTile(0, 0, flipAt(32*7+5)), []finding{{7, tm}}},
		{"level-1 hash byte changed", editTile(1, 0, flipAt(0)), []finding{{0, tm}}},
		{"full tile deleted", func(tx *bolt.Tx) error { return treeBucket(tx).Delete(append([]byte{0}, key(0)...)) },
			[]finding{{0, tm}}},
		// Level 1 holds one node (over 0..255) in its edge tile; level 0's
		// edge tile (256..300) is not stored: it is the entries' leaves.
		{"edge tile cut short", editTile(1, 0, func(v []byte) []byte { return v[:len(v)-32] }), []finding{{0, tm}}},
		{"edge tile one hash too many", editTile(1, 0, func(v []byte) []byte { return append(v, v[:32]...) }), []finding{{256, tm}}},
		{"level-0 edge tile stored", func(tx *bolt.Tx) error { return treeBucket(tx).Put(append([]byte{0}, key(1)...), make([]byte, 45*32)) },
			[]finding{{256, tm}}},
		{"tile beyond the tree", func(tx *bolt.Tx) error { return treeBucket(tx).Put(append([]byte{0}, key(5)...), make([]byte, 32)) },
			[]finding{{300, tm}}},
		{"not a tile key", func(tx *bolt.Tx) error { return treeBucket(tx).Put([]byte("junk"), []byte("x")) }, []finding{{300, tm}}},
		{"tree bucket deleted", func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("tree")) }, []finding{{0, tm}}},
		{"tree bucket and meta tree deleted", func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("tree")); err != nil {
				return err
			}
			return metaBucket(tx).Delete([]byte("tree"))
		}, []finding{{0, tm}}}, // the checkpoint at 150 still records the tree
		{"checkpoint root changed, chain re-hashed", func(tx *bolt.Tx) error {
			err := rewrite(tx, 150, func(v []byte) []byte {
				i := bytes.Index(v, []byte(`"tree_root":"`)) + len(`"tree_root":"`)
				v[i] ^= 1 // still base64: the letters differ in one bit
				return v
			})
			if err != nil {
				return err
			}
			return rechain(tx, 150)
		}, append([]finding{{150, tm}}, leafFindings(150, 255)...)}, // 1/0 is above them: not reported again
		{"checkpoint tree size changed, chain re-hashed", func(tx *bolt.Tx) error {
			err := rewrite(tx, 150, func(v []byte) []byte {
				return bytes.Replace(v, []byte(`"tree_size":150`), []byte(`"tree_size":149`), 1)
			})
			if err != nil {
				return err
			}
			return rechain(tx, 150)
		}, append([]finding{{150, tm}}, leafFindings(150, 255)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			normal, strict := verifyCopy(t, base, tt.edit, ledger.VerifyOptions{})
			for _, rep := range []*ledger.Report{normal, strict} {
				if got := findings(rep); fmt.Sprint(got) != fmt.Sprint(tt.want) || rep.OK {
					t.Errorf("strict=%v: findings %v, want %v\n%v", rep == strict, got, tt.want, rep.Failures)
				}
			}
		})
	}
}

// leafFindings are the level-0 tile findings of entries from..to
// rewritten (by a re-hashed chain) while their (full) tiles were not.
func leafFindings(from, to uint64) []finding {
	var out []finding
	for s := from; s <= to; s++ {
		out = append(out, finding{s, ledger.KindTreeMismatch})
	}
	return out
}

// TestVerify_CheckCheckpoint calls CheckCheckpoint for each checkpoint
// whose tree is right, with that tree and its note, and reports its
// error at the checkpoint (KindCheckpoint).
func TestVerify_CheckCheckpoint(t *testing.T) {
	path := treeBase(t)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want, err := l.TreeHeadAt(150)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	rep, err := l.Verify(ledger.VerifyOptions{Workers: 3, CheckCheckpoint: func(seq uint64, th ledger.TreeHead, note string) error {
		seen = append(seen, fmt.Sprint(seq, th == want, note))
		return errors.New("signature by another key")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[150 true]" {
		t.Errorf("CheckCheckpoint saw %v", seen)
	}
	if got := findings(rep); fmt.Sprint(got) != fmt.Sprint([]finding{{150, ledger.KindCheckpoint}}) ||
		!strings.Contains(rep.Failures[0].Detail, "another key") {
		t.Errorf("findings %v", rep.Failures)
	}
}
