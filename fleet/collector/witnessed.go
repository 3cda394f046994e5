package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tdlog "github.com/transparency-dev/formats/log"
	tdnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// The collector as a C2SP tlog-witness (witnesshttp serves it): per
// origin, the latest checkpoint it cosigned, over HTTP (fleet.witnessed)
// or over NATS (fleet.cosigned of an opx source), one state for both
// paths, so the one witness key never cosigns two histories of a log.

// WitnessLog is a log, not one of the collector's sources, that the
// collector witnesses: its origin and its verifier key (note format).
type WitnessLog struct {
	Origin string
	Key    string
}

// witnessBook is the witness's state per origin.
type witnessBook struct {
	mu   sync.Mutex
	logs map[string]*witnessedLog
	// pending counts the logs with a pending checkpoint (setPending):
	// with none, the run loop's sweep skips every source's origins.
	pending atomic.Int64
}

// setPending sets l's pending checkpoint (l.mu held), counted.
func (b *witnessBook) setPending(l *witnessedLog, p pendingWitnessed) {
	switch was := l.pending.size > 0; {
	case !was && p.size > 0:
		b.pending.Add(1)
	case was && p.size == 0:
		b.pending.Add(-1)
	}
	l.pending = p
}

// anyPending reports whether a log has a pending checkpoint.
func (b *witnessBook) anyPending() bool { return b.pending.Load() > 0 }

// witnessedLog is one origin. mu serializes every check-and-cosign of
// the origin (HTTP requests and the NATS path): checking the old size
// and recording the new checkpoint are one step, as the spec requires.
type witnessedLog struct {
	mu   sync.Mutex
	keys []note.Verifier // trusted for the origin; none: unknown
	size uint64          // the latest cosigned (0: none)
	root [32]byte
	note []byte // the latest cosigned note (evidence for a later fork alert)

	// source is the collector's source whose origin this is ("" for a
	// --witness-logs log), mirror its mirror once it has one (set by the
	// run loop, nil again when the collector closes): add-checkpoint
	// compares the checkpoint with the mirror's tree (witnessed_mirror.go).
	source string
	mirror *mirrorTrees
	// pending is the earliest checkpoint cosigned over add-checkpoint
	// beyond what the mirror held then (size 0: none), compared with the
	// mirror once it holds that size.
	pending pendingWitnessed
}

func (b *witnessBook) get(origin string, create bool) *witnessedLog {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logs == nil {
		b.logs = map[string]*witnessedLog{}
	}
	l := b.logs[origin]
	if l == nil && create {
		l = &witnessedLog{}
		b.logs[origin] = l
	}
	return l
}

// advance takes a recorded cosignature (replay): the latest is the
// largest, sizes never going back for one origin.
func (b *witnessBook) advance(origin string, size uint64, root, cosigned string) {
	r, err := ledger.DecodeTreeRoot(root)
	if err != nil {
		return
	}
	l := b.get(origin, true)
	l.mu.Lock()
	defer l.mu.Unlock()
	if size > l.size {
		l.size, l.root, l.note = size, [32]byte(r), []byte(cosigned)
	}
}

// trust adds keys to those trusted for origin.
func (b *witnessBook) trust(origin string, keys ...note.Verifier) {
	l := b.get(origin, true)
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, k := range keys {
		for _, have := range l.keys {
			if have.Name() == k.Name() && have.KeyHash() == k.KeyHash() {
				continue next
			}
		}
		l.keys = append(l.keys, k)
	}
}

// trustSource trusts the source's keys (pinned or allowed) for the
// origins they sign for (the default one, or the team's ledger.origin
// the key is named by).
func (c *Collector) trustSource(s *source) {
	for _, v := range s.keys {
		if nv, err := note.NewVerifier(v.String()); err == nil {
			c.book.trust(event.Origin(s.id, v), nv)
		}
		var m *mirrorTrees
		if s.has {
			m = s.trees
		}
		c.book.bind(event.Origin(s.id, v), s.id, m)
	}
}

// ParseWitnessLogs parses the --witness-logs file: one "ORIGIN KEY" per
// line (the key in the note format, Ed25519 or any key type
// transparency-dev/formats/note reads); empty lines and lines starting
// with # are skipped.
func ParseWitnessLogs(text string) ([]WitnessLog, error) {
	var out []WitnessLog
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want ORIGIN KEY", i+1)
		}
		l := WitnessLog{Origin: f[0], Key: f[1]}
		if _, err := l.verifier(); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}

