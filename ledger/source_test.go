package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// damaged returns copies of a fresh ledger, each damaged in a way an
// engine still opens (the stored head names the last entry).
func damaged(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	lt := ledgertest.New(t, filepath.Join(dir, "clean.db"), 40)
	out := map[string]string{"clean": lt.Path}
	out["flipped"] = ledgertest.Copy(t, lt.Path, filepath.Join(dir, "flipped.db"))
	ledgertest.FlipEntryByte(t, out["flipped"], 7, 20)
	out["missing-blob"] = ledgertest.Copy(t, lt.Path, filepath.Join(dir, "missing.db"))
	ledgertest.Edit(t, out["missing-blob"], func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Delete(lt.Blobs[2][:]) })
	out["corrupt-blob"] = ledgertest.Copy(t, lt.Path, filepath.Join(dir, "corrupt.db"))
	ledgertest.Edit(t, out["corrupt-blob"], func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("blobs")).Put(lt.Blobs[1][:], []byte("not a zstd frame"))
	})
	// A full level-0 tile is stored from 256 entries on.
	big := ledgertest.New(t, filepath.Join(t.TempDir(), "big.db"), 300)
	out["tile"] = ledgertest.Copy(t, big.Path, filepath.Join(dir, "tile.db"))
	ledgertest.Edit(t, out["tile"], func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("tree"))
		k, v := b.Cursor().First()
		mod := append([]byte(nil), v...)
		mod[40] ^= 1 // the second leaf hash of the first tile
		return b.Put(append([]byte(nil), k...), mod)
	})
	return out
}

func reportJSON(t *testing.T, r *ledger.Report) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVerifySource_SameAsVerify: the checks a client runs on entries
// and blobs streamed from an engine give the very report Verify gives on
// the file, clean or damaged, strict or not.
func TestVerifySource_SameAsVerify(t *testing.T) {
	for name, path := range damaged(t) {
		for _, strict := range []bool{false, true} {
			l, err := ledger.OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := ledger.VerifyOptions{Strict: strict}
			want, err := l.Verify(opts)
			if err != nil {
				t.Fatal(err)
			}
			h, err := l.Head()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ledger.VerifySource(l.LocalSource(h), opts)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			if reportJSON(t, got) != reportJSON(t, want) {
				t.Errorf("%s strict=%v:\nVerifySource %s\nVerify       %s", name, strict, reportJSON(t, got), reportJSON(t, want))
			}
			if (name == "clean") != want.OK {
				t.Errorf("%s: ok=%v", name, want.OK)
			}
		}
	}
}

// TestExportSource_SameFiles: an export through a Source writes the same
// files, byte for byte, as ExportFile, and refuses the same damage.
func TestExportSource_SameFiles(t *testing.T) {
	for name, path := range damaged(t) {
		for _, tc := range []struct{ file, session string }{{"full.jsonl", ""}, {"full.jsonl.zst", ""}, {"s2.jsonl", "s2"}, {"none.jsonl", "nosuch"}} {
			l, err := ledger.OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := l.Head()
			if err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(t.TempDir(), tc.file), filepath.Join(t.TempDir(), tc.file)
			m1, err1 := l.ExportFile(a, ledger.ExportOptions{Session: tc.session})
			m2, err2 := ledger.ExportSourceFile(l.LocalSource(h), b, ledger.ExportOptions{Session: tc.session})
			l.Close()
			if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
				t.Errorf("%s %s: ExportFile %v, ExportSourceFile %v", name, tc.file, err1, err2)
				continue
			}
			if err1 != nil {
				continue
			}
			j1, _ := json.Marshal(m1)
			j2, _ := json.Marshal(m2)
			if !bytes.Equal(j1, j2) {
				t.Errorf("%s %s: manifests differ:\n%s\n%s", name, tc.file, j1, j2)
			}
			sameTree(t, filepath.Dir(a), filepath.Dir(b))
		}
	}
}

// sameTree fails unless directories a and b hold the same files with the
// same bytes.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(a, p)
			files[rel], _ = os.ReadFile(p)
		}
		return nil
	})
	n := 0
	filepath.WalkDir(b, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
			rel, _ := filepath.Rel(b, p)
			got, _ := os.ReadFile(p)
			if want, ok := files[rel]; !ok || !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s", p, filepath.Join(a, rel))
			}
		}
		return nil
	})
	if n != len(files) || n == 0 {
		t.Errorf("%s holds %d files, %s %d", b, n, a, len(files))
	}
}

// TestVerifySource_PrunedWhileReading: a blob retention removes after the
// head a reader fixed (while it reads) is not reported missing by verify:
// the entries after the head, chained onto it, say it was pruned. Export
// says to run again rather than write a bundle without it.
func TestVerifySource_PrunedWhileReading(t *testing.T) {
	lt := ledgertest.New(t, filepath.Join(t.TempDir(), "ledger.db"), 12)
	l, err := ledger.Open(lt.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	head, _ := l.Head()
	rec := ledger.Record{Type: ledger.TypePruned, Data: map[string]any{"blobs": []string{lt.Blobs[0].String()}}}
	if _, err := l.PruneBlobs(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.VerifySource(l.LocalSource(head), ledger.VerifyOptions{})
	if err != nil || !rep.OK || rep.HeadSeq != head.Seq {
		t.Fatalf("verify at the head before the prune: %v %s", err, reportJSON(t, rep))
	}
	_, err = ledger.ExportSourceFile(l.LocalSource(head), filepath.Join(t.TempDir(), "x.jsonl"), ledger.ExportOptions{})
	if err == nil || !strings.Contains(err.Error(), "was pruned while exporting") || errors.Is(err, ledger.ErrIntegrity) {
		t.Errorf("export at the head before the prune: %v", err)
	}
}

// TestVerifySource_GrownSinceHead: tiles read after the ledger grew past
// the head a reader fixed are taken as the tree of that head has them
// (an edge tile then is full now, or a level-0 one stored now): the
// verify of that head is clean.
func TestVerifySource_GrownSinceHead(t *testing.T) {
	lt := ledgertest.New(t, filepath.Join(t.TempDir(), "ledger.db"), 300)
	l, err := ledger.Open(lt.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	head, _ := l.Head()
	for i := 0; i < 300; i++ {
		if _, err := l.Append(context.Background(), ledger.Async, ledger.Record{Type: ledger.TypeNote, Data: map[string]any{"author": "t", "text": "more"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.VerifySource(l.LocalSource(head), ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK || rep.HeadSeq != head.Seq {
		t.Fatalf("verify at the head before 300 more entries: %v %s", err, reportJSON(t, rep))
	}
}
