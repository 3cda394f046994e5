package ledger_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// readLines returns an export's lines (decompressed), without newlines.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".zst") {
		d, _ := zstd.NewReader(nil)
		if b, err = d.DecodeAll(b, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, ledger.MaxLineSize)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// dumpBuckets returns every key and value of the ledger's three buckets,
// read with bbolt directly.
func dumpBuckets(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string]string{}
			out[string(name)] = m
			return b.ForEach(func(k, v []byte) error { m[string(k)] = string(v); return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dirNames lists a directory, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestExportImport_RoundTrip: an export (plain and zstd) holds the stored
// entries verbatim and the stored blob frames byte for byte; importing it
// gives back the same bbolt buckets, key for key and byte for byte, and a
// ledger that takes appends. Neither leaves a temporary file behind, both
// report progress up to the total, and neither replaces a file.
func TestExportImport_RoundTrip(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 30)
	l, err := ledger.OpenReadOnly(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := dumpBuckets(t, src.Path)
	for _, name := range []string{"x.jsonl", "x.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, name)
			var exportProgress [][2]uint64
			if _, err := l.ExportFile(out, ledger.ExportOptions{Progress: func(d, n uint64) { exportProgress = append(exportProgress, [2]uint64{d, n}) }}); err != nil {
				t.Fatal(err)
			}
			if last := exportProgress[len(exportProgress)-1]; last != [2]uint64{31, 31} {
				t.Errorf("last export progress %v, want [31 31]", last)
			}
			if got, want := dirNames(t, dir), []string{"x.blobs", name}; !reflect.DeepEqual(got, want) {
				t.Errorf("export directory holds %v, want %v (no temporary files)", got, want)
			}
			var blobFiles []string
			for _, h := range src.Blobs {
				blobFiles = append(blobFiles, h.String()+".zst")
			}
			sort.Strings(blobFiles)
			if got := dirNames(t, ledger.BundlePath(out)); !reflect.DeepEqual(got, append(blobFiles, ledger.ManifestName)) {
				t.Errorf("bundle holds %v", got)
			}
			// Each bundle file is the stored frame, byte for byte.
			for _, h := range src.Blobs {
				b, _ := os.ReadFile(filepath.Join(ledger.BundlePath(out), h.String()+".zst"))
				if string(b) != want["blobs"][string(h[:])] {
					t.Errorf("bundle blob %s differs from the stored frame", h)
				}
			}
			lines := readLines(t, out)
			if len(lines) != 31 {
				t.Fatalf("%d lines, want 31", len(lines))
			}
			for i, line := range lines {
				if string(line) != want["entries"][string(key(uint64(i)))] {
					t.Errorf("line %d differs from the stored entry", i)
				}
			}
			dst := filepath.Join(dir, "sub", "imported.db")
			var importDone uint64
			rep, err := ledger.Import(out, dst, ledger.ImportOptions{Progress: func(d, n uint64) { importDone = d }})
			if err != nil || !rep.OK || rep.Entries != 31 || rep.HeadHash != src.Head.Hash.String() {
				t.Fatalf("Import = %v, %+v", err, rep)
			}
			if importDone != 31 {
				t.Errorf("import progress ended at %d, want 31", importDone)
			}
			if got := dumpBuckets(t, dst); !reflect.DeepEqual(got, want) {
				t.Errorf("imported buckets differ from the source's")
			}
			if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("imported file mode %v, %v", fi.Mode().Perm(), err)
			}
			if got := dirNames(t, filepath.Dir(dst)); !reflect.DeepEqual(got, []string{"imported.db"}) {
				t.Errorf("import directory holds %v", got)
			}
			if _, err := ledger.Import(out, dst, ledger.ImportOptions{}); !errors.Is(err, ledger.ErrExists) {
				t.Errorf("Import onto an existing ledger = %v, want ErrExists", err)
			}
			ledgertest.MustVerify(t, dst)
			// The imported ledger takes appends, continuing the chain.
			il, err := ledger.Open(dst, ledger.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if a, err := il.Append(context.Background(), ledger.Sync, note(31)); err != nil || a[0].Seq != 31 {
				t.Errorf("append to the imported ledger: %v %v", a, err)
			}
			il.Close()
			ledgertest.MustVerify(t, dst)
		})
	}
}

