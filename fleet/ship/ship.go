package ship

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Bounds of the publishing window: messages and bytes awaiting
// JetStream's acknowledgement. A collector's reorder buffer holds at
// least this much per source.
const (
	MaxInFlight      = 256
	MaxInFlightBytes = 16 << 20
)

const (
	// persistEvery is how often the cursor is written while it moves.
	persistEvery = time.Second
	// ackTimeout bounds the wait for one publish's acknowledgement.
	ackTimeout = 10 * time.Second
	// retryMin and retryMax bound the pause after a failed attempt.
	retryMin, retryMax = 100 * time.Millisecond, 5 * time.Second
	// batchEntries is how many entries one read of the ledger takes (a
	// short read transaction each).
	batchEntries = 256
	// maxBatchBytes bounds the entries one read holds (plus one entry).
	maxBatchBytes = 8 << 20
	// maxBlobsSeen bounds the set of blobs shipped in this life (a blob
	// sent twice is harmless: it is deduplicated downstream).
	maxBlobsSeen = 1 << 16
)

// Errors of Start.
var (
	// ErrConfig is returned for a configuration that cannot work.
	ErrConfig = errors.New("fleet: invalid configuration")
)

// Config configures a Shipper.
type Config struct {
	// URL is the NATS server (or comma-separated servers) to connect to.
	URL string
	// Prefix is the subject prefix (fleet.DefaultPrefix when empty).
	Prefix string
	// Replicas is the streams' replicas when the shipper creates them
	// (1 when 0); an existing stream is left as configured.
	Replicas int
	// Options are extra NATS connection options: credentials, TLS.
	Options []nats.Option
	// Host, Workspace and Version are said in the hello.
	Host, Workspace, Version string
	// VerifierKey is the ledger's checkpoint verifier key: said in the
	// hello, and the key a cosigned checkpoint must carry the signature
	// of. Empty: cosignatures are not recorded.
	VerifierKey string
	// WitnessKey, when set, is the witness's verifier key (as `opx
	// collector key` prints it): only checkpoints it cosigned are
	// recorded. Empty: any cosignature on the ledger's own checkpoint.
	WitnessKey string
	// Logf logs what goes wrong (nothing when nil).
	Logf func(format string, args ...any)
}

// Recorder records a cosigned checkpoint in the ledger (the engine's
// recorder; the shipper never writes entries itself).
type Recorder interface {
	RecordCosigned(ctx context.Context, c *event.Cosigned) error
}

// Status is where shipping stands.
type Status struct {
	URL       string `json:"url"`
	Stream    string `json:"stream"`
	Subject   string `json:"subject"`
	Connected bool   `json:"connected"`
	// Acked: every entry up to Acked is on the stream (HasAcked false:
	// none yet).
	Acked    uint64 `json:"acked"`
	HasAcked bool   `json:"has_acked"`
	// Durable is the ledger's durable head, LagEntries how many durable
	// entries are not yet acknowledged, LagMS how old the oldest of them
	// is.
	Durable    uint64 `json:"durable"`
	LagEntries uint64 `json:"lag_entries"`
	LagMS      int64  `json:"lag_ms"`
	LastError  string `json:"last_error,omitempty"`
	// LastErrorAt is when LastError happened (zero: never).
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// CosignedSize is the tree size of the latest cosigned checkpoint
	// recorded (0: none), Witness its cosigner.
	CosignedSize uint64 `json:"cosigned_size,omitempty"`
	Witness      string `json:"witness,omitempty"`
	// Duplicates counts the entries of this life that JetStream already
	// held (resent after an error or a restart, dropped by its duplicate
	// window).
	Duplicates uint64 `json:"duplicates"`
}

// Shipper ships one ledger. Its methods are safe for concurrent use.
type Shipper struct {
	cfg    Config
	l      *ledger.Ledger
	rec    Recorder
	nc     *nats.Conn
	js     jetstream.JetStream
	id     string
	boot   string
	cursor string // the cursor's name
	cosigC string // the last recorded cosignature's cursor

	// wake is signalled when the connection comes back.
	wake   chan struct{}
	cosigs chan *nats.Msg
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu        sync.Mutex
	acked     uint64
	hasAcked  bool
	persisted uint64
	hasPers   bool
	lastErr   string
	lastErrAt time.Time
	cosigned  uint64
	witness   string
	blobsSeen map[ledger.Hash]struct{}
	dups      uint64
}

