package ship_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
	"github.com/opx-dev/opx/fleet/natsrv/natsrvtest"
	"github.com/opx-dev/opx/fleet/ship"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
)

const prefix = "t"

// waitFor polls cond until it holds (never a fixed sleep: CI is slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startServer(t *testing.T) *natsrv.Server { return natsrvtest.Start(t) }

// signedLedger is a writable ledger that signs its checkpoints.
type signedLedger struct {
	*ledger.Ledger
	path   string
	signer *tlog.Signer
	vkey   string
}

func openSigned(t *testing.T, path string, signer *tlog.Signer) *signedLedger {
	t.Helper()
	opts := ledger.Options{SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }}
	l, err := ledger.Open(path, opts)
	if err != nil {
		l, err = ledger.Create(path, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &signedLedger{Ledger: l, path: path, signer: signer, vkey: signer.Verifier().String()}
}

func newSigned(t *testing.T) *signedLedger {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	skey, _, err := tlog.GenerateKey(tlog.Origin(id))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	sl := openSigned(t, path, signer)
	t.Cleanup(func() { sl.Close(); ledgertest.MustVerify(t, path, event.StrictOptions()) })
	return sl
}

// recorder records as the engine's recorder does (Sync).
type recorder struct{ l *ledger.Ledger }

func (r recorder) RecordCosigned(ctx context.Context, c *event.Cosigned) error {
	rec, err := event.Record("", c)
	if err != nil {
		return err
	}
	_, err = r.l.Append(ctx, ledger.Sync, rec)
	return err
}

// appendNotes appends n notes, each third with an attachment (a blob).
func appendNotes(t *testing.T, l *ledger.Ledger, n int) {
	t.Helper()
	for i := range n {
		p := &event.Note{Author: "t", Text: fmt.Sprintf("note %d", i)}
		var blobs [][]byte
		if i%3 == 0 {
			content := bytes.Repeat([]byte(fmt.Sprintf("attachment %d ", i)), 100)
			p.Attachment, p.Blob = "a.txt", ledger.Sum(content).String()
			blobs = append(blobs, content)
		}
		if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", p, blobs...)); err != nil {
			t.Fatal(err)
		}
	}
}

func start(t *testing.T, url string, l *ledger.Ledger, vkey string) *ship.Shipper {
	t.Helper()
	s, err := ship.Start(context.Background(), ship.Config{URL: url, Prefix: prefix, Host: "h", Workspace: "/w", Version: "test",
		VerifierKey: vkey, Logf: t.Logf}, l, recorder{l})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func shippedAll(s *ship.Shipper, l *ledger.Ledger) func() bool {
	return func() bool {
		h, err := l.Head()
		st := s.Status()
		return err == nil && st.HasAcked && st.Acked == h.Seq && st.LagEntries == 0
	}
}

// streamMsgs reads every message of the ledger's subject, in stream order.
func streamMsgs(t *testing.T, url, id string) []*fleet.Message {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, fleet.LedgerStream(prefix))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(fleet.LedgerSubject(prefix, id)))
	if err != nil {
		t.Fatal(err)
	}
	var out []*fleet.Message
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // another subject's or deleted
		}
		if m.Subject != fleet.LedgerSubject(prefix, id) {
			continue
		}
		pm, err := fleet.Parse(prefix, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		if err != nil {
			t.Fatalf("stream message %d: %v", seq, err)
		}
		out = append(out, pm)
	}
	return out
}

