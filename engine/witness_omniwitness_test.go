package engine_test

import (
	"context"
	"github.com/opx-dev/opx/engine/outward"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/engine/witness"
	"github.com/opx-dev/opx/internal/omniwitnesstest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// testWitnesses is a witness.Submitter as the engine sees it (the CLI's
// adapter, cli/engine_witness.go, does the same).
type testWitnesses struct{ s *witness.Submitter }

func (w testWitnesses) Submit(note string)              { w.s.Submit(note) }
func (w testWitnesses) Close(drain time.Duration) error { return w.s.Close(drain) }
func (w testWitnesses) Status() []*opxv1.WitnessStatus {
	var out []*opxv1.WitnessStatus
	for _, st := range w.s.Status() {
		out = append(out, &opxv1.WitnessStatus{Url: st.URL, Name: st.Name, KeyHash: st.KeyHash, CosignedSize: st.CosignedSize, AlertKind: st.AlertKind})
	}
	return out
}

// TestEngine_WitnessedByOmniwitness: an engine whose config lists
// transparency-dev's omniwitness (on loopback) as a witness has the
// checkpoint it signs at start cosigned and recorded (ledger.cosigned,
// verifying under the omniwitness's key), then the next one, proved
// consistent from the first; GetStatus shows the witness's cosigned size.
func TestEngine_WitnessedByOmniwitness(t *testing.T) {
	// Found (or the test skipped, or failed under CI=true) here, on the
	// test's goroutine: the engine calls the starter below on its own,
	// where a skip would end the engine's goroutine instead of the test.
	omniwitnesstest.Binary(t)
	k := checkpoint.NewKeeper(t.TempDir())
	var ow *omniwitnesstest.Witness
	r := startEngineWith(t, ledger.Options{SignCheckpoint: k.Sign}, func(o *engine.Options) {
		o.Checkpoints, o.CheckpointEntries, o.CheckpointInterval = k, 5, time.Hour
		o.Witnesses = func(ctx context.Context, rec outward.WitnessRecorder) (outward.Witnesses, error) {
			// Started after the key is set up: the omniwitness lists this
			// log by its origin and verifier key.
			v, _ := k.Verifier()
			ow = omniwitnesstest.Start(t, v.Name(), v.String())
			s, err := witness.New(witness.Options{Witnesses: []witness.Witness{{URL: ow.URL, Key: ow.VKey}}, Origin: v.Name(),
				Ledger: o.Ledger, Record: func(ctx context.Context, p event.Payload) error { return rec(ctx, p) }, Logf: t.Logf})
			if err != nil {
				return nil, err
			}
			s.Start(ctx)
			return testWitnesses{s}, nil
		}
	})
	v, _ := k.Verifier()
	cosigned := func() []*event.Cosigned {
		var out []*event.Cosigned
		h, _ := r.l.Head()
		r.l.Range(0, h.Seq, func(e ledger.Entry) error {
			if e.Type == event.TypeCosigned {
				p, err := event.Decode(e)
				if err == nil {
					out = append(out, p.(*event.Cosigned))
				}
			}
			return nil
		})
		return out
	}
	wait := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for len(cosigned()) < n {
			if time.Now().After(deadline) {
				log := "(the witness was never started)"
				if ow != nil {
					log = ow.Log()
				}
				t.Fatalf("%d cosignatures recorded, want %d: %v\n%s", len(cosigned()), n, r.types(t), log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(1)
	for range 6 {
		if _, err := r.l.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.Note{Author: "t", Text: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	wait(2)
	cs := cosigned()
	for _, c := range cs {
		if _, err := tlog.Open([]byte(c.Note), v); err != nil {
			t.Errorf("cosigned note lost the log's signature: %v", err)
		}
		if c.Witness != "omniwitness.opx.test" {
			t.Errorf("witness %q", c.Witness)
		}
	}
	if cs[1].TreeSize <= cs[0].TreeSize {
		t.Errorf("cosigned sizes %d, %d", cs[0].TreeSize, cs[1].TreeSize)
	}
	// The worker records a cosignature in the ledger first, then in the
	// status it reports: wait for the status to show it (a condition, not
	// a time: on a busy machine the two are apart).
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := r.e.Status()
		if err != nil {
			t.Fatal(err)
		}
		ok := len(st.Witnesses) == 1 && st.Witnesses[0].CosignedSize >= cs[1].TreeSize && st.Witnesses[0].AlertKind == ""
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %v: want one witness, cosigned to %d at least, no alert", st.Witnesses, cs[1].TreeSize)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
