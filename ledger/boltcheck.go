package ledger

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's on-disk meta page (go.etcd.io/bbolt internal/common): a 16-byte
// page header (id, flags, count, overflow), then magic, version,
// page size, flags, the root bucket (root pgid, sequence), the freelist
// pgid, the high-water pgid, the txid and an FNV-64a checksum of the meta
// bytes before it.
const (
	boltPageHeader  = 16
	boltMetaSize    = 64
	boltMetaSumAt   = 56 // offset of the checksum inside the meta
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltNoFreelist  = ^uint64(0)
	boltMinPageSize = 1 << 10
	boltMaxPageSize = 1 << 24
)

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// parseBoltMeta decodes and validates the meta in a page read at the
// start of page buf (at least boltPageHeader+boltMetaSize bytes).
func parseBoltMeta(buf []byte) (boltMeta, error) {
	if len(buf) < boltPageHeader+boltMetaSize {
		return boltMeta{}, fmt.Errorf("meta page cut short")
	}
	le := binary.LittleEndian
	m := buf[boltPageHeader : boltPageHeader+boltMetaSize]
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, fmt.Errorf("no bbolt magic number")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:boltMetaSumAt])
	if h.Sum64() != le.Uint64(m[boltMetaSumAt:]) {
		return boltMeta{}, fmt.Errorf("meta checksum does not match")
	}
	return boltMeta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pgid:     le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}, nil
}