func (l WitnessLog) verifier() (note.Verifier, error) {
	if l.Origin == "" || len(l.Origin) > event.MaxWitnessedOrigin || strings.ContainsAny(l.Origin, "\n\r") {
		return nil, fmt.Errorf("witness log origin %q: want one line of at most %d bytes", l.Origin, event.MaxWitnessedOrigin)
	}
	v, err := tdnote.NewVerifier(l.Key)
	if err != nil {
		return nil, fmt.Errorf("witness log %s: key: %w", l.Origin, err)
	}
	return v, nil
}

// WitnessHandler is the collector's add-checkpoint server.
func (c *Collector) WitnessHandler(opts witnesshttp.Options) *witnesshttp.Handler {
	if opts.Logf == nil {
		opts.Logf = c.cfg.Logf
	}
	return witnesshttp.New(collectorWitness{c}, opts)
}

// serveWitness listens on Config.WitnessListen and serves add-checkpoint
// until ctx ends or stop is called (which waits for the server).
func (c *Collector) serveWitness(ctx context.Context) (stop func(), err error) {
	ln, err := net.Listen("tcp", c.cfg.WitnessListen)
	if err != nil {
		return nil, fmt.Errorf("collector: witness listener: %w", err)
	}
	addr := ln.Addr().String()
	c.witnessAddr.Store(&addr)
	scheme := "http"
	if c.cfg.WitnessServe.TLS != nil {
		scheme = "https"
	}
	c.cfg.Logf("collector: witness (C2SP tlog-witness) serving POST %s://%s%s", scheme, addr, tlog.AddCheckpointPath)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := witnesshttp.Serve(ctx, ln, c.WitnessHandler(c.cfg.WitnessHTTP), c.cfg.WitnessServe); err != nil {
			c.cfg.Logf("collector: witness listener: %v", err)
		}
	}()
	return func() {
		cancel()
		<-done
		c.witnessAddr.Store(nil)
	}, nil
}

// WitnessAddr is where add-checkpoint is served ("" when nowhere).
func (c *Collector) WitnessAddr() string {
	if p := c.witnessAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// collectorWitness is the collector as a witnesshttp.Witness.
type collectorWitness struct{ c *Collector }

func (w collectorWitness) Known(origin string) bool {
	l := w.c.book.get(origin, false)
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys) > 0
}

func (w collectorWitness) AddCheckpoint(ctx context.Context, origin string, req tlog.AddCheckpointRequest) ([]byte, error) {
	return w.c.addCheckpoint(ctx, origin, req)
}

// emptyRoot is the RFC 6962 root of the empty tree.
var emptyRoot = [32]byte(rfc6962.DefaultHasher.EmptyRoot())

// addCheckpoint is the witness's add-checkpoint: the checks of
// https://c2sp.org/tlog-witness in its order (signature, old size
// against the checkpoint's, old size against the latest cosigned, the
// proof), then the cosignature, recorded and synced before it is
// returned.
func (c *Collector) addCheckpoint(ctx context.Context, origin string, req tlog.AddCheckpointRequest) ([]byte, error) {
	l := c.book.get(origin, false)
	if l == nil {
		return nil, witnesshttp.ErrUnknownOrigin
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keys) == 0 {
		return nil, witnesshttp.ErrUnknownOrigin
	}
	n, err := note.Open(req.Checkpoint, note.VerifierList(l.keys...))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		if errors.As(err, &unverified) || errors.As(err, &invalid) {
			return nil, fmt.Errorf("%w for %s: %v", witnesshttp.ErrNoSignature, origin, err)
		}
		return nil, fmt.Errorf("checkpoint: %w: %v", tlog.ErrMalformed, err)
	}
	var cp tdlog.Checkpoint
	if _, err := cp.Unmarshal([]byte(n.Text)); err != nil {
		return nil, fmt.Errorf("checkpoint: %w: %v", tlog.ErrMalformed, err)
	}
	if cp.Origin != origin || len(cp.Hash) != 32 {
		return nil, fmt.Errorf("checkpoint: %w: not a checkpoint of %s with a 32-byte root", tlog.ErrMalformed, origin)
	}
	root := [32]byte(cp.Hash)
	switch {
	case req.OldSize > cp.Size:
		return nil, fmt.Errorf("%w: old %d, checkpoint %d", witnesshttp.ErrOldSize, req.OldSize, cp.Size)
	case req.OldSize != l.size:
		return nil, &witnesshttp.ConflictError{Latest: l.size}
	case cp.Size == 0 && root != emptyRoot:
		return nil, fmt.Errorf("%w: a tree of size 0 whose root is not the empty tree's", witnesshttp.ErrBadProof)
	case req.OldSize == 0 && len(req.Proof) > 0:
		return nil, fmt.Errorf("%w: a proof from size 0", witnesshttp.ErrBadProof)
	case req.OldSize == cp.Size && len(req.Proof) > 0:
		return nil, fmt.Errorf("%w: a proof from the checkpoint's own size", witnesshttp.ErrBadProof)
	case req.OldSize == cp.Size && cp.Size > 0 && root != l.root:
		c.forkSeen(l, cp.Size, l.root, root, req.Checkpoint, "the collector cosigned it with another root")
		return nil, &witnesshttp.ConflictError{Latest: l.size, Root: true}
	case req.OldSize > 0 && req.OldSize < cp.Size:
		hashes := make([][]byte, len(req.Proof))
		for i := range req.Proof {
			hashes[i] = req.Proof[i][:]
		}
		if err := tlog.VerifyConsistency(req.OldSize, cp.Size, hashes, l.root, root); err != nil {
			return nil, fmt.Errorf("%w: %v", witnesshttp.ErrBadProof, err)
		}
	}
	behind, err := c.checkMirror(l, cp.Size, root, req.Checkpoint)
	if err != nil {
		return nil, err
	}
	lines, cosigned, err := c.wit.cosignLines(n)
	if err != nil {
		return nil, err
	}
	if cp.Size > l.size {
		rec, err := event.Record("", &event.FleetWitnessed{Origin: origin, TreeSize: cp.Size,
			TreeRoot: tlog.Checkpoint{Root: root}.RootString(), Note: string(cosigned)})
		if err != nil {
			return nil, err
		}
		if _, err := c.own.Append(ctx, ledger.Sync, rec); err != nil {
			return nil, fmt.Errorf("record the cosignature: %w", err)
		}
		l.size, l.root, l.note = cp.Size, root, cosigned
		if behind && l.pending.size == 0 {
			c.book.setPending(l, pendingWitnessed{size: cp.Size, root: root, note: cosigned, at: time.Now()})
		}
	}
	c.witnessed.Add(1)
	return lines, nil
}