// checkStream checks that the stream holds the ledger's entries 0..head
// exactly once each, in order, byte for byte, every stored blob before the
// first entry naming it.
func checkStream(t *testing.T, url string, l *ledger.Ledger) {
	t.Helper()
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	msgs := streamMsgs(t, url, l.ID())
	blobs := map[ledger.Hash]bool{}
	parts := map[ledger.Hash][]byte{}
	entry := []byte(nil)
	next := uint64(0)
	hellos := 0
	for _, m := range msgs {
		switch m.Kind {
		case fleet.KindHello:
			hellos++
		case fleet.KindBlob:
			if m.Part == 0 {
				parts[m.Blob] = nil
			}
			parts[m.Blob] = append(parts[m.Blob], m.Data...)
			if m.Part < m.Parts-1 {
				continue
			}
			want, err := l.BlobFrame(m.Blob)
			if err != nil || !bytes.Equal(want, parts[m.Blob]) {
				t.Fatalf("blob %s on the stream is not the stored frame", m.Blob)
			}
			blobs[m.Blob] = true
		case fleet.KindEntry:
			if m.Part == 0 {
				entry = nil
			}
			entry = append(entry, m.Data...)
			if m.Part < m.Parts-1 {
				continue
			}
			if m.Seq != next {
				t.Fatalf("entry %d on the stream where %d was due", m.Seq, next)
			}
			e, err := l.Get(m.Seq)
			if err != nil || !bytes.Equal(e.Raw, entry) {
				t.Fatalf("entry %d on the stream is not the stored bytes", m.Seq)
			}
			refs, _ := ledger.BlobRefs(e.Data)
			for _, r := range refs {
				if !blobs[r] {
					t.Fatalf("entry %d names blob %s, not shipped before it", m.Seq, r)
				}
			}
			next++
		}
	}
	if next != h.Seq+1 {
		t.Fatalf("the stream holds entries 0..%d, the ledger 0..%d", int64(next)-1, h.Seq)
	}
	if hellos == 0 {
		t.Fatal("no hello on the stream")
	}
}

func TestShipper_ShipsInOrder(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 20)
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	appendNotes(t, l.Ledger, 20) // while it runs: woken by the writer
	if _, err := l.Checkpoint(context.Background(), ledger.Sync); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every entry acknowledged", shippedAll(s, l.Ledger))
	checkStream(t, srv.ClientURL(), l.Ledger)
	if st := s.Status(); !st.Connected || st.Duplicates != 0 || st.LastError != "" {
		t.Fatalf("status %+v", st)
	}
}

func TestShipper_ResumesFromCursor(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 30)
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	waitFor(t, "first shipment", shippedAll(s, l.Ledger))
	if err := s.Close(0); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	if c, ok, err := l.Cursor("fleet." + fleet.LedgerStream(prefix)); !ok || err != nil || c != h.Seq {
		t.Fatalf("cursor after Close: %d %v %v, want %d", c, ok, err, h.Seq)
	}
	// The engine restarts: the ledger is reopened, more is appended.
	path, signer := l.path, l.signer
	l.Close()
	l2 := openSigned(t, path, signer)
	defer l2.Close()
	appendNotes(t, l2.Ledger, 10)
	s2 := start(t, srv.ClientURL(), l2.Ledger, l2.vkey)
	defer s2.Close(0)
	waitFor(t, "second shipment", shippedAll(s2, l2.Ledger))
	if st := s2.Status(); st.Duplicates != 0 {
		t.Fatalf("%d entries resent after a restart from the cursor", st.Duplicates)
	}
	checkStream(t, srv.ClientURL(), l2.Ledger)
}

// A cursor behind the stream (written up to a second before a crash):
// the shipper resends from the cursor (the stream's last message proves
// nothing about the entries before it, RV17 #3); JetStream drops the
// resends as duplicates of the same bytes, and the stream holds each
// entry once.
func TestShipper_ResendsFromStaleCursor(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 12)
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	waitFor(t, "first shipment", shippedAll(s, l.Ledger))
	s.Close(0)
	h1, _ := l.Head()
	if err := l.SetCursor("fleet."+fleet.LedgerStream(prefix), 3); err != nil {
		t.Fatal(err)
	}
	appendNotes(t, l.Ledger, 2)
	s2 := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s2.Close(0)
	waitFor(t, "second shipment", shippedAll(s2, l.Ledger))
	if st := s2.Status(); st.Duplicates != h1.Seq-3 || st.LastError != "" || st.Conflicts != 0 {
		t.Fatalf("status %+v: want the %d entries 4..%d resent as duplicates, no error, no conflict", st, h1.Seq-3, h1.Seq)
	}
	checkStream(t, srv.ClientURL(), l.Ledger)
}

