package ship_test

// Review of issue 17 (REVIEW17.md): evidence tests.

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
)

// RV17 finding 3: resume() moves the cursor to the subject's last message
// when that is this ledger's entry, byte for byte, without checking that
// the entries between the cursor and it are on the stream. They are not
// when JetStream stored a later publish but not an earlier one of the
// same window (the shipper pipelines up to 256: a stream leader change in
// a cluster answers some with 503 / no acknowledgement while later ones
// land; the collector's reorder buffer exists for exactly this). Here the
// stream holds entries 0..5 and 10 (6..9 never landed), the cursor says
// 5: the shipper skips 6..9 for good, with no error, though the ledger
// holds them and nobody forged anything.
func TestRV17_ResumeSkipsEntriesMissingFromStream(t *testing.T) {
	srv := startServer(t)
	l := newSigned(t)
	appendNotes(t, l.Ledger, 14)
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
	publish := func(seq uint64) { // as the shipper does: blobs first
		e, err := l.Get(seq)
		if err != nil {
			t.Fatal(err)
		}
		refs, _ := ledger.BlobRefs(e.Data)
		for _, h := range refs {
			f, err := l.BlobFrame(h)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < fleet.BlobParts(int64(len(f))); i++ {
				part := f[i*fleet.MaxChunk : min(len(f), (i+1)*fleet.MaxChunk)]
				if _, err := js.PublishMsg(ctx, fleet.BlobMessage(prefix, l.ID(), h, int64(len(f)), i, part)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, m := range fleet.EntryMessages(prefix, l.ID(), seq, e.Raw) {
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	for seq := uint64(0); seq <= 5; seq++ {
		publish(seq)
	}
	publish(10) // 6..9 were refused (the leader moved); 10 landed
	if err := l.SetCursor("fleet."+fleet.LedgerStream(prefix), 5); err != nil {
		t.Fatal(err)
	}
	s := start(t, srv.ClientURL(), l.Ledger, l.vkey)
	defer s.Close(0)
	waitFor(t, "every entry acknowledged", shippedAll(s, l.Ledger))
	on := map[uint64]bool{}
	for _, m := range streamMsgs(t, srv.ClientURL(), l.ID()) {
		if m.Kind == fleet.KindEntry && m.Part == m.Parts-1 {
			on[m.Seq] = true
		}
	}
	h, _ := l.Head()
	var missing []uint64
	for seq := uint64(0); seq <= h.Seq; seq++ {
		if !on[seq] {
			missing = append(missing, seq)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the shipper says every entry up to %d is on the stream (status %+v); entries %v never are", h.Seq, s.Status(), missing)
	}
}
