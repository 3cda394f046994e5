package liveledger

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// endlessFrame is a GetBlobFrame stream that never ends: the same piece
// for ever.
type endlessFrame struct {
	opxv1.LedgerService_GetBlobFrameClient
	piece []byte
	sent  int64
}

func (e *endlessFrame) Recv() (*opxv1.BlobFrameChunk, error) {
	e.sent += int64(len(e.piece))
	return &opxv1.BlobFrameChunk{Data: e.piece}, nil
}

// TestFrameReader_Endless: an engine that streams a blob frame without
// end is cut off past ledger.MaxBlobFrame bytes, with an error, in the
// memory of one piece.
func TestFrameReader_Endless(t *testing.T) {
	s := &endlessFrame{piece: make([]byte, 4<<20)}
	fr := &frameReader{s: s, cancel: func() {}, left: ledger.MaxBlobFrame}
	n, err := io.Copy(io.Discard, fr)
	if err == nil || !strings.Contains(err.Error(), "the engine sent a blob frame over") || errors.Is(err, io.EOF) {
		t.Fatalf("read %d bytes of an endless frame: %v", n, err)
	}
	t.Logf("cut off after %d bytes", n)
	if n < ledger.MaxBlobFrame || n > ledger.MaxBlobFrame+int64(len(s.piece)) {
		t.Errorf("read %d bytes, more than a frame and a piece", n)
	}
}
