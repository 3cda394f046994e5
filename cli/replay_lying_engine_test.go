package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// streamingLiar is a lying engine (its Verify always says ok) that also
// streams its ledger's entries and blobs as replay's timeline reads them.
type streamingLiar struct{ lyingEngine }

func (f *streamingLiar) StreamEntries(req *opxv1.StreamEntriesRequest, s opxv1.LedgerService_StreamEntriesServer) error {
	to := req.ToSeq
	if to == 0 {
		to = ^uint64(0)
	}
	return f.l.RangeRaw(req.FromSeq, to, func(seq uint64, raw []byte) error {
		return s.Send(&opxv1.LedgerEntry{Seq: seq, Raw: append([]byte(nil), raw...)})
	})
}

func (f *streamingLiar) GetBlob(_ context.Context, req *opxv1.GetBlobRequest) (*opxv1.GetBlobResponse, error) {
	h, err := ledger.ParseHash(req.Hash)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	b, err := f.l.GetBlob(h)
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	return &opxv1.GetBlobResponse{Content: b}, nil
}

// TestReplay_ThroughLyingEngine: replay and report through an engine
// verify the ledger here, as offline, whatever the engine's own Verify
// says: a tampered entry is an integrity failure (exit 4), and no
// timeline is shown, both ways.
func TestReplay_ThroughLyingEngine(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	id, err := ledger.WorkspaceID(ws)
	if err != nil {
		t.Fatal(err)
	}
	path, err := ledger.DefaultPath(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ledgertest.Copy(t, tampered(t, newLedger(t, 12).Path, 5), path)
	session := ledgertest.Sessions[0]
	off := run(t, "replay", "--workspace", ws, session)
	off.wantCode(t, cli.ExitIntegrity)
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	serveLying(t, path, &streamingLiar{lyingEngine{l: l}})
	live := run(t, "replay", "--workspace", ws, session)
	live.wantCode(t, cli.ExitIntegrity)
	live.wantOut(t, "seq 6  hash-mismatch", "no timeline: the record does not verify")
	rep := run(t, "report", "--workspace", ws, session, "-o", filepath.Join(t.TempDir(), "r.html"))
	rep.wantCode(t, cli.ExitIntegrity)
}
