package fleet_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/ledger"
)

const id = "0123456789abcdef0123456789abcdef"

func TestEntryMessages_RoundTrip(t *testing.T) {
	for _, n := range []int{1, fleet.MaxChunk - 1, fleet.MaxChunk, fleet.MaxChunk + 1, 3*fleet.MaxChunk + 17} {
		raw := bytes.Repeat([]byte{'x'}, n)
		msgs := fleet.EntryMessages("opx", id, 42, raw)
		if want := (n + fleet.MaxChunk - 1) / fleet.MaxChunk; len(msgs) != want {
			t.Fatalf("%d bytes: %d parts, want %d", n, len(msgs), want)
		}
		var got []byte
		for i, m := range msgs {
			p, err := fleet.Parse("opx", m)
			if err != nil {
				t.Fatalf("%d bytes, part %d: %v", n, i, err)
			}
			if p.Kind != fleet.KindEntry || p.Seq != 42 || p.Part != i || p.Parts != len(msgs) || p.Size != int64(n) || p.LedgerID != id {
				t.Fatalf("part %d: %+v", i, p)
			}
			last := i == len(msgs)-1
			if (p.MsgID == fleet.EntryMsgID(id, 42)) != last {
				t.Errorf("part %d of %d: msg id %q", i, len(msgs), p.MsgID)
			}
			got = append(got, p.Data...)
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("%d bytes: parts do not make the entry", n)
		}
	}
}

