package liveledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// MaxMessage bounds every message a client accepts from an engine:
// one entry of the largest size (ledger.MaxLineSize) and its framing. An
// engine is outside input to a review command; a larger message is
// refused by gRPC (RESOURCE_EXHAUSTED) before it is held.
const MaxMessage = ledger.MaxLineSize + 64<<10

// Ledger is the running engine's ledger, read through its
// LedgerService: a ledger.Source whose every byte the client checks
// itself (VerifySource, ExportSource). Head is fixed when it is opened;
// the ledger may grow meanwhile, and everything up to that head is fixed.
type Ledger struct {
	conn   *grpc.ClientConn
	client opxv1.LedgerServiceClient
	ctx    context.Context // carries the client token
	head   ledger.Head
	// layout and bucket are the engine's tree layout and whether it
	// holds a tree bucket (ledger.TileSource).
	layout string
	bucket bool
}

// Dial connects to the engine registered for the state
// directory that holds the ledger at path (the ledger's directory) and
// reads its durable head. It fails with registry.ErrNotRunning or
// ErrStarting when no engine serves there.
func Dial(c *cli.Context, path string) (*Ledger, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	e, tok, err := registry.Lookup(registry.Dir(filepath.Dir(abs)))
	if err != nil {
		return nil, err
	}
	if !ledgerloc.SamePath(abs, e.Ledger) {
		// Another file in the engine's directory: what the engine serves
		// is not this ledger.
		return nil, fmt.Errorf("%w: the engine registered in %s serves %s, not %s", ErrOtherLedger, filepath.Dir(abs), e.Ledger, path)
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage)))
	if err != nil {
		return nil, err
	}
	name := "opx"
	if c.Command != nil {
		name = "opx ledger " + c.Command.Name
	}
	r := &Ledger{conn: conn, client: opxv1.NewLedgerServiceClient(conn),
		ctx: metadata.AppendToOutgoingContext(c.Context, engine.TokenHeader, tok, "opx-client", name)}
	h, err := r.client.Head(r.ctx, &opxv1.HeadRequest{})
	if err == nil {
		r.head, err = headFrom(h)
		r.layout, r.bucket = h.TreeLayout, h.TreeBucket
	}
	if err != nil {
		conn.Close()
		return nil, EngineErr(err)
	}
	return r, nil
}

func headFrom(h *opxv1.HeadResponse) (ledger.Head, error) {
	hash, err := ledger.ParseHash(h.Hash)
	if err != nil {
		return ledger.Head{}, fmt.Errorf("the engine's head hash: %w", err)
	}
	if h.Format != ledger.Format {
		return ledger.Head{}, fmt.Errorf("the engine's ledger is %q, this opx reads %s", h.Format, ledger.Format)
	}
	return ledger.Head{LedgerID: h.LedgerId, Seq: h.Seq, Hash: hash}, nil
}

// ErrOtherLedger is returned for a ledger file that the engine registered
// in its directory does not serve.
var ErrOtherLedger = errors.New("not the engine's ledger")

// ErrEngineGone is wrapped by the error of a command whose engine stopped
// answering while it read through it.
var ErrEngineGone = errors.New("the engine stopped answering")

// EngineErr rewords an RPC failure for the command line.
func EngineErr(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.Unavailable, codes.Canceled:
		return fmt.Errorf("%w (%s); run the command again", ErrEngineGone, st.Message())
	case codes.ResourceExhausted:
		return fmt.Errorf("the engine sent a message larger than any ledger message (%d bytes): %s", MaxMessage, st.Message())
	}
	return fmt.Errorf("engine: %s: %s", st.Code(), st.Message())
}

func (r *Ledger) Close() error { return r.conn.Close() }

// FixedHead is the head fixed when the ledger was opened.
func (r *Ledger) FixedHead() ledger.Head { return r.head }

// Client is the engine's LedgerService, and Ctx the context its calls
// carry (the client token), for the commands that ask it more than this
// package reads (follow, note, rebuild, prove).
func (r *Ledger) Client() opxv1.LedgerServiceClient { return r.client }
func (r *Ledger) Ctx() context.Context              { return r.ctx }

// Conn is the connection to the engine (closed by Close).
func (r *Ledger) Conn() *grpc.ClientConn { return r.conn }

// Head returns the head fixed when the ledger was opened.
func (r *Ledger) Head() (ledger.Head, error) { return r.head, nil }

