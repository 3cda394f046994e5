package ledger_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

func TestLedger_Cursor_SurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.Cursor("fleet.OPX_LEDGERS"); ok || err != nil {
		t.Fatalf("fresh cursor: ok %v err %v", ok, err)
	}
	if err := l.SetCursor("fleet.OPX_LEDGERS", 41); err != nil {
		t.Fatal(err)
	}
	if err := l.SetCursor("bad name/../x", 1); err == nil {
		t.Fatal("a cursor name with a slash was taken")
	}
	l.Close()
	r, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if seq, ok, err := r.Cursor("fleet.OPX_LEDGERS"); seq != 41 || !ok || err != nil {
		t.Fatalf("cursor after reopen: %d %v %v", seq, ok, err)
	}
	if err := r.SetCursor("x", 1); !errors.Is(err, ledger.ErrReadOnly) {
		t.Fatalf("read-only SetCursor: %v", err)
	}
	rep, err := r.Verify(ledger.VerifyOptions{})
	if err != nil || !rep.OK {
		t.Fatalf("verify with a cursor in meta: %v %+v", err, rep)
	}
}
