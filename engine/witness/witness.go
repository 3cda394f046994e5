package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger/event"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// Defaults and bounds.
const (
	// MinBackoff and MaxBackoff bound the wait between two attempts at a
	// witness that could not be reached (or answered 5xx or 429).
	MinBackoff = 500 * time.Millisecond
	MaxBackoff = time.Minute
	// RequestTimeout bounds one add-checkpoint request.
	RequestTimeout = 10 * time.Second
	// MaxAnswerBytes bounds the body of a witness's answer read: a few
	// cosignature lines (or a size) fit in far less.
	MaxAnswerBytes = 16 << 10
	// maxConflicts bounds the 409s followed for one checkpoint: the
	// witness states its size once, a second 409 means it moved meanwhile.
	maxConflicts = 3
)

// Witness is one configured witness: its base URL (the add-checkpoint
// call is URL + tlog.AddCheckpointPath) and its verifier key in the note
// format ("<name>+<hash>+<key>", Ed25519 or cosignature/v1).
type Witness struct {
	URL string
	Key string
}

// Ledger is what the submitter reads of the ledger: consistency proofs
// from its tree, and its entries backward (to rebuild what each witness
// cosigned). *ledger.Ledger is one.
type Ledger interface {
	ConsistencyProof(size1, size2 uint64) ([][]byte, error)
	Backward(fn func(seq uint64, raw []byte) (bool, error)) error
}

// Recorder records an entry (ledger.cosigned, ledger.witness_alert)
// durably, in no session.
type Recorder func(ctx context.Context, p event.Payload) error

// Options configure a Submitter.
type Options struct {
	Witnesses []Witness
	// Origin is the ledger's checkpoint origin; a checkpoint of another
	// origin is not submitted.
	Origin string
	Ledger Ledger
	Record Recorder
	// Client makes the requests (default: a client of its own); each
	// request is bounded by RequestTimeout.
	Client *http.Client
	// MinBackoff and MaxBackoff override the package's (tests).
	MinBackoff, MaxBackoff time.Duration
	Logf                   func(format string, args ...any)
}

// Status is where one witness stands, for `opx status` and `opx doctor`.
type Status struct {
	URL     string
	Name    string // the key's name
	KeyHash string // 8 hex
	// CosignedSize is the largest tree size the witness cosigned
	// (recorded); 0: none.
	CosignedSize uint64
	// PendingSize is the checkpoint waiting to be cosigned; 0: none.
	PendingSize uint64
	Submitted   uint64 // requests made
	Cosigned    uint64 // cosignatures recorded by this engine
	Conflicts   uint64 // 409s followed
	LastError   string // the last network or server error, cleared by a cosignature
	LastErrorAt time.Time
	// Alert is the kind and detail of the last ledger.witness_alert about
	// this witness not followed by a cosignature (recorded, or rebuilt at
	// start); empty: none.
	Alert     string
	AlertKind string
	AlertAt   time.Time
}

// Submitter submits checkpoints to the configured witnesses, one
// goroutine each.
type Submitter struct {
	opts      Options
	workers   []*worker
	cancel    context.CancelFunc
	stop      chan struct{} // closed by Close: no new request
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// checkpoint is a signed checkpoint note of the ledger and what it says.
type checkpoint struct {
	note []byte
	size uint64
	root string // base64, as in the note
}

// New checks the configuration; nothing is read or sent until Start.
func New(opts Options) (*Submitter, error) {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = MinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = MaxBackoff
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	s := &Submitter{opts: opts}
	seen := map[string]bool{}
	for i, w := range opts.Witnesses {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%w: witnesses[%d].url %q: want http(s)://host[:port][/prefix]", ErrConfig, i, w.URL)
		}
		v, err := tdnote.NewVerifierForCosignatureV1(strings.TrimSpace(w.Key))
		if err != nil {
			return nil, fmt.Errorf("%w: witnesses[%d].key: %v (want <name>+<hash>+<key>, the witness's verifier key)", ErrConfig, i, err)
		}
		id := fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())
		if seen[id] {
			return nil, fmt.Errorf("%w: witnesses[%d]: the key %s is listed twice", ErrConfig, i, id)
		}
		seen[id] = true
		s.workers = append(s.workers, &worker{s: s, url: strings.TrimSuffix(w.URL, "/"), v: v,
			keyHash: fmt.Sprintf("%08x", v.KeyHash()), wake: make(chan struct{}, 1)})
	}
	return s, nil
}

// Start rebuilds each witness's cosigned size from the ledger's entries
// and starts the goroutines; it returns at once (the rebuild runs in the
// background, before the first request). ctx ends them.
func (s *Submitter) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		latest, err := s.rebuild()
		if err != nil {
			s.opts.Logf("witness: reading what the witnesses cosigned: %v", err)
		}
		for _, w := range s.workers {
			if latest != nil {
				w.offer(latest)
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				w.run(ctx, s.stop)
			}()
		}
	}()
}

