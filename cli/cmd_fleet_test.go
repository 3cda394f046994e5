package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// sourceLedger writes a ledger with the given sessions into store's
// layout, as a collector keeps a source, and returns its id.
func sourceLedger(t *testing.T, store string, sessions ...string) string {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(tmp, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		if _, err := l.Append(context.Background(), ledger.Async, event.MustRecord(s, &event.SessionCreated{Mode: "normal", Title: "title of " + s})); err != nil {
			t.Fatal(err)
		}
	}
	id := l.ID()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := cli.SourceLedgerPath(store, id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ledgertest.MustVerify(t, path) })
	return id
}

func TestFleetSessions_AcrossSources(t *testing.T) {
	store := t.TempDir()
	a := sourceLedger(t, store, "ses_a1", "ses_a2")
	b := sourceLedger(t, store, "ses_b1")
	// Not sources: a stray file, a directory that is no ledger id, one
	// without a ledger.
	os.WriteFile(filepath.Join(store, "sources", "README"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(store, "sources", "not-an-id"), 0o700)
	os.MkdirAll(filepath.Join(store, "sources", "ffffffffffffffffffffffffffffffff"), 0o700)

	r := run(t, "fleet", "sessions", "--store", store, "--json")
	r.wantCode(t, cli.ExitOK)
	got := map[string]string{}
	for _, s := range r.jsonObject(t)["sessions"].([]any) {
		m := s.(map[string]any)
		got[m["id"].(string)] = m["source"].(string)
	}
	want := map[string]string{"ses_a1": a, "ses_a2": a, "ses_b1": b}
	if len(got) != len(want) {
		t.Fatalf("sessions %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("session %s from %q, want %s", k, got[k], v)
		}
	}
	r = run(t, "fleet", "sessions", "--store", store, "--source", b)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ses_b1", "title of ses_b1")
	if strings.Contains(r.stdout, "ses_a1") {
		t.Errorf("--source %s shows other sources:\n%s", b, r.stdout)
	}
	// --source as any review command takes it.
	r = run(t, "sessions", "--source", a, "--store", store)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ses_a1", "ses_a2")
}

func TestFleet_UsageErrors(t *testing.T) {
	t.Setenv(cli.EnvFleetStore, "")
	store := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		err  string
	}{
		{"no store", []string{"fleet", "sources"}, "--store DIR"},
		{"sources args", []string{"fleet", "sources", "--store", store, "extra"}, "extra"},
		{"bad kind", []string{"fleet", "alerts", "--store", store, "--kind", "nope"}, "not an alert kind"},
		{"bad source", []string{"fleet", "alerts", "--store", store, "--source", "../x"}, "not a ledger id"},
		{"sessions bad source", []string{"fleet", "sessions", "--store", store, "--source", "zz"}, "not a ledger id"},
		{"no command", []string{"fleet"}, "missing command"},
		{"unknown command", []string{"fleet", "nope"}, "unknown command"},
		{"ledger flag", []string{"--ledger", "x.db", "fleet", "sources", "--store", store}, "--ledger does not apply"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.err)
		})
	}
	r := run(t, "fleet", "sessions", "--store", filepath.Join(store, "nope"))
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "collector store")
	r = run(t, "fleet", "sessions", "--store", store)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "no sessions")
}

// TestFleetSources_HostileClaims: what a source says of itself (host,
// workspace) reaches the table without its control characters: an
// escape sequence from a remote machine must not rewrite the reviewer's
// terminal. --json keeps the claims as they are, escaped by JSON.
func TestFleetSources_HostileClaims(t *testing.T) {
	store := t.TempDir()
	l, err := ledger.Create(filepath.Join(store, "collector.db"), ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	host := "evil\x1b]0;pwned\x07\x1b[2J\u202ehost"
	ws := "/ws\r\nFAKE LINE\u009b31m"
	status := map[string]any{"running": true, "sources": []any{map[string]any{
		"id": "00112233445566778899aabbccddeeff", "host": host, "workspace": ws, "has_mirror": true, "head_seq": 7}},
		"alerts": []any{map[string]any{"source": "00112233445566778899aabbccddeeff", "kind": "malformed", "detail": "junk \x1b[31mred"}}}
	b, _ := json.Marshal(status)
	if err := os.WriteFile(filepath.Join(store, "status.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "fleet", "sources", "--store", store)
	r.wantCode(t, cli.ExitOK)
	if strings.ContainsAny(r.stdout, "\x1b\x07\r\u202e\u009b") || strings.Contains(r.stdout, "\nFAKE") {
		t.Errorf("control characters reached the terminal: %q", r.stdout)
	}
	r.wantOut(t, "evil?]0;pwned")
	r = run(t, "fleet", "sources", "--store", store, "--json")
	r.wantCode(t, cli.ExitOK)
	src := r.jsonObject(t)["sources"].([]any)[0].(map[string]any)
	if src["host"] != host || src["workspace"] != ws {
		t.Errorf("--json changed the claims: %q %q", src["host"], src["workspace"])
	}
	ledgertest.MustVerify(t, filepath.Join(store, "collector.db"))
}
