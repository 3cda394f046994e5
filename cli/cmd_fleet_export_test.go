package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

// callSource writes a source ledger of n shell calls into store's layout
// and returns its id and path.
func callSource(t *testing.T, store string, n int) (string, string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "ledger.db")
	appendOffline(t, tmp, "s", 0, n)
	l, err := ledger.OpenReadOnly(tmp)
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	l.Close()
	path := cli.SourceLedgerPath(store, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return id, path
}

// eventsBySource counts an export's Process Activity events per chain
// (source ledger id).
func eventsBySource(t *testing.T, text string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ev := range checkOCSF(t, text) {
		if ev["class_uid"].(float64) == 1007 {
			out[ev["attestation_list"].([]any)[0].(map[string]any)["chain_uid"].(string)]++
		}
	}
	return out
}

func TestFleetExport_OCSF(t *testing.T) {
	store := t.TempDir()
	a, _ := callSource(t, store, 2)
	b, _ := callSource(t, store, 3)
	r := run(t, "fleet", "export", "--format", "ocsf", "--store", store)
	r.wantCode(t, cli.ExitOK)
	if got := eventsBySource(t, r.stdout); got[a] != 2 || got[b] != 3 || len(got) != 2 {
		t.Errorf("events by source %v", got)
	}
	r = run(t, "fleet", "export", "--format", "ocsf", "--store", store, "--source", b)
	r.wantCode(t, cli.ExitOK)
	if got := eventsBySource(t, r.stdout); got[b] != 3 || len(got) != 1 {
		t.Errorf("--source %s: events by source %v", b, got)
	}
	run(t, "fleet", "export", "--store", store).wantCode(t, cli.ExitUsage)
	run(t, "fleet", "export", "--format", "ocsf", "--store", store, "--source", "../x").wantCode(t, cli.ExitUsage)
}

// TestFleetExport_OCSFFollow: --follow writes every source's events as
// they are mirrored, picks up a source that appears, and resumes from its
// cursor without writing anything twice.
func TestFleetExport_OCSFFollow(t *testing.T) {
	store := t.TempDir()
	a, pa := callSource(t, store, 2)
	b, _ := callSource(t, store, 1)
	out := filepath.Join(t.TempDir(), "fleet.jsonl")
	start := func() *ocsfExport {
		x := &ocsfExport{done: make(chan error, 1), errOut: &lockedBuffer{}}
		app := cli.NewApp()
		app.Writer, app.ErrWriter = &lockedBuffer{}, x.errOut
		ctx, cancel := context.WithCancel(context.Background())
		x.cancel = cancel
		release := lockSetup(app)
		go func() {
			err := app.RunContext(ctx, []string{"opx", "fleet", "export", "--format", "ocsf", "--follow", "--store", store, "-o", out})
			release()
			x.done <- err
		}()
		t.Cleanup(func() { x.stop() })
		return x
	}
	counts := func() map[string]int {
		b, _ := os.ReadFile(out)
		return eventsBySource(t, string(b))
	}
	x := start()
	waitFor(t, func() bool { c := counts(); return c[a] == 2 && c[b] == 1 })
	c, _ := callSource(t, store, 2) // a new source
	appendOffline(t, pa, "s", 2, 1) // a source grows
	waitFor(t, func() bool { n := counts(); return n[c] == 2 && n[a] == 3 })
	if err := x.stop(); err != nil {
		t.Fatalf("fleet export after Ctrl-C: %v\n%s", err, x.errOut.String())
	}
	appendOffline(t, pa, "s", 3, 2)
	x = start()
	waitFor(t, func() bool { return counts()[a] == 5 })
	if err := x.stop(); err != nil {
		t.Fatalf("resumed fleet export: %v\n%s", err, x.errOut.String())
	}
	if got := counts(); got[a] != 5 || got[b] != 1 || got[c] != 2 || len(got) != 3 {
		t.Errorf("events by source %v", got)
	}
}
