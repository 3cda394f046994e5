package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/usage"
	tdnote "github.com/transparency-dev/formats/note"
	"github.com/urfave/cli/v2"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// kindNotWitnessed extends the failure kinds: verify --witness KEY found
// no checkpoint of the ledger cosigned by KEY.
const kindNotWitnessed ledger.Kind = "not-witnessed"

// witnessFlags are verify's flags for checking the ledger against a
// witness's cosignature.
func witnessFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "witness", Usage: "require a checkpoint cosigned by the witness `KEY` (as `opx collector key` prints it, a C2SP witness's verifier key, or a file holding it) and prove the ledger an append-only extension of it; may be given several times (see --quorum)"},
		&cli.IntFlag{Name: "quorum", Usage: "with several --witness: at least `K` of them must have cosigned a checkpoint the ledger extends (default: all of them); a cosigned checkpoint the ledger does not extend fails whatever K"},
		&cli.StringFlag{Name: "cosigned", Usage: "with --witness: a cosigned checkpoint note in `FILE`, kept off this machine (default: the largest one on the cosignature stream); with --nats too, the larger of the two", TakesFile: true},
		&cli.StringFlag{Name: "nats", Usage: "with --witness: read every cosigned checkpoint of this ledger from the cosignature stream of the NATS server `URL` and take the largest (default: the workspace's fleet.url)"},
		&cli.StringFlag{Name: "nats-creds", Usage: "with --nats: a NATS credentials `FILE`", TakesFile: true},
		&cli.StringFlag{Name: "nats-prefix", Usage: "with --nats: the subject `PREFIX` (default: the workspace's fleet.prefix, else " + fleet.DefaultPrefix + ")"},
		&cli.BoolFlag{Name: "offline", Usage: "with --witness: take the latest ledger.cosigned entry of the ledger itself as the reference (a truncation or rewrite to before it cannot be detected)"},
	}
}

// natsRef is where verify --witness reads the witness's cosignatures:
// the cosignature stream.
type natsRef struct {
	url    string
	prefix string
	opts   []nats.Option
	// pull replaces the consumer's pull options, and read is called after
	// each message read (tests: small pulls, short heartbeats, a stall).
	pull []jetstream.PullMessagesOpt
	read func(n int)
}

// cosigFetchTimeout bounds reading the cosignature stream, every
// cosignature of the ledger on it.
const cosigFetchTimeout = 60 * time.Second

// witnessCheck is --witness: the witness's key and the reference, the
// largest checkpoint of this ledger that KEY cosigned among those verify
// can find (nil until found). The reference never goes backwards: a
// source can only raise it, so an older cosignature published again, or a
// ledger that dropped its later ledger.cosigned entries, cannot lower it.
type witnessCheck struct {
	id    string // the ledger id
	key   note.Verifier
	vkey  string
	file  string // where the reference was found
	note  []byte
	seq   uint64 // the ledger.cosigned entry it came from (file empty)
	found bool
	// Where the candidates come from: --cosigned FILE and the stream
	// (nats), off this machine; the ledger's own ledger.cosigned entries
	// (a file read directly, or --offline), which only ever raise the
	// reference, and are the reference only with --offline.
	given     []byte
	givenFile string
	givenBad  string // why the given note is not one of this ledger cosigned by KEY
	nats      *natsRef
	where     string // the stream, for the output
	offline   bool
	origin    string // this ledger's checkpoint origin (the latest)
	// origins are every origin the ledger's checkpoints were signed for
	// (its recorded keys' names, ledger.origin; the default always).
	// Nil: read through an engine, any origin tlog.KeyOrigin allows for
	// the ledger id (a foreign log's note then fails as not-extension).
	origins map[string]bool
	read    int    // messages read on the stream
	warning string // what the stream's limits allow
}

// witnessResult is what --witness proved, for --json.
type witnessResult struct {
	Witness  string `json:"witness"`
	KeyHash  string `json:"key_hash"`
	From     string `json:"from"` // the file, the stream, or "ledger.cosigned seq N"
	TreeSize uint64 `json:"tree_size,omitempty"`
	// Offline: the reference is the ledger's own latest ledger.cosigned
	// entry; Warning says what that cannot detect.
	Offline bool   `json:"offline,omitempty"`
	Warning string `json:"warning,omitempty"`
	// Read is how many messages the cosignature stream held for the
	// ledger (all read, the largest cosigned by KEY taken);
	// StreamWarning, what its limits allow.
	Read          int          `json:"stream_messages,omitempty"`
	StreamWarning string       `json:"stream_warning,omitempty"`
	Extends       *sinceResult `json:"extends,omitempty"`
	OK            bool         `json:"ok"`
}

