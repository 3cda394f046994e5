package journal_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/fleet/collector/journal"
)

const src = "0123456789abcdef0123456789abcdef"

func records(n int) []journal.Record {
	var out []journal.Record
	for i := range n {
		out = append(out, journal.Record{Kind: journal.Entry, Source: src, Seq: uint64(i), Data: []byte(fmt.Sprintf(`{"seq":%d}`, i))})
	}
	return out
}

func replay(t *testing.T, dir string) ([]journal.Record, int64, error) {
	t.Helper()
	j, err := journal.Open(dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []journal.Record
	cut, err := j.Replay(func(_ uint64, _ int64, r journal.Record) error {
		got = append(got, r)
		return nil
	})
	return got, cut, err
}

func write(t *testing.T, dir string, opts journal.Options, batches ...[]journal.Record) *journal.Journal {
	t.Helper()
	j, err := journal.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if _, err := j.Append(b); err != nil {
			t.Fatal(err)
		}
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

func onlySegment(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	if len(m) != 1 {
		t.Fatalf("segments %v", m)
	}
	return m[0]
}

func TestJournal_Replay_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := records(10)
	want[3] = journal.Record{Kind: journal.Blob, Source: src, Seq: 3, Blob: [32]byte{1, 2}, Data: []byte("frame")}
	j := write(t, dir, journal.Options{}, want[:4], want[4:])
	j.Close()
	got, cut, err := replay(t, dir)
	if err != nil || cut != 0 || len(got) != len(want) {
		t.Fatalf("replay: %d records, cut %d, %v", len(got), cut, err)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Source != src || got[i].Seq != want[i].Seq || got[i].Blob != want[i].Blob || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A torn tail (every cut of the last record) is cut, and what came
// before is all there.
func TestJournal_Replay_TornTailCut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, journal.Options{NoSync: true}, records(5)).Close()
	path := onlySegment(t, dir)
	full, _ := os.ReadFile(path)
	lastSize := (&records(5)[4]).Size()
	for drop := int64(1); drop < lastSize; drop += 7 {
		os.WriteFile(path, full[:int64(len(full))-drop], 0o600)
		got, cut, err := replay(t, dir)
		if err != nil || len(got) != 4 || cut != lastSize-drop {
			t.Fatalf("drop %d: %d records, cut %d, %v", drop, len(got), cut, err)
		}
		if st, _ := os.Stat(path); st.Size() != int64(len(full))-lastSize {
			t.Fatalf("drop %d: the file is %d bytes after the cut", drop, st.Size())
		}
	}
}

// Hostile files: garbage, a flipped byte, a length of 4 GiB, a record
// naming a kind that does not exist: the last segment is cut at the
// first bad record, in bounded memory (no record larger than the file
// is ever allocated), and an earlier segment's bad record is ErrCorrupt
// with nothing removed.
func TestJournal_Replay_Hostile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, journal.Options{NoSync: true}, records(3)).Close()
	path := onlySegment(t, dir)
	good, _ := os.ReadFile(path)
	huge := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-10] ^= 1
	kind := bytes.Clone(good)
	kind[len("opx-journal/1\n")+4] = 9
	for name, b := range map[string][]byte{
		"huge length": append(bytes.Clone(good), append(huge, bytes.Repeat([]byte{0}, 100)...)...),
		"garbage":     append(bytes.Clone(good), bytes.Repeat([]byte{0x5a}, 1000)...),
		"flipped":     flipped,
		"kind":        kind,
		"no header":   []byte("not a journal at all"),
	} {
		os.WriteFile(path, b, 0o600)
		got, cut, err := replay(t, dir)
		if err != nil || cut == 0 {
			t.Errorf("%s: %d records, cut %d, %v", name, len(got), cut, err)
		}
	}
	// An earlier segment's bad record stops the replay: nothing cut.
	os.WriteFile(path, flipped, 0o600)
	write(t, dir, journal.Options{NoSync: true}, records(2)).Close()
	_, cut, err := replay(t, dir)
	if !errors.Is(err, journal.ErrCorrupt) || cut != 0 {
		t.Fatalf("cut %d, %v, want ErrCorrupt", cut, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, flipped) {
		t.Fatal("the corrupt segment was changed")
	}
}

// A segment goes once every record in it is done and it is no longer
// the active one.
func TestJournal_Done_RemovesSegments(t *testing.T) {
	dir := t.TempDir()
	j, _ := journal.Open(dir, journal.Options{NoSync: true, SegmentSize: 64})
	var segs []uint64
	for range 4 {
		seg, err := j.Append(records(2))
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, seg)
	}
	j.Sync()
	if j.Segments() != 4 {
		t.Fatalf("%d segments", j.Segments())
	}
	for _, seg := range segs {
		j.Done(seg, 2)
	}
	if j.Segments() != 1 {
		t.Fatalf("%d segments after every record is done, want the active one", j.Segments())
	}
	j.Close()
}