// checkBoltFile reads the two meta pages of a bbolt file before bbolt
// maps it, and refuses (ErrUnreadable) a file bbolt would read past its
// end, which is a SIGBUS rather than an error: a file cut short (the
// pages a meta says exist are not all there), meta pages that do not
// validate, a page size or root outside the file. bbolt itself checks
// magic, version and checksum, but not that the file holds the pages.
func checkBoltFile(f *os.File, size int64) error {
	var first [boltPageHeader + boltMetaSize]byte
	if n, err := f.ReadAt(first[:], 0); err != nil {
		if err != io.EOF {
			return err
		}
		if n >= boltPageHeader+4 && le32(first[boltPageHeader:]) == boltMagic {
			return fmt.Errorf("%w: the file is %d bytes, too short for a ledger", ErrUnreadable, size)
		}
		return fmt.Errorf("%w: the file is %d bytes, too short to be a bbolt file", ErrNotLedger, size)
	}
	m0, err0 := parseBoltMeta(first[:])
	if err0 != nil && le32(first[boltPageHeader:]) != boltMagic {
		// Not bbolt at all (or its first page is gone): try the second
		// meta at every page size bbolt supports, as bbolt does.
		for ps := int64(boltMinPageSize); ps <= boltMaxPageSize && ps+int64(len(first)) <= size; ps <<= 1 {
			var buf [boltPageHeader + boltMetaSize]byte
			if _, err := f.ReadAt(buf[:], ps); err == nil {
				if m, err := parseBoltMeta(buf[:]); err == nil && int64(m.pageSize) == ps {
					return checkBoltMetas(f, size, ps)
				}
			}
		}
		return fmt.Errorf("%w: %v", ErrNotLedger, err0)
	}
	ps := int64(m0.pageSize)
	if err0 != nil {
		// Magic present but the meta is damaged: bbolt falls back to the
		// other meta; find the page size from it.
		ps = int64(os.Getpagesize())
	}
	return checkBoltMetas(f, size, ps)
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// checkBoltMetas checks both meta pages of a file of page size ps.
func checkBoltMetas(f *os.File, size, ps int64) error {
	if ps < boltMinPageSize || ps > boltMaxPageSize || ps&(ps-1) != 0 {
		return fmt.Errorf("%w: page size %d is not one bbolt writes", ErrUnreadable, ps)
	}
	if size < 2*ps {
		return fmt.Errorf("%w: the file is %d bytes, shorter than its two meta pages (%d bytes)", ErrUnreadable, size, 2*ps)
	}
	valid := 0
	var problems []string
	var best boltMeta
	for i := int64(0); i < 2; i++ {
		var buf [boltPageHeader + boltMetaSize]byte
		if _, err := f.ReadAt(buf[:], i*ps); err != nil {
			return err
		}
		m, err := parseBoltMeta(buf[:])
		if err != nil {
			problems = append(problems, fmt.Sprintf("meta page %d: %v", i, err))
			continue
		}
		switch {
		case int64(m.pageSize) != ps:
			return fmt.Errorf("%w: meta page %d says page size %d, meta page 0 says %d", ErrUnreadable, i, m.pageSize, ps)
		case m.pgid < 2 || m.pgid > uint64(size/ps):
			return fmt.Errorf("%w: the file is cut short: %d bytes, but meta page %d says it holds %d pages of %d bytes (%d bytes)",
				ErrUnreadable, size, i, m.pgid, ps, m.pgid*uint64(ps))
		case m.root < 2 || m.root >= m.pgid:
			return fmt.Errorf("%w: meta page %d names root page %d outside the file's %d pages", ErrUnreadable, i, m.root, m.pgid)
		case m.freelist != boltNoFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
			return fmt.Errorf("%w: meta page %d names freelist page %d outside the file's %d pages", ErrUnreadable, i, m.freelist, m.pgid)
		}
		valid++
		if m.txid >= best.txid {
			best = m // the meta bbolt will use
		}
	}
	if valid == 0 {
		return fmt.Errorf("%w: no valid meta page (%v)", ErrUnreadable, problems)
	}
	// Only the meta bbolt uses (the newest valid one) names live pages:
	// the older meta's freelist and tree may since have been reused.
	if best.freelist != boltNoFreelist {
		if err := checkBoltFreelist(f, best, ps); err != nil {
			return fmt.Errorf("%w: %v", ErrUnreadable, err)
		}
	}
	if err := checkBoltTree(f, int64(best.pgid)*ps, uint64(ps), best.pgid, best.root); err != nil {
		return fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	return nil
}

// checkBoltPath runs checkBoltFile on the file at path.
func checkBoltPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return checkBoltFile(f, fi.Size())
}

// checkBoltFreelist checks the freelist page a meta names: a freelist page
// whose ids fit in its pages, all of them inside the file. bbolt reads it
// when it opens a file for writing and trusts its count: a damaged count
// made it read past its map or allocate without bound.
func checkBoltFreelist(f *os.File, m boltMeta, ps int64) error {
	const freelistFlag = 0x10
	var hdr [boltPageHeader + 8]byte
	if _, err := f.ReadAt(hdr[:], int64(m.freelist)*ps); err != nil {
		return fmt.Errorf("freelist page %d does not read: %v", m.freelist, err)
	}
	le := binary.LittleEndian
	flags, count, overflow := le.Uint16(hdr[8:]), uint64(le.Uint16(hdr[10:])), uint64(le.Uint32(hdr[12:]))
	if flags != freelistFlag {
		return fmt.Errorf("page %d is not a freelist page (flags %#x)", m.freelist, flags)
	}
	first := uint64(0)
	if count == 0xFFFF {
		count, first = le.Uint64(hdr[boltPageHeader:]), 1
	}
	room := (overflow + 1) * uint64(ps)
	if m.freelist+overflow+1 > m.pgid || count > room/8 || boltPageHeader+(first+count)*8 > room {
		return fmt.Errorf("freelist page %d (%d ids, %d overflow pages) does not fit in the file's %d pages", m.freelist, count, overflow, m.pgid)
	}
	ids := make([]byte, count*8)
	if _, err := f.ReadAt(ids, int64(m.freelist)*ps+boltPageHeader+int64(first)*8); err != nil {
		return fmt.Errorf("freelist page %d does not read: %v", m.freelist, err)
	}
	for i := 0; i < len(ids); i += 8 {
		if id := le.Uint64(ids[i:]); id < 2 || id >= m.pgid {
			return fmt.Errorf("freelist page %d lists page %d outside the file's %d pages", m.freelist, id, m.pgid)
		}
	}
	return nil
}
