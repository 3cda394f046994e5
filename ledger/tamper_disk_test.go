package ledger_test

import (
	"bytes"
	"encoding/binary"
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
	if r == nil {
		return out
	}
	for _, f := range r.Failures {
		out = append(out, finding{f.Seq, f.Kind})
	}
	return out
}

// The base ledger of the tamper tests: ledgertest.New with 24 notes;
// entries 4, 8, 12, 16, 20 and 24 name a blob (base.Blobs[0..5]).
const tamperEntries = 24

func entriesBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("entries")) }

func metaBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("meta")) }

func blobsBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte("blobs")) }

// rewrite replaces entry seq's stored bytes with fn's result.
func rewrite(tx *bolt.Tx, seq uint64, fn func(v []byte) []byte) error {
	v := entriesBucket(tx).Get(key(seq))
	if v == nil {
		return fmt.Errorf("no entry %d", seq)
	}
	return entriesBucket(tx).Put(key(seq), fn(append([]byte(nil), v...)))
}

// rechain re-links every entry after seq to its predecessor's new hash
// and points the meta head at the last entry: what an attacker who edits
// entry seq and covers the tracks would do.
func rechain(tx *bolt.Tx, seq uint64) error {
	b := entriesBucket(tx)
	prev := ledger.Sum(b.Get(key(seq)))
	last := seq
	for s := seq + 1; ; s++ {
		v := b.Get(key(s))
		if v == nil {
			break
		}
		e, err := ledger.ParseEntry(v)
		if err != nil {
			return err
		}
		nv := bytes.Replace(v, []byte(`"prev":"`+e.Prev.String()+`"`), []byte(`"prev":"`+prev.String()+`"`), 1)
		if err := b.Put(key(s), nv); err != nil {
			return err
		}
		prev, last = ledger.Sum(nv), s
	}
	if err := metaBucket(tx).Put([]byte("head_seq"), []byte(fmt.Sprint(last))); err != nil {
		return err
	}
	return metaBucket(tx).Put([]byte("head_hash"), []byte(prev.String()))
}

// changeText changes one letter of a ledgertest note's text.
func changeText(v []byte) []byte {
	i := bytes.Index(v, []byte(`"text":"entry number `)) + len(`"text":"`)
	v[i] = 'E'
	return v
}

// respace adds white space: the same entry, not in canonical form.
func respace(v []byte) []byte { return bytes.Replace(v, []byte(`,"seq":`), []byte(`, "seq" : `), 1) }

func setSeq(seq uint64, to string) func(v []byte) []byte {
	return func(v []byte) []byte {
		return bytes.Replace(v, []byte(fmt.Sprintf(`"seq":%d,`, seq)), []byte(`"seq":`+to+`,`), 1)
	}
}

func putMeta(k, v string) func(tx *bolt.Tx) error {
	return func(tx *bolt.Tx) error { return metaBucket(tx).Put([]byte(k), []byte(v)) }
}

// verifyCopy damages a copy of src with edit and returns the non-strict
// and strict reports of a read-only open.
func verifyCopy(t *testing.T, src string, edit func(tx *bolt.Tx) error, opts ledger.VerifyOptions) (normal, strict *ledger.Report) {
	t.Helper()
	path := ledgertest.Copy(t, src, filepath.Join(t.TempDir(), "damaged.db"))
	ledgertest.Edit(t, path, edit)
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a damaged ledger: %v", err)
	}
	defer l.Close()
	for _, s := range []bool{false, true} {
		o := opts
		o.Strict = s
		rep, err := l.Verify(o)
		if err != nil {
			t.Fatalf("Verify (strict %v): %v", s, err)
		}
		if s {
			strict = rep
		} else {
			normal = rep
		}
	}
	return normal, strict
}

