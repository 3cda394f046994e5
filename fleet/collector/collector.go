package collector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector/journal"
	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/opx-dev/opx/replay/projection"
	"golang.org/x/mod/sumdb/note"
)

// Config configures a collector.
type Config struct {
	// URL is the NATS server (or a comma-separated list of a cluster's).
	URL string
	// NATSOptions are passed to nats.Connect (credentials, TLS).
	NATSOptions []nats.Option
	// Prefix is the subject prefix (fleet.DefaultPrefix when empty).
	Prefix string
	// Store is the collector's directory (see the package doc).
	Store string
	// Durable names the JetStream consumer ("opx-collector" when
	// empty). One collector per durable name: two collectors on one
	// pull consumer would split each source's messages between them
	// (each would see gaps). Collectors share a fleet by prefix, each
	// its own. A new durable name reads the stream from its start: every
	// entry a store holds then comes again and is dropped as a duplicate.
	Durable string
	// Replicas of the streams it creates (1 when 0).
	Replicas int
	// StallAfter: a source that sends nothing for this long is stalled
	// (an alert); 0 never.
	StallAfter time.Duration
	// MaxSources bounds the sources (mirrors, and ids only heard of) the
	// collector takes: a message for one more is dropped, with a
	// too-many alert at most every 10 minutes. DefaultMaxSources when 0.
	MaxSources int
	// ResendAfter: an entry that waits this long for an earlier one, or
	// a mirror that stays this long behind the head its source's hello
	// named, makes the collector ask the source to resend (a
	// fleet.ResendRequest; at most one per source per fleet.ResendEvery).
	// DefaultResendAfter when 0.
	ResendAfter time.Duration
	// WitnessAheadAfter: a tree cosigned over add-checkpoint for a
	// source's origin that its mirror still lacks this long after, though
	// the source shipped since, is a gap alert (witnessed_mirror.go).
	// DefaultWitnessAheadAfter when 0.
	WitnessAheadAfter time.Duration
	// AllowKeys are source verifier keys (as `opx ledger key` prints
	// them). A source whose origin one of them names is checked with
	// those keys only; any other source's key is pinned from its first
	// ledger.key entry.
	AllowKeys []string
	// AllowSourceKeys are allowed keys by source ledger id, for keys
	// named by a team's own origin (ledger.origin), which does not name
	// the id; keys under the default origin may be given here too.
	AllowSourceKeys map[string][]string
	// WitnessName names a new cosigner key ("opx-collector" when empty).
	WitnessName string
	// WitnessLogs are logs other than the sources that the collector
	// witnesses over HTTP (add-checkpoint), each with its key. The
	// sources' origins, with their pinned or allowed keys, are witnessed
	// too.
	WitnessLogs []WitnessLog
	// WitnessListen, if set, is the HOST:PORT where the collector serves
	// C2SP tlog-witness add-checkpoint, bounded by WitnessHTTP and
	// WitnessServe: HTTPS when WitnessServe.TLS is set, else plain HTTP
	// (loopback, behind a TLS proxy: the CLI enforces it).
	WitnessListen string
	WitnessHTTP   witnesshttp.Options
	WitnessServe  witnesshttp.ServeConfig
	// NoSync skips fsync in the ledgers (tests only).
	NoSync bool
	// Stored, if set, is called once what a batch verified of a source
	// is durable in the journal (and about to be acknowledged), with the
	// head verified (benchmarks time the lag with it), the sources of a
	// batch in the order the batch took them. It must not block.
	Stored func(ledgerID string, headSeq uint64)
	// Materialized, if set, is called (from the run loop) once a
	// source's mirror holds, durably, entries up to headSeq. It must not
	// block.
	Materialized func(ledgerID string, headSeq uint64)
	// PullExpires is how long one pull request of the consumer waits on
	// the server (30 s when 0); the server sends a heartbeat every half
	// of it, and when two are missed (the server's connection stalled, a
	// cluster moving the consumer's leader, a machine too busy to answer)
	// the collector logs it and pulls again.
	PullExpires time.Duration
	// AckWait is how long JetStream waits for the collector's ack of a
	// message before it delivers it again (a collector that died with
	// messages in hand gets them again after it); the default when 0.
	AckWait time.Duration
	// MaxOpenMirrors bounds the mirrors held open while unused (each
	// holds a descriptor); when 0, a quarter of the soft limit on open
	// files, at least DefaultMaxOpenMirrors and at most
	// MaxDefaultOpenMirrors.
	MaxOpenMirrors int
	// Logf, if set, receives what the collector does that is not an alert.
	Logf func(format string, args ...any)
}