func TestShipper_NATSDownDuringAppends(t *testing.T) {
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l := newSigned(t)
	appendNotes(t, l.Ledger, 5)
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "first shipment", shippedAll(s, l.Ledger))
	srv.Shutdown()
	waitFor(t, "disconnected", func() bool { return !s.Status().Connected })
	// The engine keeps working: appends do not wait for NATS.
	t0 := time.Now()
	appendNotes(t, l.Ledger, 200)
	if d := time.Since(t0); d > 30*time.Second {
		t.Fatalf("appends took %v with NATS down", d)
	}
	if st := s.Status(); st.LagEntries < 200 || st.LastError == "" {
		t.Fatalf("status while NATS is down: %+v", st)
	}
	srv2, err := srv.Restart()
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown()
	waitFor(t, "the backlog shipped", shippedAll(s, l.Ledger))
	checkStream(t, srv2.ClientURL(), l.Ledger)
}

// A large entry and a blob larger than a message go in parts.
func TestShipper_LargeEntryAndBlobInParts(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	big := make([]byte, 3*fleet.MaxChunk+17)
	rand.Read(big) // incompressible: the frame is as large
	p := &event.Note{Author: "t", Text: strings.Repeat("x", fleet.MaxChunk+5), Attachment: "big", Blob: ledger.Sum(big).String()}
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", p, big)); err != nil {
		t.Fatal(err)
	}
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "shipped", shippedAll(s, l.Ledger))
	checkStream(t, srv.ClientURL(), l.Ledger)
}

// cosign adds a witness's cosignature/v1 to the ledger's checkpoint note.
func cosign(t *testing.T, text, ledgerVKey string, witness note.Signer) string {
	t.Helper()
	v, err := note.NewVerifier(ledgerVKey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	out, err := note.Sign(n, witness)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// newWitness returns a cosignature/v1 signer and its verifier key.
func newWitness(t *testing.T, name string) (note.Signer, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tdnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := tdnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, cv
}

// lastCheckpointNote returns the latest ledger.checkpoint's size and note.
func lastCheckpointNote(t *testing.T, l *ledger.Ledger) (uint64, string) {
	t.Helper()
	var size uint64
	var text string
	err := l.Backward(func(seq uint64, raw []byte) (bool, error) {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return false, err
		}
		if e.Type != event.TypeCheckpoint {
			return true, nil
		}
		p, err := event.Decode(e)
		if err != nil {
			return false, err
		}
		cp := p.(*event.Checkpoint)
		size, text = cp.TreeSize, cp.Note
		return false, nil
	})
	if err != nil || text == "" {
		t.Fatalf("no signed checkpoint: %v", err)
	}
	return size, text
}

func publishCosig(t *testing.T, url, id string, size uint64, text string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.PublishMsg(context.Background(), fleet.CosigMessage(prefix, id, size, []byte(text))); err != nil {
		t.Fatal(err)
	}
}

func TestShipper_RecordsCosignature(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 5)
	if _, err := l.Checkpoint(context.Background(), ledger.Sync); err != nil {
		t.Fatal(err)
	}
	size, text := lastCheckpointNote(t, l.Ledger)
	w, wkey := newWitness(t, "witness.test")
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	waitFor(t, "shipped", shippedAll(s, l.Ledger))
	publishCosig(t, srv.ClientURL(), l.ID(), size, cosign(t, text, l.vkey, w))
	waitFor(t, "cosignature recorded", func() bool { return s.Status().CosignedSize == size })
	s.Close(0)

	// Recorded once, with what verify --witness needs.
	var got []*event.Cosigned
	l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			p, _ := event.Decode(e)
			got = append(got, p.(*event.Cosigned))
		}
		return nil
	})
	if len(got) != 1 || got[0].TreeSize != size || got[0].Witness != "witness.test" {
		t.Fatalf("ledger.cosigned entries: %+v", got)
	}
	wv, _ := tdnote.NewVerifierForCosignatureV1(wkey)
	if _, err := note.Open([]byte(got[0].Note), note.VerifierList(wv)); err != nil {
		t.Fatalf("the recorded note does not verify under the witness key: %v", err)
	}
	// A restarted shipper finds it on the stream and records it no more.
	s2 := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	waitFor(t, "shipped", shippedAll(s2, l.Ledger))
	if st := s2.Status(); st.CosignedSize != size || st.Witness != "witness.test" {
		t.Fatalf("restarted status: %+v", st)
	}
	s2.Close(0)
	n := 0
	l.Range(0, ^uint64(0), func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Fatalf("%d ledger.cosigned entries after a restart, want 1", n)
	}
}