func TestExport_Manifests(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 12)
	l, err := ledger.OpenReadOnly(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hash := func(seq uint64) string { e, _ := l.Get(seq); return e.Hash().String() }
	// A segment names the tree's compact range at its start.
	treeRange := func(seq uint64) string {
		hs, err := l.RangeHashesAt(seq)
		if err != nil {
			t.Fatal(err)
		}
		return ledger.EncodeTreeRange(hs)
	}
	zeros := strings.Repeat("0", 64)
	// Sessions cycle s1, s2, "": s1 holds entries 1, 4, 7 and 10; its
	// segment runs from 1 to 10 and names the blobs of entries 4 and 8.
	tests := []struct {
		session string
		want    ledger.Manifest
		keys    string
	}{
		{"", ledger.Manifest{Format: ledger.Format, LedgerID: src.Head.LedgerID, FromSeq: 0, ToSeq: 12, Entries: 13, Prev: zeros,
			LastHash: src.Head.Hash.String(), HeadSeq: 12, HeadHash: src.Head.Hash.String(), Blobs: 3},
			"blobs entries format from_seq head_hash head_seq last_hash ledger_id prev to_seq"},
		{"s1", ledger.Manifest{Format: ledger.Format, LedgerID: src.Head.LedgerID, Session: "s1", FromSeq: 1, ToSeq: 10, Entries: 10, Prev: hash(0),
			LastHash: hash(10), HeadSeq: 12, HeadHash: src.Head.Hash.String(), Blobs: 2, TreeRange: treeRange(1)},
			"blobs entries format from_seq head_hash head_seq last_hash ledger_id prev session to_seq tree_range"},
		{"s2", ledger.Manifest{Format: ledger.Format, LedgerID: src.Head.LedgerID, Session: "s2", FromSeq: 2, ToSeq: 11, Entries: 10, Prev: hash(1),
			LastHash: hash(11), HeadSeq: 12, HeadHash: src.Head.Hash.String(), Blobs: 2, TreeRange: treeRange(2)},
			"blobs entries format from_seq head_hash head_seq last_hash ledger_id prev session to_seq tree_range"},
	}
	for _, tt := range tests {
		t.Run("session "+tt.session, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "x.jsonl.zst")
			m, err := l.ExportFile(out, ledger.ExportOptions{Session: tt.session})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*m, tt.want) {
				t.Errorf("manifest\n%+v\nwant\n%+v", *m, tt.want)
			}
			b, err := os.ReadFile(filepath.Join(ledger.BundlePath(out), ledger.ManifestName))
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			json.Unmarshal(b, &raw)
			var keys []string
			for k := range raw {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if strings.Join(keys, " ") != tt.keys {
				t.Errorf("manifest.json keys %v, want %s", keys, tt.keys)
			}
			onDisk, err := ledger.ReadManifest(out)
			if err != nil || !reflect.DeepEqual(*onDisk, tt.want) {
				t.Errorf("ReadManifest = %+v, %v", onDisk, err)
			}
			lines := readLines(t, out)
			if uint64(len(lines)) != tt.want.Entries {
				t.Errorf("%d lines, want %d", len(lines), tt.want.Entries)
			}
			rep, vm, err := ledger.VerifyExport(out, ledger.VerifyOptions{Strict: true})
			if err != nil || !rep.OK || !reflect.DeepEqual(*vm, tt.want) || rep.HeadSeq != tt.want.ToSeq || rep.HeadHash != tt.want.LastHash {
				t.Errorf("VerifyExport = %+v, %v", rep, err)
			}
			dst := filepath.Join(dir, "new", "ledger.db")
			_, err = ledger.Import(out, dst, ledger.ImportOptions{})
			if tt.session == "" {
				if err != nil {
					t.Errorf("Import of the full export: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "segment") {
				t.Errorf("Import of a segment = %v, want a refusal", err)
			}
			if _, err := os.Stat(filepath.Dir(dst)); !os.IsNotExist(err) {
				t.Error("a refused import created the destination directory")
			}
		})
	}
	dir := t.TempDir()
	if _, err := l.ExportFile(filepath.Join(dir, "none.jsonl"), ledger.ExportOptions{Session: "nope"}); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("export of an unknown session = %v, want ErrNotFound", err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("a refused export left %v", got)
	}
}

