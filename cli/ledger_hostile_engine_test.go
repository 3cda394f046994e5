package cli_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/ledgertest"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// lyingEngine is a LedgerService that serves a real ledger's entries and
// then lies as told: the point of these tests is an engine that cannot
// be trusted, so a fake server is the right tool here (the real engine
// never lies). It is published in the registry like a real engine, and
// the ledger file is held open for writing, as an engine holds it.
type lyingEngine struct {
	opxv1.UnimplementedLedgerServiceServer
	l *ledger.Ledger
	// batch, if set, replaces what ReadEntries sends (given the request).
	batch func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error
	// endlessTiles makes the engine claim a tree and send tiles for ever.
	endlessTiles bool
	// reorderFrames swaps the first two blob frames of a batch.
	reorderFrames bool
	// follow, if set, replaces what Follow sends.
	follow func(send func(*opxv1.LedgerEntry) error) error
	// followEnds, if set, is Follow: the stream ends (cleanly, io.EOF
	// for the client) when it returns nil.
	followEnds func(ctx context.Context, req *opxv1.FollowRequest, send func(*opxv1.LedgerEntry) error) error
}

func (f *lyingEngine) Head(context.Context, *opxv1.HeadRequest) (*opxv1.HeadResponse, error) {
	h, err := f.l.Head()
	resp := &opxv1.HeadResponse{LedgerId: h.LedgerID, Seq: h.Seq, Hash: h.Hash.String(), Format: ledger.Format}
	if f.endlessTiles {
		resp.TreeLayout, resp.TreeBucket = ledger.TreeLayout, true
	}
	return resp, err
}

// ReadTiles sends tiles without end when endlessTiles is set.
func (f *lyingEngine) ReadTiles(req *opxv1.ReadTilesRequest, s opxv1.LedgerService_ReadTilesServer) error {
	for i := uint64(0); f.endlessTiles; i++ {
		key := append([]byte{0}, make([]byte, 8)...)
		binary.BigEndian.PutUint64(key[1:], i)
		if err := s.Send(&opxv1.TileBatch{Tiles: []*opxv1.Tile{{Key: key, Data: make([]byte, 32)}}}); err != nil {
			return err
		}
	}
	return nil
}

// Verify says ok, whatever the ledger holds: opx must not ask.
func (f *lyingEngine) Verify(context.Context, *opxv1.VerifyRequest) (*opxv1.VerifyResponse, error) {
	return &opxv1.VerifyResponse{ReportJson: []byte(`{"ok":true,"entries":1,"head_seq":0,"head_hash":"","failures":[]}`)}, nil
}

func (f *lyingEngine) ReadEntries(req *opxv1.ReadEntriesRequest, s opxv1.LedgerService_ReadEntriesServer) error {
	if f.batch != nil {
		return f.batch(req, s.Send)
	}
	b := &opxv1.EntryBatch{}
	err := f.l.RangeRaw(req.FromSeq, req.ToSeq, func(seq uint64, raw []byte) error {
		b.Entries = append(b.Entries, &opxv1.LedgerEntry{Seq: seq, Raw: append([]byte(nil), raw...)})
		return nil
	})
	if err != nil {
		return err
	}
	return s.Send(b)
}

func (f *lyingEngine) GetBlobFrame(req *opxv1.GetBlobRequest, s opxv1.LedgerService_GetBlobFrameServer) error {
	h, _ := ledger.ParseHash(req.Hash)
	zst, err := f.l.BlobFrame(h)
	if err != nil {
		return status.Error(codes.NotFound, err.Error())
	}
	return s.Send(&opxv1.BlobFrameChunk{Data: zst, FrameSize: uint64(len(zst))})
}

func (f *lyingEngine) GetBlobFrames(req *opxv1.GetBlobFramesRequest, s opxv1.LedgerService_GetBlobFramesServer) error {
	out := &opxv1.BlobFrames{}
	for i, hs := range req.Hashes {
		h, _ := ledger.ParseHash(hs)
		zst, err := f.l.BlobFrame(h)
		out.Frames = append(out.Frames, &opxv1.BlobFrame{Index: uint32(i), Data: zst, Missing: err != nil})
	}
	if f.reorderFrames && len(out.Frames) > 1 {
		out.Frames[0], out.Frames[1] = out.Frames[1], out.Frames[0]
	}
	return s.Send(out)
}

func (f *lyingEngine) Follow(req *opxv1.FollowRequest, s opxv1.LedgerService_FollowServer) error {
	if f.followEnds != nil {
		return f.followEnds(s.Context(), req, s.Send)
	}
	if f.follow != nil {
		if err := f.follow(s.Send); err != nil {
			return err
		}
		<-s.Context().Done()
		return nil
	}
	return status.Error(codes.Unimplemented, "no")
}

