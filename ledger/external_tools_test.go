package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
)

// needTools skips when a tool is missing, except under CI=true, where the
// project's .ci/run installs them and a missing one is a failure.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("%s is not installed; .ci/run installs it", tool)
		}
	}
}

// verifyWithoutOpx runs testdata/verify-export.sh (zstd, jq and b3sum
// only) on an export and returns its combined output.
func verifyWithoutOpx(t *testing.T, export string) (string, error) {
	t.Helper()
	script, err := filepath.Abs("testdata/verify-export.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", script, export).CombinedOutput()
	return string(out), err
}

// TestExport_VerifiesWithoutOpx builds a small ledger with a non-ASCII,
// escaped payload and a pruned blob, checks that its exports (.jsonl.zst,
// .jsonl and a session segment) pass the outside check
// (testdata/verify-export.sh: zstd, jq and b3sum only), then damages
// copies of the export in every way the chain and the bundle can be
// damaged and checks the outside check fails, saying why.
func TestExport_VerifiesWithoutOpx(t *testing.T) {
	needTools(t, "bash", "zstd", "jq", "b3sum")
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kept, pruned := []byte("kept content\x00\xff"), []byte("pruned content")
	hk, hp := ledger.Sum(kept), ledger.Sum(pruned)
	recs := []ledger.Record{
		{Session: "s", Type: "ledger.note", Data: map[string]any{"author": "t", "text": "caf\u00e9 \U0001F600 \"q\" \\ / \x01\n"}},
		{Session: "s", Type: "chronicle.snapshot", Data: map[string]any{"files": []any{map[string]any{"path": "a", "pre_blob": hk.String()}}}, Blobs: [][]byte{kept}},
		{Session: "s", Type: "chronicle.snapshot", Data: map[string]any{"files": []any{map[string]any{"path": "b", "pre_blob": hp.String()}}}, Blobs: [][]byte{pruned}},
		{Type: "ledger.note", Data: map[string]any{"author": "t", "text": "n", "\uFB33": 1, "\U0001F600": 2}},
	}
	if _, err := l.Append(ctx, ledger.Sync, recs...); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PruneBlobs(ctx, ledger.Record{Type: ledger.TypePruned, Data: map[string]any{"blobs": []string{hp.String()}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := l.Append(ctx, ledger.Async, note(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(ctx); err != nil { // export takes the committed head
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl.zst")
	m, err := l.ExportFile(good, ledger.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plainExport := filepath.Join(dir, "plain.jsonl")
	if _, err := l.ExportFile(plainExport, ledger.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "s.jsonl.zst")
	sm, err := l.ExportFile(seg, ledger.ExportOptions{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Entries != 10 || m.Blobs != 1 || sm.FromSeq != 1 || sm.ToSeq != 9 {
		t.Fatalf("manifests %+v, %+v", m, sm)
	}
	for p, want := range map[string]string{
		good:        "ok: 10 entries, last hash " + m.LastHash + ", 1 blobs",
		plainExport: "ok: 10 entries, last hash " + m.LastHash + ", 1 blobs",
		seg:         "ok: 9 entries, last hash " + sm.LastHash + ", 1 blobs",
	} {
		if out, err := verifyWithoutOpx(t, p); err != nil || strings.TrimSpace(out) != want {
			t.Fatalf("outside check of good export %s: %v\n%s", filepath.Base(p), err, out)
		}
	}

	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	zb, _ := os.ReadFile(good)
	plain, err := dec.DecodeAll(zb, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(plain, []byte("\n"))
	lines = lines[:len(lines)-1] // after the final "\n"
	cat := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	flip := func(i int) []byte {
		c := append([][]byte{}, lines...)
		c[i] = bytes.Replace(c[i], []byte(`"author":"t"`), []byte(`"author":"T"`), 1)
		return cat(c...)
	}
	blob := hk.String() + ".zst"
	forged := enc.EncodeAll([]byte("forged"), nil)
	// One case per check the script makes; opx's own verifier is tested
	// against every kind of damage elsewhere.
	tests := []struct {
		name   string
		stream []byte // decompressed; written as .jsonl.zst
		raw    []byte // written as is instead, when set
		bundle func(dir string)
		want   string
	}{
		{"flipped byte", flip(1), nil, nil, "line 3 (seq 2): prev"},
		{"missing line", cat(append(append([][]byte{}, lines[:4]...), lines[5:]...)...), nil, nil, "line 5: seq 5, expected 4"},
		{"cut at a line boundary", cat(lines[:9]...), nil, nil, "manifest says " + m.LastHash},
		{"cut mid-line", cat(lines...)[:len(plain)-5], nil, nil, "last line has no newline"},
		{"blob replaced", plain, nil, func(d string) { os.WriteFile(filepath.Join(d, blob), forged, 0o600) }, "blob " + hk.String() + " hashes to"},
		{"blob not zstd", plain, nil, func(d string) { os.WriteFile(filepath.Join(d, blob), kept, 0o600) }, "blob " + hk.String() + " does not decompress"},
		{"compressed file damaged", nil, func() []byte { c := append([]byte(nil), zb...); c[len(c)/2] ^= 0xff; return c }(), nil, ""},
	}
	for _, tt := range tests {
		content := tt.raw
		if content == nil {
			content = enc.EncodeAll(tt.stream, nil)
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each runs a few dozen processes
			p := filepath.Join(t.TempDir(), "bad.jsonl.zst")
			os.WriteFile(p, content, 0o600)
			copyDir(t, ledger.BundlePath(good), ledger.BundlePath(p))
			if tt.bundle != nil {
				tt.bundle(ledger.BundlePath(p))
			}
			out, err := verifyWithoutOpx(t, p)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(out, tt.want) {
				t.Errorf("outside check: %v, want a failure mentioning %q\n%s", err, tt.want, out)
			}
			// opx agrees that it is damaged.
			if rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{}); err == nil && rep.OK {
				t.Error("VerifyExport passed an export the outside check refused")
			}
		})
	}
}
