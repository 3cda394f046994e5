package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

func TestLedgerNote_CreatesLedger(t *testing.T) {
	t.Setenv("USER", "alice")
	path := filepath.Join(t.TempDir(), "deep", "dir", "ledger.db")
	r := run(t, "ledger", "note", "--ledger", path, "first", "look")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "created a new ledger at "+path, "noted: seq 1 ")
	ledgertest.MustVerify(t, path)

	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e, err := l.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != ledger.TypeNote || string(e.Data) != `{"author":"alice","text":"first look"}` || e.Session != "" {
		t.Errorf("note entry %s", e.Raw)
	}
}

func TestLedgerNote_Appends(t *testing.T) {
	t.Setenv("USER", "")
	lg := newLedger(t, 5)
	tests := []struct {
		name    string
		args    []string
		seq     uint64
		session string
		text    string
	}{
		{"plain", []string{"looks fine"}, 6, "", "looks fine"},
		{"session after text", []string{"odd call", "--session", "s2"}, 7, "s2", "odd call"},
		{"dash text", []string{"--session=s1", "--", "-rf was", "proposed"}, 8, "s1", "-rf was proposed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"ledger", "note", "--ledger", lg.Path}, tt.args...)...)
			r.wantCode(t, cli.ExitOK)
			if strings.Contains(r.stdout, "created") {
				t.Errorf("note claims it created an existing ledger:\n%s", r.stdout)
			}
			l, err := ledger.OpenReadOnly(lg.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			e, err := l.Get(tt.seq)
			if err != nil {
				t.Fatal(err)
			}
			r.wantOut(t, fmt.Sprintf("noted: seq %d %s\n", tt.seq, e.Hash()))
			want := fmt.Sprintf(`{"author":"uid %d","text":%q}`, os.Getuid(), tt.text)
			if e.Session != tt.session || string(e.Data) != want {
				t.Errorf("entry %s, want session %q data %s", e.Raw, tt.session, want)
			}
		})
	}
}

func TestLedgerNote_JSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	r := run(t, "ledger", "note", "--json", "--ledger", path, "x")
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["created"] != true || m["seq"].(jsonNumber).String() != "1" || m["ledger"] != path || len(m["hash"].(string)) != 64 {
		t.Errorf("json %v", m)
	}
}

func TestLedgerNote_Refused(t *testing.T) {
	lg := newLedger(t, 2)
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("locked", func(t *testing.T) {
		l, err := ledger.Open(lg.Path, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		r := run(t, "ledger", "note", "--ledger", lg.Path, "hello")
		r.wantCode(t, cli.ExitError)
		r.wantErr(t, "an engine holds "+lg.Path)
	})
	t.Run("empty file", func(t *testing.T) {
		r := run(t, "ledger", "note", "--ledger", empty, "hello")
		r.wantCode(t, cli.ExitError)
		r.wantErr(t, "is not a readable opx ledger")
		if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
			t.Errorf("note touched the empty file: %v %v", fi, err)
		}
	})
	t.Run("no text", func(t *testing.T) {
		run(t, "ledger", "note", "--ledger", lg.Path).wantCode(t, cli.ExitUsage)
		run(t, "ledger", "note", "--ledger", lg.Path, " ").wantCode(t, cli.ExitUsage)
	})
	t.Run("inconsistent head", func(t *testing.T) {
		bad := tampered(t, lg.Path, 2) // the last entry: head_hash no longer matches it
		r := run(t, "ledger", "note", "--ledger", bad, "hello")
		r.wantCode(t, cli.ExitIntegrity)
		r.wantErr(t, "does not match its last entry")
	})
}
