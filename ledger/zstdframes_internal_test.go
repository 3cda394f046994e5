package ledger

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestFrameGuard: zstd streams as encoders write them (one frame or
// several, with and without checksums, raw, RLE and compressed blocks,
// content sizes of every width) pass through unchanged; a skippable
// frame, a reserved block type or bytes that are no frame fail, naming
// the byte.
func TestFrameGuard(t *testing.T) {
	text := []byte(strings.Repeat("line of an export\n", 5000) + strings.Repeat("z", 300000) + "\n")
	enc := func(opts ...zstd.EOption) []byte {
		e, err := zstd.NewWriter(nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(text, nil)
	}
	one := enc()
	noSum := enc(zstd.WithEncoderCRC(false))
	fastest := enc(zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithSingleSegment(false))
	tiny := enc(zstd.WithWindowSize(1 << 10))
	skippable := []byte{0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name  string
		in    []byte
		fails string
	}{
		{"one frame", one, ""},
		{"no checksum", noSum, ""},
		{"fastest, windowed", fastest, ""},
		{"small window", tiny, ""},
		{"several frames", cat(one, noSum, fastest, tiny), ""},
		{"skippable frame between", cat(one, skippable, one), "skippable frame at byte"},
		{"skippable frame at the end", cat(one, skippable), "skippable frame at byte"},
		{"garbage after the last frame", cat(one, []byte("garbage!")), "no zstd frame at byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, err := zstd.NewReader(newFrameGuard(bytes.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			defer dec.Close()
			out, err := io.ReadAll(dec)
			if tt.fails == "" {
				if err != nil || !bytes.HasPrefix(out, text) || len(out)%len(text) != 0 {
					t.Fatalf("read %d bytes, %v", len(out), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.fails) {
				t.Fatalf("error %v, want %q", err, tt.fails)
			}
		})
	}
	// A reserved block type in an otherwise good frame.
	g := newFrameGuard(nil)
	bad := append(append([]byte{}, one[:4]...), 0x00, 0x00) // magic, FHD: no window... then a header byte
	if err := g.walk(bad); err != nil {
		t.Fatal(err)
	}
	if err := g.walk([]byte{0x06, 0, 0}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("reserved block type: %v", err)
	}
}
