package ship

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// maxWitnessesPerSize bounds the distinct cosigners recorded for one tree
// size when no witness key is configured (RV17 #7): the first signature
// that reaches the subject must not shadow the real witness's, and a
// flood of keys must not grow the ledger without bound.
const maxWitnessesPerSize = 4

// cosigPending bounds the cosignature messages the subscription holds
// before offerCosig takes them (invariant 9).
const cosigPending = 16

// offerCosig hands a cosignature message to cosigLoop, keeping only the
// latest one waiting: a flood of them costs one slot.
func (s *Shipper) offerCosig(m *nats.Msg) {
	for {
		select {
		case s.cosigs <- m:
			return
		default:
		}
		select {
		case <-s.cosigs:
		default:
		}
	}
}

// fetchCosig offers the latest cosignature the stream holds (one that
// came while the shipper was away).
func (s *Shipper) fetchCosig(ctx context.Context) {
	st, err := s.js.Stream(ctx, fleet.CosigStream(s.cfg.Prefix))
	if err != nil {
		return
	}
	m, err := st.GetLastMsgForSubject(ctx, fleet.CosigSubject(s.cfg.Prefix, s.id))
	if err != nil {
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			s.fail(fmt.Errorf("cosignature: %w", err))
		}
		return
	}
	s.offerCosig(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
}

func (s *Shipper) cosigLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-s.cosigs:
			if err := s.takeCosig(ctx, m); err != nil {
				s.fail(fmt.Errorf("cosignature: %w", err))
			}
		}
	}
}

// takeCosig records a cosigned checkpoint when it is newer than the last
// one recorded, carries the ledger's own signature, and is the ledger's
// own tree at its size. Anything else is refused with an error (and
// recorded nowhere: the message is outside input).
func (s *Shipper) takeCosig(ctx context.Context, m *nats.Msg) error {
	id, size, text, err := fleet.ParseCosig(s.cfg.Prefix, m)
	if err != nil {
		return err
	}
	if id != s.id {
		return fmt.Errorf("a cosignature for ledger %s on this ledger's subject", id)
	}
	if s.cfg.VerifierKey == "" || s.rec == nil {
		return nil // the ledger signs no checkpoints: nothing to cosign
	}
	s.mu.Lock()
	old := s.cosigned
	atOld := len(s.cosigners)
	s.mu.Unlock()
	// With a witness key, only its progress counts. Without one, a size
	// already recorded takes a few more distinct cosigners.
	if size < old || (size == old && (s.cfg.WitnessKey != "" || atOld >= maxWitnessesPerSize)) {
		return nil
	}
	v, err := tlog.ParseVerifierKey(s.cfg.VerifierKey)
	if err != nil {
		return err
	}
	cp, err := tlog.Open(text, v)
	if err != nil {
		return err
	}
	if cp.Size != size {
		return fmt.Errorf("the message says size %d, its checkpoint %d", size, cp.Size)
	}
	th, err := s.l.TreeHeadAt(size)
	if err != nil {
		return fmt.Errorf("a checkpoint of size %d: %w", size, err)
	}
	if th.Root != cp.Root {
		return fmt.Errorf("the cosigned checkpoint of size %d is not this ledger's tree (root %s, ours %s)",
			size, cp.RootString(), tlog.Checkpoint{Root: th.Root}.RootString())
	}
	w, all, err := witnessOf(text, s.cfg.VerifierKey, s.cfg.WitnessKey)
	if err != nil {
		return err
	}
	if size == old {
		// A cosigner not yet recorded at this size, or nothing to do.
		var pick note.Signature
		s.mu.Lock()
		for _, sig := range all {
			if _, ok := s.cosigners[cosignerOf(sig)]; !ok {
				pick = sig
				break
			}
		}
		s.mu.Unlock()
		if pick.Name == "" {
			return nil
		}
		w = pick
	}
	c := &event.Cosigned{Witness: w.Name, KeyHash: fmt.Sprintf("%08x", w.Hash), TreeSize: size,
		TreeRoot: cp.RootString(), Note: string(text)}
	if err := s.rec.RecordCosigned(ctx, c); err != nil {
		return err
	}
	if err := s.l.SetCursor(s.cosigC, size); err != nil {
		return err
	}
	s.mu.Lock()
	if size > s.cosigned || s.cosigners == nil {
		s.cosigners = map[string]struct{}{}
	}
	for _, sig := range all {
		if len(s.cosigners) < maxWitnessesPerSize {
			s.cosigners[cosignerOf(sig)] = struct{}{}
		}
	}
	s.cosigners[cosignerOf(w)] = struct{}{}
	s.cosigned, s.witness = size, w.Name
	s.mu.Unlock()
	return nil
}

// cosignerOf names a cosigner: its name and key hash.
func cosignerOf(sig note.Signature) string { return fmt.Sprintf("%s %08x", sig.Name, sig.Hash) }

// witnessOf returns the note's cosignature: the one of witnessKey when
// set (it must verify), else the first signature that is not the
// ledger's own; and every cosignature it carries (unverified without
// witnessKey).
func witnessOf(text []byte, ledgerKey, witnessKey string) (note.Signature, []note.Signature, error) {
	own, err := note.NewVerifier(strings.TrimSpace(ledgerKey))
	if err != nil {
		return note.Signature{}, nil, err
	}
	vs := []note.Verifier{own}
	if witnessKey != "" {
		wv, err := tdnote.NewVerifierForCosignatureV1(strings.TrimSpace(witnessKey))
		if err != nil {
			return note.Signature{}, nil, fmt.Errorf("witness key: %w", err)
		}
		vs = append(vs, wv)
	}
	n, err := note.Open(text, note.VerifierList(vs...))
	if err != nil {
		return note.Signature{}, nil, err
	}
	if witnessKey != "" {
		for _, sig := range n.Sigs {
			if sig.Name != own.Name() || sig.Hash != own.KeyHash() {
				return sig, []note.Signature{sig}, nil
			}
		}
		return note.Signature{}, nil, errors.New("no cosignature of the configured witness key")
	}
	var all []note.Signature
	for _, sig := range n.UnverifiedSigs {
		if sig.Name != own.Name() && len(all) < maxWitnessesPerSize {
			all = append(all, sig)
		}
	}
	if len(all) == 0 {
		return note.Signature{}, nil, errors.New("no cosignature in the note")
	}
	return all[0], all, nil
}

// redact drops credentials from a NATS URL list.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("redacted")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
