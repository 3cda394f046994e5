package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/internal/omniwitnesstest"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// writeConfig writes the workspace's .opx/config.yaml.
func (w *world) writeConfig(body string) {
	w.t.Helper()
	dir := filepath.Join(w.ws, ".opx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// TestE2E_StartWitnessed: an engine started as a user starts it (`opx
// start`), its checkpoints signed under the team's own origin
// (ledger.origin) and its config listing transparency-dev's omniwitness
// on loopback (ledger.witnesses): its checkpoints are cosigned, `opx
// status --json` shows the witness and the size it cosigned, the ledger
// records the cosignature under that origin, and `opx ledger verify
// --witness <omniwitness key>` passes on what `opx ledger checkpoint
// --cosigned` prints. Without omniwitness the test skips, and fails
// under CI=true (omniwitnesstest.Binary).
func TestE2E_StartWitnessed(t *testing.T) {
	t.Parallel()
	omniwitnesstest.Binary(t)
	const origin = "example.com/opx/e2e"
	w := newWorld(t)
	// First start: the ledger and its key, named by the origin (a
	// witness lists a log by its origin and key before it cosigns).
	w.writeConfig("ledger:\n  origin: " + origin + "\n")
	w.stop(w.start())
	vkey, errOut, code := w.run("ledger", "key")
	vkey = strings.TrimSpace(vkey)
	if code != 0 || !strings.HasPrefix(vkey, origin+"+") {
		t.Fatalf("opx ledger key: %d %q %s", code, vkey, errOut)
	}
	ow := omniwitnesstest.Start(t, origin, vkey)
	w.writeConfig(fmt.Sprintf("ledger:\n  origin: %s\n  checkpoint_interval: 1s\n  witnesses:\n    - url: %s\n      key: %s\n", origin, ow.URL, ow.VKey))

	m := w.start()
	var ws []struct {
		URL          string `json:"url"`
		CosignedSize uint64 `json:"cosigned_size"`
		Alert        string `json:"alert"`
		LastError    string `json:"last_error"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _, code := w.run("status", "--json")
		var st struct {
			Witnesses json.RawMessage `json:"witnesses"`
		}
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && json.Unmarshal(st.Witnesses, &ws) == nil &&
			len(ws) == 1 && ws[0].CosignedSize > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cosignature within 60s: status %s\nengine:\n%s\nomniwitness:\n%s", out, m.out.String(), ow.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ws[0].URL != ow.URL || ws[0].Alert != "" {
		t.Fatalf("status witness %+v", ws[0])
	}
	// Beside the witnesses: the origin and key they list the log by,
	// in status and doctor, text and JSON.
	for _, args := range [][]string{{"status", "--json"}, {"doctor", "--json"}} {
		out, _, _ := w.run(args...)
		var ck struct {
			Origin string `json:"checkpoint_origin"`
			Key    string `json:"checkpoint_key"`
		}
		if err := json.Unmarshal([]byte(out), &ck); err != nil || ck.Origin != origin || ck.Key != vkey {
			t.Fatalf("opx %s: checkpoint origin %q key %q (%v), want %s %s", args[0], ck.Origin, ck.Key, err, origin, vkey)
		}
		out, _, _ = w.run(args[0])
		if !strings.Contains(out, "origin    "+origin+"\n          key "+vkey+"\n") {
			t.Fatalf("opx %s does not show the origin and key:\n%s", args[0], out)
		}
	}
	st, _ := w.status()
	w.stop(m)

	// The ledger holds the cosignature, of a checkpoint of the origin.
	l, err := ledger.OpenReadOnly(st.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := event.StrictOptionsFor(l)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(opts)
	if err != nil || !rep.OK {
		t.Fatalf("verify: %v %v", err, rep.Err())
	}
	var cosigned []string
	l.Range(0, rep.HeadSeq, func(e ledger.Entry) error {
		if e.Type == event.TypeCosigned {
			n, _ := ledger.FieldString(e.Data, "note")
			cosigned = append(cosigned, n)
		}
		return nil
	})
	l.Close()
	if len(cosigned) == 0 || !strings.HasPrefix(cosigned[len(cosigned)-1], origin+"\n") {
		t.Fatalf("ledger.cosigned notes %q, want one of %s", cosigned, origin)
	}

	out, errOut, code := w.run("ledger", "checkpoint", "--cosigned")
	if code != 0 || !strings.HasPrefix(out, origin+"\n") {
		t.Fatalf("opx ledger checkpoint --cosigned: %d %q %s", code, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "ledger.cosigned")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := w.run("ledger", "verify", "--witness", ow.VKey, "--cosigned", file); code != 0 {
		t.Fatalf("opx ledger verify --witness: %d\n%s%s", code, out, errOut)
	}
}