// Start connects to NATS (in the background: a server that is down is
// retried for as long as the shipper runs) and starts shipping l, which
// must be the engine's writable ledger. It returns an error only for a
// configuration that cannot work.
func Start(ctx context.Context, cfg Config, l *ledger.Ledger, rec Recorder) (*Shipper, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = fleet.DefaultPrefix
	}
	if err := fleet.CheckPrefix(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if cfg.URL == "" {
		return nil, fmt.Errorf("%w: no NATS url", ErrConfig)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if l.ReadOnly() {
		return nil, fmt.Errorf("%w: the ledger is open read-only", ErrConfig)
	}
	s := &Shipper{cfg: cfg, l: l, rec: rec, id: l.ID(), boot: randomHex(16),
		cursor: "fleet." + fleet.LedgerStream(cfg.Prefix), cosigC: "fleet." + fleet.CosigStream(cfg.Prefix),
		wake: make(chan struct{}, 1), cosigs: make(chan *nats.Msg, 1), blobsSeen: map[ledger.Hash]struct{}{}}
	var err error
	if s.acked, s.hasAcked, err = l.Cursor(s.cursor); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if h, err := l.Head(); err == nil && s.hasAcked && s.acked > h.Seq {
		// The file is older than the cursor (restored from a copy): what
		// comes next is another history at seqs the stream holds, shipped
		// for the collector to see (a rewrite, a fork), never skipped.
		s.fail(fmt.Errorf("the cursor (%d) is past the ledger's head (%d): the ledger was replaced by an older copy; shipping from its head", s.acked, h.Seq))
		s.acked = h.Seq
	}
	s.persisted, s.hasPers = s.acked, s.hasAcked
	if s.cosigned, _, err = l.Cursor(s.cosigC); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if s.cosigned > 0 {
		s.witness = lastWitness(l)
	}
	opts := append([]nats.Option{
		nats.Name("opx engine " + s.id),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { s.poke() }),
		nats.ConnectHandler(func(*nats.Conn) { s.poke() }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				s.fail(fmt.Errorf("disconnected: %w", err))
			}
		}),
	}, cfg.Options...)
	if s.nc, err = nats.Connect(cfg.URL, opts...); err != nil {
		return nil, fmt.Errorf("%w: nats: %v", ErrConfig, err)
	}
	if s.js, err = jetstream.New(s.nc, jetstream.WithPublishAsyncMaxPending(MaxInFlight*2),
		jetstream.WithPublishAsyncTimeout(ackTimeout)); err != nil {
		s.nc.Close()
		return nil, fmt.Errorf("fleet: %w", err)
	}
	// A core subscription: JetStream publishes reach it too, and it
	// survives reconnects. Only the latest pending one is kept.
	sub, err := s.nc.Subscribe(fleet.CosigSubject(cfg.Prefix, s.id), s.offerCosig)
	if err == nil {
		err = sub.SetPendingLimits(cosigPending, cosigPending*(fleet.MaxCosigBytes+4096))
	}
	if err != nil {
		s.nc.Close()
		return nil, fmt.Errorf("fleet: %w", err)
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done.Add(2)
	go func() { defer s.done.Done(); s.run(ctx) }()
	go func() { defer s.done.Done(); s.cosigLoop(ctx) }()
	return s, nil
}