// TestVerify_TamperOnDisk damages copies of a ledger by editing the bbolt
// file underneath the ledger package, one kind of damage at a time, and
// checks that verify reports exactly what was done, with and without
// --strict.
func TestVerify_TamperOnDisk(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), tamperEntries)
	blob4 := base.Blobs[0] // named by entry 4
	hm, sm, gap, nc, head, unr := ledger.KindHashMismatch, ledger.KindSeqMismatch, ledger.KindGap, ledger.KindNotCanonical, ledger.KindHeadMismatch, ledger.KindUnreadable
	tests := []struct {
		name           string
		edit           func(tx *bolt.Tx) error
		normal, strict []finding
	}{
		{"flipped byte", func(tx *bolt.Tx) error { return rewrite(tx, 10, changeText) },
			[]finding{{11, hm}}, []finding{{11, hm}}},
		{"re-serialised (not canonical)", func(tx *bolt.Tx) error { return rewrite(tx, 10, respace) },
			[]finding{{11, hm}}, []finding{{10, nc}, {11, hm}}},
		{"re-serialised, chain re-linked", func(tx *bolt.Tx) error {
			if err := rewrite(tx, 10, respace); err != nil {
				return err
			}
			return rechain(tx, 10)
		}, []finding{}, []finding{{10, nc}}},
		{"garbage entry", func(tx *bolt.Tx) error { return entriesBucket(tx).Put(key(10), []byte("\x00\x01garbage")) },
			[]finding{{10, unr}, {11, hm}}, []finding{{10, unr}, {11, hm}}},
		{"entry data not an object", func(tx *bolt.Tx) error {
			return rewrite(tx, 10, func(v []byte) []byte { return bytes.Replace(v, []byte(`"data":{`), []byte(`"data":[{`), 1) })
		}, []finding{{10, unr}, {11, hm}}, []finding{{10, unr}, {11, hm}}},
		{"deleted entry", func(tx *bolt.Tx) error { return entriesBucket(tx).Delete(key(10)) },
			[]finding{{10, gap}}, []finding{{10, gap}}},
		{"several entries deleted", func(tx *bolt.Tx) error {
			for _, s := range []uint64{5, 6, 7, 15} {
				if err := entriesBucket(tx).Delete(key(s)); err != nil {
					return err
				}
			}
			return nil
		}, []finding{{5, gap}, {15, gap}}, []finding{{5, gap}, {15, gap}}},
		{"genesis deleted", func(tx *bolt.Tx) error { return entriesBucket(tx).Delete(key(0)) },
			[]finding{{0, gap}}, []finding{{0, gap}}},
		{"first three entries deleted", func(tx *bolt.Tx) error {
			for s := uint64(0); s < 3; s++ {
				if err := entriesBucket(tx).Delete(key(s)); err != nil {
					return err
				}
			}
			return nil
		}, []finding{{0, gap}}, []finding{{0, gap}}},
		{"every entry deleted", func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("entries")); err != nil {
				return err
			}
			_, err := tx.CreateBucket([]byte("entries"))
			return err
		}, []finding{{0, gap}}, []finding{{0, gap}}},
		{"entry under the wrong key", func(tx *bolt.Tx) error {
			// Entry 11's bytes under key 10: its prev is not entry 9's
			// hash, its seq is not its key, and entry 11 no longer follows.
			return entriesBucket(tx).Put(key(10), append([]byte(nil), entriesBucket(tx).Get(key(11))...))
		}, []finding{{10, hm}, {10, sm}, {11, hm}}, []finding{{10, hm}, {10, sm}, {11, hm}}},
		{"swapped entries", func(tx *bolt.Tx) error {
			b := entriesBucket(tx)
			e10, e11 := append([]byte(nil), b.Get(key(10))...), append([]byte(nil), b.Get(key(11))...)
			if err := b.Put(key(10), e11); err != nil {
				return err
			}
			return b.Put(key(11), e10)
		}, []finding{{10, hm}, {10, sm}, {11, hm}, {11, sm}, {12, hm}}, []finding{{10, hm}, {10, sm}, {11, hm}, {11, sm}, {12, hm}}},
		{"seq rewritten", func(tx *bolt.Tx) error { return rewrite(tx, 10, setSeq(10, "9")) },
			[]finding{{10, sm}, {11, hm}}, []finding{{10, sm}, {11, hm}}},
		{"seq rewritten, chain re-linked", func(tx *bolt.Tx) error {
			if err := rewrite(tx, 10, setSeq(10, "110")); err != nil {
				return err
			}
			return rechain(tx, 10)
		}, []finding{{10, sm}}, []finding{{10, sm}}},
		{"genesis prev not zero, chain re-linked", func(tx *bolt.Tx) error {
			err := rewrite(tx, 0, func(v []byte) []byte {
				return bytes.Replace(v, []byte(`"prev":"0`), []byte(`"prev":"1`), 1)
			})
			if err != nil {
				return err
			}
			return rechain(tx, 0)
		}, []finding{{0, hm}}, []finding{{0, hm}}},
		{"genesis member name in another case, chain re-linked", func(tx *bolt.Tx) error {
			// encoding/json would fill LedgerID from "ledger_iD"; the
			// entry stays canonical, so only the payload check sees it.
			if err := rewrite(tx, 0, func(v []byte) []byte { return bytes.Replace(v, []byte(`"ledger_id":`), []byte(`"ledger_iD":`), 1) }); err != nil {
				return err
			}
			return rechain(tx, 0)
		}, []finding{}, []finding{{0, unr}}},
		{"genesis ledger_id not lowercase hex, chain re-linked", func(tx *bolt.Tx) error {
			id := base.Head.LedgerID
			if err := rewrite(tx, 0, func(v []byte) []byte { return bytes.Replace(v, []byte(id), []byte("A"+id[1:]), 1) }); err != nil {
				return err
			}
			return rechain(tx, 0)
		}, []finding{}, []finding{{0, unr}}},
		{"key that is not a seq", func(tx *bolt.Tx) error { return entriesBucket(tx).Put([]byte("abc"), []byte("{}")) },
			[]finding{{25, unr}}, []finding{{25, unr}}},
		{"head rewound", putMeta("head_seq", "20"), []finding{{24, head}}, []finding{{24, head}}},
		{"head hash edited", putMeta("head_hash", strings.Repeat("ab", 32)), []finding{{24, head}}, []finding{{24, head}}},
		{"head hash garbled", putMeta("head_hash", "not a hash"), []finding{{24, head}}, []finding{{24, head}}},
		{"head seq garbled", putMeta("head_seq", "-1"), []finding{{24, head}}, []finding{{24, head}}},
		{"last entry deleted (head still names it)", func(tx *bolt.Tx) error { return entriesBucket(tx).Delete(key(24)) },
			[]finding{{23, head}}, []finding{{23, head}}},
		{"last entry truncated", func(tx *bolt.Tx) error {
			return rewrite(tx, 24, func(v []byte) []byte { return v[:len(v)-2] })
		}, []finding{{24, head}, {24, unr}}, []finding{{24, head}, {24, unr}}},
		{"entry added behind the head's back", func(tx *bolt.Tx) error {
			v := entriesBucket(tx).Get(key(24))
			e25 := setSeq(24, "25")(append([]byte(nil), v...))
			e, _ := ledger.ParseEntry(v)
			e25 = bytes.Replace(e25, []byte(e.Prev.String()), []byte(ledger.Sum(v).String()), 1)
			return entriesBucket(tx).Put(key(25), e25)
		}, []finding{{25, head}}, []finding{{25, head}}},
		{"blob deleted", func(tx *bolt.Tx) error { return blobsBucket(tx).Delete(blob4[:]) },
			[]finding{{4, ledger.KindMissingBlob}}, []finding{{4, ledger.KindMissingBlob}}},
		{"blob replaced", func(tx *bolt.Tx) error {
			enc, _ := zstd.NewWriter(nil)
			return blobsBucket(tx).Put(blob4[:], enc.EncodeAll([]byte("other content"), nil))
		}, []finding{{4, ledger.KindBlobCorrupt}}, []finding{{4, ledger.KindBlobCorrupt}}},
		{"blob not zstd", func(tx *bolt.Tx) error { return blobsBucket(tx).Put(blob4[:], []byte("plain")) },
			[]finding{{4, ledger.KindBlobCorrupt}}, []finding{{4, ledger.KindBlobCorrupt}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			normal, strict := verifyCopy(t, base.Path, tt.edit, ledger.VerifyOptions{})
			for _, c := range []struct {
				rep  *ledger.Report
				want []finding
			}{{normal, tt.normal}, {strict, tt.strict}} {
				got := findings(c.rep)
				if fmt.Sprint(got) != fmt.Sprint(c.want) || c.rep.OK != (len(c.want) == 0) {
					t.Errorf("strict=%v: findings %v (ok=%v), want %v\n%v", c.rep == strict, got, c.rep.OK, c.want, c.rep.Failures)
				}
				if err := c.rep.Err(); (len(c.want) > 0) != errors.Is(err, ledger.ErrIntegrity) {
					t.Errorf("Report.Err() = %v with findings %v", err, got)
				}
			}
		})
	}
}