// Submit hands the witnesses a checkpoint the engine signed (its note,
// durable in the ledger). It never blocks: each witness keeps only the
// latest checkpoint pending.
func (s *Submitter) Submit(noteText string) {
	cp, err := parseCheckpoint([]byte(noteText))
	if err != nil || !strings.HasPrefix(noteText, s.opts.Origin+"\n") {
		return
	}
	for _, w := range s.workers {
		w.offer(cp)
	}
}

// Status is where each witness stands, in configuration order.
func (s *Submitter) Status() []Status {
	out := make([]Status, 0, len(s.workers))
	for _, w := range s.workers {
		out = append(out, w.status())
	}
	return out
}

// Close stops the goroutines, letting a request under way finish within
// drain.
func (s *Submitter) Close(drain time.Duration) error {
	if s.cancel == nil {
		return nil
	}
	s.closeOnce.Do(func() { close(s.stop) })
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drain):
	}
	s.cancel()
	<-done
	return nil
}

// rebuild reads the ledger backward: the latest signed checkpoint (to
// submit at start), and for each witness the largest tree it cosigned
// (the latest ledger.cosigned whose note it cosigned: the engine records
// only larger trees than the last one) and an alert recorded after it.
func (s *Submitter) rebuild() (*checkpoint, error) {
	if s.opts.Ledger == nil {
		return nil, nil
	}
	var latest *checkpoint
	left := len(s.workers)
	// An entry is canonical JSON: "type" is its last member.
	seenCP := []byte(`"type":"ledger.checkpoint"}`)
	seenCos := []byte(`"type":"` + event.TypeCosigned + `"}`)
	seenAlert := []byte(`"type":"` + event.TypeWitnessAlert + `"}`)
	done := make([]bool, len(s.workers))
	err := s.opts.Ledger.Backward(func(seq uint64, raw []byte) (bool, error) {
		switch {
		case latest == nil && bytes.HasSuffix(raw, seenCP):
			var e struct {
				Data struct {
					Note string `json:"note"`
				} `json:"data"`
			}
			if jsonUnmarshal(raw, &e) == nil && e.Data.Note != "" {
				if cp, err := parseCheckpoint([]byte(e.Data.Note)); err == nil && strings.HasPrefix(e.Data.Note, s.opts.Origin+"\n") {
					latest = cp
				}
			}
		case bytes.HasSuffix(raw, seenCos):
			var e struct {
				Data event.Cosigned `json:"data"`
			}
			if jsonUnmarshal(raw, &e) != nil || !strings.HasPrefix(e.Data.Note, s.opts.Origin+"\n") {
				return true, nil
			}
			for i, w := range s.workers {
				if done[i] || !cosignedBy([]byte(e.Data.Note), w.v) {
					continue
				}
				done[i] = true
				left--
				w.mu.Lock()
				w.cosigned = max(w.cosigned, e.Data.TreeSize)
				w.mu.Unlock()
			}
		case bytes.HasSuffix(raw, seenAlert):
			var e struct {
				TS   string             `json:"ts"`
				Data event.WitnessAlert `json:"data"`
			}
			if jsonUnmarshal(raw, &e) != nil {
				return true, nil
			}
			for i, w := range s.workers {
				w.mu.Lock()
				if !done[i] && w.alertKind == "" && e.Data.Witness == w.v.Name() && e.Data.KeyHash == w.keyHash {
					w.alertKind, w.alert = e.Data.Kind, e.Data.Detail
					w.alertAt, _ = time.Parse(time.RFC3339Nano, e.TS)
					w.recordedAlert = "" // recorded by an earlier run: this run records its own
				}
				w.mu.Unlock()
			}
		}
		return latest == nil || left > 0, nil
	})
	return latest, err
}

// parseCheckpoint reads a checkpoint note's size and root (the engine
// signed it; the witness checks the signature).
func parseCheckpoint(text []byte) (*checkpoint, error) {
	lines := strings.SplitN(string(text), "\n", 4)
	if len(lines) < 4 {
		return nil, fmt.Errorf("checkpoint: not a note")
	}
	n, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("checkpoint: bad size %q", lines[1])
	}
	if r, err := base64.StdEncoding.DecodeString(lines[2]); err != nil || len(r) != 32 {
		return nil, fmt.Errorf("checkpoint: bad root %q", lines[2])
	}
	return &checkpoint{note: text, size: n, root: lines[2]}, nil
}

// cosignedBy reports whether text carries a valid signature of v.
func cosignedBy(text []byte, v note.Verifier) bool {
	_, err := note.Open(text, note.VerifierList(v))
	return err == nil
}
