package checkpoint_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/checkpoint"
)

// TestOnDemand_Cover_Shared: callers that arrive together and need the
// same tree share one checkpoint.
func TestOnDemand_Cover_Shared(t *testing.T) {
	var records atomic.Int32
	d := checkpoint.NewOnDemand(func(context.Context) error { records.Add(1); return nil }, time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := d.Cover(context.Background(), func() (bool, error) { return records.Load() > 0, nil })
			if !ok || err != nil {
				errs <- errors.Join(err, errors.New("not covered"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := records.Load(); n != 1 {
		t.Errorf("%d checkpoints recorded for 50 callers needing the same tree, want 1", n)
	}
}

// TestOnDemand_Cover_RateBound: callers that each need a newer checkpoint
// (proving the checkpoint entry itself, again and again) get at most one
// per Every: the second waits, the others wait behind it, and they leave
// when their context ends having signed nothing.
func TestOnDemand_Cover_RateBound(t *testing.T) {
	var records, asked atomic.Int32
	d := checkpoint.NewOnDemand(func(context.Context) error { records.Add(1); return nil }, time.Hour)
	never := func() (bool, error) { asked.Add(1); return false, nil }
	if ok, err := d.Cover(context.Background(), never); ok || err != nil || records.Load() != 1 {
		t.Fatalf("first Cover = %v %v with %d checkpoints, want one recorded", ok, err, records.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.Cover(ctx, never); !errors.Is(err, context.Canceled) {
				t.Errorf("Cover = %v, want context.Canceled", err)
			}
		}()
	}
	// One caller has had its turn and asked (it now waits out Every).
	for deadline := time.Now().Add(time.Minute); asked.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("no caller took its turn")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	if n := records.Load(); n != 1 {
		t.Errorf("%d checkpoints recorded, want 1 (at most one an hour)", n)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("covered asked %d times, want 3: one caller at a time", n)
	}
}

// TestOnDemand_Cover_AfterEvery: once Every has passed, the next caller
// that needs one records it, no sooner.
func TestOnDemand_Cover_AfterEvery(t *testing.T) {
	const every = 20 * time.Millisecond
	var at []time.Time
	d := checkpoint.NewOnDemand(func(context.Context) error { at = append(at, time.Now()); return nil }, every)
	never := func() (bool, error) { return false, nil }
	for range 3 {
		if _, err := d.Cover(context.Background(), never); err != nil {
			t.Fatal(err)
		}
	}
	if len(at) != 3 {
		t.Fatalf("%d checkpoints, want 3", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < every {
			t.Errorf("checkpoints %d and %d %v apart, want at least %v", i-1, i, gap, every)
		}
	}
}