func TestExportFile_NeverOverwrites(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 4)
	l, _ := ledger.OpenReadOnly(src.Path)
	defer l.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.jsonl")
	os.WriteFile(file, []byte("keep me"), 0o600)
	bundleOnly := filepath.Join(dir, "b.jsonl.zst")
	os.Mkdir(ledger.BundlePath(bundleOnly), 0o700)
	os.WriteFile(filepath.Join(ledger.BundlePath(bundleOnly), "note"), []byte("keep me too"), 0o600)
	for _, p := range []string{file, bundleOnly} {
		if _, err := l.ExportFile(p, ledger.ExportOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("ExportFile(%s) = %v, want a refusal", filepath.Base(p), err)
		}
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{"a.jsonl", "b.blobs"}) {
		t.Errorf("directory holds %v after refusals", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Error("an existing export file was changed")
	}
	if got := dirNames(t, ledger.BundlePath(bundleOnly)); !reflect.DeepEqual(got, []string{"note"}) {
		t.Errorf("existing bundle holds %v", got)
	}
	if _, err := l.ExportFile(filepath.Join(dir, "missing", "x.jsonl"), ledger.ExportOptions{}); err == nil {
		t.Error("export into a missing directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Error("export created a directory")
	}
}

// TestExport_PrunedBlobs: a blob deleted after a chronicle.pruned entry
// listed it (here appended directly and the blob removed by editing the
// file, as a crash-free prune would) verifies, exports and imports; a
// blob missing without such an entry is a missing-blob finding, and such
// a ledger is not exported.
func TestExport_PrunedBlobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b := []byte("pre-state a"), []byte("pre-state b")
	ha, hb := ledger.Sum(a), ledger.Sum(b)
	snap := func(h ledger.Hash, c []byte) ledger.Record {
		return ledger.Record{Session: "s", Type: "chronicle.snapshot", Data: map[string]any{"files": []any{map[string]any{"path": "f", "pre_blob": h.String()}}}, Blobs: [][]byte{c}}
	}
	if _, err := l.Append(ctx, ledger.Sync, snap(ha, a), snap(hb, b),
		ledger.Record{Type: ledger.TypePruned, Data: map[string]any{"blobs": []string{ha.String()}, "reason": "retention"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	blobs := func(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("blobs")) }

	// The listed blob still there (a prune that crashed before deleting)
	// and gone: both verify, export and import.
	gone := ledgertest.Copy(t, path, filepath.Join(t.TempDir(), "gone.db"))
	ledgertest.Edit(t, gone, func(tx *bolt.Tx) error { return blobs(tx).Delete(ha[:]) })
	for name, p := range map[string]string{"still stored": path, "deleted": gone} {
		t.Run(name, func(t *testing.T) {
			ledgertest.MustVerify(t, p)
			l, err := ledger.OpenReadOnly(p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			out := filepath.Join(t.TempDir(), "x.jsonl.zst")
			m, err := l.ExportFile(out, ledger.ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantBlobs := map[string]int{"still stored": 2, "deleted": 1}[name]
			if m.Blobs != wantBlobs {
				t.Errorf("manifest blobs %d, want %d", m.Blobs, wantBlobs)
			}
			dst := filepath.Join(t.TempDir(), "imported.db")
			if _, err := ledger.Import(out, dst, ledger.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			ledgertest.MustVerify(t, dst)
			il, _ := ledger.OpenReadOnly(dst)
			defer il.Close()
			if _, err := il.GetBlob(hb); err != nil {
				t.Errorf("unpruned blob after import: %v", err)
			}
			if _, err := il.GetBlob(ha); (name == "deleted") != errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("pruned blob after import: %v", err)
			}
			// The unpruned blob taken out of the bundle: a finding.
			os.Remove(filepath.Join(ledger.BundlePath(out), hb.String()+".zst"))
			rep, _, err := ledger.VerifyExport(out, ledger.VerifyOptions{})
			if err != nil || fmt.Sprint(findings(rep)) != fmt.Sprint([]finding{{2, ledger.KindMissingBlob}}) {
				t.Errorf("unpruned blob removed from the bundle: %v, findings %v, want missing-blob at 2", err, findings(rep))
			}
		})
	}

	// The unlisted blob gone: a finding, and no export.
	bad := ledgertest.Copy(t, gone, filepath.Join(t.TempDir(), "bad.db"))
	ledgertest.Edit(t, bad, func(tx *bolt.Tx) error { return blobs(tx).Delete(hb[:]) })
	bl, err := ledger.OpenReadOnly(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Close()
	rep, err := bl.Verify(ledger.VerifyOptions{Strict: true})
	if err != nil || fmt.Sprint(findings(rep)) != fmt.Sprint([]finding{{2, ledger.KindMissingBlob}}) {
		t.Errorf("verify: %v, findings %v, want missing-blob at 2", err, findings(rep))
	}
	dir := t.TempDir()
	if _, err := bl.ExportFile(filepath.Join(dir, "x.jsonl"), ledger.ExportOptions{}); !errors.Is(err, ledger.ErrIntegrity) {
		t.Errorf("export with an unpruned blob missing = %v, want ErrIntegrity", err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("refused export left %v", got)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(to, 0o700)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o600)
	}
}
