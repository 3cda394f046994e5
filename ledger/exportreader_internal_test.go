package ledger

import (
	"bytes"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzExportReader: the export reader accounts for every byte of a plain
// stream: the lines it returns, each with its "\n", add up to the input;
// there is one line per "\n" plus one for a final line without it; a line
// comes back whole (or, over MaxLineSize, marked bad) and is marked bad
// exactly when it is empty, cut, or holds a CR or a NUL. Compressed, the
// same stream reads the same. Its corpus is in testdata/fuzz.
func FuzzExportReader(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nb\n", "a\r\nb", "\x00\n", "{}\n{}", "\n\n\n"} {
		f.Add([]byte(s))
	}
	enc, _ := zstd.NewWriter(nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		got := readAllLines(t, in)
		var n int
		var rebuilt []byte
		for i, ln := range got {
			last := i == len(got)-1
			nl := !last || (len(in) > 0 && in[len(in)-1] == '\n')
			rebuilt = append(rebuilt, ln.raw...)
			if nl {
				rebuilt = append(rebuilt, '\n')
			}
			n += len(ln.raw)
			wantBad := len(ln.raw) == 0 || !nl || bytes.IndexByte(ln.raw, '\r') >= 0 || bytes.IndexByte(ln.raw, 0) >= 0
			if (ln.bad != "") != wantBad {
				t.Fatalf("line %d %q: bad %q, want bad %v", i+1, ln.raw, ln.bad, wantBad)
			}
			if ln.number != uint64(i+1) {
				t.Fatalf("line %d numbered %d", i+1, ln.number)
			}
		}
		if !bytes.Equal(rebuilt, in) {
			t.Fatalf("lines %q do not add up to the input %q", rebuilt, in)
		}
		if bytes.HasPrefix(in, zstdMagic) {
			return // the plain stream would be read as zstd
		}
		z := readAllLines(t, enc.EncodeAll(in, nil))
		if len(z) != len(got) {
			t.Fatalf("compressed: %d lines, plain: %d", len(z), len(got))
		}
		for i := range z {
			if !bytes.Equal(z[i].raw, got[i].raw) || z[i].bad != got[i].bad {
				t.Fatalf("compressed line %d %q %q, plain %q %q", i+1, z[i].raw, z[i].bad, got[i].raw, got[i].bad)
			}
		}
	})
}

func readAllLines(t *testing.T, in []byte) []exportLine {
	t.Helper()
	er, err := newExportReader(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	var out []exportLine
	for {
		ln, err := er.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			if bytes.HasPrefix(in, zstdMagic) {
				return out // a damaged frame: reported by the caller as unreadable
			}
			t.Fatalf("plain stream: %v", err)
		}
		out = append(out, ln)
	}
}

// TestExportReader_LongLine: a line over MaxLineSize is one line, marked
// bad, kept as a short prefix, and the lines around it read normally.
func TestExportReader_LongLine(t *testing.T) {
	in := append(append([]byte("first\n"), bytes.Repeat([]byte("x"), MaxLineSize+1)...), "\nlast\n"...)
	got := readAllLines(t, in)
	if len(got) != 3 || string(got[0].raw) != "first" || string(got[2].raw) != "last" ||
		got[1].bad == "" || len(got[1].raw) > maxBadPrefix || got[1].number != 2 || got[2].offset != int64(len(in)-5) {
		t.Fatalf("lines %d: %q %q / %q", len(got), got[0].raw, got[1].bad, got[2].raw)
	}
}

// TestCheckBlobFrame_Window: a blob frame that asks for a window larger
// than MaxStreamWindow is refused before the decoder allocates it; one
// within it hashes as a stream.
func TestCheckBlobFrame_Window(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), 3<<20) // 48 MiB
	var big bytes.Buffer
	zw, _ := zstd.NewWriter(&big, zstd.WithWindowSize(64<<20), zstd.WithEncoderConcurrency(1))
	zw.Write(content)
	zw.Close()
	dec := newBlobDecoder()
	defer dec.Close()
	f := checkBlobFrame(dec, Sum(content), bytes.NewReader(big.Bytes()))
	if f == nil || f.Kind != KindBlobCorrupt {
		t.Fatalf("a 64 MiB window: %v, want blob-corrupt", f)
	}
	ok := prepareBlob(content)
	if f := checkBlobFrame(dec, ok.hash, bytes.NewReader(ok.zst)); f != nil {
		t.Fatalf("a blob as opx stores it: %v", f)
	}
}
