package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// TestExport_RefusesBrokenLedger: no damage of any kind gets exported,
// and a refused export leaves nothing behind.
func TestExport_RefusesBrokenLedger(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 24)
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	tests := []struct {
		name    string
		edit    func(tx *bolt.Tx) error
		session string
		want    finding
	}{
		{"flipped byte", func(tx *bolt.Tx) error { return rewrite(tx, 9, changeText) }, "", finding{10, ledger.KindHashMismatch}},
		{"flipped byte in a session", func(tx *bolt.Tx) error { return rewrite(tx, 9, changeText) }, "s1", finding{10, ledger.KindHashMismatch}},
		{"entry deleted", func(tx *bolt.Tx) error { return entriesBucket(tx).Delete(key(9)) }, "", finding{9, ledger.KindGap}},
		{"garbage entry", func(tx *bolt.Tx) error { return entriesBucket(tx).Put(key(9), []byte("x")) }, "", finding{9, ledger.KindUnreadable}},
		{"head seq rewound", putMeta("head_seq", "20"), "", finding{20, ledger.KindHeadMismatch}},
		{"head seq rewound, session", putMeta("head_seq", "20"), "s1", finding{20, ledger.KindHeadMismatch}},
		{"head hash edited", putMeta("head_hash", strings.Repeat("ab", 32)), "", finding{24, ledger.KindHeadMismatch}},
		{"entry behind the head's back", func(tx *bolt.Tx) error {
			return entriesBucket(tx).Put(key(25), append([]byte(nil), entriesBucket(tx).Get(key(24))...))
		}, "", finding{24, ledger.KindHeadMismatch}},
		{"blob missing, never pruned", func(tx *bolt.Tx) error { return blobsBucket(tx).Delete(src.Blobs[0][:]) }, "", finding{4, ledger.KindMissingBlob}},
		{"blob missing, session", func(tx *bolt.Tx) error { return blobsBucket(tx).Delete(src.Blobs[0][:]) }, "s1", finding{4, ledger.KindMissingBlob}},
		{"blob corrupt", func(tx *bolt.Tx) error {
			return blobsBucket(tx).Put(src.Blobs[1][:], enc.EncodeAll([]byte("forged"), nil))
		}, "", finding{8, ledger.KindBlobCorrupt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ledgertest.Copy(t, src.Path, filepath.Join(t.TempDir(), "bad.db"))
			ledgertest.Edit(t, path, tt.edit)
			l, err := ledger.OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			for _, name := range []string{"x.jsonl", "x.jsonl.zst"} {
				dir := t.TempDir()
				_, err := l.ExportFile(filepath.Join(dir, name), ledger.ExportOptions{Session: tt.session})
				var ie *ledger.IntegrityError
				if !errors.Is(err, ledger.ErrIntegrity) || !errors.As(err, &ie) || (finding{ie.Seq, ie.Kind}) != tt.want {
					t.Errorf("%s: ExportFile = %v, want %v", name, err, tt.want)
				}
				if got := dirNames(t, dir); len(got) != 0 {
					t.Errorf("%s: refused export left %v", name, got)
				}
			}
		})
	}
}

