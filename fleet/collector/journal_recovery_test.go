package collector_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/fleet/collector/journal"
	"github.com/opx-dev/opx/ledger"
)

// writeJournal writes recs as the collector's journal would, one
// segment per call.
func writeJournal(t *testing.T, store string, recs ...journal.Record) string {
	t.Helper()
	j, err := journal.Open(filepath.Join(store, collector.JournalDir), journal.Options{NoSync: true, SegmentSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(recs); err != nil {
		t.Fatal(err)
	}
	j.Sync()
	j.Close()
	segs, _ := filepath.Glob(filepath.Join(store, collector.JournalDir, "*.wal"))
	return segs[len(segs)-1]
}

func mirrorHead(t *testing.T, store, id string) uint64 {
	t.Helper()
	m, err := ledger.OpenReadOnly(collector.SourcePath(store, id))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h.Seq
}

// A store's journal as a crash or an attacker leaves it: a record beyond
// the mirror is written to it (it was acknowledged); a torn tail or a
// 4 GiB length in the last segment is cut; a record with other bytes
// than the mirror's, or a bad record in an earlier segment, stops the
// collector with a clear error and the journal left as it was.
func TestCollector_New_HostileJournal(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 4, false)
	h := s.head(t).Seq
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(s.Ledger, 0, h-2)
	r.waitHead(t, s.ID(), h-2)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	entry := func(seq uint64) journal.Record {
		e, err := s.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		return journal.Record{Kind: journal.Entry, Source: s.ID(), Seq: seq, Data: e.Raw}
	}
	// The blobs of the last entries, journaled before them as the
	// collector does.
	var blobs []journal.Record
	for seq := h - 1; seq <= h; seq++ {
		e, _ := s.Get(seq)
		refs, _ := ledger.BlobRefs(e.Data)
		for _, b := range refs {
			f, err := s.BlobFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			blobs = append(blobs, journal.Record{Kind: journal.Blob, Source: s.ID(), Seq: seq, Blob: b, Data: f})
		}
	}
	open := func() error {
		c, err := collector.New(collector.Config{Prefix: prefix, Store: store, NoSync: true, Logf: t.Logf})
		if err == nil {
			c.Close()
		}
		return err
	}

	// A record beyond the mirror, then a torn one: the first is written.
	seg := writeJournal(t, store, append(blobs, entry(h-2), entry(h-1), entry(h))...)
	b, _ := os.ReadFile(seg)
	os.WriteFile(seg, b[:len(b)-10], 0o600)
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if got := mirrorHead(t, store, s.ID()); got != h-1 {
		t.Fatalf("mirror head %d after recovery, want %d (the torn record cut)", got, h-1)
	}

	// A length of 4 GiB after a good record: cut, nothing allocated.
	seg = writeJournal(t, store, entry(h))
	f, _ := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Close()
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if got := mirrorHead(t, store, s.ID()); got != h {
		t.Fatalf("mirror head %d, want %d", got, h)
	}

	// Other bytes for an entry the mirror holds: refused, left.
	other := entry(1)
	other.Data = bytes.Clone(other.Data)
	other.Data[len(other.Data)/2] ^= 1
	seg = writeJournal(t, store, other)
	before, _ := os.ReadFile(seg)
	err := open()
	if err == nil || !strings.Contains(err.Error(), "is not the one the mirror holds") {
		t.Fatalf("a journal record that differs from the mirror: %v", err)
	}
	if after, _ := os.ReadFile(seg); !bytes.Equal(after, before) {
		t.Fatal("the journal was changed")
	}
	os.Remove(seg)

	// A bad record in a segment before the last: ErrCorrupt, left.
	first := writeJournal(t, store, entry(h))
	b, _ = os.ReadFile(first)
	b[len(b)-3] ^= 0xff
	os.WriteFile(first, b, 0o600)
	writeJournal(t, store, entry(h))
	if err := open(); !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("a corrupt earlier segment: %v", err)
	}
	if after, _ := os.ReadFile(first); !bytes.Equal(after, b) {
		t.Fatal("the corrupt segment was changed")
	}
	if got := mirrorHead(t, store, s.ID()); got != h {
		t.Fatalf("mirror head %d, want %d", got, h)
	}
}
