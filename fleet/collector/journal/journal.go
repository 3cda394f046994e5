package journal

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Kind is what a record carries.
type Kind byte

// The kinds of record.
const (
	// Entry is a source's entry, verified: it follows the one before.
	Entry Kind = 1
	// Blob is a blob's stored frame, verified to be its hash's content.
	Blob Kind = 2
)

// MaxRecord bounds a record's body (a blob's frame is the largest).
const MaxRecord = 512<<20 + headerSize

// SegmentSize is the size beyond which Append starts a new segment.
const SegmentSize = 64 << 20

const (
	magic      = "opx-journal/1\n"
	headerSize = 1 + 16 + 8 + 32
	suffix     = ".wal"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one record.
type Record struct {
	Kind   Kind
	Source string // a ledger id: 32 lowercase hex
	Seq    uint64
	Blob   [32]byte // the blob's hash (Kind Blob)
	Data   []byte
}

// Size is the record's size on disk.
func (r *Record) Size() int64 { return int64(4 + headerSize + len(r.Data) + 4) }

// Options configure a journal.
type Options struct {
	// NoSync skips fsync (tests only).
	NoSync bool
	// SegmentSize overrides SegmentSize (tests).
	SegmentSize int64
}

// Journal is an open journal. Append, Sync and Done may be called from
// different goroutines.
type Journal struct {
	dir  string
	opts Options

	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	active  uint64 // the segment appended to (0: none yet)
	size    int64  // its size
	pending map[uint64]int
	newSeg  bool // a segment was created since the last Sync
	failed  error
}

// Open opens (creating) the journal in dir; it reads nothing: Replay
// does, before the first Append.
func Open(dir string, opts Options) (*Journal, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = SegmentSize
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{dir: dir, opts: opts, pending: map[uint64]int{}}, nil
}

// Dir is the journal's directory.
func (j *Journal) Dir() string { return j.dir }

func (j *Journal) path(seg uint64) string {
	return filepath.Join(j.dir, fmt.Sprintf("%016d%s", seg, suffix))
}

// segments lists the segments' numbers, in order; other files are left
// alone.
func (j *Journal) segments() ([]uint64, error) {
	ents, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), suffix)
		if !ok || len(name) != 16 || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil || n == 0 {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// Replay reads every record of every segment, in order, and calls fn
// with each (its Data is fn's to keep). A torn tail of the last segment
// is cut (the file truncated there) and reported by cut (bytes removed).
// Replay holds one record at a time. Records replayed stay in their
// segments until Reset.
func (j *Journal) Replay(fn func(seg uint64, off int64, r Record) error) (cut int64, err error) {
	segs, err := j.segments()
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	for i, seg := range segs {
		last := i == len(segs)-1
		good, bad, err := j.replaySegment(seg, fn)
		if err != nil {
			return cut, err
		}
		if bad == nil {
			continue
		}
		if !last {
			return cut, fmt.Errorf("%w: %s at offset %d: %v (the segments after it hold acknowledged records: the journal is left as it is)", ErrCorrupt, j.path(seg), good, bad)
		}
		st, err := os.Stat(j.path(seg))
		if err != nil {
			return cut, fmt.Errorf("journal: %w", err)
		}
		if err := os.Truncate(j.path(seg), good); err != nil {
			return cut, fmt.Errorf("journal: cut the torn tail of %s: %w", j.path(seg), err)
		}
		cut = st.Size() - good
	}
	return cut, nil
}

// replaySegment reads one segment: good is the offset after the last
// record that read, bad why the next one did not (nil: the end).
func (j *Journal) replaySegment(seg uint64, fn func(uint64, int64, Record) error) (good int64, bad, err error) {
	f, err := os.Open(j.path(seg))
	if err != nil {
		return 0, nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, nil, fmt.Errorf("journal: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<16)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		if st.Size() == 0 {
			return 0, nil, nil // created, nothing written
		}
		return 0, errors.New("no journal header"), nil
	}
	off := int64(len(magic))
	for {
		rec, n, rerr := readRecord(r, st.Size()-off)
		if rerr == io.EOF {
			return off, nil, nil
		}
		if rerr != nil {
			return off, rerr, nil
		}
		if err := fn(seg, off, rec); err != nil {
			return off, nil, err
		}
		off += n
	}
}

// readRecord reads one record of at most left bytes.
func readRecord(r *bufio.Reader, left int64) (Record, int64, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		if err == io.EOF {
			return Record{}, 0, io.EOF
		}
		return Record{}, 0, errors.New("a record's length cut short")
	}
	n := int64(binary.BigEndian.Uint32(lb[:]))
	switch {
	case n < headerSize:
		return Record{}, 0, fmt.Errorf("a record of %d bytes (at least %d)", n, headerSize)
	case n > MaxRecord:
		return Record{}, 0, fmt.Errorf("a record of %d bytes (at most %d)", n, int64(MaxRecord))
	case 4+n+4 > left:
		return Record{}, 0, fmt.Errorf("a record of %d bytes where the file holds %d more", n, left-8)
	}
	body := make([]byte, n+4)
	if _, err := io.ReadFull(r, body); err != nil {
		return Record{}, 0, errors.New("a record cut short")
	}
	crc := crc32.Update(crc32.Checksum(lb[:], castagnoli), castagnoli, body[:n])
	if crc != binary.BigEndian.Uint32(body[n:]) {
		return Record{}, 0, errors.New("a record whose checksum does not match")
	}
	rec := Record{Kind: Kind(body[0]), Source: hex.EncodeToString(body[1:17]), Seq: binary.BigEndian.Uint64(body[17:25])}
	copy(rec.Blob[:], body[25:57])
	rec.Data = body[headerSize:n:n]
	if rec.Kind != Entry && rec.Kind != Blob {
		return Record{}, 0, fmt.Errorf("a record of kind %d", rec.Kind)
	}
	return rec, 4 + n + 4, nil
}