// Entries streams the stored entries from..to. What the engine sends is
// checked for shape only (seqs inside the range and increasing, no entry
// over ledger.MaxLineSize, so the stream ends); the entries themselves
// are the caller's to check.
func (r *Ledger) Entries(from, to uint64, fn func(seq uint64, raw []byte) error) error {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	s, err := r.client.ReadEntries(ctx, &opxv1.ReadEntriesRequest{FromSeq: from, ToSeq: to})
	if err != nil {
		return EngineErr(err)
	}
	next := from
	for {
		b, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return EngineErr(err)
		}
		for _, en := range b.Entries {
			if err := checkSent(en, next, to); err != nil {
				return err
			}
			if err := fn(en.Seq, en.Raw); err != nil {
				return err
			}
			if en.Seq == to {
				return nil // nothing may follow; stop reading
			}
			next = en.Seq + 1
		}
	}
}

// checkSent refuses an entry an engine may not send: outside the range
// asked for, not after the last one, or larger than any entry.
func checkSent(en *opxv1.LedgerEntry, next, to uint64) error {
	switch {
	case en.Seq < next || en.Seq > to:
		return fmt.Errorf("the engine sent entry %d, outside %d..%d or out of order: it is not a ledger opx can read", en.Seq, next, to)
	case len(en.Raw) > ledger.MaxLineSize:
		return fmt.Errorf("the engine sent entry %d of %d bytes, over the maximum entry size (%d bytes)", en.Seq, len(en.Raw), ledger.MaxLineSize)
	}
	return nil
}

// Blob opens a blob's stored frame as the engine streams it.
func (r *Ledger) Blob(h ledger.Hash) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	s, err := r.client.GetBlobFrame(ctx, &opxv1.GetBlobRequest{Hash: h.String()})
	var first *opxv1.BlobFrameChunk
	if err == nil {
		first, err = s.Recv()
	}
	if status.Code(err) == codes.NotFound {
		cancel()
		return nil, fmt.Errorf("blob %s: %w", h, ledger.ErrNotFound)
	}
	if err == io.EOF {
		err = fmt.Errorf("the engine sent no frame for blob %s", h)
	}
	if err != nil {
		cancel()
		return nil, EngineErr(err)
	}
	return &frameReader{s: s, cancel: cancel, buf: first.Data, left: ledger.MaxBlobFrame - int64(len(first.Data))}, nil
}

