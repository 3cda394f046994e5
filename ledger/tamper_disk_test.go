package ledger_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	bolt "go.etcd.io/bbolt"
)

func key(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// finding is a failure as (seq, kind), for comparing reports.
type finding struct {
	Seq  uint64
	Kind ledger.Kind
}

func findings(r *ledger.Report) []finding {
	out := []finding{}
	for _, f := range r.Failures {
		out = append(out, finding{f.Seq, f.Kind})
	}
	return out
}

// TestVerify_TamperOnDisk damages copies of a ledger by editing the bbolt
// file underneath the ledger package, one kind of damage at a time and all
// at once, and checks that verify reports exactly what was done.
func TestVerify_TamperOnDisk(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 24)
	blob4 := base.Blobs[0] // named by entry 4
	entries := func(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("entries")) }
	tests := []struct {
		name           string
		edit           func(tx *bolt.Tx) error
		normal, strict []finding
	}{
		{"flipped byte", func(tx *bolt.Tx) error {
			v := append([]byte(nil), entries(tx).Get(key(10))...)
			i := bytes.Index(v, []byte(`"text":"entry`)) + len(`"text":"`)
			v[i] = 'E'
			return entries(tx).Put(key(10), v)
		}, []finding{{11, ledger.KindHashMismatch}}, []finding{{11, ledger.KindHashMismatch}}},
		{"deleted entry", func(tx *bolt.Tx) error { return entries(tx).Delete(key(10)) },
			[]finding{{10, ledger.KindGap}}, []finding{{10, ledger.KindGap}}},
		{"entry under the wrong key", func(tx *bolt.Tx) error {
			return entries(tx).Put(key(10), append([]byte(nil), entries(tx).Get(key(11))...))
			// Entry 11's bytes under key 10: its prev is not entry 9's
			// hash, its seq is not its key, and entry 11 no longer follows.
		}, []finding{{10, ledger.KindHashMismatch}, {10, ledger.KindSeqMismatch}, {11, ledger.KindHashMismatch}},
			[]finding{{10, ledger.KindHashMismatch}, {10, ledger.KindSeqMismatch}, {11, ledger.KindHashMismatch}}},
		{"re-serialised (not canonical)", func(tx *bolt.Tx) error {
			v := entries(tx).Get(key(10))
			return entries(tx).Put(key(10), bytes.Replace(v, []byte(`"seq":10,`), []byte(`"seq": 10,`), 1))
		}, []finding{{11, ledger.KindHashMismatch}}, []finding{{10, ledger.KindNotCanonical}, {11, ledger.KindHashMismatch}}},
		{"garbage entry", func(tx *bolt.Tx) error { return entries(tx).Put(key(10), []byte("\x00\x01garbage")) },
			[]finding{{10, ledger.KindUnreadable}, {11, ledger.KindHashMismatch}}, []finding{{10, ledger.KindUnreadable}, {11, ledger.KindHashMismatch}}},
		{"head rewound", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("head_seq"), []byte("20"))
		}, []finding{{24, ledger.KindHeadMismatch}}, []finding{{24, ledger.KindHeadMismatch}}},
		{"last entry deleted (head still names it)", func(tx *bolt.Tx) error { return entries(tx).Delete(key(24)) },
			[]finding{{23, ledger.KindHeadMismatch}}, []finding{{23, ledger.KindHeadMismatch}}},
		{"blob deleted", func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Delete(blob4[:]) },
			[]finding{{4, ledger.KindMissingBlob}}, []finding{{4, ledger.KindMissingBlob}}},
		{"blob replaced", func(tx *bolt.Tx) error {
			enc, _ := zstd.NewWriter(nil)
			return tx.Bucket([]byte("blobs")).Put(blob4[:], enc.EncodeAll([]byte("other content"), nil))
		}, []finding{{4, ledger.KindBlobCorrupt}}, []finding{{4, ledger.KindBlobCorrupt}}},
		{"blob not zstd", func(tx *bolt.Tx) error { return tx.Bucket([]byte("blobs")).Put(blob4[:], []byte("plain")) },
			[]finding{{4, ledger.KindBlobCorrupt}}, []finding{{4, ledger.KindBlobCorrupt}}},
		{"several at once", func(tx *bolt.Tx) error {
			v := append([]byte(nil), entries(tx).Get(key(3))...)
			v[bytes.Index(v, []byte(`"text":"entry`))+len(`"text":"`)] = 'E'
			if err := entries(tx).Put(key(3), v); err != nil {
				return err
			}
			if err := entries(tx).Delete(key(15)); err != nil {
				return err
			}
			return tx.Bucket([]byte("blobs")).Delete(blob4[:])
		}, []finding{{4, ledger.KindHashMismatch}, {4, ledger.KindMissingBlob}, {15, ledger.KindGap}},
			[]finding{{4, ledger.KindHashMismatch}, {4, ledger.KindMissingBlob}, {15, ledger.KindGap}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), fmt.Sprintf("damaged-%d.db", i)))
			ledgertest.Edit(t, path, tt.edit)
			l, err := ledger.OpenReadOnly(path)
			if err != nil {
				t.Fatalf("OpenReadOnly of a damaged ledger: %v", err)
			}
			defer l.Close()
			for _, strict := range []bool{false, true} {
				rep, err := l.Verify(ledger.VerifyOptions{Strict: strict})
				if err != nil {
					t.Fatal(err)
				}
				want := tt.normal
				if strict {
					want = tt.strict
				}
				if got := findings(rep); fmt.Sprint(got) != fmt.Sprint(want) || rep.OK {
					t.Errorf("strict=%v: findings %v (ok=%v), want %v\n%v", strict, got, rep.OK, want, rep.Failures)
				}
				if !errors.Is(rep.Err(), ledger.ErrIntegrity) {
					t.Errorf("Report.Err() = %v, want ErrIntegrity", rep.Err())
				}
			}
		})
	}
}

