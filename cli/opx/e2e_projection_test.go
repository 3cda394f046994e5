package main_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// projectionDigests hashes every p.* bucket of a ledger file, pair by
// pair in key order.
func projectionDigests(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if !strings.HasPrefix(string(name), "p.") {
				return nil
			}
			h := sha256.New()
			b.ForEach(func(k, v []byte) error {
				fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
				return nil
			})
			out[string(name)] = fmt.Sprintf("%x", h.Sum(nil))
			return nil
		})
	})
	return out
}

// TestE2E_ProjectionsRebuild: the projections a live engine kept (and
// served: opx sessions and opx history ask it while it runs) come out of
// `opx ledger rebuild` byte-identical, and the state roots it recorded at
// start and stop are reproduced by the entries.
func TestE2E_ProjectionsRebuild(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("send: %s", errOut)
	}
	out, _, code := w.run("sessions", "--json")
	var list struct {
		Sessions []struct {
			ID       string `json:"id"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	if json.Unmarshal([]byte(out), &list); code != 0 || len(list.Sessions) != 1 || list.Sessions[0].Messages != 2 {
		t.Fatalf("opx sessions through the engine: %d %s", code, out)
	}
	if out, _, code := w.run("history", list.Sessions[0].ID); code != 0 || !strings.Contains(out, "read README.md") {
		t.Errorf("opx history through the engine: %d %s", code, out)
	}
	st, _ := w.status()
	w.stop(m)
	before := projectionDigests(t, st.LedgerPath)
	if len(before) < 6 { // five projections and their state
		t.Fatalf("p.* buckets %v", before)
	}
	out, errOut, code := w.run("ledger", "rebuild", "--json", "--ledger", st.LedgerPath)
	var rep struct {
		Ok      bool `json:"ok"`
		Checked int  `json:"checkpoint_roots_checked"`
	}
	if json.Unmarshal([]byte(out), &rep); code != 0 || !rep.Ok || rep.Checked < 10 { // 5 roots at start, 5 at stop
		t.Fatalf("rebuild: %d %s %s", code, out, errOut)
	}
	if after := projectionDigests(t, st.LedgerPath); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rebuild changed the projections:\n%v\n%v", before, after)
	}
	// Offline, the same listing from the file.
	if out, _, code := w.run("sessions", "--json", "--ledger", st.LedgerPath); code != 0 || !strings.Contains(out, list.Sessions[0].ID) {
		t.Errorf("opx sessions offline: %d %s", code, out)
	}
}
