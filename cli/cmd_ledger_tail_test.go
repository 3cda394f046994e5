package cli_test

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

func TestLedgerTail(t *testing.T) {
	lg := newLedger(t, 30)
	tests := []struct {
		name  string
		args  []string
		first string // seq of the first line
		lines int
	}{
		{"default", nil, "21", 10},
		{"short flag", []string{"-n", "3"}, "28", 3},
		{"long flag", []string{"--lines=5"}, "26", 5},
		{"more than there are", []string{"-n", "100"}, "0", 31},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "tail", "--ledger", lg.Path}, tt.args...)...)
			r.wantCode(t, cli.ExitOK)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) != tt.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), tt.lines, r.stdout)
			}
			if f := strings.Fields(lines[0]); f[0] != tt.first {
				t.Errorf("first line %q, want seq %s", lines[0], tt.first)
			}
			if f := strings.Fields(lines[len(lines)-1]); f[0] != "30" || f[2] != "ledger.note" || f[3] != "-" {
				t.Errorf("last line %q, want seq 30, ledger.note, no session", lines[len(lines)-1])
			}
		})
	}
}

func TestLedgerTail_Truncates(t *testing.T) {
	lg := newLedger(t, 4)
	r := run(t, "ledger", "tail", "-n", "1", "--ledger", lg.Path)
	r.wantCode(t, cli.ExitOK)
	// Entry 4 names a blob, so its data is longer than a tail line shows.
	if !strings.HasSuffix(strings.TrimSpace(r.stdout), "...") {
		t.Errorf("long data not truncated: %q", r.stdout)
	}
}

func TestLedgerTail_JSON(t *testing.T) {
	lg := newLedger(t, 5)
	r := run(t, "ledger", "tail", "--json", "-n", "2", "--ledger", lg.Path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	entries := m["entries"].([]any)
	if len(keys(m)) != 1 || len(entries) != 2 {
		t.Fatalf("json %v, want only entries, two of them", m)
	}
	last := entries[1].(map[string]any)
	if last["seq"].(jsonNumber).String() != "5" || last["hash"] != lg.Head.Hash.String() {
		t.Errorf("last %v, want seq 5 %s", last, lg.Head.Hash)
	}
	if e := last["entry"].(map[string]any); e["type"] != "ledger.note" {
		t.Errorf("entry %v", e)
	}
}

func TestLedgerTail_Usage(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "x"}, {"-n"}, {"extra"}} {
		r := run(t, append([]string{"ledger", "tail"}, args...)...)
		r.wantCode(t, cli.ExitUsage)
	}
}

func TestLedgerTail_Unreadable(t *testing.T) {
	lg := newLedger(t, 3)
	cp := ledgertest.Copy(t, lg.Path, filepath.Join(t.TempDir(), "broken.db"))
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], 3)
		return tx.Bucket([]byte("entries")).Put(k[:], []byte(`{"data":{}`))
	})
	r := run(t, "ledger", "tail", "--ledger", cp)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantErr(t, "integrity failure", "run opx ledger verify")
}
