package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	tdnote "github.com/transparency-dev/formats/note"
	"github.com/urfave/cli/v2"
	"golang.org/x/mod/sumdb/note"

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
		&cli.StringFlag{Name: "witness", Usage: "require a checkpoint cosigned by the witness `KEY` (as `opx collector key` prints it, or a file holding it) and prove the ledger an append-only extension of it"},
		&cli.StringFlag{Name: "cosigned", Usage: "with --witness: the cosigned checkpoint note in `FILE`, kept off this machine (default: the latest one on the cosignature stream)", TakesFile: true},
		&cli.StringFlag{Name: "nats", Usage: "with --witness: read the latest cosigned checkpoint of this ledger from the cosignature stream of the NATS server `URL` (default: the workspace's fleet.url)"},
		&cli.StringFlag{Name: "nats-creds", Usage: "with --nats: a NATS credentials `FILE`", TakesFile: true},
		&cli.StringFlag{Name: "nats-prefix", Usage: "with --nats: the subject `PREFIX` (default: the workspace's fleet.prefix, else " + fleet.DefaultPrefix + ")"},
		&cli.BoolFlag{Name: "offline", Usage: "with --witness: take the latest ledger.cosigned entry of the ledger itself as the reference (a truncation or rewrite to before it cannot be detected)"},
	}
}

// natsRef is where verify --witness reads the witness's latest
// cosignature: the cosignature stream.
type natsRef struct {
	url    string
	prefix string
	opts   []nats.Option
}

// cosigFetchTimeout bounds reading the cosignature stream.
const cosigFetchTimeout = 15 * time.Second

// witnessCheck is --witness: the witness's key and the cosigned note
// found (nil until found).
type witnessCheck struct {
	key   note.Verifier
	vkey  string
	file  string // --cosigned, or where the note was found
	note  []byte
	seq   uint64 // the ledger.cosigned entry it came from (offline)
	found bool
	// Where the reference comes from: the stream (nats), the file, or
	// with offline the ledger itself.
	nats    *natsRef
	offline bool
}

// witnessResult is what --witness proved, for --json.
type witnessResult struct {
	Witness  string `json:"witness"`
	KeyHash  string `json:"key_hash"`
	From     string `json:"from"` // the file, the stream, or "ledger.cosigned seq N"
	TreeSize uint64 `json:"tree_size,omitempty"`
	// Offline: the reference is the ledger's own latest ledger.cosigned
	// entry; Warning says what that cannot detect.
	Offline bool         `json:"offline,omitempty"`
	Warning string       `json:"warning,omitempty"`
	Extends *sinceResult `json:"extends,omitempty"`
	OK      bool         `json:"ok"`
}