// serveLying publishes f for the ledger at path (held open by f.l).
func serveLying(t *testing.T, path string, f opxv1.LedgerServiceServer) {
	t.Helper()
	lock, err := registry.Acquire(registry.Dir(filepath.Dir(path)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.NewToken(); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	opxv1.RegisterLedgerServiceServer(srv, f)
	go srv.Serve(lis)
	if err := lock.Publish(registry.Entry{Workspace: t.TempDir(), ManagerPID: os.Getpid(), EnginePID: os.Getpid(),
		Port: lis.Addr().(*net.TCPAddr).Port, Ledger: path}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(); lock.Release() })
}

// entriesOf returns the ledger's stored entries.
func entriesOf(t *testing.T, l *ledger.Ledger) []*opxv1.LedgerEntry {
	t.Helper()
	var out []*opxv1.LedgerEntry
	if err := l.RangeRaw(0, ^uint64(0), func(seq uint64, raw []byte) error {
		out = append(out, &opxv1.LedgerEntry{Seq: seq, Raw: append([]byte(nil), raw...)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLedgerLive_LyingEngine: bytes from an engine are outside input.
// Verify through an engine that alters an entry finds it (whatever the
// engine's own Verify says); an oversize message, an entry over the
// maximum size and an endless or disordered stream are refused with a
// clear error (exit 1), in bounded memory.
func TestLedgerLive_LyingEngine(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	big := strings.Repeat("x", ledger.MaxLineSize+1)
	cases := []struct {
		name  string
		batch func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error
		code  int
		want  string
	}{
		{"altered entry", func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error {
			return func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
				out := &opxv1.EntryBatch{}
				for _, e := range es[req.FromSeq : req.ToSeq+1] {
					raw := e.Raw
					if e.Seq == 3 {
						raw = []byte(strings.Replace(string(raw), "entry number 3", "entry number 9", 1))
					}
					out.Entries = append(out.Entries, &opxv1.LedgerEntry{Seq: e.Seq, Raw: raw})
				}
				return send(out)
			}
		}, cli.ExitIntegrity, "seq 4  hash-mismatch"},
		{"oversize message", func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error {
			return func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
				return send(&opxv1.EntryBatch{Entries: []*opxv1.LedgerEntry{{Seq: 0, Raw: []byte(big)}, {Seq: 1, Raw: []byte(big)}}})
			}
		}, cli.ExitError, "larger than any ledger message"},
		{"entry over the maximum size", func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error {
			return func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
				return send(&opxv1.EntryBatch{Entries: []*opxv1.LedgerEntry{{Seq: 0, Raw: []byte(big)}}})
			}
		}, cli.ExitError, "over the maximum entry size"},
		{"endless stream", func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error {
			return func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
				for seq := uint64(0); ; seq++ { // the entries, then on past the head for ever
					if err := send(&opxv1.EntryBatch{Entries: []*opxv1.LedgerEntry{{Seq: seq, Raw: es[min(seq, uint64(len(es)-1))].Raw}}}); err != nil {
						return err
					}
				}
			}
		}, cli.ExitOK, "ok: 9 entries"}, // read up to the head, then the stream is dropped
		{"entries repeated", func(es []*opxv1.LedgerEntry) func(*opxv1.ReadEntriesRequest, func(*opxv1.EntryBatch) error) error {
			return func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
				for { // the same entry for ever
					if err := send(&opxv1.EntryBatch{Entries: []*opxv1.LedgerEntry{es[0]}}); err != nil {
						return err
					}
				}
			}
		}, cli.ExitError, "out of order"},
		{"blob frames out of order", nil, cli.ExitError, "the engine sent blob 1 of a batch where 0 was due"},
		{"endless tiles", nil, cli.ExitError, "more than 66 tree tiles for a tree of 9 entries"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgertest.Copy(t, newLedger(t, 8).Path, filepath.Join(t.TempDir(), "ledger.db"))
			l, err := ledger.Open(path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			f := &lyingEngine{l: l, reorderFrames: tc.name == "blob frames out of order", endlessTiles: tc.name == "endless tiles"}
			if tc.batch != nil {
				f.batch = tc.batch(entriesOf(t, l))
			}
			serveLying(t, path, f)
			r := run(t, "ledger", "verify", "--ledger", path)
			r.wantCode(t, tc.code)
			if !strings.Contains(r.stdout+r.stderr+fmt.Sprint(r.err), tc.want) {
				t.Errorf("verify through a lying engine: %v\n%s%s", r.err, r.stdout, r.stderr)
			}
		})
	}
}

// TestLedgerFollow_LyingEngine: follow prints nothing that does not chain
// onto what it printed: an entry with a forged prev, a repeated or a
// skipped entry is refused (exit 4) and never printed.
func TestLedgerFollow_LyingEngine(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	forge := func(es []*opxv1.LedgerEntry) *opxv1.LedgerEntry {
		// A well-formed entry 8 whose prev is not entry 7's hash.
		e, _ := ledger.ParseEntry(es[8].Raw)
		raw := strings.Replace(string(es[8].Raw), e.Prev.String(), ledger.Sum([]byte("forged")).String(), 1)
		return &opxv1.LedgerEntry{Seq: 8, Raw: []byte(raw)}
	}
	cases := map[string]func(es []*opxv1.LedgerEntry) []*opxv1.LedgerEntry{
		"forged prev": func(es []*opxv1.LedgerEntry) []*opxv1.LedgerEntry { return append(es[:8:8], forge(es)) },
		"repeated":    func(es []*opxv1.LedgerEntry) []*opxv1.LedgerEntry { return append(es[:8:8], es[7]) },
		"skipped":     func(es []*opxv1.LedgerEntry) []*opxv1.LedgerEntry { return append(es[:8:8], es[9]) },
		"altered":     func(es []*opxv1.LedgerEntry) []*opxv1.LedgerEntry { return append(es[:7:7], forgeData(es[7]), es[8]) },
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			path := ledgertest.Copy(t, newLedger(t, 12).Path, filepath.Join(t.TempDir(), "ledger.db"))
			l, err := ledger.Open(path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			es := entriesOf(t, l)
			f := &lyingEngine{l: l, follow: func(s func(*opxv1.LedgerEntry) error) error {
				for _, e := range send(es) {
					if err := s(e); err != nil {
						return err
					}
				}
				return nil
			}}
			serveLying(t, path, f)
			fw := startFollow(t, "--ledger", path, "--from", "0", "--json")
			err = fw.exited(t)
			if code := cli.ExitCode(err); code != cli.ExitIntegrity {
				t.Fatalf("follow exited %d (%v):\n%s", code, err, fw.out.String())
			}
			lines := fw.lines(t)
			// Entries 0..7 chain and are printed (with "altered", entry 7
			// is the altered one: it is caught when entry 8 does not chain
			// onto it); entry 8 never is.
			if limit := 8; len(lines) != limit {
				t.Errorf("follow printed %d entries, want %d: %v", len(lines), limit, err)
			}
			for i, ln := range lines[:7] {
				if ln.Seq != es[i].Seq || string(ln.Entry) != string(es[i].Raw) {
					t.Errorf("line %d is entry %d, want %d", i, ln.Seq, es[i].Seq)
				}
			}
		})
	}
}

