package ledger_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
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

// TestExport_VerifiesWithoutOpx exports a ledger and checks it with
// Debian's zstd, jq and b3sum only (testdata/verify-export.sh), then
// checks that the same script rejects a tampered export and a corrupt blob.
func TestExport_VerifiesWithoutOpx(t *testing.T) {
	needTools(t, "bash", "zstd", "jq", "b3sum")
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 30)
	l, err := ledger.OpenReadOnly(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	script, _ := filepath.Abs("testdata/verify-export.sh")
	run := func(path string) (string, error) {
		out, err := exec.Command("bash", script, path).CombinedOutput()
		return string(out), err
	}
	dir := t.TempDir()
	for _, name := range []string{"a.jsonl.zst", "b.jsonl"} {
		out := filepath.Join(dir, name)
		if _, err := l.ExportFile(out, ledger.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := run(out)
		if err != nil || !strings.Contains(got, "ok: 31 entries, last hash "+src.Head.Hash.String()) {
			t.Errorf("%s: %v\n%s", name, err, got)
		}
	}
	seg := filepath.Join(dir, "s1.jsonl.zst")
	if _, err := l.ExportFile(seg, ledger.ExportOptions{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	if got, err := run(seg); err != nil {
		t.Errorf("session segment: %v\n%s", err, got)
	}

	// Tampered: one byte of one line.
	plain := filepath.Join(dir, "b.jsonl")
	b, _ := os.ReadFile(plain)
	i := strings.Index(string(b), "entry number 12") + len("entry number 1")
	b[i] = '3'
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, b, 0o600)
	copyDir(t, ledger.BundlePath(plain), ledger.BundlePath(bad))
	if got, err := run(bad); err == nil || !strings.Contains(got, "(seq 13): prev") {
		t.Errorf("tampered export: err %v\n%s", err, got)
	}
	// A blob that does not match its name.
	blob := filepath.Join(ledger.BundlePath(plain), src.Blobs[0].String()+".zst")
	other, _ := os.ReadFile(filepath.Join(ledger.BundlePath(plain), src.Blobs[1].String()+".zst"))
	os.WriteFile(blob, other, 0o600)
	if got, err := run(plain); err == nil || !strings.Contains(got, "blob "+src.Blobs[0].String()+" hashes to") {
		t.Errorf("corrupt blob: err %v\n%s", err, got)
	}
}