// TestImport_RefusesBrokenStreams damages an export in every way a stream,
// its manifest or its bundle can be damaged and checks that Import (whose
// report is VerifyExport's, strict) reports exactly that and leaves
// nothing at the destination. Damage to the stream is also tried through
// zstd where the decompressor could matter (cut, extended, empty).
func TestImport_RefusesBrokenStreams(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 20)
	l, _ := ledger.OpenReadOnly(src.Path)
	good := filepath.Join(t.TempDir(), "good.jsonl")
	if _, err := l.ExportFile(good, ledger.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	lines := readLines(t, good)
	join := func(ls ...[]byte) []byte {
		var b bytes.Buffer
		for _, l := range ls {
			b.Write(l)
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	with := func(i int, line []byte) [][]byte {
		out := append([][]byte{}, lines...)
		out[i] = line
		return out
	}
	manifest := func(field string, value any) func(dir string) {
		return func(dir string) {
			p := filepath.Join(dir, ledger.ManifestName)
			b, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(b, &m)
			m[field] = value
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o600)
		}
	}
	hm, sm, nc, head, unr, gap := ledger.KindHashMismatch, ledger.KindSeqMismatch, ledger.KindNotCanonical, ledger.KindHeadMismatch, ledger.KindUnreadable, ledger.KindGap
	tests := []struct {
		name   string
		stream []byte
		bundle func(dir string)
		want   []finding
	}{
		{"flipped byte", join(with(7, bytes.Replace(lines[7], []byte("entry number 7"), []byte("entry number 8"), 1))...), nil, []finding{{8, hm}}},
		{"missing line", join(append(append([][]byte{}, lines[:7]...), lines[8:]...)...), nil, []finding{{7, gap}}},
		{"swapped lines", join(append(append(append([][]byte{}, lines[:7]...), lines[8], lines[7]), lines[9:]...)...), nil, []finding{{7, gap}, {7, sm}, {8, gap}}},
		{"duplicated line", join(append(append(append([][]byte{}, lines[:10]...), lines[9]), lines[10:]...)...), nil, []finding{{9, sm}}},
		{"line ends in CRLF", join(with(5, append(append([]byte(nil), lines[5]...), '\r'))...), nil, []finding{{5, unr}, {6, hm}}},
		{"blank line", join(append(append(append([][]byte{}, lines[:10]...), []byte{}), lines[10:]...)...), nil, []finding{{10, sm}, {10, unr}}},
		{"first line missing", join(lines[1:]...), nil, []finding{{0, gap}}},
		{"last line re-serialised", join(with(20, respace(append([]byte(nil), lines[20]...)))...), nil, []finding{{20, head}, {20, nc}}},
		{"manifest last hash", join(lines...), manifest("last_hash", strings.Repeat("ab", 32)), []finding{{20, head}}},
		{"manifest to_seq", join(lines...), manifest("to_seq", 21), []finding{{20, head}}},
		{"manifest prev", join(lines...), manifest("prev", strings.Repeat("ab", 32)), []finding{{0, hm}}},
		{"cut at a line boundary", join(lines[:15]...), nil, []finding{{14, head}}},
		{"cut mid-line", join(lines...)[:len(join(lines...))-10], nil, []finding{{20, head}, {20, unr}}},
		{"trailing garbage", append(join(lines...), "{}"...), nil, []finding{{21, head}, {21, unr}}},
		{"trailing garbage line", append(join(lines...), "garbage\n"...), nil, []finding{{21, head}, {21, unr}}},
		{"empty", nil, nil, []finding{{0, unr}}},
		{"blob file missing", join(lines...), func(dir string) { os.Remove(filepath.Join(dir, src.Blobs[0].String()+".zst")) },
			[]finding{{4, ledger.KindMissingBlob}}},
		{"blob file not zstd", join(lines...), func(dir string) {
			os.WriteFile(filepath.Join(dir, src.Blobs[2].String()+".zst"), []byte("plain"), 0o600)
		},
			[]finding{{12, ledger.KindBlobCorrupt}}},
		{"blob file swapped", join(lines...), func(dir string) {
			a, b := filepath.Join(dir, src.Blobs[0].String()+".zst"), filepath.Join(dir, src.Blobs[1].String()+".zst")
			ab, _ := os.ReadFile(a)
			bb, _ := os.ReadFile(b)
			os.WriteFile(a, bb, 0o600)
			os.WriteFile(b, ab, 0o600)
		}, []finding{{4, ledger.KindBlobCorrupt}, {8, ledger.KindBlobCorrupt}}},
	}
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	alsoZst := map[string]bool{"flipped byte": true, "cut at a line boundary": true, "cut mid-line": true, "trailing garbage": true, "empty": true}
	for _, tt := range tests {
		for _, compressed := range []bool{false, true} {
			if compressed && !alsoZst[tt.name] {
				continue
			}
			name := tt.name
			in := filepath.Join(t.TempDir(), "in.jsonl")
			stream := tt.stream
			if compressed {
				name += " (zst)"
				in += ".zst"
				stream = enc.EncodeAll(stream, nil)
			}
			t.Run(name, func(t *testing.T) {
				os.WriteFile(in, stream, 0o600)
				copyDir(t, ledger.BundlePath(good), ledger.BundlePath(in))
				if tt.bundle != nil {
					tt.bundle(ledger.BundlePath(in))
				}
				outDir := t.TempDir()
				rep, err := ledger.Import(in, filepath.Join(outDir, "ledger.db"), ledger.ImportOptions{})
				if !errors.Is(err, ledger.ErrIntegrity) || rep == nil || fmt.Sprint(findings(rep)) != fmt.Sprint(tt.want) {
					t.Errorf("Import = %v, findings %v, want ErrIntegrity and %v", err, findings(rep), tt.want)
				}
				if got := dirNames(t, outDir); len(got) != 0 {
					t.Errorf("refused import left %v", got)
				}
			})
		}
	}
	// A damaged compressed file (the frame checksum fails) and a manifest
	// that does not parse are refused too.
	zin := filepath.Join(t.TempDir(), "z.jsonl.zst")
	z := enc.EncodeAll(join(lines...), nil)
	z[len(z)/2] ^= 0xff
	os.WriteFile(zin, z, 0o600)
	copyDir(t, ledger.BundlePath(good), ledger.BundlePath(zin))
	outDir := t.TempDir()
	if rep, err := ledger.Import(zin, filepath.Join(outDir, "ledger.db"), ledger.ImportOptions{}); !errors.Is(err, ledger.ErrIntegrity) || rep == nil || rep.OK {
		t.Errorf("Import of a damaged zstd file = %v", err)
	}
	mfile := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(mfile, join(lines...), 0o600)
	copyDir(t, ledger.BundlePath(good), ledger.BundlePath(mfile))
	os.WriteFile(filepath.Join(ledger.BundlePath(mfile), ledger.ManifestName), []byte("{"), 0o600)
	if _, err := ledger.Import(mfile, filepath.Join(outDir, "ledger.db"), ledger.ImportOptions{}); err == nil {
		t.Error("Import with a broken manifest succeeded")
	}
	if got := dirNames(t, outDir); len(got) != 0 {
		t.Errorf("refused imports left %v", got)
	}
}
