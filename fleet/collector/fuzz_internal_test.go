package collector

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
)

// fuzzMsg is a delivered message as the handler sees it (the fuzz test
// drives the handler without a server; the tests beside it use a real
// one).
type fuzzMsg struct {
	subject string
	hdr     nats.Header
	data    []byte
	seq     uint64
}

func (m *fuzzMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}}, nil
}
func (m *fuzzMsg) Data() []byte                     { return m.data }
func (m *fuzzMsg) Headers() nats.Header             { return m.hdr }
func (m *fuzzMsg) Subject() string                  { return m.subject }
func (m *fuzzMsg) Reply() string                    { return "" }
func (m *fuzzMsg) Ack() error                       { return nil }
func (m *fuzzMsg) DoubleAck(context.Context) error  { return nil }
func (m *fuzzMsg) Nak() error                       { return nil }
func (m *fuzzMsg) NakWithDelay(time.Duration) error { return nil }
func (m *fuzzMsg) InProgress() error                { return nil }
func (m *fuzzMsg) Term() error                      { return nil }
func (m *fuzzMsg) TermWithReason(string) error      { return nil }

// FuzzCollector_Handle feeds the handler any message on a source's
// subject: it never panics, keeps its bounds, and a mirror only ever
// holds a chain that verifies.
func FuzzCollector_Handle(f *testing.F) {
	const id = "0123456789abcdef0123456789abcdef"
	genesis := []byte(`{"data":{"created":"2026-11-22T10:00:00.000000000Z","format":"opx-ledger/1","ledger_id":"` + id + `"},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"2026-11-22T10:00:00.000000000Z","type":"ledger.genesis"}`)
	add := func(kind, seq, size, part, blob string, data []byte) { f.Add(kind, seq, size, part, blob, data) }
	add("entry", "0", strconv.Itoa(len(genesis)), "0/1", "", genesis)
	add("entry", "1", "10", "0/1", "", []byte(`{"a":1}xxx`))
	add("entry", "5", "1048576", "0/2", "", make([]byte, fleet.MaxChunk))
	add("blob", "", "4", "0/1", ledger.Sum(nil).String(), []byte("abcd"))
	add("hello", "", "", "", "", []byte(`{"wire":"opx-fleet/1","ledger_id":"`+id+`","head_seq":3,"head_hash":"x"}`))
	add("x", "-1", "a", "9/9", "zz", nil)
	c, err := New(Config{Prefix: "t", Store: f.TempDir(), NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	var n uint64
	f.Fuzz(func(t *testing.T, kind, seq, size, part, blob string, data []byte) {
		n++
		hdr := nats.Header{}
		hdr.Set(fleet.HdrWire, fleet.WireVersion)
		for k, v := range map[string]string{fleet.HdrKind: kind, fleet.HdrSeq: seq, fleet.HdrSize: size, fleet.HdrPart: part, fleet.HdrBlob: blob} {
			if v != "" {
				hdr.Set(k, v)
			}
		}
		b := c.newBatch()
		c.handle(context.Background(), b, &fuzzMsg{subject: fleet.LedgerSubject("t", id), hdr: hdr, data: data, seq: n})
		if err := c.commit(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if c.held < 0 || c.held > TotalHeldBytes || c.heldEntries < 0 || c.heldEntries > TotalHeldEntries {
			t.Fatalf("held %d bytes, %d entries", c.held, c.heldEntries)
		}
		for !c.mat.idle() {
			<-c.mat.wake // each pass of the materializer signals
		}
		if err := c.materialized(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := c.sources[id]; s != nil && s.has {
			if next, prev := c.matHead(s); next != s.next || prev != s.prev {
				t.Fatalf("collector at %d %s, mirror at %d %s", s.next, s.prev, next, prev)
			}
		}
	})
}
