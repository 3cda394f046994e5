package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/replay/projection"
)

// importedSample imports the committed sample with opx ledger import
// (which builds the projections) and returns the new ledger's path.
func importedSample(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", dst).wantCode(t, cli.ExitOK)
	t.Cleanup(func() { ledgertest.MustVerify(t, dst, event.StrictOptions()) })
	return dst
}

func TestSessions(t *testing.T) {
	path := importedSample(t)
	r := run(t, "sessions", "--json", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	var out struct {
		Sessions []struct {
			ID       string `json:"id"`
			Updated  string `json:"updated"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Sessions) < 10 {
		t.Fatalf("sessions: %v %s", err, r.stdout)
	}
	for i := 1; i < len(out.Sessions); i++ {
		if out.Sessions[i].Updated > out.Sessions[i-1].Updated {
			t.Errorf("not most recent first at %d", i)
		}
	}
	r = run(t, "sessions", "--ledger", path)
	r.wantOut(t, "SESSION", "MESSAGES", out.Sessions[0].ID)
	// The sample's off-the-record session is left out, and the footer
	// says so; --include-otr lists it, and no footer.
	r.wantOut(t, "\n1 off-the-record session hidden: --include-otr lists it\n")
	if strings.Contains(r.stdout, " otr ") {
		t.Errorf("an off-the-record session listed without --include-otr:\n%s", r.stdout)
	}
	all := run(t, "sessions", "--include-otr", "--ledger", path)
	all.wantOut(t, " otr ")
	if strings.Contains(all.stdout, "hidden") {
		t.Errorf("--include-otr still says a session is hidden:\n%s", all.stdout)
	}
	if h := run(t, "sessions", "--json", "--ledger", path).jsonObject(t)["otr_hidden"]; fmt.Sprint(h) != "1" {
		t.Errorf("otr_hidden %v, want 1", h)
	}
	run(t, "sessions", "x", "--ledger", path).wantCode(t, cli.ExitUsage)
}

// TestSessions_WithoutProjections: a ledger written without projections
// (an older opx, a copy) is read by folding the entries in memory.
func TestSessions_WithoutProjections(t *testing.T) {
	w := newSnapWorld(t, editFiles, editCalls[0]) // written without projections
	l, _ := ledger.OpenReadOnly(w.ledger)
	st, _ := l.Projections()
	l.Close()
	if len(st) != 0 {
		t.Fatalf("the ledger has projections: %v", st)
	}
	r := w.run(t, "snapshots") // sanity: the ledger reads
	r.wantCode(t, cli.ExitOK)
	w.run(t, "sessions").wantOut(t, "no sessions") // the world records no session.created
}

func TestHistory(t *testing.T) {
	path := importedSample(t)
	var list struct {
		Sessions []struct {
			ID       string `json:"id"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(run(t, "sessions", "--json", "--ledger", path).stdout), &list)
	id := list.Sessions[len(list.Sessions)-1].ID
	r := run(t, "history", id, "--json", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	var h struct {
		Messages []struct{ Role string } `json:"messages"`
	}
	json.Unmarshal([]byte(r.stdout), &h)
	if len(h.Messages) != list.Sessions[len(list.Sessions)-1].Messages || h.Messages[0].Role != "user" {
		t.Errorf("history %s", r.stdout)
	}
	r = run(t, "history", id, "--ledger", path)
	r.wantOut(t, "you", "agent")
	r = run(t, "history", "ses_nope", "--ledger", path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "no such session", "opx sessions lists them")
}

// TestLedgerRebuild: rebuild reproduces the projections and, on a ledger
// with checkpoints, their recorded roots; a checkpoint whose root the
// entries do not give is an integrity failure (exit 4).
func TestLedgerRebuild(t *testing.T) {
	path := importedSample(t)
	r := run(t, "ledger", "rebuild", "--json", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	m := r.jsonObject(t)
	if m["ok"] != true || len(m["projections"].([]any)) != len(projection.All()) {
		t.Errorf("rebuild: %v", m)
	}
	// A checkpoint, then a forged one naming a root no fold gives.
	l, err := ledger.Open(path, cli.WriteOptionsForTest())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(t.Context(), ledger.Sync); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Projections()
	forged := ledger.CheckpointPayload{Projections: []ledger.CheckpointRoot{{Name: st[0].Name, Version: st[0].Version, Through: st[0].Through,
		Root: strings.Repeat("ab", 32)}}}
	if _, err := l.Append(t.Context(), ledger.Sync, ledger.Record{Type: ledger.TypeCheckpoint, Data: forged}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	r = run(t, "ledger", "rebuild", "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "MISMATCH", "recorded root abab")
	r.wantErr(t, "not reproduced")
}

// TestSessions_ModeColumn: the MODE column holds the longest mode,
// mcp-proxy, so the columns after it stay under their headers, in opx
// sessions and in opx fleet sessions.
func TestSessions_ModeColumn(t *testing.T) {
	path, _ := mcpLedger(t)
	store := t.TempDir()
	src := sourceLedgerFrom(t, store, path)
	for name, args := range map[string][]string{
		"sessions":       {"sessions", "--ledger", path},
		"fleet sessions": {"fleet", "sessions", "--store", store, "--source", src},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, args...)
			r.wantCode(t, cli.ExitOK)
			lines := strings.Split(r.stdout, "\n")
			col := strings.Index(lines[0], "MODE")
			next := col + strings.Index(lines[0][col:], "  ") // the column after MODE starts after its padding
			for next < len(lines[0]) && lines[0][next] == ' ' {
				next++
			}
			found := false
			for _, l := range lines[1:] {
				if i := strings.Index(l, "mcp-proxy"); i >= 0 {
					found = true
					if i != col || len(l) <= next || l[next-1] != ' ' || l[next] == ' ' {
						t.Errorf("mcp-proxy row out of its column:\n%s\n%s", lines[0], l)
					}
				}
			}
			if !found {
				t.Fatalf("no mcp-proxy session listed:\n%s", r.stdout)
			}
		})
	}
}

// sourceLedgerFrom copies the ledger at path into store as a collector's
// mirror and returns its source id.
func sourceLedgerFrom(t *testing.T, store, path string) string {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	dst := cli.SourceLedgerPath(store, id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	ledgertest.Copy(t, path, dst)
	return id
}