// TestVerify_EveryDamageReported damages one file in eight independent
// places, of every kind, and checks that verify reports each one, in seq
// order, whatever the number of workers.
func TestVerify_EveryDamageReported(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), tamperEntries)
	edit := func(tx *bolt.Tx) error {
		enc, _ := zstd.NewWriter(nil)
		defer enc.Close()
		for _, err := range []error{
			rewrite(tx, 2, changeText),                                                  // hash-mismatch at 3
			rewrite(tx, 6, respace),                                                     // not-canonical at 6 (strict), hash-mismatch at 7
			entriesBucket(tx).Put(key(9), []byte("\x00garbage")),                        // unreadable at 9, hash-mismatch at 10
			entriesBucket(tx).Delete(key(13)),                                           // gap at 13
			blobsBucket(tx).Put(base.Blobs[3][:], enc.EncodeAll([]byte("forged"), nil)), // blob-corrupt at 16
			blobsBucket(tx).Delete(base.Blobs[4][:]),                                    // missing-blob at 20
			rewrite(tx, 22, setSeq(22, "122")),                                          // seq-mismatch at 22, hash-mismatch at 23
			metaBucket(tx).Put([]byte("head_hash"), []byte(strings.Repeat("cd", 32))),   // head-mismatch at 24
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}
	want := []finding{
		{3, ledger.KindHashMismatch},
		{7, ledger.KindHashMismatch},
		{9, ledger.KindUnreadable},
		{10, ledger.KindHashMismatch},
		{13, ledger.KindGap},
		{16, ledger.KindBlobCorrupt},
		{20, ledger.KindMissingBlob},
		{22, ledger.KindSeqMismatch},
		{23, ledger.KindHashMismatch},
		{24, ledger.KindHeadMismatch},
	}
	wantStrict := append(append(append([]finding{}, want[:1]...), finding{6, ledger.KindNotCanonical}), want[1:]...)
	for _, workers := range []int{1, 3, 16} {
		normal, strict := verifyCopy(t, base.Path, edit, ledger.VerifyOptions{Workers: workers})
		if got := findings(normal); fmt.Sprint(got) != fmt.Sprint(want) || normal.OK {
			t.Errorf("workers %d: findings\n%v\nwant\n%v", workers, got, want)
		}
		if got := findings(strict); fmt.Sprint(got) != fmt.Sprint(wantStrict) || strict.OK {
			t.Errorf("workers %d, strict: findings\n%v\nwant\n%v", workers, got, wantStrict)
		}
		if normal.Entries != tamperEntries || normal.HeadSeq != tamperEntries {
			t.Errorf("entries %d head %d, want %d %d", normal.Entries, normal.HeadSeq, tamperEntries, tamperEntries)
		}
		kinds := fmt.Sprint(strict.Kinds())
		if kinds != "[blob-corrupt gap hash-mismatch head-mismatch missing-blob not-canonical seq-mismatch unreadable]" {
			t.Errorf("Kinds = %s", kinds)
		}
		if err := strict.Err(); !errors.Is(err, ledger.ErrIntegrity) || !strings.Contains(err.Error(), "11 failure(s)") {
			t.Errorf("Err = %v", err)
		}
	}
}

