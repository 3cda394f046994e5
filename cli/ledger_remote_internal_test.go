package cli

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
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

// TestSettleRunningPlans: a rollback plan open at the head a verify
// through the engine read to is settled by its outcome after that head
// (the engine was carrying it out), and reported when none comes.
func TestSettleRunningPlans(t *testing.T) {
	planWait = 200 * time.Millisecond
	defer func() { planWait = 10 * time.Second }()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	app, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: event.TypeRollbackStarted, Data: map[string]any{"snapshot": 1, "workspace": "/w", "pre_snapshot": 0, "forced": false, "files": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	plan := app[0].Seq
	head, _ := l.Head()
	open := func() []*ledger.IntegrityError {
		return []*ledger.IntegrityError{{Seq: plan, Kind: ledger.KindCausality, Detail: "no outcome"}}
	}
	if fs := settleRunningPlans(l.LocalSource(head), head, open)(); len(fs) != 1 {
		t.Errorf("a plan with no outcome at all: %d failures, want 1", len(fs))
	}
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: event.TypeRollback, Data: map[string]any{"snapshot": 1, "plan": plan, "pre_snapshot": 1, "forced": false, "files": []any{}}}); err != nil {
		t.Fatal(err)
	}
	if fs := settleRunningPlans(l.LocalSource(head), head, open)(); len(fs) != 0 {
		t.Errorf("a plan whose outcome came after the head: %v", fs[0])
	}
}