// Collector is a running collector.
type Collector struct {
	cfg   Config
	allow map[string][]tlog.Verifier // ledger id -> allowed keys
	own   *ledger.Ledger
	wit   *Witness
	js    jetstream.JetStream
	nc    *nats.Conn // resend requests (core NATS)
	ms    *mirrorServer
	lock  *registry.Lock // the store's: one collector per store (serve.go)
	// started is this process's start time, for its registry entries;
	// reg registers the mirrors for review while it runs (serve.go).
	started uint64
	reg     *registrar
	jn      *journal.Journal
	mat     *materializer
	cache   *mirrorCache
	// recheck are the checkpoint entries recovery found in the journal,
	// by source: checked again once the collector runs.
	recheck map[string][]uint64

	sources map[string]*source
	def     deferred // messages deferred for fairness (fair.go)
	alerts  alertBook
	held    int64 // bytes held by every source (reorder buffers and parts)
	// heldEntries counts the entries every reorder buffer holds.
	heldEntries int
	// toPublish are the sources whose cosigned note may not be on the
	// stream, cosigFlights the publications in flight (cosig_publish.go).
	toPublish    map[*source]bool
	cosigFlights []cosigFlight
	// syncedAt is when the journal was last synced (readBatch lingers
	// after it).
	syncedAt time.Time

	// refusedMsgs counts the messages of sources beyond MaxSources,
	// tooManyAt is the last too-many alert.
	refusedMsgs uint64
	tooManyAt   time.Time

	statusAt time.Time
	// sweptAt is when tick last went over every source.
	sweptAt time.Time
	// statusCost is what the last status write took (writeStatus).
	statusCost time.Duration
	dirty      bool // the status changed since it was written

	// book is the witness's state per origin, shared by the NATS path
	// and add-checkpoint (witnessed.go); witnessed counts the
	// add-checkpoint requests cosigned (this collector life).
	book      witnessBook
	witnessed atomic.Uint64
	// witnessAddr is where add-checkpoint is served ("" nowhere).
	witnessAddr atomic.Pointer[string]
	// forks are the forks add-checkpoint found, for the run loop to
	// record (witnessed_mirror.go).
	forks forkQueue
}

// Run runs a collector until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	c, err := New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Run(ctx)
}