// TestOpen_TamperedHead: a writer refuses every kind of head damage
// (appending would extend a broken chain); a reader opens the file and
// verify names the damage.
func TestOpen_TamperedHead(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 6)
	tests := []struct {
		name    string
		edit    func(tx *bolt.Tx) error
		openErr error
		want    []finding
	}{
		{"head hash of another entry", func(tx *bolt.Tx) error {
			return metaBucket(tx).Put([]byte("head_hash"), []byte(ledger.Sum(entriesBucket(tx).Get(key(5))).String()))
		}, ledger.ErrInconsistent, []finding{{6, ledger.KindHeadMismatch}}},
		{"head seq rewound", putMeta("head_seq", "5"), ledger.ErrInconsistent, []finding{{6, ledger.KindHeadMismatch}}},
		{"head seq ahead", putMeta("head_seq", "7"), ledger.ErrInconsistent, []finding{{6, ledger.KindHeadMismatch}}},
		{"head hash garbled", putMeta("head_hash", "xyz"), ledger.ErrNotLedger, []finding{{6, ledger.KindHeadMismatch}}},
		{"head seq missing", func(tx *bolt.Tx) error { return metaBucket(tx).Delete([]byte("head_seq")) }, ledger.ErrNotLedger, []finding{{6, ledger.KindHeadMismatch}}},
		{"last entry rewritten", func(tx *bolt.Tx) error { return rewrite(tx, 6, changeText) }, ledger.ErrInconsistent, []finding{{6, ledger.KindHeadMismatch}}},
		{"last entry deleted", func(tx *bolt.Tx) error { return entriesBucket(tx).Delete(key(6)) }, ledger.ErrInconsistent, []finding{{5, ledger.KindHeadMismatch}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), "x.db"))
			ledgertest.Edit(t, path, tt.edit)
			if l, err := ledger.Open(path, ledger.Options{NoSync: true}); !errors.Is(err, tt.openErr) {
				if err == nil {
					l.Close()
				}
				t.Errorf("Open = %v, want %v", err, tt.openErr)
			}
			l, err := ledger.OpenReadOnly(path)
			if err != nil {
				t.Fatalf("OpenReadOnly = %v", err)
			}
			defer l.Close()
			rep, err := l.Verify(ledger.VerifyOptions{Strict: true})
			if err != nil || fmt.Sprint(findings(rep)) != fmt.Sprint(tt.want) {
				t.Errorf("verify: %v, findings %v, want %v", err, findings(rep), tt.want)
			}
		})
	}
}

