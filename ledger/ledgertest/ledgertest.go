package ledgertest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	bolt "go.etcd.io/bbolt"
)

// Sessions are the session ids New spreads its entries over, in turn; ""
// is an entry outside any session.
var Sessions = []string{"s1", "s2", ""}

// Ledger describes a ledger New made.
type Ledger struct {
	Path    string
	Head    ledger.Head
	Entries int           // including genesis
	Blobs   []ledger.Hash // every blob stored, in entry order
}

// New creates a ledger at path with genesis and n ledger.note entries
// ("entry number i"), spread over Sessions; every fourth has an attachment
// blob. The payloads are valid event.Note payloads, so the ledger passes
// `opx ledger verify --strict`. It
// fails the test on any error and checks the ledger when the test ends.
func New(t testing.TB, path string, n int) Ledger {
	t.Helper()
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(path, ledger.Options{NoSync: true, Now: func() time.Time {
		clock = clock.Add(time.Millisecond)
		return clock
	}})
	if err != nil {
		t.Fatalf("create ledger: %v", err)
	}
	out := Ledger{Path: path, Entries: n + 1}
	for i := 1; i <= n; i++ {
		rec := ledger.Record{Session: Sessions[(i-1)%len(Sessions)], Type: ledger.TypeNote}
		data := map[string]any{"author": "ledgertest", "text": fmt.Sprintf("entry number %d", i)}
		if i%4 == 0 {
			// Text and 64 zero bytes: 89 bytes for entry 4.
			content := []byte(fmt.Sprintf("blob content of entry %d, %s", i, make([]byte, 64)))
			h := ledger.Sum(content)
			data["attachment"] = fmt.Sprintf("entry-%d.bin", i)
			data["blob"] = h.String()
			rec.Blobs = [][]byte{content}
			out.Blobs = append(out.Blobs, h)
		}
		rec.Data = data
		if _, err := l.Append(context.Background(), ledger.Async, rec); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if out.Head, err = l.Head(); err != nil {
		t.Fatalf("head: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	MustVerify(t, path)
	t.Cleanup(func() {
		if _, err := os.Stat(path); err == nil {
			MustVerify(t, path)
		}
	})
	return out
}

// MustVerify fails the test unless the ledger at path verifies strictly
// (the ledger's own checks), or with opts when given (event.StrictOptions
// for ledgers an engine wrote).
func MustVerify(t testing.TB, path string, opts ...ledger.VerifyOptions) {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Errorf("verify %s: %v", path, err)
		return
	}
	defer l.Close()
	o := ledger.VerifyOptions{Strict: true}
	if len(opts) > 0 {
		o = opts[0]
	}
	rep, err := l.Verify(o)
	if err != nil {
		t.Errorf("verify %s: %v", path, err)
		return
	}
	if !rep.OK {
		t.Errorf("verify %s: %v", path, rep.Err())
	}
}

// Copy copies the file src to dst and returns dst.
func Copy(t testing.TB, src, dst string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// FlipEntryByte rewrites the stored bytes of each entry seqs names in the
// bbolt file at path with one byte changed inside its data, keeping it
// valid JSON, so verify must find the entry's hash no longer matching the
// next entry's prev (hash-mismatch).
func FlipEntryByte(t testing.TB, path string, seqs ...uint64) {
	t.Helper()
	Edit(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("entries"))
		for _, seq := range seqs {
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], seq)
			v := b.Get(k[:])
			if v == nil {
				return fmt.Errorf("no entry %d", seq)
			}
			mod := append([]byte(nil), v...)
			// Byte 10 lies inside the data object, past `{"data":{"`:
			// in a key or string, where a changed letter stays valid JSON.
			mod[10] ^= 0x01
			if err := b.Put(k[:], mod); err != nil {
				return err
			}
		}
		return nil
	})
}

// Edit runs fn in a read-write bbolt transaction on the file at path,
// bypassing the ledger package.
func Edit(t testing.TB, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("open bbolt %s: %v", path, err)
	}
	if err := db.Update(fn); err != nil {
		db.Close()
		t.Fatalf("edit %s: %v", path, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
}
