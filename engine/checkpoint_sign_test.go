package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestEngine_SignsCheckpoints: the engine records its key before anything
// it signs, signs a checkpoint at start and once N entries were appended
// (the interval far off), and publishes each note once it is durable.
func TestEngine_SignsCheckpoints(t *testing.T) {
	dir := t.TempDir()
	k := checkpoint.NewKeeper(dir)
	r := startEngineWith(t, ledger.Options{SignCheckpoint: k.Sign}, func(o *engine.Options) {
		o.Checkpoints, o.CheckpointEntries, o.CheckpointInterval = k, 5, time.Hour
	})
	v, ok := k.Verifier()
	if !ok {
		t.Fatal("no key after the engine started")
	}
	signed := func() []ledger.CheckpointPayload {
		var out []ledger.CheckpointPayload
		h, _ := r.l.Head()
		r.l.Range(0, h.Seq, func(e ledger.Entry) error {
			var c ledger.CheckpointPayload
			if e.Type == ledger.TypeCheckpoint && json.Unmarshal(e.Data, &c) == nil && c.Note != "" {
				out = append(out, c)
			}
			return nil
		})
		return out
	}
	types := r.types(t)
	key, started := -1, -1
	for i, typ := range types {
		switch {
		case typ == event.TypeKey && key < 0:
			key = i
		case typ == event.TypeEngineStarted:
			started = i
		}
	}
	if key < 0 || key > started || len(signed()) != 1 {
		t.Fatalf("ledger.key at %d, engine.started at %d, %d signed checkpoints: %v", key, started, len(signed()), types)
	}
	for i := 0; i < 6; i++ {
		if _, err := r.l.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.Note{Author: "t", Text: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(signed()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after 6 entries (every 5): %v", r.types(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cs := signed()
	last := cs[len(cs)-1]
	cp, err := tlog.Open([]byte(last.Note), v)
	if err != nil || cp.Size != last.TreeSize || cp.RootString() != last.TreeRoot {
		t.Fatalf("note %+v %v, entry %d %s", cp, err, last.TreeSize, last.TreeRoot)
	}
	// The note file follows once the entry is durable.
	for {
		b, err := tlog.ReadNote(filepath.Join(dir, tlog.NoteFile))
		if err == nil && string(b) == last.Note {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("note file %q %v, want the latest note", b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