// An engine that starts while NATS is down starts at once, and ships
// everything once the server is there.
func TestShipper_StartsWithNATSDown(t *testing.T) {
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown() // its port is now free, and known
	l := newSigned(t)
	appendNotes(t, l.Ledger, 10)
	t0 := time.Now()
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("Start took %v with NATS down", d)
	}
	if st := s.Status(); st.Connected || st.HasAcked || st.LagEntries != 11 {
		t.Fatalf("status with NATS down: %+v", st)
	}
	appendNotes(t, l.Ledger, 10)
	srv2, err := srv.Restart()
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown()
	waitFor(t, "the backlog shipped", shippedAll(s, l.Ledger))
	checkStream(t, srv2.ClientURL(), l.Ledger)
}

// A ledger replaced by an older copy (its cursor past its head) ships
// what it appends next at the seqs the stream already holds: the
// collector sees the other history; nothing is skipped.
func TestShipper_CursorPastHead(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 3)
	if err := l.SetCursor("fleet."+fleet.LedgerStream(prefix), 50); err != nil {
		t.Fatal(err)
	}
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	if st := s.Status(); !strings.Contains(st.LastError, "past the ledger's head") || st.Acked != 3 {
		t.Fatalf("status: %+v", st)
	}
	appendNotes(t, l.Ledger, 2)
	waitFor(t, "shipped", shippedAll(s, l.Ledger))
	msgs := streamMsgs(t, srv.ClientURL(), l.ID())
	var seqs []uint64
	for _, m := range msgs {
		if m.Kind == fleet.KindEntry {
			seqs = append(seqs, m.Seq)
		}
	}
	if fmt.Sprint(seqs) != "[4 5]" {
		t.Fatalf("entries shipped: %v, want [4 5]", seqs)
	}
}

// RV17 #1, the shipper's side: a message squatting on an entry's id
// (another history under this ledger id, or a forgery) makes JetStream
// acknowledge the real entry as a duplicate and drop it. The shipper
// reads the stored message back, finds other bytes, publishes its entry
// again under fleet.ConflictMsgID, says so and counts it; the squatted
// entries of the same bytes (a plain resend) are not conflicts.
func TestShipper_DuplicateWithOtherBytesIsAConflict(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 6)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	k := h.Seq - 1
	e, err := l.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	forged := append([]byte(nil), e.Raw...)
	forged[len(forged)/2] ^= 1
	for _, m := range fleet.EntryMessages(prefix, l.ID(), k, forged) {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	same, _ := l.Get(h.Seq) // a resend of the same bytes: no conflict
	for _, m := range fleet.EntryMessages(prefix, l.ID(), h.Seq, same.Raw) {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "every entry acknowledged", shippedAll(s, l.Ledger))
	st := s.Status()
	if st.Conflicts != 1 || st.Duplicates != 2 || !strings.Contains(st.LastError, "other bytes") {
		t.Fatalf("status %+v: want 1 conflict (entry %d), 2 duplicates, the conflict as last error", st, k)
	}
	want := fleet.ConflictMsgID(l.ID(), k, e.Raw)
	found := false
	for _, m := range streamMsgs(t, srv.ClientURL(), l.ID()) {
		if m.MsgID == want {
			found = m.Kind == fleet.KindEntry && m.Seq == k && string(m.Data) == string(e.Raw)
		}
		if m.Kind == fleet.KindEntry && m.Seq == h.Seq && m.MsgID != fleet.EntryMsgID(l.ID(), h.Seq) {
			t.Errorf("entry %d (same bytes) published again as %s", h.Seq, m.MsgID)
		}
	}
	if !found {
		t.Fatalf("the stream lacks entry %d under %s with the ledger's bytes", k, want)
	}
}