// newWitnessChecks reads --witness (each KEY), --quorum and --cosigned
// (nil without --witness).
func newWitnessChecks(c *cli.Context, nargs int) ([]*witnessCheck, error) {
	keys := c.StringSlice("witness")
	if len(keys) == 0 {
		if c.IsSet("quorum") {
			return nil, usage.Errorf(c, "--quorum goes with --witness KEY")
		}
		_, err := newWitnessCheck(c, nargs, "")
		return nil, err
	}
	if q := c.Int("quorum"); c.IsSet("quorum") && (q < 1 || q > len(keys)) {
		return nil, usage.Errorf(c, "--quorum %d: want 1..%d (the number of --witness keys)", q, len(keys))
	}
	var out []*witnessCheck
	seen := map[string]bool{}
	for _, k := range keys {
		w, err := newWitnessCheck(c, nargs, k)
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("%s+%08x", w.key.Name(), w.key.KeyHash())
		if seen[id] {
			return nil, usage.Errorf(c, "--witness %s is given twice", id)
		}
		seen[id] = true
		out = append(out, w)
	}
	return out, nil
}

// newWitnessCheck reads one --witness KEY and --cosigned (nil for an
// empty KEY).
func newWitnessCheck(c *cli.Context, nargs int, k string) (*witnessCheck, error) {
	if k == "" {
		for _, f := range []string{"cosigned", "nats", "nats-creds", "nats-prefix", "offline"} {
			if c.IsSet(f) {
				return nil, usage.Errorf(c, "--%s goes with --witness KEY", f)
			}
		}
		return nil, nil
	}
	if c.IsSet("offline") && (c.IsSet("cosigned") || c.IsSet("nats")) {
		return nil, usage.Errorf(c, "give one of --offline and --cosigned FILE or --nats URL (or both)")
	}
	stream := !c.IsSet("offline") && (c.IsSet("nats") || !c.IsSet("cosigned"))
	if (c.IsSet("nats-creds") || c.IsSet("nats-prefix")) && !stream {
		return nil, usage.Errorf(c, "--nats-creds and --nats-prefix go with the cosignature stream, not with --cosigned alone or --offline")
	}
	if nargs > 0 {
		return nil, usage.Errorf(c, "--witness checks the ledger, not an export: give --ledger (or nothing) instead of EXPORT")
	}
	if c.String("since") != "" {
		return nil, usage.Errorf(c, "give either --since FILE or --witness KEY, not both")
	}
	k, err := readKeyArg(k)
	if err != nil {
		return nil, usage.Errorf(c, "--witness: %v", err)
	}
	v, err := tdnote.NewVerifierForCosignatureV1(k)
	if err != nil {
		return nil, usage.Errorf(c, "--witness %q: %v (want <name>+<hash>+<key>, as `opx collector key` prints)", ui.Clip(k, 120), err)
	}
	w := &witnessCheck{key: v, vkey: k, offline: c.Bool("offline")}
	if f := c.String("cosigned"); f != "" {
		if w.given, err = tlog.ReadNote(f); err != nil {
			return nil, err
		}
		w.givenFile = f
	}
	if stream {
		if w.nats, err = cosigStreamOf(c); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// cosigStreamOf is where the cosignature stream is: --nats, else the
// workspace's fleet section. Neither: a usage error, since a reference
// read from the ledger under test proves nothing against whoever could
// rewrite it.
func cosigStreamOf(c *cli.Context) (*natsRef, error) {
	r := &natsRef{url: c.String("nats"), prefix: c.String("nats-prefix")}
	if r.url == "" {
		ws, err := ledgerloc.WorkspaceDir(c)
		var cfg config.Config
		if err == nil {
			cfg, err = config.Load(ws)
		}
		if err != nil || !cfg.Fleet.Enabled || cfg.Fleet.URL == "" {
			return nil, usage.Errorf(c, "--witness needs its reference from off this machine: --nats URL (or a workspace whose fleet section names the NATS server), or --cosigned FILE; --offline takes the ledger's own latest ledger.cosigned entry instead, which cannot detect a truncation or a rewrite to before it")
		}
		fc, err := fleetConfig(cfg.Fleet)
		if err != nil {
			return nil, err
		}
		r.url, r.opts = fc.URL, fc.Options
		if r.prefix == "" {
			r.prefix = fc.Prefix
		}
	}
	if f := c.String("nats-creds"); f != "" {
		r.opts = append(r.opts, nats.UserCredentials(f))
	}
	if r.prefix == "" {
		r.prefix = fleet.DefaultPrefix
	}
	if err := fleet.CheckPrefix(r.prefix); err != nil {
		return nil, usage.Errorf(c, "%v", err)
	}
	return r, nil
}

// cosigBuffer bounds the bytes of cosignature messages verify holds at
// once: a few hundred of the largest a stream made by opx takes
// (fleet.MaxCosigBytes); a larger message, on a stream configured
// otherwise, ends the scan with an error rather than a smaller reference.
const cosigBuffer = 16 << 20

// scan hands take every cosigned note of ledger id on the cosignature
// stream, from the first one kept to the last one the stream held when the
// scan began: the reference is the largest one the witness cosigned, and a
// message published later (or again) can only add to what is read, never
// hide what is there. It returns how many it read, and a warning when the
// stream's limits let a message displace another. Memory: cosigBuffer
// bytes of messages, each at most fleet.MaxCosigBytes (bigger ones the stream
// refuses); time: cosigFetchTimeout for the whole scan, after which it
// fails rather than settle for a smaller reference.
func (r *natsRef) scan(id string, take func(text []byte)) (n int, warning string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), cosigFetchTimeout)
	defer cancel()
	opts := append([]nats.Option{nats.Name("opx ledger verify --witness"), nats.Timeout(5 * time.Second), nats.NoReconnect()}, r.opts...)
	nc, err := nats.Connect(r.url, opts...)
	if err != nil {
		return 0, "", fmt.Errorf("--witness: the cosignature stream at %s: %w", redactURL(r.url), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, "", err
	}
	name := fleet.CosigStream(r.prefix)
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("--witness: the cosignature stream %s at %s: %w", name, redactURL(r.url), err)
	}
	if lim := fleet.CosigLimits(st.CachedInfo().Config); lim != "" {
		warning = fmt.Sprintf("the cosignature stream %s keeps %s: whoever may publish there can push the witness's latest cosignature out with older ones (a collector of this version keeps every one; else `nats stream edit %s --max-msgs-per-subject=-1`)", name, lim, name)
	}
	subj := fleet.CosigSubject(r.prefix, id)
	last, err := st.GetLastMsgForSubject(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, warning, nil
	}
	if err != nil {
		return 0, warning, fmt.Errorf("--witness: the cosignatures of %s at %s: %w", id, redactURL(r.url), err)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj}, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return 0, warning, fmt.Errorf("--witness: reading the cosignatures of %s at %s: %w", id, redactURL(r.url), err)
	}
	pull := r.pull
	if pull == nil {
		pull = []jetstream.PullMessagesOpt{jetstream.PullMaxBytes(cosigBuffer)}
	}
	it, err := cons.Messages(pull...)
	if err != nil {
		return 0, warning, fmt.Errorf("--witness: reading the cosignatures of %s at %s: %w", id, redactURL(r.url), err)
	}
	defer it.Stop()
	// The deadline ends a scan that waits for messages that are not
	// coming (purged meanwhile, a server gone quiet).
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		// Heartbeats missed (a server or a connection that stalled) do
		// not end the scan: the ordered consumer is created again after
		// the last message read, within the deadline
		// (TestWitnessScan_MissedHeartbeats_GoesOn).
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return n, warning, fmt.Errorf("--witness: reading the cosignatures of %s at %s (%d of them read): %w", id, redactURL(r.url), n, err)
		}
		n++
		if r.read != nil {
			r.read(n)
		}
		md, err := m.Metadata()
		if err != nil {
			return n, warning, fmt.Errorf("--witness: reading the cosignatures of %s: %w", id, err)
		}
		// A malformed message is anyone's: skipped, as is one not
		// cosigned by KEY (take's to judge).
		if got, _, text, err := fleet.ParseCosig(r.prefix, &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}); err == nil && got == id {
			take(text)
		}
		if md.Sequence.Stream >= last.Sequence {
			return n, warning, nil
		}
	}
}