// forgeData returns e with a changed letter in its data.
func forgeData(e *opxv1.LedgerEntry) *opxv1.LedgerEntry {
	return &opxv1.LedgerEntry{Seq: e.Seq, Raw: []byte(strings.Replace(string(e.Raw), "entry number", "entry numbeR", 1))}
}

// TestLedgerFollow_StreamEnds: an engine that ends the Follow stream
// cleanly (io.EOF) is treated as one that restarted: follow reconnects,
// checks that the ledger still holds the last entry printed, and goes on.
// Ending it after every few entries still prints each entry once; ending
// it after an altered entry is caught on reconnect (exit 4).
func TestLedgerFollow_StreamEnds(t *testing.T) {
	t.Setenv("OPX_LEDGER", "")
	for _, altered := range []bool{false, true} {
		t.Run(fmt.Sprintf("altered=%v", altered), func(t *testing.T) {
			path := ledgertest.Copy(t, newLedger(t, 12).Path, filepath.Join(t.TempDir(), "ledger.db"))
			l, err := ledger.Open(path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			es := entriesOf(t, l)
			head := es[len(es)-1].Seq
			var mu sync.Mutex
			lied := false
			f := &lyingEngine{l: l}
			f.followEnds = func(ctx context.Context, req *opxv1.FollowRequest, send func(*opxv1.LedgerEntry) error) error {
				if req.FromSeq > head {
					<-ctx.Done() // nothing more: the stream stays open
					return nil
				}
				mu.Lock()
				lie := altered && !lied
				lied = lied || lie
				mu.Unlock()
				for seq := req.FromSeq; seq <= min(req.FromSeq+2, head); seq++ {
					e := es[seq]
					if lie && seq == req.FromSeq+2 {
						e = forgeData(e)
					}
					if err := send(e); err != nil {
						return err
					}
				}
				return nil // io.EOF for the client
			}
			serveLying(t, path, f)
			fw := startFollow(t, "--ledger", path, "--from", "0", "--json")
			if altered {
				err := fw.exited(t)
				if code := cli.ExitCode(err); code != cli.ExitIntegrity || !strings.Contains(err.Error(), "is no longer the one printed") {
					t.Fatalf("follow exited %d (%v), want %d:\n%s", code, err, cli.ExitIntegrity, fw.out.String())
				}
				return
			}
			fw.waitThrough(t, head)
			if err := fw.stop(); err != nil {
				t.Fatalf("follow: %v\n%s", err, fw.errOut.String())
			}
			lines := fw.lines(t)
			if len(lines) != len(es) {
				t.Fatalf("follow printed %d entries, want %d", len(lines), len(es))
			}
			for i, ln := range lines {
				if ln.Seq != es[i].Seq || string(ln.Entry) != string(es[i].Raw) {
					t.Fatalf("line %d is entry %d, want %d", i, ln.Seq, es[i].Seq)
				}
			}
		})
	}
}
