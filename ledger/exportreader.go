package ledger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/internal/regularfile"
)

// MaxLineSize is the maximum entry size: the longest JSONL line (one entry,
// without its "\n") any reader accepts. Entries inline only small payloads;
// anything large is a blob, so a longer line is hostile or broken, and it
// is reported as an integrity failure where it stands, never skipped.
const MaxLineSize = 16 << 20

// MaxStreamWindow bounds the zstd window of a .jsonl.zst export (and of a
// blob frame): the decoder refuses a frame that asks for more, so a
// hostile frame cannot make it allocate without limit. opx writes 8 MiB
// windows; zstd's command line uses at most 8 MiB below --long and -20.
const MaxStreamWindow = 16 << 20

// maxBadPrefix is how much of a line that cannot be an entry (too long) is
// kept: enough to hash nothing and show the start in a detail.
const maxBadPrefix = 64

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// exportLine is one line of an export as the reader found it.
type exportLine struct {
	// raw is the line without its "\n". For a line too long to be an
	// entry, only its first bytes are kept.
	raw []byte
	// number is the 1-based line number; offset is the byte offset of the
	// line's first byte in the (decompressed) stream.
	number uint64
	offset int64
	// bad says why the line cannot be an entry ("" when it may be one): too
	// long, empty, no final newline, a carriage return or a NUL byte.
	bad string
}

// exportReader is the one way an export (.jsonl, or .jsonl.zst told apart
// by the zstd magic, not the name) becomes lines: verify, import and the
// fuzz targets all read through it. It accounts for every byte: each line
// comes back, with a reason when it cannot be an entry, and whatever stops
// the reading (a zstd frame that does not decode, trailing bytes after the
// last frame, an I/O error) is an error at a position. It holds at most
// one line (MaxLineSize) plus its buffers, whatever the input's shape.
type exportReader struct {
	br     *bufio.Reader
	zr     *zstd.Decoder
	f      *os.File
	ctx    context.Context // if set, a cancel stops the reading
	number uint64
	offset int64
	err    error // sticky
}

// ErrNotRegular is returned when an input that must be a regular file (an
// export, a manifest, a blob in a bundle) is a directory, a FIFO, a device
// or a socket: opx reads none of those, so /dev/zero or a pipe cannot make
// it hang or read without end. It is regularfile.ErrNotRegular, the one
// sentinel of every reader of outside files.
var ErrNotRegular = regularfile.ErrNotRegular

// openRegular opens path for reading only if it is a regular file
// (regularfile.Open: without blocking on a FIFO, checked on the opened
// file).
func openRegular(path string) (*os.File, error) { return regularfile.Open(path) }