// TestOpen_InconsistentHead: a writer refuses to extend a ledger whose
// head does not match its last entry; a reader opens it to report.
func TestOpen_InconsistentHead(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 8)
	path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), "rewound.db"))
	ledgertest.Edit(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("head_seq"), []byte("5"))
	})
	if _, err := ledger.Open(path, ledger.Options{}); !errors.Is(err, ledger.ErrInconsistent) {
		t.Errorf("Open = %v, want ErrInconsistent", err)
	}
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, _ := l.Verify(ledger.VerifyOptions{})
	if fmt.Sprint(findings(rep)) != fmt.Sprint([]finding{{8, ledger.KindHeadMismatch}}) {
		t.Errorf("findings %v", findings(rep))
	}
}

// TestReport_JSONShape pins the normative `verify --json` shape.
func TestReport_JSONShape(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 3)
	l, err := ledger.OpenReadOnly(base.Path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(ledger.VerifyOptions{})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	want := fmt.Sprintf(`{"ok":true,"entries":4,"head_seq":3,"head_hash":"%s","failures":[]}`, base.Head.Hash)
	if string(b) != want {
		t.Errorf("clean report JSON\n%s\nwant\n%s", b, want)
	}
	path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), "x.db"))
	ledgertest.FlipEntryByte(t, path, 1)
	l, _ = ledger.OpenReadOnly(path)
	defer l.Close()
	rep, _ = l.Verify(ledger.VerifyOptions{})
	b, _ = json.Marshal(rep)
	var generic map[string]any
	json.Unmarshal(b, &generic)
	f := generic["failures"].([]any)[0].(map[string]any)
	if len(generic) != 5 || len(f) != 3 || f["seq"] != 2.0 || f["kind"] != "hash-mismatch" || !strings.Contains(f["detail"].(string), "entry 1") {
		t.Errorf("failure report JSON %s", b)
	}
}
