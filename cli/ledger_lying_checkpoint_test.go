package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// provingLiar is a lying engine that also answers the tree's RPCs: Prove
// with a note and entry of its choosing, ReadTiles from its ledger, and
// ConsistencyProof from orig's tree.
type provingLiar struct {
	lyingEngine
	note  string
	entry []byte
	orig  *ledger.Ledger
}

func (f *provingLiar) Prove(context.Context, *opxv1.ProveRequest) (*opxv1.ProveResponse, error) {
	return &opxv1.ProveResponse{TreeSize: 1, Note: f.note, Entry: f.entry}, nil
}

func (f *provingLiar) Head(ctx context.Context, r *opxv1.HeadRequest) (*opxv1.HeadResponse, error) {
	resp, err := f.lyingEngine.Head(ctx, r)
	if err == nil && f.orig != nil {
		resp.TreeLayout, resp.TreeBucket = ledger.TreeLayout, true
	}
	return resp, err
}

func (f *provingLiar) ReadTiles(req *opxv1.ReadTilesRequest, s opxv1.LedgerService_ReadTilesServer) error {
	h, err := f.l.Head()
	if err != nil {
		return err
	}
	msg := &opxv1.TileBatch{}
	err = f.l.LocalSource(h).(ledger.TileSource).Tiles(min(req.Size, h.Seq+1), func(key, tile []byte) error {
		msg.Tiles = append(msg.Tiles, &opxv1.Tile{Key: key, Data: tile})
		return nil
	})
	if err != nil {
		return err
	}
	return s.Send(msg)
}

func (f *provingLiar) ConsistencyProof(_ context.Context, req *opxv1.ConsistencyProofRequest) (*opxv1.ConsistencyProofResponse, error) {
	hs, err := f.orig.ConsistencyProof(req.Size1, req.Size2)
	return &opxv1.ConsistencyProofResponse{Hashes: hs}, err
}

// TestLedgerLive_LyingEngineForgesKey: an engine that forges a ledger.key
// entry of a key of its own (named as the ledger's origin) and answers
// Prove with a checkpoint signed by it gets none of it printed: not by
// checkpoint, not by key, not by prove. The key file in the state
// directory decides, and recorded keys count only over a chain checked
// from genesis to the head.
func TestLedgerLive_LyingEngineForgesKey(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	s := signedLedger(t, 10, 5)
	l, err := ledger.Open(s.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	skey, vkey, err := tlog.GenerateKey(tlog.Origin(l.ID()))
	if err != nil {
		t.Fatal(err)
	}
	evil, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	es := entriesOf(t, l)
	genesis := es[0].Raw
	note, err := evil.Sign(1, tlog.LeafHash(genesis))
	if err != nil {
		t.Fatal(err)
	}
	last := es[len(es)-1]
	b, _ := json.Marshal(map[string]any{"data": map[string]any{"vkey": vkey, "reason": "created"}, "prev": strings.Repeat("0", 64),
		"seq": last.Seq, "session": "", "ts": "2026-01-01T00:00:00Z", "type": "ledger.key"})
	forgedKey, err := ledger.Canonicalize(b)
	if err != nil {
		t.Fatal(err)
	}
	f := &provingLiar{note: note, entry: genesis}
	f.l = l
	f.batch = func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
		out := &opxv1.EntryBatch{}
		for _, e := range es[req.FromSeq : req.ToSeq+1] {
			raw := e.Raw
			if e.Seq == last.Seq {
				raw = forgedKey
			}
			out.Entries = append(out.Entries, &opxv1.LedgerEntry{Seq: e.Seq, Raw: raw})
		}
		return send(out)
	}
	serveLying(t, s.Path, f)
	for _, args := range [][]string{{"checkpoint"}, {"key"}, {"prove", "0"}} {
		r := run(t, append(append([]string{"ledger"}, args...), "--ledger", s.Path)...)
		if r.code == cli.ExitOK || strings.Contains(r.stdout, vkey) || strings.Contains(r.stdout, note) {
			t.Errorf("ledger %v through a forging engine: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestLedgerLive_LyingEngineTwoReads: an engine that serves a rewritten
// ledger to the chain check and the original entries to any later read
// cannot pass verify --since: the tree --since checks is folded in the
// same pass as the chain.
func TestLedgerLive_LyingEngineTwoReads(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	s := signedLedger(t, 30, 15, 30)
	saved := saveNote(t, s.Notes[17])
	forged := forge(t, s, func(es []map[string]any) []map[string]any {
		es[10]["data"].(map[string]any)["text"] = "nothing happened here"
		return es
	})
	orig, err := ledger.OpenReadOnly(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	fl, err := ledger.Open(forged, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	fes, oes := entriesOf(t, fl), entriesOf(t, orig)
	if len(fes) != len(oes) {
		t.Fatalf("forged %d entries, original %d", len(fes), len(oes))
	}
	var reads atomic.Int32
	f := &provingLiar{orig: orig}
	f.l = fl
	f.batch = func(req *opxv1.ReadEntriesRequest, send func(*opxv1.EntryBatch) error) error {
		src := fes
		if reads.Add(1) > 1 {
			src = oes
		}
		out := &opxv1.EntryBatch{}
		for _, e := range src[req.FromSeq : req.ToSeq+1] {
			out.Entries = append(out.Entries, &opxv1.LedgerEntry{Seq: e.Seq, Raw: e.Raw})
		}
		return send(out)
	}
	serveLying(t, forged, f)
	r := run(t, "ledger", "verify", "--strict", "--since", saved, "--key", s.Key.String(), "--ledger", forged)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "not-extension")
}

// TestLedgerLive_CheckpointJSONSeq: checkpoint --json through the engine
// names the ledger.checkpoint entry that holds the note, as offline (the
// entry just after the tree it covers), not 0.
func TestLedgerLive_CheckpointJSONSeq(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("OPX_LEDGER", "")
	s := signedLedger(t, 10, 5)
	seqOf := func(r result) (seq, size uint64) {
		t.Helper()
		r.wantCode(t, cli.ExitOK)
		var out struct {
			Seq      uint64 `json:"seq"`
			TreeSize uint64 `json:"tree_size"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("checkpoint --json: %v\n%s", err, r.stdout)
		}
		return out.Seq, out.TreeSize
	}
	if seq, size := seqOf(run(t, "ledger", "checkpoint", "--json", "--ledger", s.Path)); seq == 0 || seq != size {
		t.Fatalf("offline: seq %d for tree %d", seq, size)
	}
	serveLedgerWith(t, s.Path, checkpoint.NewKeeper(s.Dir))
	if seq, size := seqOf(run(t, "ledger", "checkpoint", "--json", "--ledger", s.Path)); seq == 0 || seq != size {
		t.Errorf("through the engine: seq %d for tree %d", seq, size)
	}
}
