package ledger

import (
	"encoding/binary"
	"fmt"
	"io"
)

// frameGuard passes a zstd stream through unchanged while it walks the
// stream's frame structure (RFC 8878: frame header, blocks, checksum),
// and fails the read at a skippable frame. A zstd decoder skips such
// frames without a word, so an export could carry bytes no verification
// ever looked at; an export opx writes holds none. Memory: a few bytes of
// header; block bodies are counted, not kept.
type frameGuard struct {
	r      io.Reader
	offset int64  // bytes of the stream passed through
	need   int    // header bytes still to gather for the current state
	hdr    []byte // gathered header bytes
	skip   int64  // body bytes to pass before the next header
	state  int
	last   bool // the current block is the frame's last
	sum    bool // the frame ends in a 4-byte checksum
	err    error
}

const (
	fgMagic  = iota // 4 bytes: a frame's magic number
	fgFHD           // 1 byte: the frame header descriptor
	fgHeader        // the rest of the frame header
	fgBlock         // 3 bytes: a block header
)

func newFrameGuard(r io.Reader) *frameGuard { return &frameGuard{r: r, need: 4} }

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if perr := g.walk(p[:n]); perr != nil {
		g.err = perr
		return 0, perr
	}
	return n, err
}

// walk advances the frame walk over b.
func (g *frameGuard) walk(b []byte) error {
	for len(b) > 0 {
		if g.skip > 0 {
			k := min(g.skip, int64(len(b)))
			g.skip -= k
			g.offset += k
			b = b[k:]
			if g.skip == 0 && g.state == fgMagic {
				g.need = 4
			}
			continue
		}
		k := min(g.need-len(g.hdr), len(b))
		g.hdr = append(g.hdr, b[:k]...)
		g.offset += int64(k)
		b = b[k:]
		if len(g.hdr) < g.need {
			continue
		}
		if err := g.step(); err != nil {
			return err
		}
	}
	return nil
}

// step acts on a complete header piece in g.hdr.
func (g *frameGuard) step() error {
	h := g.hdr
	g.hdr = g.hdr[:0]
	switch g.state {
	case fgMagic:
		m := binary.LittleEndian.Uint32(h)
		if m&0xFFFFFFF0 == 0x184D2A50 {
			return fmt.Errorf("a zstd skippable frame at byte %d: an export holds only entries", g.offset-4)
		}
		if m != 0xFD2FB528 {
			return fmt.Errorf("no zstd frame at byte %d (magic %08x)", g.offset-4, m)
		}
		g.state, g.need = fgFHD, 1
	case fgFHD:
		d := h[0]
		single := d&0x20 != 0
		g.sum = d&0x04 != 0
		n := [4]int{0, 1, 2, 4}[d&3] // dictionary id
		switch d >> 6 {              // frame content size
		case 0:
			if single {
				n++
			}
		case 1:
			n += 2
		case 2:
			n += 4
		case 3:
			n += 8
		}
		if !single {
			n++ // window descriptor
		}
		if n == 0 {
			g.state, g.need = fgBlock, 3
		} else {
			g.state, g.need = fgHeader, n
		}
	case fgHeader:
		g.state, g.need = fgBlock, 3
	case fgBlock:
		v := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		g.last = v&1 != 0
		size := int64(v >> 3)
		switch (v >> 1) & 3 {
		case 1: // RLE: one byte stands for size bytes
			size = 1
		case 3:
			return fmt.Errorf("a reserved zstd block type at byte %d", g.offset-3)
		}
		g.skip = size
		if g.last {
			if g.sum {
				g.skip += 4
			}
			g.state, g.need = fgMagic, 4
		}
	}
	return nil
}