// newWitnessCheck reads --witness and --cosigned (nil without --witness).
func newWitnessCheck(c *cli.Context, nargs int) (*witnessCheck, error) {
	k := c.String("witness")
	if k == "" {
		for _, f := range []string{"cosigned", "nats", "nats-creds", "nats-prefix", "offline"} {
			if c.IsSet(f) {
				return nil, usagef(c, "--%s goes with --witness KEY", f)
			}
		}
		return nil, nil
	}
	given := 0
	for _, f := range []string{"cosigned", "nats", "offline"} {
		if c.IsSet(f) {
			given++
		}
	}
	if given > 1 {
		return nil, usagef(c, "give one of --cosigned FILE, --nats URL and --offline")
	}
	if (c.IsSet("nats-creds") || c.IsSet("nats-prefix")) && c.IsSet("cosigned") || c.IsSet("offline") && (c.IsSet("nats-creds") || c.IsSet("nats-prefix")) {
		return nil, usagef(c, "--nats-creds and --nats-prefix go with the cosignature stream, not with --cosigned or --offline")
	}
	if nargs > 0 {
		return nil, usagef(c, "--witness checks the ledger, not an export: give --ledger (or nothing) instead of EXPORT")
	}
	if c.String("since") != "" {
		return nil, usagef(c, "give either --since FILE or --witness KEY, not both")
	}
	k, err := readKeyArg(k)
	if err != nil {
		return nil, usagef(c, "--witness: %v", err)
	}
	v, err := tdnote.NewVerifierForCosignatureV1(k)
	if err != nil {
		return nil, usagef(c, "--witness %q: %v (want <name>+<hash>+<key>, as `opx collector key` prints)", clip(k, 120), err)
	}
	w := &witnessCheck{key: v, vkey: k, offline: c.Bool("offline")}
	switch {
	case c.String("cosigned") != "":
		if w.note, err = tlog.ReadNote(c.String("cosigned")); err != nil {
			return nil, err
		}
		w.file, w.found = c.String("cosigned"), true
	case w.offline:
	default:
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
		ws, err := workspaceDir(c)
		var cfg config.Config
		if err == nil {
			cfg, err = config.Load(ws)
		}
		if err != nil || !cfg.Fleet.Enabled || cfg.Fleet.URL == "" {
			return nil, usagef(c, "--witness needs its reference from off this machine: --nats URL (or a workspace whose fleet section names the NATS server), or --cosigned FILE; --offline takes the ledger's own latest ledger.cosigned entry instead, which cannot detect a truncation or a rewrite to before it")
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
		return nil, usagef(c, "%v", err)
	}
	return r, nil
}

// fetch reads the latest cosigned checkpoint of ledger id from the
// cosignature stream (found false: the stream holds none).
func (r *natsRef) fetch(id string) (note []byte, found bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), cosigFetchTimeout)
	defer cancel()
	opts := append([]nats.Option{nats.Name("opx ledger verify --witness"), nats.Timeout(5 * time.Second), nats.NoReconnect()}, r.opts...)
	nc, err := nats.Connect(r.url, opts...)
	if err != nil {
		return nil, false, fmt.Errorf("--witness: the cosignature stream at %s: %w", redactURL(r.url), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, false, err
	}
	st, err := js.Stream(ctx, fleet.CosigStream(r.prefix))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("--witness: the cosignature stream %s at %s: %w", fleet.CosigStream(r.prefix), redactURL(r.url), err)
	}
	m, err := st.GetLastMsgForSubject(ctx, fleet.CosigSubject(r.prefix, id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("--witness: the cosignature of %s at %s: %w", id, redactURL(r.url), err)
	}
	got, _, text, err := fleet.ParseCosig(r.prefix, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	if err != nil || got != id {
		return nil, false, fmt.Errorf("--witness: the cosignature stream's message for %s: %v", id, err)
	}
	return text, true, nil
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

// find reads the reference: the latest cosignature on the stream, or
// (--offline) the latest ledger.cosigned entry whose note KEY cosigned,
// unless --cosigned gave one. Memory: one note at a time
// (event.MaxCosignedNote).
func (w *witnessCheck) find(rv *ledgerReview) error {
	if w.found {
		return nil
	}
	if w.nats != nil {
		id, err := ledgerIDOf(rv)
		if err != nil {
			return err
		}
		w.file = w.nats.where(id)
		w.note, w.found, err = w.nats.fetch(id)
		return err
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
		w.note, w.seq, w.found = []byte(cs.Note), seq, true
		return true, nil
	}
	if rv.local != nil {
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
	if !w.found {
		if w.nats != nil {
			res.From = w.file
			rep.AddFailure(&ledger.IntegrityError{Seq: head, Kind: kindNotWitnessed,
				Detail: fmt.Sprintf("%s holds no cosigned checkpoint of this ledger", w.file)})
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
	if r.Warning != "" {
		fmt.Fprintf(w, "%s: %s\n", paint(w, "33", "warning"), r.Warning)
	}
	if r.OK {
		fmt.Fprintf(w, "%s: the ledger extends the checkpoint of %s cosigned by %s (%s), from %s\n",
			green(w, "witness"), plural(r.TreeSize, "entry", "entries"), r.Witness, r.KeyHash, r.From)
		return
	}
	fmt.Fprintf(w, "%s: no checkpoint cosigned by %s (%s) that the ledger extends (%s)\n", red(w, "witness"), r.Witness, r.KeyHash, r.From)
}