// RV17 #4, the shipper's side: a collector's resend request on the
// control subject ships the entries from its From up to the cursor again
// under fleet.ResendMsgID (so JetStream's duplicate window keeps them), at
// most once per fleet.ResendEvery; malformed ones and those past the
// cursor do nothing; the status says what was honoured.
func TestShipper_HonoursResendRequest(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 8)
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "every entry acknowledged", shippedAll(s, l.Ledger))
	h, _ := l.Head()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ask := func(from uint64, epoch string) {
		t.Helper()
		m, err := fleet.ResendMessage(prefix, fleet.ResendRequest{LedgerID: l.ID(), From: from, Epoch: epoch, Reason: "gap"})
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
	}
	bad := nats.NewMsg(fleet.CtlSubject(prefix, l.ID()))
	bad.Data = []byte("{")
	nc.PublishMsg(bad)
	ask(h.Seq+5, "00112233445566778899aabbccddeeff") // past the cursor: nothing to resend
	const epoch = "0123456789abcdef0123456789abcdef"
	ask(3, epoch)
	resent := func() map[uint64]bool {
		got := map[uint64]bool{}
		for _, m := range streamMsgs(t, srv.ClientURL(), l.ID()) {
			if m.Kind == fleet.KindEntry && m.MsgID == fleet.ResendMsgID(fleet.EntryMsgID(l.ID(), m.Seq), epoch) {
				got[m.Seq] = true
			}
		}
		return got
	}
	waitFor(t, "entries 3.. resent", func() bool { return len(resent()) == int(h.Seq-3+1) })
	for seq := uint64(3); seq <= h.Seq; seq++ {
		if !resent()[seq] {
			t.Fatalf("entry %d not resent", seq)
		}
	}
	st := s.Status()
	if st.Resends != 1 || st.LastResendFrom != 3 || st.LastResendAt.IsZero() {
		t.Fatalf("status %+v: want one resend from 3", st)
	}
	// A second request within ResendEvery: ignored.
	ask(0, "fedcba9876543210fedcba9876543210")
	appendNotes(t, l.Ledger, 1) // a marker: shipped after the request was taken
	waitFor(t, "the marker acknowledged", shippedAll(s, l.Ledger))
	for _, m := range streamMsgs(t, srv.ClientURL(), l.ID()) {
		if strings.HasSuffix(m.MsgID, "@fedcba9876543210fedcba9876543210") {
			t.Fatalf("a second resend within %s honoured: %s", fleet.ResendEvery, m.MsgID)
		}
	}
	if st := s.Status(); st.Resends != 1 {
		t.Fatalf("status %+v: want one resend", st)
	}
}

// The same hole for blobs: junk pre-published under a blob part's id
// makes JetStream drop the real part. The shipper sees the duplicate
// with other bytes and publishes the whole blob again under fresh ids,
// once, and says so.
func TestShipper_SquattedBlobPartRepublished(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	big := make([]byte, 2*fleet.MaxChunk+9)
	rand.Read(big)
	h := ledger.Sum(big)
	p := &event.Note{Author: "t", Text: "b", Attachment: "big", Blob: h.String()}
	if _, err := l.Append(context.Background(), ledger.Sync, event.MustRecord("", p, big)); err != nil {
		t.Fatal(err)
	}
	frame, err := l.BlobFrame(h)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fleet.EnsureStreams(ctx, js, prefix, 1); err != nil {
		t.Fatal(err)
	}
	for i := range fleet.BlobParts(int64(len(frame))) { // every part squatted
		junk := make([]byte, len(frame[i*fleet.MaxChunk:min(len(frame), (i+1)*fleet.MaxChunk)]))
		if _, err := js.PublishMsg(ctx, fleet.BlobMessage(prefix, l.ID(), h, int64(len(frame)), i, junk)); err != nil {
			t.Fatal(err)
		}
	}
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "shipped", shippedAll(s, l.Ledger))
	if st := s.Status(); st.Conflicts != 1 || !strings.Contains(st.LastError, "blob "+h.String()) {
		t.Fatalf("status %+v: want the blob republished once", st)
	}
	var got []byte
	for _, m := range streamMsgs(t, srv.ClientURL(), l.ID()) {
		if m.Kind == fleet.KindBlob && strings.Contains(m.MsgID, "@") {
			got = append(got, m.Data...)
		}
	}
	if string(got) != string(frame) {
		t.Fatalf("the republished parts hold %d bytes, not the frame's %d", len(got), len(frame))
	}
}
