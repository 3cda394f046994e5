package collector

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteStatus_CostBoundsRate: a status that took long to write (a
// store with thousands of sources) is not rewritten again before
// statusCostShare times that cost, though statusEvery has passed; a
// final write goes out in any case.
func TestWriteStatus_CostBoundsRate(t *testing.T) {
	c, err := New(Config{Store: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(c.cfg.Store, StatusFile)
	os.Remove(path)

	c.dirty = true
	c.statusAt = time.Now().Add(-2 * statusEvery)
	c.statusCost = time.Second // 20 s between writes
	c.writeStatus(false)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("status rewritten 2×statusEvery after a write that took 1 s")
	}

	c.statusAt = time.Now().Add(-statusCostShare * time.Second)
	c.writeStatus(false)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("status not rewritten once statusCostShare × its cost passed: %v", err)
	}
	if c.statusCost <= 0 || c.statusCost >= time.Second {
		t.Errorf("statusCost = %v, want what this write took", c.statusCost)
	}

	os.Remove(path)
	c.dirty = true
	c.statusCost = time.Hour
	c.writeStatus(true)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("final status not written: %v", err)
	}
}