// openExport opens an export file for reading. Errors here are
// operational (no such file, not a regular file); what the file holds is
// judged line by line.
func openExport(path string) (*exportReader, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	r, err := newExportReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// entryMembers are the members every entry has, as they appear in its
// canonical form: a line that names none of them is no entry, however
// damaged. One changed byte can spoil one of them, never all.
var entryMembers = [][]byte{[]byte(`"data":{`), []byte(`"prev":"`), []byte(`"seq":`), []byte(`"type":"`)}

// sniffExport returns an error wrapping ErrNotExport when the file at path
// is plainly not an export: its first two lines (read as verify reads
// them, decompressed, bounded) name none of an entry's members. Two, so
// that a newline written into the first entry still leaves its members
// on the next line: a damaged export is an integrity finding, not this.
// A file that does not read, is empty or holds only empty lines is left
// to the reader that follows, which says what is wrong at its position.
func sniffExport(path string) error {
	er, err := openExport(path)
	if err != nil {
		return err
	}
	defer er.Close()
	binary, content := false, false
	for range 2 {
		ln, err := er.next()
		if err != nil {
			break
		}
		for _, m := range entryMembers {
			if bytes.Contains(ln.raw, m) {
				return nil
			}
		}
		content = content || len(ln.raw) > 0
		binary = binary || bytes.IndexByte(ln.raw, 0) >= 0 || !utf8.Valid(ln.raw)
	}
	if !content {
		return nil
	}
	what := "text"
	if binary {
		what = "binary"
	}
	return fmt.Errorf("%w: it begins with %s that is no ledger entry (an export is the JSON lines `opx ledger export` writes, one entry a line, optionally zstd-compressed)",
		ErrNotExport, what)
}

// newExportReader reads an export stream, decompressing it when it starts
// with the zstd magic number.
func newExportReader(r io.Reader) (*exportReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	er := &exportReader{}
	if magic, _ := br.Peek(4); bytes.Equal(magic, zstdMagic) {
		// The guard walks the frames the decoder reads, so that a
		// skippable frame (which the decoder would pass over) fails.
		zr, err := zstd.NewReader(newFrameGuard(br), zstd.WithDecoderMaxMemory(MaxStreamWindow),
			zstd.WithDecoderMaxWindow(MaxStreamWindow), zstd.WithDecoderConcurrency(2))
		if err != nil {
			return nil, err
		}
		er.zr = zr
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	er.br = br
	return er, nil
}

// Close releases the decoder and the file.
func (r *exportReader) Close() error {
	if r.zr != nil {
		r.zr.Close()
	}
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// next returns the next line. It returns io.EOF after the last line, and
// any other error (sticky) when the stream cannot be read further; the
// error names the line and byte where reading stopped.
func (r *exportReader) next() (exportLine, error) {
	if r.err != nil {
		return exportLine{}, r.err
	}
	if r.ctx != nil && r.number%1024 == 0 && r.ctx.Err() != nil {
		r.err = fmt.Errorf("interrupted: %w", r.ctx.Err())
		return exportLine{}, r.err
	}
	ln := exportLine{number: r.number + 1, offset: r.offset}
	var line []byte
	var n int64 // bytes of the line, its "\n" excluded
	for {
		frag, err := r.br.ReadSlice('\n')
		body := frag
		if err == nil {
			body = frag[:len(frag)-1]
		}
		if n+int64(len(body)) <= MaxLineSize {
			line = append(line, body...)
		} else if len(line) < maxBadPrefix {
			line = append(line, body[:min(len(body), maxBadPrefix-len(line))]...)
		}
		n += int64(len(body))
		r.offset += int64(len(frag))
		switch {
		case err == nil:
			r.number++
			ln.raw, ln.bad = judgeLine(line, n, true)
			return ln, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if n == 0 {
				r.err = io.EOF
				return exportLine{}, io.EOF
			}
			r.number++
			r.err = io.EOF
			ln.raw, ln.bad = judgeLine(line, n, false)
			return ln, nil
		default:
			r.err = fmt.Errorf("line %d, byte %d: stream does not read: %w", ln.number, r.offset, err)
			return exportLine{}, r.err
		}
	}
}

// judgeLine returns the line to pass on and why a line of n bytes (line
// holds them, or a prefix when n is over MaxLineSize) cannot be an entry,
// or "". Of a line too long, only its first bytes are kept.
func judgeLine(line []byte, n int64, newline bool) ([]byte, string) {
	if n > MaxLineSize {
		line = line[:min(len(line), maxBadPrefix)]
		return line, fmt.Sprintf("line of %d bytes is longer than the maximum entry size (%d bytes), starting %q", n, MaxLineSize, line)
	}
	return line, lineProblem(line, n, newline)
}

// lineProblem says why a line of n bytes cannot be an entry, or "".
func lineProblem(line []byte, n int64, newline bool) string {
	switch {
	case !newline:
		return "last line has no newline (cut stream?)"
	case n == 0:
		return "empty line"
	}
	if i := bytes.IndexByte(line, '\r'); i >= 0 {
		return fmt.Sprintf("carriage return at byte %d of the line (an export's lines end in \\n only)", i)
	}
	if i := bytes.IndexByte(line, 0); i >= 0 {
		return fmt.Sprintf("NUL byte at byte %d of the line", i)
	}
	return ""
}