// frameReader reads a blob frame from its pieces, one message at a time,
// and refuses more than ledger.MaxBlobFrame bytes.
type frameReader struct {
	s      opxv1.LedgerService_GetBlobFrameClient
	cancel context.CancelFunc
	buf    []byte
	left   int64
	err    error
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		if f.left < 0 {
			f.err = fmt.Errorf("the engine sent a blob frame over %d bytes", int64(ledger.MaxBlobFrame))
			return 0, f.err
		}
		m, err := f.s.Recv()
		if err == io.EOF {
			f.err = io.EOF
			return 0, io.EOF
		}
		if err != nil {
			f.err = EngineErr(err)
			return 0, f.err
		}
		f.buf = m.Data
		f.left -= int64(len(m.Data))
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func (f *frameReader) Close() error { f.cancel(); return nil }

// OpenEngineOrFile opens the ledger at path for review: the file when no
// engine holds it, else the running engine's ledger. While an engine is
// (re)starting, or one just went away, it tries both again for a few
// seconds. Exactly one of the results is set.
func OpenEngineOrFile(c *cli.Context, path string) (*ledger.Ledger, *Ledger, error) {
	start := time.Now()
	deadline := start.Add(engineWait)
	for {
		l, err := ledger.OpenReadOnly(path)
		if !errors.Is(err, ledger.ErrLocked) {
			if err != nil {
				return nil, nil, ledgerloc.ExplainOpen(path, err)
			}
			return l, nil, nil
		}
		r, rerr := Dial(c, path)
		if rerr == nil {
			return nil, r, nil
		}
		if errors.Is(rerr, ErrOtherLedger) {
			deadline = time.Now() // no engine serves this file: waiting will not change that
		}
		if errors.Is(rerr, registry.ErrNotRunning) && time.Now().After(start.Add(lockWait)) {
			// No manager runs for this ledger: whatever holds the file
			// (an orphaned engine, an offline writer) is not serving it.
			deadline = time.Now()
		}
		if time.Now().After(deadline) || c.Context.Err() != nil {
			return nil, nil, &usage.Explained{Err: err, Msg: fmt.Sprintf(
				"an engine holds %s, and no engine registered for it answers (%v)", path, rerr)}
		}
		select {
		case <-c.Context.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// engineWait is how long a review command waits for an engine that is
// starting (or for the file, once an engine went away);
// lockWait is how long it waits for a file that something other than a
// registered engine holds (an offline writer, for a moment).
const (
	engineWait = 10 * time.Second
	lockWait   = time.Second
)

// Get is Ledger.Get through the engine: the stored entry seq, parsed
// and checked to be entry seq, or an error wrapping ErrNotFound.
func Get(r *Ledger, seq uint64) (ledger.Entry, error) {
	var e ledger.Entry
	found := false
	if seq <= r.head.Seq {
		err := r.Entries(seq, seq, func(_ uint64, raw []byte) error {
			var err error
			e, err = ledger.ParseStored(seq, raw)
			found = err == nil
			return err
		})
		if err != nil {
			return e, err
		}
	}
	if !found {
		return e, fmt.Errorf("entry %d: %w", seq, ledger.ErrNotFound)
	}
	return e, nil
}

// Stater summarises blobs through the engine for show, from the
// stored frames it streams, checked here.
type Stater struct{ R *Ledger }

// StatBlob reads the frame (without holding it) for its size and header.
func (s Stater) StatBlob(h ledger.Hash) (ledger.BlobInfo, error) {
	rc, err := s.R.Blob(h)
	if err != nil {
		return ledger.BlobInfo{}, err
	}
	defer rc.Close()
	head := make([]byte, 64)
	n, err := io.ReadFull(rc, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return ledger.BlobInfo{}, err
	}
	rest, err := io.Copy(io.Discard, rc)
	if err != nil {
		return ledger.BlobInfo{}, err
	}
	return ledger.StatBlobFrame(h, head[:n], n+int(rest)), nil
}

// ContentSize decompresses the frame as it streams, checking its hash.
func (s Stater) ContentSize(h ledger.Hash) (int64, error) {
	rc, err := s.R.Blob(h)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return ledger.BlobFrameSize(h, rc)
}

// BlobBatch fetches small frames many to a request (ledger.BlobBatchSource).
// Each frame is one the engine sends whole, within one message
// (MaxMessage); the caller checks it.
func (r *Ledger) BlobBatch(hashes []ledger.Hash, fn func(i int, zst []byte, found bool) error) error {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	req := &opxv1.GetBlobFramesRequest{Hashes: make([]string, len(hashes))}
	for i, h := range hashes {
		req.Hashes[i] = h.String()
	}
	s, err := r.client.GetBlobFrames(ctx, req)
	if err != nil {
		return EngineErr(err)
	}
	next := 0
	for {
		m, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return EngineErr(err)
		}
		for _, f := range m.Frames {
			if int(f.Index) != next {
				return fmt.Errorf("the engine sent blob %d of a batch where %d was due", f.Index, next)
			}
			var zst []byte
			if !f.Large && !f.Missing {
				zst = f.Data
				if zst == nil {
					zst = []byte{} // an empty frame: found, and not large
				}
			}
			if err := fn(next, zst, !f.Missing); err != nil {
				return err
			}
			next++
		}
	}
	if next != len(hashes) {
		return fmt.Errorf("the engine sent %d of %d blobs asked for", next, len(hashes))
	}
	return nil
}

// TreeLayout is the engine's tree layout, as its head said.
func (r *Ledger) TreeLayout() (string, bool, error) { return r.layout, r.bucket, nil }

// Tiles streams the engine's stored tiles of the tree of size entries.
func (r *Ledger) Tiles(size uint64, fn func(key, tile []byte) error) error {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	s, err := r.client.ReadTiles(ctx, &opxv1.ReadTilesRequest{Size: size})
	if err != nil {
		return EngineErr(err)
	}
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return EngineErr(err)
		}
		for _, t := range m.Tiles {
			if err := fn(t.Key, t.Data); err != nil {
				return err
			}
		}
	}
}

// ConsistencyProof asks the engine for the proof; the caller checks it
// against roots it trusts.
func (r *Ledger) ConsistencyProof(size1, size2 uint64) ([][]byte, error) {
	resp, err := r.client.ConsistencyProof(r.ctx, &opxv1.ConsistencyProofRequest{Size1: size1, Size2: size2})
	if err != nil {
		return nil, EngineErr(err)
	}
	if len(resp.Hashes) > tlog.MaxProofHashes {
		return nil, fmt.Errorf("the engine's consistency proof: %d hashes (at most %d)", len(resp.Hashes), tlog.MaxProofHashes)
	}
	return resp.Hashes, nil
}