func TestBlobAndHello_RoundTrip(t *testing.T) {
	h := ledger.Sum([]byte("content"))
	frame := bytes.Repeat([]byte{1}, fleet.MaxChunk+5)
	for i := range fleet.BlobParts(int64(len(frame))) {
		part := frame[i*fleet.MaxChunk : min(len(frame), (i+1)*fleet.MaxChunk)]
		p, err := fleet.Parse("a.b", fleet.BlobMessage("a.b", id, h, int64(len(frame)), i, part))
		if err != nil || p.Kind != fleet.KindBlob || p.Blob != h || p.Part != i || p.Parts != 2 {
			t.Fatalf("blob part %d: %+v %v", i, p, err)
		}
	}
	m, err := fleet.HelloMessage("opx", fleet.Hello{LedgerID: id, Boot: strings.Repeat("ab", 16), Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := fleet.Parse("opx", m)
	if err != nil || p.Hello == nil || p.Hello.Host != "h" || p.MsgID != fleet.HelloMsgID(id, strings.Repeat("ab", 16)) {
		t.Fatalf("hello: %+v %v", p, err)
	}
}

// TestParse_Hostile: whatever a source puts on its subject is refused
// with ErrMalformed or ErrWire, never taken for something it is not.
func TestParse_Hostile(t *testing.T) {
	good := func() *nats.Msg { return fleet.EntryMessages("opx", id, 7, []byte(`{"seq":7}`))[0] }
	big := bytes.Repeat([]byte{'y'}, fleet.MaxChunk+1)
	tests := []struct {
		name string
		edit func(m *nats.Msg)
		want error
	}{
		{"other prefix", func(m *nats.Msg) { m.Subject = "other.ledger." + id }, fleet.ErrMalformed},
		{"not a ledger id", func(m *nats.Msg) { m.Subject = "opx.ledger.ABC" }, fleet.ErrMalformed},
		{"wildcard id", func(m *nats.Msg) { m.Subject = "opx.ledger.*" }, fleet.ErrMalformed},
		{"no wire", func(m *nats.Msg) { m.Header.Del(fleet.HdrWire) }, fleet.ErrWire},
		{"future wire", func(m *nats.Msg) { m.Header.Set(fleet.HdrWire, "opx-fleet/2") }, fleet.ErrWire},
		{"unknown kind", func(m *nats.Msg) { m.Header.Set(fleet.HdrKind, "exec") }, fleet.ErrMalformed},
		{"no seq", func(m *nats.Msg) { m.Header.Del(fleet.HdrSeq) }, fleet.ErrMalformed},
		{"negative seq", func(m *nats.Msg) { m.Header.Set(fleet.HdrSeq, "-1") }, fleet.ErrMalformed},
		{"size lies short", func(m *nats.Msg) { m.Header.Set(fleet.HdrSize, "3") }, fleet.ErrMalformed},
		{"size lies long", func(m *nats.Msg) { m.Header.Set(fleet.HdrSize, "900") }, fleet.ErrMalformed},
		{"huge size", func(m *nats.Msg) { m.Header.Set(fleet.HdrSize, "99999999999999") }, fleet.ErrMalformed},
		{"entry over the line limit", func(m *nats.Msg) {
			m.Header.Set(fleet.HdrSize, "17825792") // 17 MiB: 34 full parts
			m.Header.Set(fleet.HdrPart, "33/34")
			m.Data = make([]byte, fleet.MaxChunk)
		}, fleet.ErrMalformed},
		{"part past parts", func(m *nats.Msg) { m.Header.Set(fleet.HdrPart, "1/1") }, fleet.ErrMalformed},
		{"parts do not fit size", func(m *nats.Msg) { m.Header.Set(fleet.HdrPart, "0/2") }, fleet.ErrMalformed},
		{"part garbage", func(m *nats.Msg) { m.Header.Set(fleet.HdrPart, "0/") }, fleet.ErrMalformed},
		{"long header", func(m *nats.Msg) { m.Header.Set(fleet.HdrSeq, strings.Repeat("1", 300)) }, fleet.ErrMalformed},
		{"oversized body", func(m *nats.Msg) { m.Data = big }, fleet.ErrMalformed},
		{"empty entry", func(m *nats.Msg) {
			m.Data = nil
			m.Header.Set(fleet.HdrSize, "0")
		}, fleet.ErrMalformed},
		{"blob without hash", func(m *nats.Msg) { m.Header.Set(fleet.HdrKind, "blob") }, fleet.ErrMalformed},
		{"hello junk", func(m *nats.Msg) { m.Header.Set(fleet.HdrKind, "hello") }, fleet.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.edit(m)
			if _, err := fleet.Parse("opx", m); !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
	// A hello for another ledger than its subject's.
	h, _ := fleet.HelloMessage("opx", fleet.Hello{LedgerID: id})
	h.Subject = fleet.LedgerSubject("opx", strings.Repeat("f", 32))
	if _, err := fleet.Parse("opx", h); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("a hello under another ledger's subject: %v", err)
	}
	if _, err := fleet.Parse("opx", good()); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, p := range []string{"opx", "acme.prod", "a-b_c.d.e.f"} {
		if err := fleet.CheckPrefix(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", ".", "a..b", "a.*", "a.>", "a b", "a.b.c.d.e", strings.Repeat("x", 33)} {
		if err := fleet.CheckPrefix(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestParseCosig(t *testing.T) {
	m := fleet.CosigMessage("opx", id, 12, []byte("note"))
	gotID, size, note, err := fleet.ParseCosig("opx", m)
	if err != nil || gotID != id || size != 12 || string(note) != "note" {
		t.Fatalf("%q %d %q %v", gotID, size, note, err)
	}
	m.Data = make([]byte, fleet.MaxCosigBytes+1)
	if _, _, _, err := fleet.ParseCosig("opx", m); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("oversized cosignature: %v", err)
	}
	m = fleet.CosigMessage("opx", id, 0, nil)
	if _, _, _, err := fleet.ParseCosig("opx", m); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("size 0: %v", err)
	}
}

func TestResend_RoundTrip(t *testing.T) {
	epoch := strings.Repeat("ab", 8)
	m, err := fleet.ResendMessage("opx", fleet.ResendRequest{LedgerID: id, From: 17, Epoch: epoch, Reason: "gap"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fleet.ParseResend("opx", id, m)
	if err != nil || r.From != 17 || r.Epoch != epoch {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := fleet.ParseResend("opx", strings.Repeat("f", 32), m); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("another ledger's request taken: %v", err)
	}
	m.Data = []byte(`{"wire":"opx-fleet/1","ledger_id":"` + id + `","from":1,"epoch":"not hex"}`)
	if _, err := fleet.ParseResend("opx", id, m); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("a bad epoch taken: %v", err)
	}
	m.Data = make([]byte, fleet.MaxCtlBytes+1)
	if _, err := fleet.ParseResend("opx", id, m); !errors.Is(err, fleet.ErrMalformed) {
		t.Fatalf("an oversized request taken: %v", err)
	}
	if _, err := fleet.ResendMessage("opx", fleet.ResendRequest{LedgerID: id, Epoch: "x"}); err == nil {
		t.Fatal("a bad epoch sent")
	}
	if got := fleet.ConflictMsgID(id, 3, []byte("x")); !strings.HasPrefix(got, fleet.EntryMsgID(id, 3)+"#") || len(got) != len(fleet.EntryMsgID(id, 3))+17 {
		t.Fatalf("conflict id %q", got)
	}
}
