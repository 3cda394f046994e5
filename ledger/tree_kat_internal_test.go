package ledger

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	bolt "go.etcd.io/bbolt"
)

// tileDB grows a tree bucket in a bare bbolt file with appendTree, one
// commit per batch, the way the writer does (the leaves go in an entries
// bucket, from which the level-0 edge tile is read), and returns the db
// and the range after the last commit.
func tileDB(t *testing.T, leaves [][]byte, batch int) (*bolt.DB, *compact.Range) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "t.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := treeFactory.NewEmptyRange(0)
	var edge0 []byte
	for seq := 0; seq < len(leaves); {
		n := min(batch, len(leaves)-seq)
		err := db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(bucketTree); err != nil {
				return err
			}
			entries, err := tx.CreateBucketIfNotExists(bucketEntries)
			if err != nil {
				return err
			}
			for i := seq; i < seq+n; i++ {
				if err := entries.Put(seqKey(uint64(i)), leaves[i]); err != nil {
					return err
				}
			}
			r, edge0, err = appendTree(tx, r, edge0, leafHashes(leaves[seq:seq+n]))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		seq += n
	}
	return db, r
}

// tiles is the tile store of a tileDB of size leaves.
func tiles(tx *bolt.Tx, size int) tileStore {
	return tileStore{b: tx.Bucket(bucketTree), entries: tx.Bucket(bucketEntries), size: uint64(size)}
}