// Close stops shipping, waits for what is in flight (bounded by
// ackTimeout), writes the cursor and closes the connection. drain bounds
// how long it first waits for the durable entries to be shipped (0:
// not at all).
func (s *Shipper) Close(drain time.Duration) error {
	if drain > 0 {
		deadline := time.Now().Add(drain)
		for time.Now().Before(deadline) {
			wm, err := s.l.Watermark()
			s.mu.Lock()
			caught := s.hasAcked && s.acked >= wm.Durable
			s.mu.Unlock()
			if err != nil || caught || !s.nc.IsConnected() {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	s.cancel()
	s.done.Wait()
	s.nc.Close()
	return s.persist(true)
}

// Status returns where shipping stands.
func (s *Shipper) Status() Status {
	s.mu.Lock()
	st := Status{URL: s.nc.ConnectedUrlRedacted(), Stream: fleet.LedgerStream(s.cfg.Prefix), Subject: fleet.LedgerSubject(s.cfg.Prefix, s.id),
		Connected: s.nc.IsConnected(), Acked: s.acked, HasAcked: s.hasAcked, LastError: s.lastErr, LastErrorAt: s.lastErrAt,
		CosignedSize: s.cosigned, Witness: s.witness, Duplicates: s.dups}
	s.mu.Unlock()
	if st.URL == "" {
		st.URL = redact(s.cfg.URL)
	}
	wm, err := s.l.Watermark()
	if err != nil {
		return st
	}
	st.Durable = wm.Durable
	next := uint64(0)
	if st.HasAcked {
		next = st.Acked + 1
	}
	if next <= wm.Durable {
		st.LagEntries = wm.Durable - next + 1
		if e, err := s.l.Get(next); err == nil {
			if ts, err := e.Time(); err == nil {
				st.LagMS = max(0, time.Since(ts).Milliseconds())
			}
		}
	}
	return st
}

func (s *Shipper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Shipper) fail(err error) {
	s.cfg.Logf("fleet: %v", err)
	s.mu.Lock()
	s.lastErr, s.lastErrAt = err.Error(), time.Now()
	s.mu.Unlock()
}

// next is the first seq not known to be on the stream.
func (s *Shipper) next() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasAcked {
		return 0
	}
	return s.acked + 1
}

// ack moves the cursor to seq, whose entry JetStream acknowledged (a
// nil a: found on the stream).
func (s *Shipper) ack(seq uint64, a *jetstream.PubAck) {
	s.mu.Lock()
	if a != nil && a.Duplicate {
		s.dups++
	}
	if !s.hasAcked || seq > s.acked {
		s.acked, s.hasAcked = seq, true
	}
	s.mu.Unlock()
}

// persist writes the cursor when it moved since it was last written.
func (s *Shipper) persist(force bool) error {
	s.mu.Lock()
	acked, has := s.acked, s.hasAcked
	moved := has && (!s.hasPers || acked != s.persisted)
	s.mu.Unlock()
	if !moved {
		return nil
	}
	if err := s.l.SetCursor(s.cursor, acked); err != nil {
		return fmt.Errorf("fleet: cursor: %w", err)
	}
	s.mu.Lock()
	s.persisted, s.hasPers = acked, true
	s.mu.Unlock()
	return nil
}

// run ships until ctx is done: one attempt per connection, a pause
// (growing up to retryMax) after one that failed.
func (s *Shipper) run(ctx context.Context) {
	pause := retryMin
	for ctx.Err() == nil {
		if !s.nc.IsConnected() {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			case <-time.After(pause):
			}
			continue
		}
		err := s.attempt(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.fail(err)
		}
		if perr := s.persist(false); perr != nil {
			s.fail(perr)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, retryMax)
		if err == nil {
			pause = retryMin
		}
	}
}

// attempt runs one shipping session on the current connection: streams,
// resume point, hello, then every durable entry as it comes, until an
// error or ctx.
func (s *Shipper) attempt(ctx context.Context) error {
	if err := fleet.EnsureStreams(ctx, s.js, s.cfg.Prefix, s.cfg.Replicas); err != nil {
		return err
	}
	if err := s.resume(ctx); err != nil {
		return err
	}
	s.fetchCosig(ctx)
	if err := s.hello(ctx); err != nil {
		return err
	}
	w := &window{}
	defer w.drain(ctx, s)
	tick := time.NewTicker(persistEvery)
	defer tick.Stop()
	pos := s.next()
	persisted := time.Now()
	for {
		wm, err := s.l.Watermark()
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		if pos <= wm.Durable {
			// A backlog: batches of entries, the cursor written as it
			// goes (a crash then resends at most a second's worth).
			last, err := s.shipRange(ctx, w, pos, min(wm.Durable, pos+batchEntries-1))
			if err != nil {
				return err
			}
			pos = last + 1
			if err := w.reap(s); err != nil {
				return err
			}
			if time.Since(persisted) >= persistEvery {
				if err := s.persist(false); err != nil {
					return err
				}
				persisted = time.Now()
			}
			continue
		}
		if err := w.waitAll(ctx, s); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wm.Advanced:
		case <-tick.C:
			if err := s.persist(false); err != nil {
				return err
			}
		}
		if !s.nc.IsConnected() {
			return errors.New("connection lost")
		}
	}
}

// errBatchFull stops a read of the ledger at maxBatchBytes.
var errBatchFull = errors.New("batch full")

