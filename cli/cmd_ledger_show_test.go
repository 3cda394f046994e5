package cli_test

import (
	"encoding/binary"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

func TestLedgerShow(t *testing.T) {
	lg := newLedger(t, 8)
	blob := lg.Blobs[0].String() // named by entry 4
	tests := []struct {
		name string
		seq  string
		out  []string
	}{
		{"genesis", "0", []string{"seq      0\n", "type     ledger.genesis", "session  -\n", "prev     " + strings.Repeat("0", 64), `"format": "opx-ledger/1"`}},
		{"with blob", "4", []string{"seq      4\n", "type     ledger.note", "session  s1", `"text": "entry number 4"`, "blobs\n  " + blob + "  ", " bytes, "}},
		{"head", "8", []string{"seq      8\n", "hash     " + lg.Head.Hash.String()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "ledger", "show", tt.seq, "--ledger", lg.Path)
			r.wantCode(t, cli.ExitOK)
			r.wantOut(t, tt.out...)
			if strings.Contains(r.stdout, "blob content of entry") {
				t.Error("show printed blob content")
			}
		})
	}
}

func TestLedgerShow_JSON(t *testing.T) {
	lg := newLedger(t, 4)
	r := run(t, "ledger", "show", "--json", "--ledger", lg.Path, "4")
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if got, want := keys(m), []string{"blobs", "entry", "hash", "seq"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	entry := m["entry"].(map[string]any)
	if got, want := keys(entry), []string{"data", "prev", "seq", "session", "ts", "type"}; !reflect.DeepEqual(got, want) {
		t.Errorf("entry keys %v, want %v", got, want)
	}
	if m["hash"] != lg.Head.Hash.String() {
		t.Errorf("hash %v, want %s", m["hash"], lg.Head.Hash)
	}
	blobs := m["blobs"].([]any)
	if len(blobs) != 1 {
		t.Fatalf("blobs %v, want one", blobs)
	}
	b := blobs[0].(map[string]any)
	if got, want := keys(b), []string{"hash", "present", "size", "stored_size"}; !reflect.DeepEqual(got, want) {
		t.Errorf("blob keys %v, want %v", got, want)
	}
	if b["hash"] != lg.Blobs[0].String() || b["present"] != true || b["size"].(jsonNumber).String() != "89" { // 25 bytes of text and 64 zeros
		t.Errorf("blob %v, want present, 89 bytes", b)
	}
}

func TestLedgerShow_MissingBlob(t *testing.T) {
	lg := newLedger(t, 4)
	cp := ledgertest.Copy(t, lg.Path, filepath.Join(t.TempDir(), "pruned.db"))
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("blobs")).Delete(lg.Blobs[0][:])
	})
	r := run(t, "ledger", "show", "4", "--ledger", cp)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, lg.Blobs[0].String()+"  missing")
	r = run(t, "ledger", "show", "4", "--ledger", cp, "--json")
	b := r.jsonObject(t)["blobs"].([]any)[0].(map[string]any)
	if b["present"] != false || b["size"] != nil {
		t.Errorf("blob %v, want absent with null size", b)
	}
}

func TestLedgerShow_Unreadable(t *testing.T) {
	lg := newLedger(t, 3)
	cp := ledgertest.Copy(t, lg.Path, filepath.Join(t.TempDir(), "broken.db"))
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], 2)
		return tx.Bucket([]byte("entries")).Put(k[:], []byte("not json"))
	})
	r := run(t, "ledger", "show", "2", "--ledger", cp)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantErr(t, "seq 2: unreadable")
}

func TestLedgerShow_Errors(t *testing.T) {
	lg := newLedger(t, 2)
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no such entry", []string{"9"}, cli.ExitError, "no entry 9 in " + lg.Path + " (head is 2)"},
		{"non-numeric", []string{"abc"}, cli.ExitUsage, `SEQ "abc" is not a non-negative integer`},
		{"negative", []string{"--", "-1"}, cli.ExitUsage, "not a non-negative integer"},
		{"missing", nil, cli.ExitUsage, "missing SEQ"},
		{"two", []string{"1", "2"}, cli.ExitUsage, `unexpected argument "2"`},
		{"flag needs value", []string{"1", "--ledger"}, cli.ExitUsage, "flag needs an argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "show", "--ledger", lg.Path}, tt.args...)...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.err)
		})
	}
}
