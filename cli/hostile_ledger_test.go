package cli_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

// TestHostileLedgerFile runs the commands that open a ledger file (verify,
// head, sessions, replay, and the engine's own open) on damaged files: a
// real ledger cut short at several points (the cut that used to crash
// every command with SIGBUS), bytes flipped in its meta pages, random
// bytes, a directory and a FIFO. Each must say so in one line on stderr,
// exit 1, print no trace and leave the file as it was.
func TestHostileLedgerFile(t *testing.T) {
	lg := newLedger(t, 400)
	good, err := os.ReadFile(lg.Path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	files := map[string]func(p string){
		"cut to half its pages plus 1234": func(p string) { os.WriteFile(p, good[:pagesEnd(good)/2+1234], 0o600) },
		"cut a byte short of its pages":   func(p string) { os.WriteFile(p, good[:pagesEnd(good)-1], 0o600) },
		"cut after the metas":             func(p string) { os.WriteFile(p, good[:2*ps+10], 0o600) },
		"cut to 3000 bytes":               func(p string) { os.WriteFile(p, good[:3000], 0o600) },
		"meta checksums flipped": func(p string) {
			b := bytes.Clone(good)
			b[16+56] ^= 1
			b[ps+16+56] ^= 1
			os.WriteFile(p, b, 0o600)
		},
		"random bytes": func(p string) { os.WriteFile(p, bytes.Repeat([]byte("opx?"), 4096), 0o600) },
		"a directory":  func(p string) { os.Mkdir(p, 0o700) },
		"a FIFO":       func(p string) { syscall.Mkfifo(p, 0o600) },
	}
	commands := [][]string{
		{"ledger", "verify"}, {"ledger", "verify", "--strict"}, {"ledger", "head"}, {"sessions"},
		{"replay", "s1"}, {"ledger", "show", "1"},
	}
	for name, mk := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			mk(path)
			before := readRegular(path)
			for _, args := range commands {
				r := run(t, append(args, "--ledger", path)...)
				if r.code != cli.ExitError {
					t.Errorf("%v: exit %d, want %d\n%s%s", args, r.code, cli.ExitError, r.stdout, r.stderr)
				}
				if strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "goroutine") {
					t.Errorf("%v: stderr is not one line:\n%s", args, r.stderr)
				}
				if !strings.Contains(r.stderr, "not a readable") {
					t.Errorf("%v: stderr does not say the ledger is not readable:\n%s", args, r.stderr)
				}
			}
			if after := readRegular(path); !bytes.Equal(before, after) {
				t.Errorf("the file changed")
			}
		})
	}
}

// TestHostileLedgerFile_EngineOpen: the engine opens its ledger with
// ledger.Open for writing; a truncated file is refused with the same
// sentence the commands print (the engine reports it once and exits).
func TestHostileLedgerFile_EngineOpen(t *testing.T) {
	lg := newLedger(t, 400)
	good, _ := os.ReadFile(lg.Path)
	path := filepath.Join(t.TempDir(), "ledger.db")
	os.WriteFile(path, good[:pagesEnd(good)/2+1234], 0o600)
	_, err := ledger.Open(path, cli.WriteOptionsForTest())
	if err == nil || !strings.Contains(err.Error(), "not a readable ledger") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open = %v, want one line saying not a readable ledger", err)
	}
}

// TestHostileExportCLI checks the exit codes of verify and import for the
// export rows of the hostile-input table that differ in class: an
// over-long line (4, never skipped), a directory, a FIFO and /dev/zero
// (1, without hanging), and that a refused import writes nothing.
func TestHostileExportCLI(t *testing.T) {
	lg := newLedger(t, 30)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	run(t, "ledger", "export", "--ledger", lg.Path, "-o", good).wantCode(t, cli.ExitOK)
	b, _ := os.ReadFile(good)
	lines := bytes.SplitAfter(b, []byte("\n"))
	long := append([]byte(`{"data":{"author":"x","text":"`), bytes.Repeat([]byte("a"), ledger.MaxLineSize)...)
	long = append(long, "\"},\"prev\":\"0\",\"seq\":11,\"session\":\"\",\"ts\":\"x\",\"type\":\"ledger.note\"}\n"...)
	inj := filepath.Join(dir, "inj.jsonl")
	os.WriteFile(inj, bytes.Join([][]byte{bytes.Join(lines[:11], nil), long, bytes.Join(lines[11:], nil)}, nil), 0o600)
	os.Symlink(ledger.BundlePath(good), ledger.BundlePath(inj))
	fifo := filepath.Join(dir, "fifo.jsonl")
	syscall.Mkfifo(fifo, 0o600)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl"))
	os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700)
	tests := []struct {
		file string
		code int
		say  string
	}{
		{inj, cli.ExitIntegrity, "longer than the maximum entry size"},
		{fifo, cli.ExitError, "FIFO"},
		{filepath.Join(dir, "zero.jsonl"), cli.ExitError, "device"},
		{filepath.Join(dir, "dir.jsonl"), cli.ExitError, "directory"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			r := run(t, "ledger", "verify", "--strict", tt.file)
			r.wantCode(t, tt.code)
			if !strings.Contains(r.stdout+r.stderr, tt.say) {
				t.Errorf("verify does not say %q:\n%s%s", tt.say, r.stdout, r.stderr)
			}
			out := t.TempDir()
			r = run(t, "ledger", "import", tt.file, "--ledger", filepath.Join(out, "l.db"))
			r.wantCode(t, tt.code)
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("refused import left %v", ents)
			}
		})
	}
}

// readRegular returns a regular file's bytes, or nil for anything else
// (reading a FIFO would block the test).
func readRegular(path string) []byte {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, _ := os.ReadFile(path)
	return b
}

// pagesEnd returns where the pages a bbolt file's meta page 0 counts end
// (its high-water page id times the page size): the file may be longer.
func pagesEnd(b []byte) int {
	ps := int(binary.LittleEndian.Uint32(b[16+8:]))
	return int(binary.LittleEndian.Uint64(b[16+40:])) * ps
}

// TestLedgerVerify_CappedFailures: an export of 3000 empty lines has 3000
// failures; --json lists the first ledger.MaxListedFailures and counts
// all of them by kind, and the text output lists 100 and the counts.
func TestLedgerVerify_CappedFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.jsonl")
	os.WriteFile(path, bytes.Repeat([]byte("\n"), 3000), 0o600)
	r := run(t, "ledger", "verify", "--json", path)
	r.wantCode(t, cli.ExitIntegrity)
	m := r.jsonObject(t)
	fs, _ := m["failures"].([]any)
	counts, _ := m["failure_counts"].(map[string]any)
	if len(fs) != ledger.MaxListedFailures || m["failures_omitted"] != jsonNumber("2000") || counts["unreadable"] != jsonNumber("3000") {
		t.Errorf("failures %d, omitted %v, counts %v", len(fs), m["failures_omitted"], counts)
	}
	r = run(t, "ledger", "verify", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "... and 2900 more", "failures by kind: unreadable 3000", "FAILED: 3000 failures in 3000 entries")
}