// shipRange publishes the entries from..to (durable) and their blobs, as
// many as one read of at most batchEntries entries and about
// maxBatchBytes takes, and returns the last seq it shipped.
func (s *Shipper) shipRange(ctx context.Context, w *window, from, to uint64) (uint64, error) {
	var batch []ledger.Entry
	size := 0
	next := from
	err := s.l.Range(from, to, func(e ledger.Entry) error {
		if e.Seq != next {
			return fmt.Errorf("entry %d is missing (the next stored is %d)", next, e.Seq)
		}
		batch = append(batch, e)
		next++
		if size += len(e.Raw); size >= maxBatchBytes {
			return errBatchFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBatchFull) {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	if len(batch) == 0 {
		return 0, fmt.Errorf("ledger: entry %d is missing", from)
	}
	for _, e := range batch {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if err := s.shipBlobs(ctx, w, e); err != nil {
			return 0, err
		}
		msgs := fleet.EntryMessages(s.cfg.Prefix, s.id, e.Seq, e.Raw)
		for i, m := range msgs {
			if err := w.publish(ctx, s, m, e.Seq, i == len(msgs)-1); err != nil {
				return 0, err
			}
		}
	}
	return batch[len(batch)-1].Seq, nil
}

func (s *Shipper) shipBlobs(ctx context.Context, w *window, e ledger.Entry) error {
	refs, err := ledger.BlobRefs(e.Data)
	if err != nil || len(refs) == 0 {
		return nil // verify reports an entry whose blobs do not parse
	}
	for _, h := range refs {
		s.mu.Lock()
		_, seen := s.blobsSeen[h]
		s.mu.Unlock()
		if seen {
			continue
		}
		var off, size int64
		for i := 0; ; i++ {
			part, sz, err := s.l.BlobFramePart(h, off, fleet.MaxChunk)
			if errors.Is(err, ledger.ErrNotFound) {
				break // pruned (or withheld): the entries say so
			}
			if err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
			size = sz
			m := fleet.BlobMessage(s.cfg.Prefix, s.id, h, size, i, part)
			if err := w.publish(ctx, s, m, 0, false); err != nil {
				return err
			}
			off += int64(len(part))
			if off >= size {
				break
			}
		}
		s.mu.Lock()
		if len(s.blobsSeen) >= maxBlobsSeen {
			clear(s.blobsSeen)
		}
		s.blobsSeen[h] = struct{}{}
		s.mu.Unlock()
	}
	return nil
}

// hello says who the source is, once per connection (its message id is
// per engine life, so JetStream keeps one per life within its window).
func (s *Shipper) hello(ctx context.Context) error {
	h := fleet.Hello{LedgerID: s.id, Boot: s.boot, Host: s.cfg.Host, Workspace: s.cfg.Workspace,
		OpxVersion: s.cfg.Version, VerifierKey: s.cfg.VerifierKey}
	if head, err := s.l.Watermark(); err == nil {
		h.HeadSeq = head.Durable
		if e, err := s.l.Get(head.Durable); err == nil {
			h.HeadHash = e.Hash().String()
		}
	}
	m, err := fleet.HelloMessage(s.cfg.Prefix, h)
	if err != nil {
		return err
	}
	if len(m.Data) > fleet.MaxHelloBytes {
		return fmt.Errorf("hello of %d bytes", len(m.Data))
	}
	if _, err := s.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	return nil
}

// resume moves the cursor past what the stream already holds: the
// subject's last message, when it is this ledger's entry, byte for byte,
// beyond the cursor.
func (s *Shipper) resume(ctx context.Context) error {
	st, err := s.js.Stream(ctx, fleet.LedgerStream(s.cfg.Prefix))
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, fleet.LedgerSubject(s.cfg.Prefix, s.id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("last message: %w", err)
	}
	msg, err := fleet.Parse(s.cfg.Prefix, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	if err != nil || msg.Kind != fleet.KindEntry || msg.Part != msg.Parts-1 || msg.Seq < s.next() {
		return nil
	}
	wm, err := s.l.Watermark()
	if err != nil || msg.Seq > wm.Durable {
		return nil // the stream holds more than this ledger: the collector judges
	}
	e, err := s.l.Get(msg.Seq)
	if err != nil || int64(len(e.Raw)) != msg.Size || string(e.Raw[int64(msg.Part)*fleet.MaxChunk:]) != string(msg.Data) {
		return nil
	}
	s.ack(msg.Seq, nil)
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// lastWitness is the witness of the latest ledger.cosigned entry, read
// back from the head (one exists when the cosignature cursor is set).
func lastWitness(l *ledger.Ledger) string {
	var name string
	l.Backward(func(_ uint64, raw []byte) (bool, error) {
		if !bytes.Contains(raw, []byte(`"type":"`+event.TypeCosigned+`"`)) {
			return true, nil
		}
		e, err := ledger.ParseEntry(raw)
		if err != nil || e.Type != event.TypeCosigned {
			return true, nil
		}
		name, _ = ledger.FieldString(e.Data, "witness")
		return false, nil
	})
	return name
}
