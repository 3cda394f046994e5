package ledger_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// segmentOf writes entries from..end of the ledger at path as a segment
// export (what a session export is), with its manifest changed by edit.
func segmentOf(t *testing.T, path string, from int, edit func(m *ledger.Manifest)) string {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	full := filepath.Join(t.TempDir(), "full.jsonl")
	m, err := l.ExportFile(full, ledger.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last "\n"
	seg := filepath.Join(t.TempDir(), "seg.jsonl")
	if err := os.WriteFile(seg, bytes.Join(lines[from:], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	hs, err := l.RangeHashesAt(uint64(from))
	if err != nil {
		t.Fatal(err)
	}
	m.FromSeq, m.Entries = uint64(from), uint64(len(lines)-from)
	m.Prev = ledger.Sum(bytes.TrimSuffix(lines[from-1], []byte("\n"))).String()
	m.TreeRange = ledger.EncodeTreeRange(hs)
	edit(m)
	mb, _ := json.Marshal(m)
	if err := os.MkdirAll(ledger.BundlePath(seg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ledger.BundlePath(seg), ledger.ManifestName), mb, 0o600); err != nil {
		t.Fatal(err)
	}
	return seg
}

// TestVerifyExport_SegmentTree: a segment starting at seq 100 checks the
// root its checkpoint (seq 150) records from the manifest's tree_range;
// without it the root is counted unchecked; a forged or malformed
// tree_range (outside input) is a finding or a clear error, never a crash.
func TestVerifyExport_SegmentTree(t *testing.T) {
	base := treeBase(t)
	tests := []struct {
		name      string
		edit      func(m *ledger.Manifest)
		want      []finding
		unchecked uint64
		err       string
	}{
		{"tree range given", func(*ledger.Manifest) {}, []finding{}, 0, ""},
		{"no tree range", func(m *ledger.Manifest) { m.TreeRange = "" }, []finding{}, 1, ""},
		{"tree range forged", func(m *ledger.Manifest) {
			b, err := base64.StdEncoding.DecodeString(m.TreeRange)
			if err != nil {
				panic(err)
			}
			b[0] ^= 1 // another first hash
			m.TreeRange = base64.StdEncoding.EncodeToString(b)
		}, []finding{{150, ledger.KindTreeMismatch}}, 0, ""},
		{"tree range one hash short", func(m *ledger.Manifest) {
			m.TreeRange = ledger.EncodeTreeRange([][]byte{make([]byte, 32)})
		}, []finding{{100, ledger.KindTreeMismatch}}, 1, ""},
		{"tree range not base64", func(m *ledger.Manifest) { m.TreeRange = "%%%" }, nil, 0, "manifest tree_range"},
		{"tree range of 65 hashes", func(m *ledger.Manifest) {
			m.TreeRange = strings.Repeat("A", 4*((65*32+2)/3))
		}, nil, 0, "at most 64 hashes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg := segmentOf(t, base, 100, tt.edit)
			rep, _, err := ledger.VerifyExport(seg, ledger.VerifyOptions{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("VerifyExport = %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := findings(rep); len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) || rep.TreeUnchecked != tt.unchecked {
				t.Errorf("findings %v, unchecked %d; want %v, %d\n%v", got, rep.TreeUnchecked, tt.want, tt.unchecked, rep.Failures)
			}
		})
	}
}
