package ledger_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

// TestReport_JSON pins the normative `verify --json` object byte for byte:
// member names and order, failures as [] when clean.
func TestReport_JSON(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 8)
	clean, _ := verifyCopy(t, base.Path, func(*bolt.Tx) error { return nil }, ledger.VerifyOptions{})
	b, err := json.Marshal(clean)
	want := `{"ok":true,"entries":9,"head_seq":8,"head_hash":"` + base.Head.Hash.String() + `","failures":[]}`
	if err != nil || string(b) != want {
		t.Errorf("clean report\n%s\nwant\n%s", b, want)
	}
	damaged, _ := verifyCopy(t, base.Path, func(tx *bolt.Tx) error {
		if err := rewrite(tx, 3, changeText); err != nil {
			return err
		}
		return entriesBucket(tx).Delete(key(6))
	}, ledger.VerifyOptions{})
	b, err = json.Marshal(damaged)
	if err != nil || len(damaged.Failures) != 2 {
		t.Fatalf("%v %v", err, damaged.Failures)
	}
	detail := func(i int) string { d, _ := json.Marshal(damaged.Failures[i].Detail); return string(d) }
	want = `{"ok":false,"entries":8,"head_seq":8,"head_hash":"` + base.Head.Hash.String() + `","failures":[` +
		`{"seq":4,"kind":"hash-mismatch","detail":` + detail(0) + `},{"seq":6,"kind":"gap","detail":` + detail(1) + `}]}`
	if string(b) != want {
		t.Errorf("report\n%s\nwant\n%s", b, want)
	}
	if damaged.Failures[1].Detail != "entry 6 missing" || !strings.Contains(damaged.Failures[0].Detail, "entry 3") {
		t.Errorf("details %q, %q", damaged.Failures[0].Detail, damaged.Failures[1].Detail)
	}
	// The shape decodes into exactly the DESIGN fields.
	var shape struct {
		OK       *bool   `json:"ok"`
		Entries  *uint64 `json:"entries"`
		HeadSeq  *uint64 `json:"head_seq"`
		HeadHash *string `json:"head_hash"`
		Failures []struct {
			Seq    *uint64 `json:"seq"`
			Kind   *string `json:"kind"`
			Detail *string `json:"detail"`
		} `json:"failures"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&shape); err != nil || shape.OK == nil || shape.Entries == nil || shape.HeadSeq == nil || shape.HeadHash == nil ||
		shape.Failures[0].Seq == nil || shape.Failures[0].Kind == nil || shape.Failures[0].Detail == nil {
		t.Errorf("report does not have the DESIGN shape: %v\n%s", err, b)
	}
	f := damaged.Failures[0]
	if f.Expected == "" || f.Found == "" || f.Expected == f.Found {
		t.Errorf("hash-mismatch finding lacks expected/found: %+v", f)
	}
}