// New opens the collector's store (creating it) without connecting.
func New(cfg Config) (*Collector, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = fleet.DefaultPrefix
	}
	if err := fleet.CheckPrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if cfg.Store == "" {
		return nil, errors.New("collector: a store directory is required")
	}
	if cfg.Durable == "" {
		cfg.Durable = "opx-collector"
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	if cfg.WitnessAheadAfter <= 0 {
		cfg.WitnessAheadAfter = DefaultWitnessAheadAfter
	}
	if cfg.ResendAfter <= 0 {
		cfg.ResendAfter = DefaultResendAfter
	}
	if cfg.MaxOpenMirrors <= 0 {
		cfg.MaxOpenMirrors = defaultMaxOpenMirrors()
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	c := &Collector{cfg: cfg, allow: map[string][]tlog.Verifier{}, sources: map[string]*source{}, recheck: map[string][]uint64{}}
	c.cache = newMirrorCache(cfg.Store, c.mirrorOptions(), cfg.MaxOpenMirrors, cfg.Logf)
	c.forks.wake = make(chan struct{}, 1)
	for _, k := range cfg.AllowKeys {
		v, err := tlog.ParseVerifierKey(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("collector: allowed key %q: %w", k, err)
		}
		id, ok := strings.CutPrefix(v.Name(), tlog.OriginPrefix)
		if !ok || fleet.CheckLedgerID(id) != nil {
			return nil, fmt.Errorf("collector: allowed key %q is not an opx ledger's key", k)
		}
		c.allow[id] = append(c.allow[id], v)
		if nv, err := note.NewVerifier(v.String()); err == nil {
			c.book.trust(v.Name(), nv)
		}
		c.book.bind(v.Name(), id, nil)
	}
	for id, ks := range cfg.AllowSourceKeys {
		if err := fleet.CheckLedgerID(id); err != nil {
			return nil, fmt.Errorf("collector: allowed keys of %q: %w", id, err)
		}
		for _, k := range ks {
			v, err := tlog.ParseVerifierKey(strings.TrimSpace(k))
			if err != nil {
				return nil, fmt.Errorf("collector: allowed key %q: %w", k, err)
			}
			origin, ok := tlog.KeyOrigin(id, v.Name())
			if !ok {
				return nil, fmt.Errorf("collector: allowed key %q is not a key of ledger %s", k, id)
			}
			c.allow[id] = append(c.allow[id], v)
			if nv, err := note.NewVerifier(v.String()); err == nil {
				c.book.trust(origin, nv)
			}
			c.book.bind(origin, id, nil)
		}
	}
	for _, l := range cfg.WitnessLogs {
		v, err := l.verifier()
		if err != nil {
			return nil, fmt.Errorf("collector: %w", err)
		}
		c.book.trust(l.Origin, v)
	}
	if err := os.MkdirAll(filepath.Join(cfg.Store, "sources"), 0o700); err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	var err error
	if c.lock, err = lockStore(cfg.Store); err != nil {
		return nil, err
	}
	if c.wit, err = LoadWitness(cfg.Store, cfg.WitnessName); err != nil {
		c.lock.Release()
		return nil, fmt.Errorf("collector: %w", err)
	}
	opts := ledger.Options{NoSync: cfg.NoSync}
	path := filepath.Join(cfg.Store, OwnLedger)
	c.own, err = ledger.Open(path, opts)
	if errors.Is(err, ledger.ErrNotExist) {
		c.own, err = ledger.Create(path, opts)
	}
	if err != nil {
		c.lock.Release()
		return nil, fmt.Errorf("collector: %w", err)
	}
	if c.jn, err = journal.Open(filepath.Join(cfg.Store, JournalDir), journal.Options{NoSync: cfg.NoSync}); err != nil {
		c.Close()
		return nil, fmt.Errorf("collector: %w", err)
	}
	if err := c.recoverJournal(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.load(); err != nil {
		c.Close()
		return nil, fmt.Errorf("collector: %w", err)
	}
	// What the journal held is in the mirrors: the checkpoints it held
	// are checked (their check may not have run before the crash), then
	// it is emptied.
	c.recheckJournaled(context.Background())
	if err := c.jn.Reset(); err != nil {
		c.Close()
		return nil, fmt.Errorf("collector: %w", err)
	}
	c.startMaterializer()
	return c, nil
}

// OwnLedger is the collector's own ledger in its store.
const OwnLedger = "collector.db"

// JournalDir is the collector's journal in its store.
const JournalDir = "journal"

// Close writes to the mirrors what the journal holds beyond them, and
// closes the ledgers (after Run has returned).
func (c *Collector) Close() error {
	var errs []error
	if c.mat != nil {
		// What waits is written, and what waited for it checked.
		if err := c.mat.close(); err != nil {
			errs = append(errs, err)
		} else if err := c.materialized(context.Background()); err != nil {
			errs = append(errs, err)
		} else {
			// Every record is in its mirror: the journal is emptied.
			errs = append(errs, c.jn.Close(), c.jn.Reset())
		}
	}
	c.book.unbindMirrors()
	c.unserveAll()
	c.stopMirrors()
	c.mat = nil
	if c.jn != nil {
		c.jn.Close()
	}
	errs = append(errs, c.cache.closeAll())
	if c.own != nil {
		c.writeStatus(true)
		errs = append(errs, c.own.Close())
		c.own = nil
	}
	if c.lock != nil {
		c.lock.Release()
		c.lock = nil
	}
	return errors.Join(errs...)
}

// WitnessKey is the cosigner's verifier key (cosignature/v1).
func (c *Collector) WitnessKey() string { return c.wit.VKey }

// mirrorOptions are the options of every mirror: the projections of any
// engine's ledger, so every command reads a mirror as it reads a ledger.
func (c *Collector) mirrorOptions() ledger.Options {
	return ledger.Options{NoSync: c.cfg.NoSync, Projections: projection.All()}
}

// SourcePath is where the mirror of the source id lives under store.
func SourcePath(store, id string) string {
	return filepath.Join(store, "sources", id, "ledger.db")
}

// load reads the collector's own ledger (pinned keys, cosigned
// checkpoints, alerts) and opens every mirror.
func (c *Collector) load() error {
	started := time.Now()
	if err := c.replayOwn(); err != nil {
		return err
	}
	defer c.restoreSeen(started)
	dirs, err := os.ReadDir(filepath.Join(c.cfg.Store, "sources"))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if fleet.CheckLedgerID(d.Name()) != nil {
			continue
		}
		path := SourcePath(c.cfg.Store, d.Name())
		m, release, err := c.cache.acquire(d.Name(), nil)
		if errors.Is(err, ledger.ErrNotExist) {
			continue
		}
		if errors.Is(err, ledger.ErrNotLedger) {
			// Not a ledger at all (an empty bbolt file: a crash while an
			// older collector created it in place): moved aside, kept
			// for a look, and the source starts again from its genesis.
			aside := path + ".unopenable-" + time.Now().UTC().Format("20060102T150405Z")
			if rerr := os.Rename(path, aside); rerr != nil {
				return fmt.Errorf("%w (and moving it aside: %v)", err, rerr)
			}
			b := c.newBatch()
			c.alert(b, d.Name(), event.AlertMalformed, 0, fmt.Sprintf("the mirror did not open (%v): moved aside to %s; the source is taken again from its genesis", err, filepath.Base(aside)))
			if err := c.own.Sync(context.Background()); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		s := c.source(d.Name())
		s.has = true
		s.next, s.prev = m.MirrorNext()
		s.mat, s.matPrev = s.next, s.prev
		c.trustSource(s) // the origins' mirror, for add-checkpoint
		err = c.scanMirror(s, m)
		release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Run connects, consumes and verifies until ctx ends; then it returns
// nil, whatever step the end interrupted (a consumer being created, a
// stream being updated): an error that is only the end's is not the
// collector's.
func (c *Collector) Run(ctx context.Context) error {
	err := c.run(ctx)
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// run is Run.
func (c *Collector) run(ctx context.Context) error {
	if c.cfg.WitnessListen != "" {
		stop, err := c.serveWitness(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	nc, err := c.connect(ctx, append([]nats.Option{nats.Name("opx collector"), nats.MaxReconnects(-1)}, c.cfg.NATSOptions...))
	if err != nil {
		return err
	}
	defer nc.Close()
	c.nc = nc
	defer func() { c.nc = nil; c.dropFlights() }()
	if c.js, err = jetstream.New(nc); err != nil {
		return err
	}
	if err := fleet.EnsureStreams(ctx, c.js, c.cfg.Prefix, c.cfg.Replicas); err != nil {
		return err
	}
	// A stream made by an earlier opx keeps one cosignature per source,
	// which an older one published again would displace: keep them all.
	// Not fatal (the collector may lack the right to update streams);
	// verify --witness warns while the stream still has the limit.
	if up, err := fleet.KeepCosigHistory(ctx, c.js, c.cfg.Prefix); err != nil {
		c.cfg.Logf("collector: %v", err)
	} else if up {
		c.cfg.Logf("collector: %s now keeps every cosignature (it kept one per source)", fleet.CosigStream(c.cfg.Prefix))
	}
	if c.started == 0 {
		c.started, _ = registry.StartTime(os.Getpid())
	}
	stopServing := make(chan struct{})
	servingDone := c.serveAll(stopServing)
	defer func() {
		close(stopServing)
		servingDone()
		c.unserveAll()
		c.stopMirrors()
	}()
	// What was cosigned before a crash is published again as recorded;
	// a checkpoint the mirror holds but nobody cosigned yet is now.
	for _, s := range c.sources {
		c.catchUpCosign(ctx, s)
	}
	// The checkpoints the journal held when the collector last stopped
	// may not have been checked against their mirrors' trees: they are
	// now (an alert already recorded is not recorded twice).
	c.recheckJournaled(ctx)
	// What add-checkpoint cosigned before the mirror had it, compared
	// with the mirror as it is now.
	b := c.newBatch()
	for _, s := range c.sources {
		c.checkWitnessed(b, s)
	}
	if err := c.own.Sync(ctx); err != nil {
		return err
	}
	c.publishPending(ctx)
	cons, err := c.js.CreateOrUpdateConsumer(ctx, fleet.LedgerStream(c.cfg.Prefix), jetstream.ConsumerConfig{
		Durable:       c.cfg.Durable,
		Description:   "opx collector (" + fleet.WireVersion + ")",
		FilterSubject: fleet.LedgerSubjects(c.cfg.Prefix),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cmp.Or(c.cfg.AckWait, ackWait),
		MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("collector: consumer: %w", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(maxBatch), jetstream.PullExpiry(cmp.Or(c.cfg.PullExpires, pullExpires)))
	if err != nil {
		return fmt.Errorf("collector: consumer: %w", err)
	}
	msgs := make(chan jetstream.Msg, maxBatch)
	pullErr := make(chan error, 1)
	go func() {
		defer close(msgs)
		for {
			m, err := it.Next()
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				// Not the end: the iterator drops what it expected of the
				// pull it lost and pulls again. What was delivered and not
				// received comes again after the ack wait.
				c.cfg.Logf("collector: consumer: %v (pulling again)", err)
				continue
			}
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					pullErr <- err
				}
				return
			}
			msgs <- m
		}
	}()
	defer func() {
		it.Stop()
		for range msgs { // the puller ends
		}
		c.def.nakAll()
	}()
	c.cfg.Logf("collector: consuming %s as %s, witness %s", fleet.LedgerSubjects(c.cfg.Prefix), c.cfg.Durable, c.wit.VKey)
	c.dirty = true
	c.writeStatus(false)
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		// Beyond MaxPendingBytes waiting to be materialized, no message
		// is taken until the materializer caught up: JetStream holds them.
		in := msgs
		if c.mat.pendingBytes() > MaxPendingBytes {
			in = nil
		}
		// Messages deferred (fair.go) make a batch whatever arrives.
		var now <-chan struct{}
		if in != nil && c.def.n > 0 {
			now = closedChan
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-pullErr:
			return fmt.Errorf("collector: consumer: %w", err)
		case <-c.mat.wake:
			if err := c.materialized(ctx); err != nil {
				return err
			}
		case <-tick.C:
			if err := c.materialized(ctx); err != nil {
				return err
			}
			c.tick(ctx)
		case <-c.forks.wake:
			b := c.newBatch()
			c.takeForks(b)
			if err := c.commit(ctx, b); err != nil {
				return err
			}
		case m, ok := <-in:
			if !ok {
				return nil
			}
			b := c.newBatch()
			c.readBatch(ctx, b, m, msgs)
			if err := c.commit(ctx, b); err != nil {
				return err
			}
		case <-now:
			b := c.newBatch()
			c.readBatch(ctx, b, nil, msgs)
			if err := c.commit(ctx, b); err != nil {
				return err
			}
		}
	}
}

// closedChan is always ready.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// tick takes the forks add-checkpoint found, publishes what could not
// be published and rewrites the status; every sweepEvery (sweepDue) it
// also goes over every source: messages held kept alive, stalled
// sources, gaps that waited too long, resends to ask, and mirrors idle
// for long closed.
func (c *Collector) tick(ctx context.Context) {
	b := c.newBatch()
	c.takeForks(b)
	now := time.Now()
	if c.sweepDue(now) {
		c.sweptAt = now
		c.keepAlive(now, cmp.Or(c.cfg.AckWait, ackWait)/3)
		c.sweep(b, now)
		c.cache.closeIdle()
	}
	if err := c.commit(ctx, b); err != nil {
		c.cfg.Logf("collector: %v", err)
	}
	c.publishPending(ctx)
	c.writeStatus(false)
}

// sweepDue reports whether the sources are gone over at now: every
// sweepEvery, and at least six times per ack wait (a message held is
// reported in progress within a third of it, sweepDue's period later at
// most).
func (c *Collector) sweepDue(now time.Time) bool {
	return now.Sub(c.sweptAt) >= min(sweepEvery, cmp.Or(c.cfg.AckWait, ackWait)/6)
}

// sweep goes over every source for what waits on time (tick).
func (c *Collector) sweep(b *batch, now time.Time) {
	for _, s := range c.sources {
		if c.cfg.StallAfter > 0 && s.has && !s.stalled && !s.lastSeen.IsZero() && now.Sub(s.lastSeen) > c.cfg.StallAfter {
			s.stalled = true
			c.alert(b, s.id, "stalled", s.next, fmt.Sprintf("nothing received for %s (last at %s)", now.Sub(s.lastSeen).Round(time.Millisecond), s.lastSeen.UTC().Format(time.RFC3339)))
		}
		if s.oldestHeld(now).Before(now.Add(-GapAfter)) {
			c.gap(b, s, "waited longer than "+GapAfter.String())
		}
		c.checkBehind(s, now)
		c.checkWitnessedAhead(b, s, now)
		if a := c.witnessedAhead(s); a != s.aheadShown {
			s.aheadShown, c.dirty = a, true // add-checkpoint cosigned it: its goroutine does not mark the status
		}
		c.dropOldBlobs(b, s, now)
	}
}

func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "redacted" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}