// cosignLines cosigns the opened note n: lines are the witness's
// signature lines alone (the answer), cosigned the note with the
// signatures that verified and the witness's (the record).
func (w *Witness) cosignLines(n *note.Note) (lines, cosigned []byte, err error) {
	cosigned, err = note.Sign(n, w.signer)
	if err != nil {
		return nil, nil, fmt.Errorf("cosign: %w", err)
	}
	// note.Sign writes the text, a blank line, the signatures it had,
	// then the new one: the witness's line is the last.
	body := bytes.TrimSuffix(cosigned, []byte{'\n'})
	i := bytes.LastIndexByte(body, '\n')
	lines = cosigned[i+1:]
	if !bytes.HasPrefix(lines, []byte("— "+w.Name()+" ")) {
		return nil, nil, errors.New("cosign: the note's last line is not the witness's")
	}
	return lines, cosigned, nil
}

// witnessCheckNATS is the NATS path's part of the shared state: before
// the collector cosigns source s's checkpoint p (verified against the
// mirror, and larger than the source's last cosigned over NATS), the
// mirror must have, at the latest size the witness cosigned for the
// origin on either path, the root cosigned (else a fork alert: the
// source signed another history, sent over add-checkpoint), and p must
// be at least that size. A checkpoint of exactly that size is the tree
// already cosigned: it is cosigned again, so the source gets its
// cosignature over NATS, and the state does not move. It returns the
// origin's state locked (the caller records and calls done), or nil
// when p is not to be cosigned.
func (c *Collector) witnessCheckNATS(b *batch, s *source, p pendingCheckpoint) (done func(cosigned bool)) {
	l := c.book.get(p.cp.Origin, true) // the source's key's (openCheckpoint)
	l.mu.Lock()
	if l.size > 0 {
		// The mirror's tree is committed up to p.seq at least; beyond
		// it, the cosigned size may not be there yet (checked later).
		th, err := s.trees.TreeHeadAt(l.size)
		if err == nil && th.Root != l.root {
			size, root, cosigned := l.size, l.root, l.note
			l.mu.Unlock()
			c.alert(b, s.id, event.AlertFork, size, fmt.Sprintf("the collector cosigned tree %d with root %s (add-checkpoint); the entries shipped make root %s. The note: %s",
				size, rootString(root), rootString(th.Root), evidence(cosigned)))
			return nil
		}
	}
	if p.seq < l.size {
		l.mu.Unlock() // a larger tree is cosigned: this one is covered
		return nil
	}
	return func(cosigned bool) {
		if cosigned && p.seq > l.size {
			l.size, l.root, l.note = p.seq, p.cp.Root, p.note
		}
		l.mu.Unlock()
	}
}