// where names the stream for the output.
func (r *natsRef) where(id string) string {
	return fmt.Sprintf("the cosignature stream at %s (%s)", redactURL(r.url), fleet.CosigSubject(r.prefix, id))
}

// redactURL drops credentials from a NATS URL list.
func redactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("redacted")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// ledgerIDOf is the reviewed ledger's id: the file's, or the engine's
// genesis entry's.
func ledgerIDOf(rv *ledgerReview) (string, error) {
	if rv.local != nil {
		return rv.local.ID(), nil
	}
	var id string
	err := rv.remote.Entries(0, 0, func(_ uint64, raw []byte) error {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return err
		}
		id, _ = ledger.FieldString(e.Data, "ledger_id")
		return nil
	})
	if err == nil && fleet.CheckLedgerID(id) != nil {
		err = fmt.Errorf("--witness: the ledger's genesis names no ledger id")
	}
	return id, err
}

// readKeyArg is a key given inline or as a file holding it.
func readKeyArg(k string) (string, error) {
	k = strings.TrimSpace(k)
	if strings.Count(k, "+") >= 2 {
		return k, nil
	}
	b, err := tlog.ReadNote(k) // bounded, regular files only
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// cosignedBy reports whether note carries a valid cosignature of v.
func cosignedBy(text []byte, v note.Verifier) bool {
	_, err := note.Open(text, note.VerifierList(v))
	return err == nil
}

// consider takes text as the reference when it is a checkpoint of this
// ledger cosigned by KEY and larger than the reference so far. Memory:
// the reference only (at most event.MaxCosignedNote / fleet.MaxCosigBytes).
func (w *witnessCheck) consider(text []byte, from string, seq uint64) {
	origin, _, _ := bytes.Cut(text, []byte("\n"))
	if !w.ours(string(origin)) || !cosignedBy(text, w.key) {
		return
	}
	if w.found && peekSize(text) <= peekSize(w.note) {
		return
	}
	w.note, w.file, w.seq, w.found = bytes.Clone(text), from, seq, true
}

// find reads the reference: the largest checkpoint of this ledger cosigned
// by KEY in --cosigned FILE and on the stream (every message on the
// ledger's subject), raised by the ledger's own ledger.cosigned entries
// when the ledger is a file; with --offline, the latest ledger.cosigned
// entry whose note KEY cosigned is the reference.
func (w *witnessCheck) find(rv *ledgerReview) error {
	id, err := ledgerIDOf(rv)
	if err != nil {
		return err
	}
	w.id, w.origin = id, tlog.Origin(id)
	if rv.local != nil {
		keys, err := event.Keys(rv.local)
		if err != nil {
			return fmt.Errorf("--witness: the ledger's keys: %w", err)
		}
		w.origins, w.origin = event.Origins(id, keys), event.LatestOrigin(id, keys)
	}
	if w.given != nil {
		origin, _, _ := bytes.Cut(w.given, []byte("\n"))
		switch {
		case !cosignedBy(w.given, w.key):
			w.givenBad = fmt.Sprintf("%s carries no valid cosignature of %s", w.givenFile, w.key.Name())
		case !w.ours(string(origin)):
			w.givenBad = fmt.Sprintf("%s is a checkpoint of %s; this ledger is %s", w.givenFile, ui.Clip(string(origin), 120), w.origin)
		default:
			w.consider(w.given, w.givenFile, 0)
		}
	}
	if w.nats != nil {
		w.where = w.nats.where(id)
		w.read, w.warning, err = w.nats.scan(id, func(text []byte) { w.consider(text, w.where, 0) })
		if err != nil {
			return err
		}
	}
	offMachine := w.found
	if !w.offline && (!offMachine || rv.local == nil) {
		// Nothing from off the machine: the ledger's own entries prove
		// nothing against whoever controls it (not-witnessed). Through an
		// engine, reading them would be a second pass over the ledger.
		return nil
	}
	take := func(seq uint64, raw []byte) (bool, error) {
		e, err := ledger.ParseEntry(raw)
		if err != nil || e.Type != event.TypeCosigned {
			return false, nil // verify reports what does not parse
		}
		p, err := event.Decode(e)
		if err != nil {
			return false, nil
		}
		cs := p.(*event.Cosigned)
		if !cosignedBy([]byte(cs.Note), w.key) {
			return false, nil
		}
		w.consider([]byte(cs.Note), "", seq)
		return true, nil
	}
	if rv.local != nil {
		// Backward to the latest one KEY cosigned: the engine records
		// only larger trees than the last it recorded.
		return rv.local.Backward(func(seq uint64, raw []byte) (bool, error) {
			done, err := take(seq, raw)
			return !done, err
		})
	}
	h, err := rv.remote.Head()
	if err != nil {
		return err
	}
	return rv.remote.Entries(0, h.Seq, func(seq uint64, raw []byte) error {
		_, err := take(seq, raw)
		return err
	})
}

// sinceSize is the tree size whose root the verify pass keeps.
func (w *witnessCheck) sinceSize() uint64 {
	if !w.found {
		return 0
	}
	return peekSize(w.note)
}

// check requires the cosigned checkpoint and the ledger to extend it;
// failures (not-witnessed, not-extension) go into rep.
func (w *witnessCheck) check(c *cli.Context, rv *ledgerReview, rep *ledger.Report, walk *treeWalk) (*witnessResult, error) {
	res := &witnessResult{Witness: w.key.Name(), KeyHash: fmt.Sprintf("%08x", w.key.KeyHash())}
	head := rep.HeadSeq
	if w.offline {
		res.Offline = true
		res.Warning = "--offline: the reference is the ledger's own latest ledger.cosigned entry; a truncation, or a rewrite, to before that point cannot be detected (give --nats URL or --cosigned FILE for a reference from off this machine)"
	}
	res.Read, res.StreamWarning = w.read, w.warning
	if w.givenBad != "" {
		// The note given by hand must itself be one: a reference found
		// elsewhere does not excuse it.
		res.From = w.givenFile
		kind := kindNotWitnessed
		if cosignedBy(w.given, w.key) {
			kind = ledger.KindNotExtension
		}
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kind, Detail: w.givenBad})
		return res, nil
	}
	if !w.found {
		if w.nats != nil {
			res.From = w.where
			rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
				Detail: fmt.Sprintf("%s holds no checkpoint of this ledger cosigned by %s (%d message(s) read)", w.where, w.key.Name(), w.read)})
			return res, nil
		}
		res.From = "the ledger's ledger.cosigned entries"
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
			Detail: fmt.Sprintf("the ledger records no checkpoint cosigned by %s (no ledger.cosigned entry whose cosignature verifies under the key)", w.key.Name())})
		return res, nil
	}
	from := w.file
	if from == "" {
		from = fmt.Sprintf("ledger.cosigned seq %d", w.seq)
	}
	res.From = from
	if w.offline {
		res.Warning = fmt.Sprintf("--offline: the reference is the ledger's own latest ledger.cosigned entry (seq %d, tree size %d of %d entries); a truncation, or a rewrite, to before that point cannot be detected (give --nats URL or --cosigned FILE for a reference from off this machine)",
			w.seq, peekSize(w.note), head+1)
	}
	if !cosignedBy(w.note, w.key) {
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
			Detail: fmt.Sprintf("%s carries no valid cosignature of %s", from, w.key.Name())})
		return res, nil
	}
	res.TreeSize = peekSize(w.note)
	since, err := checkExtends(c, rv, rep, walk, "--witness", from, w.note)
	if err != nil {
		if !errors.Is(err, tlog.ErrUnsigned) && !errors.Is(err, tlog.ErrMalformed) {
			return nil, err // reading the ledger failed
		}
		// The ledger's own signature on what the witness cosigned does
		// not verify: not a checkpoint of this ledger as it stands.
		rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: ledger.KindNotExtension,
			Detail: fmt.Sprintf("%s: %v", from, err)})
		return res, nil
	}
	res.Extends = since
	res.OK = since.Extended
	return res, nil
}

// printWitness says what --witness proved.
func printWitness(w io.Writer, r *witnessResult) {
	for _, s := range []string{r.Warning, r.StreamWarning} {
		if s != "" {
			fmt.Fprintf(w, "%s: %s\n", ui.Paint(w, "33", "warning"), s)
		}
	}
	if r.OK {
		fmt.Fprintf(w, "%s: the ledger extends the checkpoint of %s cosigned by %s (%s), from %s\n",
			ui.Green(w, "witness"), ui.Plural(r.TreeSize, "entry", "entries"), r.Witness, r.KeyHash, r.From)
		return
	}
	fmt.Fprintf(w, "%s: no checkpoint cosigned by %s (%s) that the ledger extends (%s)\n", ui.Red(w, "witness"), r.Witness, r.KeyHash, r.From)
}

// ours reports whether a checkpoint of origin is one of this ledger's.
func (w *witnessCheck) ours(origin string) bool {
	if w.origins != nil {
		return w.origins[origin]
	}
	o, ok := tlog.KeyOrigin(w.id, origin)
	return ok && o == origin
}
