package ledger_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// readLines returns an export's lines (decompressed), without newlines.
func readLines(t *testing.T, path string) [][]byte {
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

func TestExportImport_RoundTrip(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 40)
	l, err := ledger.OpenReadOnly(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, name := range []string{"full.jsonl", "full.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, name)
			m, err := l.ExportFile(out, ledger.ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m.FromSeq != 0 || m.ToSeq != 40 || m.Entries != 41 || m.LastHash != src.Head.Hash.String() || m.Blobs != len(src.Blobs) {
				t.Errorf("manifest %+v", m)
			}
			// The export holds the stored bytes verbatim.
			lines := readLines(t, out)
			if len(lines) != 41 {
				t.Fatalf("%d lines", len(lines))
			}
			for i, line := range lines {
				e, err := l.Get(uint64(i))
				if err != nil || !bytes.Equal(e.Raw, line) {
					t.Fatalf("line %d differs from the stored entry", i)
				}
			}
			for _, h := range src.Blobs {
				if _, err := os.Stat(filepath.Join(ledger.BundlePath(out), h.String()+".zst")); err != nil {
					t.Errorf("bundle lacks blob %s", h)
				}
			}
			rep, _, err := ledger.VerifyExport(out, ledger.VerifyOptions{Strict: true})
			if err != nil || !rep.OK {
				t.Fatalf("VerifyExport: %v %v", err, rep.Err())
			}
			dst := filepath.Join(dir, "imported.db")
			if _, err := ledger.Import(out, dst, ledger.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			ledgertest.MustVerify(t, dst)
			il, err := ledger.OpenReadOnly(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer il.Close()
			if h, _ := il.Head(); h != src.Head {
				t.Errorf("imported head %+v, want %+v", h, src.Head)
			}
			for _, h := range src.Blobs {
				if _, err := il.GetBlob(h); err != nil {
					t.Errorf("imported blob %s: %v", h, err)
				}
			}
			// An export never overwrites, an import never replaces.
			if _, err := l.ExportFile(out, ledger.ExportOptions{}); err == nil {
				t.Error("ExportFile overwrote an existing file")
			}
			if _, err := ledger.Import(out, dst, ledger.ImportOptions{}); !errors.Is(err, ledger.ErrExists) {
				t.Errorf("Import onto an existing ledger = %v, want ErrExists", err)
			}
		})
	}
}

func TestExport_SessionSegment(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 30)
	l, _ := ledger.OpenReadOnly(src.Path)
	defer l.Close()
	out := filepath.Join(t.TempDir(), "s2.jsonl")
	m, err := l.ExportFile(out, ledger.ExportOptions{Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	// Sessions cycle s1, s2, "": s2 has entries 2, 5, ..., 29.
	prev, _ := l.Get(1)
	if m.Session != "s2" || m.FromSeq != 2 || m.ToSeq != 29 || m.Prev != prev.Hash().String() {
		t.Errorf("manifest %+v", m)
	}
	rep, got, err := ledger.VerifyExport(out, ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK || got == nil || got.FromSeq != 2 {
		t.Fatalf("VerifyExport: %v %v %+v", err, rep.Err(), got)
	}
	dst := filepath.Join(t.TempDir(), "x.db")
	if _, err := ledger.Import(out, dst, ledger.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "segment") {
		t.Errorf("Import of a segment = %v, want a refusal", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Error("a refused import left a file")
	}
}

// TestImport_RefusesBrokenStreams damages an export in each way the
// fixtures do and checks the import refuses with the right finding and
// leaves nothing behind.
func TestImport_RefusesBrokenStreams(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 20)
	l, _ := ledger.OpenReadOnly(src.Path)
	good := filepath.Join(t.TempDir(), "good.jsonl")
	if _, err := l.ExportFile(good, ledger.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	lines := readLines(t, good)
	join := func(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	blob := src.Blobs[0].String() + ".zst" // named by entry 4
	tests := []struct {
		name   string
		stream []byte
		bundle func(dir string)
		want   finding
	}{
		{"flipped byte", join(func() [][]byte {
			c := bytes.Clone(join(lines))
			i := bytes.Index(c, []byte("entry number 7")) + len("entry number ")
			c[i] = '8'
			return bytes.Split(bytes.TrimSuffix(c, []byte("\n")), []byte("\n"))
		}()), nil, finding{8, ledger.KindHashMismatch}},
		{"missing entry", join(append(append([][]byte{}, lines[:7]...), lines[8:]...)), nil, finding{7, ledger.KindGap}},
		{"swapped entries", join(append(append(append([][]byte{}, lines[:7]...), lines[8], lines[7]), lines[9:]...)), nil, finding{7, ledger.KindGap}},
		{"truncated mid-line", join(lines)[:len(join(lines))-30], nil, finding{20, ledger.KindUnreadable}},
		{"cut at a line boundary", join(lines[:18]), nil, finding{17, ledger.KindHeadMismatch}},
		{"trailing garbage", append(join(lines), "garbage\n"...), nil, finding{21, ledger.KindUnreadable}},
		{"not canonical", join(append(append([][]byte{}, lines[:20]...), bytes.Replace(lines[20], []byte(`"seq":20`), []byte(`"seq": 20`), 1))), nil, finding{20, ledger.KindNotCanonical}},
		{"blob missing", join(lines), func(dir string) { os.Remove(filepath.Join(dir, blob)) }, finding{4, ledger.KindMissingBlob}},
		{"blob corrupt", join(lines), func(dir string) {
			enc, _ := zstd.NewWriter(nil)
			os.WriteFile(filepath.Join(dir, blob), enc.EncodeAll([]byte("forged"), nil), 0o600)
		}, finding{4, ledger.KindBlobCorrupt}},
		{"empty", nil, nil, finding{0, ledger.KindUnreadable}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", i))
			os.WriteFile(in, tt.stream, 0o600)
			copyDir(t, ledger.BundlePath(good), ledger.BundlePath(in))
			if tt.bundle != nil {
				tt.bundle(ledger.BundlePath(in))
			}
			outDir := t.TempDir()
			rep, err := ledger.Import(in, filepath.Join(outDir, "ledger.db"), ledger.ImportOptions{})
			if !errors.Is(err, ledger.ErrIntegrity) {
				t.Fatalf("Import = %v, want ErrIntegrity", err)
			}
			found := false
			for _, f := range findings(rep) {
				found = found || f == tt.want
			}
			if !found {
				t.Errorf("findings %v lack %v", findings(rep), tt.want)
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Errorf("refused import left %v behind", left)
			}
		})
	}
}

// TestExport_RefusesBrokenLedger: a damaged ledger is not exported, and
// no partial file is left.
func TestExport_RefusesBrokenLedger(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 20)
	path := ledgertest.Copy(t, src.Path, filepath.Join(t.TempDir(), "bad.db"))
	ledgertest.FlipEntryByte(t, path, 9)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	if _, err := l.ExportFile(filepath.Join(dir, "x.jsonl.zst"), ledger.ExportOptions{}); !errors.Is(err, ledger.ErrIntegrity) {
		t.Errorf("ExportFile = %v, want ErrIntegrity", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused export left %v behind", left)
	}
}

// TestPruned_BlobsVerify: blobs listed by an earlier chronicle.pruned
// entry may be missing; any other missing blob is a finding.
func TestPruned_BlobsVerify(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	a, b := []byte("snapshot a"), []byte("snapshot b")
	ha, hb := ledger.Sum(a), ledger.Sum(b)
	rec := func(h ledger.Hash, c []byte) ledger.Record {
		return ledger.Record{Type: "chronicle.snapshot", Data: map[string]any{"blob": h.String()}, Blobs: [][]byte{c}}
	}
	if _, err := l.Append(ctx, ledger.Sync, rec(ha, a), rec(hb, b)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PruneBlobs(ctx, ledger.Record{Type: ledger.TypePruned, Data: map[string]any{"blobs": []string{ha.String()}, "reason": "test"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK {
		t.Fatalf("verify after prune: %v %v", err, rep.Err())
	}
	out := filepath.Join(t.TempDir(), "p.jsonl")
	if _, err := l.ExportFile(out, ledger.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep, _, err := ledger.VerifyExport(out, ledger.VerifyOptions{Strict: true}); err != nil || !rep.OK {
		t.Errorf("export with a pruned blob: %v %v", err, rep.Err())
	}
	os.Remove(filepath.Join(ledger.BundlePath(out), hb.String()+".zst"))
	rep, _, _ = ledger.VerifyExport(out, ledger.VerifyOptions{})
	if fmt.Sprint(findings(rep)) != fmt.Sprint([]finding{{2, ledger.KindMissingBlob}}) {
		t.Errorf("unpruned blob removed: findings %v, want missing-blob at 2", findings(rep))
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
