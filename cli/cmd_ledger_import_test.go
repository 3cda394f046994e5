package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
)

// exportOf exports lg's ledger to dir/name and returns the export's path.
func exportOf(t *testing.T, ledgerPath, dir, name string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	run(t, append([]string{"ledger", "export", "--ledger", ledgerPath, "-o", out}, extra...)...).wantCode(t, cli.ExitOK)
	return out
}

func TestLedgerImport_CorruptedExport(t *testing.T) {
	lg := newLedger(t, 8)
	dir := t.TempDir()
	out := exportOf(t, lg.Path, dir, "x.jsonl")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a letter inside the fourth line (entry 3): its hash no longer
	// matches entry 4's prev.
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[3][10] ^= 0x01
	if err := os.WriteFile(out, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		dst := filepath.Join(dir, "new.db")
		args := []string{"ledger", "import", out, "--ledger", dst}
		if asJSON {
			args = append(args, "--json")
		}
		r := run(t, args...)
		r.wantCode(t, cli.ExitIntegrity)
		r.wantErr(t, "import refused", "nothing was written to "+dst)
		if asJSON {
			m := r.jsonObject(t)
			if m["ok"] != false || m["imported"] != false || len(m["failures"].([]any)) == 0 {
				t.Errorf("json %v, want a failed report", m)
			}
		} else {
			r.wantOut(t, "seq 4  hash-mismatch", "FAILED")
		}
		if _, err := os.Stat(dst); err == nil {
			t.Fatal("import wrote the target despite integrity failures")
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".opx-import-*")); len(left) > 0 {
			t.Fatalf("import left temporary files: %v", left)
		}
	}
}

func TestLedgerImport_Refused(t *testing.T) {
	lg := newLedger(t, 6)
	dir := t.TempDir()
	full := exportOf(t, lg.Path, dir, "full.jsonl")
	seg := exportOf(t, lg.Path, dir, "seg.jsonl", "--session", "s1")
	existing := newLedger(t, 1).Path
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"existing target", []string{full, "--ledger", existing}, cli.ExitError, "already exists"},
		{"segment", []string{seg, "--ledger", filepath.Join(dir, "a.db")}, cli.ExitError, "is a segment"},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl"), "--ledger", filepath.Join(dir, "b.db")}, cli.ExitError, "no such file"},
		{"no target", []string{full}, cli.ExitUsage, "missing --ledger PATH"},
		{"no file", []string{"--ledger", filepath.Join(dir, "c.db")}, cli.ExitUsage, "missing FILE"},
		{"two files", []string{full, seg, "--ledger", filepath.Join(dir, "d.db")}, cli.ExitUsage, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "import"}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.err)
		})
	}
}

func TestLedgerImport_JSON(t *testing.T) {
	lg := newLedger(t, 3)
	dir := t.TempDir()
	full := exportOf(t, lg.Path, dir, "full.jsonl.zst")
	dst := filepath.Join(dir, "new.db")
	r := run(t, "--ledger", dst, "ledger", "import", "--json", full)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["ok"] != true || m["imported"] != true || m["ledger"] != dst || m["head_hash"] != lg.Head.Hash.String() {
		t.Errorf("json %v", m)
	}
}