// TestTree_KnownAnswers checks leaf hashes, every node of every complete
// subtree, and the root of every size against transparency-dev/merkle's
// RFC 6962 vectors (testonly.NodeHashes, RootHashes), and the inclusion
// and consistency proofs read from our tiles against its reference tree
// and proof.VerifyInclusion/VerifyConsistency.
func TestTree_KnownAnswers(t *testing.T) {
	leaves := testonly.LeafInputs()
	for i, l := range leaves {
		if got := LeafHash(l); !bytes.Equal(got[:], testonly.NodeHashes()[0][i]) {
			t.Errorf("LeafHash(leaf %d) = %x, want %x", i, got, testonly.NodeHashes()[0][i])
		}
	}
	if got := emptyTreeRoot(); !bytes.Equal(got[:], testonly.EmptyRootHash()) {
		t.Errorf("empty root = %x", got)
	}
	ref := testonly.New(rfc6962.DefaultHasher)
	ref.AppendData(leaves...)
	for _, batch := range []int{1, 3, 8} {
		db, _ := tileDB(t, leaves, batch)
		err := db.View(func(tx *bolt.Tx) error {
			ts := tiles(tx, len(leaves))
			for lvl, row := range testonly.NodeHashes() {
				for i, want := range row {
					got, err := ts.nodeHash(compact.NewNodeID(uint(lvl), uint64(i)))
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("batch %d: node %d/%d = %x, %v; want %x", batch, lvl, i, got, err, want)
					}
				}
			}
			for size, want := range testonly.RootHashes() {
				got, err := ts.root(uint64(size))
				if err != nil || !bytes.Equal(got[:], want) {
					t.Errorf("batch %d: root(%d) = %x, %v; want %x", batch, size, got, err, want)
				}
			}
			checkProofs(t, ts, ref, uint64(len(leaves)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkProofs compares every inclusion and consistency proof up to size
// with the reference tree's, and verifies each with package proof.
func checkProofs(t *testing.T, ts tileStore, ref *testonly.Tree, size uint64) {
	t.Helper()
	for s := uint64(1); s <= size; s++ {
		root := ref.HashAt(s)
		for i := uint64(0); i < s; i++ {
			nodes, _ := proof.Inclusion(i, s)
			got, err := ts.proofHashes(nodes)
			want, _ := ref.InclusionProof(i, s)
			if err != nil || !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("inclusion %d in %d = %x, %v; want %x", i, s, got, err, want)
			}
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, s, ref.LeafHash(i), got, root); err != nil {
				t.Errorf("inclusion %d in %d: %v", i, s, err)
			}
		}
		for s1 := uint64(1); s1 <= s; s1++ {
			nodes, _ := proof.Consistency(s1, s)
			got, err := ts.proofHashes(nodes)
			want, _ := ref.ConsistencyProof(s1, s)
			if err != nil || !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("consistency %d to %d = %x, %v; want %x", s1, s, got, err, want)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, s1, s, got, ref.HashAt(s1), root); err != nil {
				t.Errorf("consistency %d to %d: %v", s1, s, err)
			}
		}
	}
}

// TestTree_TilesAcrossBoundaries grows a tree of 600 leaves in uneven
// batches (so tiles at levels 0 and 1 are rewritten at their edge and
// cross their boundaries) and checks each size's root and compact range
// against a compact.Range reference, and proofs at a few sizes.
func TestTree_TilesAcrossBoundaries(t *testing.T) {
	var leaves [][]byte
	for i := 0; i < 600; i++ {
		leaves = append(leaves, []byte{byte(i), byte(i >> 8), 'x'})
	}
	ref := testonly.New(rfc6962.DefaultHasher)
	ref.AppendData(leaves...)
	db, r := tileDB(t, leaves, 37)
	if got := rootOf(r.Hashes()); !bytes.Equal(got[:], ref.Hash()) {
		t.Fatalf("writer range root = %x, want %x", got, ref.Hash())
	}
	err := db.View(func(tx *bolt.Tx) error {
		ts := tiles(tx, len(leaves))
		want := treeFactory.NewEmptyRange(0)
		for s := uint64(1); s <= 600; s++ {
			lh := LeafHash(leaves[s-1])
			want.Append(lh[:], nil)
			hs, err := ts.rangeHashes(s)
			if err != nil || !slices.EqualFunc(hs, want.Hashes(), bytes.Equal) {
				t.Fatalf("range(%d) = %x, %v; want %x", s, hs, err, want.Hashes())
			}
		}
		// Stored tiles: level 0 holds 2 full tiles (its edge, 88 hashes,
		// is read from the entries); level 1 the 2 nodes at height 8.
		for _, tc := range []struct {
			lvl   uint8
			idx   uint64
			width int
		}{{0, 0, 256}, {0, 1, 256}, {0, 2, 0}, {1, 0, 2}} {
			if got := len(tx.Bucket(bucketTree).Get(tileKey(tc.lvl, tc.idx))); got != tc.width*hashSize {
				t.Errorf("tile %d/%d holds %d bytes, want %d", tc.lvl, tc.idx, got, tc.width*hashSize)
			}
		}
		if got := len(ts.tile(0, 2)); got != 88*hashSize {
			t.Errorf("edge tile 0/2 reads %d bytes, want %d", got, 88*hashSize)
		}
		if n := tx.Bucket(bucketTree).Stats().KeyN; n != 3 {
			t.Errorf("tree bucket holds %d tiles, want 3", n)
		}
		for _, s := range []uint64{1, 255, 256, 257, 511, 512, 513, 600} {
			for _, i := range []uint64{0, s / 2, s - 1} {
				nodes, _ := proof.Inclusion(i, s)
				got, err := ts.proofHashes(nodes)
				if err != nil {
					t.Fatal(err)
				}
				if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, s, ref.LeafHash(i), got, ref.HashAt(s)); err != nil {
					t.Errorf("inclusion %d in %d: %v", i, s, err)
				}
			}
			for _, s2 := range []uint64{s, s + 1, 600} {
				if s2 > 600 {
					continue
				}
				nodes, _ := proof.Consistency(s, s2)
				got, err := ts.proofHashes(nodes)
				if err != nil {
					t.Fatal(err)
				}
				if err := proof.VerifyConsistency(rfc6962.DefaultHasher, s, s2, got, ref.HashAt(s), ref.HashAt(s2)); err != nil {
					t.Errorf("consistency %d to %d: %v", s, s2, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTree_NodeHasher holds our node hash equal to rfc6962's.
func TestTree_NodeHasher(t *testing.T) {
	l, r := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	if got, want := treeHasher.HashChildren(l, r), rfc6962.DefaultHasher.HashChildren(l, r); !bytes.Equal(got, want) {
		t.Errorf("HashChildren = %x, want %x", got, want)
	}
}

// FuzzDecodeTreeRange: a manifest's tree_range is outside input; it
// decodes to at most 64 hashes of 32 bytes, or an error, and what
// decodes encodes back to the same text.
func FuzzDecodeTreeRange(f *testing.F) {
	f.Add("")
	f.Add("%%%")
	f.Add(EncodeTreeRange([][]byte{make([]byte, 32), bytes.Repeat([]byte{7}, 32)}))
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := decodeTreeRange(s)
		if err != nil {
			return
		}
		if len(hs) > 64 {
			t.Fatalf("%d hashes", len(hs))
		}
		for _, h := range hs {
			if len(h) != hashSize {
				t.Fatalf("a hash of %d bytes", len(h))
			}
		}
		if got := EncodeTreeRange(hs); got != s {
			t.Fatalf("decoded %q, encodes to %q", s, got)
		}
	})
}