// Reset removes every segment (the caller made each record durable
// elsewhere: after Replay, once the mirrors hold them).
func (j *Journal) Reset() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		return errors.New("journal: reset while appending")
	}
	segs, err := j.segments()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	for _, seg := range segs {
		if err := os.Remove(j.path(seg)); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.active = max(j.active, seg)
	}
	return nil
}

// Append writes recs (not durable before Sync) and returns the segment
// that holds them all: the caller reports them Done with it.
func (j *Journal) Append(recs []Record) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failed != nil {
		return 0, j.failed
	}
	if j.f == nil || j.size >= j.opts.SegmentSize {
		if err := j.rotate(); err != nil {
			j.failed = fmt.Errorf("%w: %v", ErrClosed, err)
			return 0, err
		}
	}
	for i := range recs {
		if err := j.write(&recs[i]); err != nil {
			j.failed = fmt.Errorf("%w: %v", ErrClosed, err)
			return 0, fmt.Errorf("journal: %w", err)
		}
	}
	j.pending[j.active] += len(recs)
	return j.active, nil
}

func (j *Journal) write(r *Record) error {
	id, err := hex.DecodeString(r.Source)
	if err != nil || len(id) != 16 {
		return fmt.Errorf("record source %q is not a ledger id", r.Source)
	}
	n := headerSize + len(r.Data)
	if n > MaxRecord {
		return fmt.Errorf("a record of %d bytes (at most %d)", n, int64(MaxRecord))
	}
	var h [4 + headerSize]byte
	binary.BigEndian.PutUint32(h[0:4], uint32(n))
	h[4] = byte(r.Kind)
	copy(h[5:21], id)
	binary.BigEndian.PutUint64(h[21:29], r.Seq)
	copy(h[29:61], r.Blob[:])
	crc := crc32.Update(crc32.Checksum(h[:], castagnoli), castagnoli, r.Data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	for _, b := range [][]byte{h[:], r.Data, tail[:]} {
		if _, err := j.w.Write(b); err != nil {
			return err
		}
	}
	j.size += r.Size()
	return nil
}

// rotate closes the active segment (durable: Sync ran before, or runs
// now) and starts the next; j.mu is held.
func (j *Journal) rotate() error {
	if j.f != nil {
		if err := j.syncLocked(); err != nil {
			return err
		}
		if err := j.f.Close(); err != nil {
			return err
		}
		old := j.active
		j.f, j.w = nil, nil
		j.removable(old)
	}
	segs, err := j.segments()
	if err != nil {
		return err
	}
	next := j.active + 1
	if len(segs) > 0 {
		next = max(next, segs[len(segs)-1]+1)
	}
	f, err := os.OpenFile(j.path(next), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	j.f, j.w, j.active, j.size, j.newSeg = f, bufio.NewWriterSize(f, 1<<20), next, int64(len(magic)), true
	_, err = j.w.WriteString(magic)
	return err
}

// Sync makes every record appended so far durable.
func (j *Journal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failed != nil {
		return j.failed
	}
	if err := j.syncLocked(); err != nil {
		j.failed = fmt.Errorf("%w: %v", ErrClosed, err)
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (j *Journal) syncLocked() error {
	if j.f == nil {
		return nil
	}
	if err := j.w.Flush(); err != nil {
		return err
	}
	if j.opts.NoSync {
		return nil
	}
	if err := fdatasync(j.f); err != nil {
		return err
	}
	if j.newSeg {
		d, err := os.Open(j.dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return err
		}
		j.newSeg = false
	}
	return nil
}

// Done reports n records of segment seg durable elsewhere; a segment
// whose every record is done, and which is not the active one, is
// removed.
func (j *Journal) Done(seg uint64, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending[seg] -= n
	j.removable(seg)
}

// removable removes seg if nothing in it is pending and it is not
// active; j.mu is held. A failed removal is left for Reset.
func (j *Journal) removable(seg uint64) {
	if j.pending[seg] > 0 || (seg == j.active && j.f != nil) {
		return
	}
	delete(j.pending, seg)
	os.Remove(j.path(seg))
}

// Segments counts the segment files (the active one included).
func (j *Journal) Segments() int {
	segs, _ := j.segments()
	return len(segs)
}

// Close flushes and closes the active segment (not synced: Sync first).
// It stays on disk until Reset.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.w.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f, j.w = nil, nil
	j.failed = ErrClosed
	return err
}