// TestLedger_Read_DamagedEntries: reads of damaged entries fail with an
// integrity finding naming the seq, never return wrong data.
func TestLedger_Read_DamagedEntries(t *testing.T) {
	base := ledgertest.New(t, filepath.Join(t.TempDir(), "base.db"), 8)
	path := ledgertest.Copy(t, base.Path, filepath.Join(t.TempDir(), "x.db"))
	ledgertest.Edit(t, path, func(tx *bolt.Tx) error {
		if err := entriesBucket(tx).Put(key(3), []byte("garbage")); err != nil {
			return err
		}
		return entriesBucket(tx).Put(key(8), append([]byte(nil), entriesBucket(tx).Get(key(7))...))
	})
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var ie *ledger.IntegrityError
	if _, err := l.Get(3); !errors.As(err, &ie) || ie.Seq != 3 || ie.Kind != ledger.KindUnreadable || !errors.Is(err, ledger.ErrIntegrity) {
		t.Errorf("Get(3) = %v, want unreadable at 3", err)
	}
	if _, err := l.Get(8); !errors.As(err, &ie) || ie.Seq != 8 || ie.Kind != ledger.KindSeqMismatch || ie.Expected != "8" || ie.Found != "7" {
		t.Errorf("Get(8) = %v, want seq-mismatch at 8", err)
	}
	var seen []uint64
	err = l.Range(0, 8, func(e ledger.Entry) error { seen = append(seen, e.Seq); return nil })
	if !errors.As(err, &ie) || ie.Seq != 3 || fmt.Sprint(seen) != "[0 1 2]" {
		t.Errorf("Range = %v after %v, want to stop at 3", err, seen)
	}
	if _, err := l.Tail(2); !errors.As(err, &ie) || ie.Seq != 8 {
		t.Errorf("Tail(2) = %v, want seq-mismatch at 8", err)
	}
	raw := 0
	if err := l.RangeRaw(0, 8, func(uint64, []byte) error { raw++; return nil }); err != nil || raw != 9 {
		t.Errorf("RangeRaw: %d entries, %v", raw, err)
	}
}

// TestLedger_GetBlob_Corrupt: a blob changed in the bbolt file is refused
// on read with ErrBlobCorrupt, never returned.
func TestLedger_GetBlob_Corrupt(t *testing.T) {
	src := ledgertest.New(t, filepath.Join(t.TempDir(), "src.db"), 8)
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	l, _ := ledger.OpenReadOnly(src.Path)
	h := src.Blobs[0]
	orig, err := l.GetBlob(h)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(orig, nil)
	flipped := bytes.Clone(frame)
	flipped[len(flipped)/2] ^= 0x10
	tests := map[string][]byte{
		"other content":    enc.EncodeAll([]byte("forged content"), nil),
		"not zstd":         []byte("plain text"),
		"empty value":      {},
		"truncated frame":  frame[:len(frame)-4],
		"flipped bit":      flipped,
		"empty zstd frame": enc.EncodeAll(nil, nil),
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			p := ledgertest.Copy(t, src.Path, filepath.Join(t.TempDir(), "x.db"))
			ledgertest.Edit(t, p, func(tx *bolt.Tx) error { return blobsBucket(tx).Put(h[:], v) })
			l, err := ledger.OpenReadOnly(p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			b, err := l.GetBlob(h)
			var ie *ledger.IntegrityError
			if !errors.Is(err, ledger.ErrBlobCorrupt) || !errors.Is(err, ledger.ErrIntegrity) || !errors.As(err, &ie) || ie.Kind != ledger.KindBlobCorrupt || b != nil {
				t.Errorf("GetBlob = %q, %v; want ErrBlobCorrupt", b, err)
			}
			// The other blobs still read.
			if _, err := l.GetBlob(src.Blobs[1]); err != nil {
				t.Errorf("intact blob: %v", err)
			}
		})
	}
}
