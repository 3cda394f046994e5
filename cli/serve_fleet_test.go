package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestServe_Fleet: `opx serve --store DIR` on a collector's store (its
// ledger, status.json and a mirror per source, as fleet tests build it):
// the sources table with each source's claims (markup in a hello shown
// as text), the alerts with their evidence, and a drill into a source's
// sessions and a timeline, in Chromium.
func TestServe_Fleet(t *testing.T) {
	store := t.TempDir()
	own, err := ledger.Create(filepath.Join(store, "collector.db"), ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Source a: the sample ledger, as a mirror; source b: two sessions.
	tmp := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", tmp).wantCode(t, cli.ExitOK)
	sl, err := ledger.OpenReadOnly(tmp)
	if err != nil {
		t.Fatal(err)
	}
	a := sl.ID()
	head, _ := sl.Head()
	sl.Close()
	pa := cli.SourceLedgerPath(store, a)
	os.MkdirAll(filepath.Dir(pa), 0o700)
	if err := os.Rename(tmp, pa); err != nil {
		t.Fatal(err)
	}
	b := sourceLedger(t, store, "ses_b1", "ses_b2")
	// The collector records its alerts in its own ledger.
	if _, err := own.Append(context.Background(), ledger.Sync, event.MustRecord("", &event.FleetAlert{Source: a, Kind: "malformed", Seq: 3,
		Detail: "entry 3 does not chain: prev <i>abc</i>"})); err != nil {
		t.Fatal(err)
	}
	if err := own.Close(); err != nil {
		t.Fatal(err)
	}
	const host = `<script>window.pwned=1</script><b>laptop</b>`
	status := map[string]any{"running": false, "sources": []any{
		map[string]any{"id": a, "host": host, "workspace": "/home/dev/app", "has_mirror": true, "head_seq": head.Seq,
			"head_hash": head.Hash.String(), "checkpoint": 0, "claimed_head": head.Seq + 5, "alerts": 1},
		map[string]any{"id": b, "host": "ci-runner", "workspace": "/srv/ci", "has_mirror": true, "head_seq": 2},
	}}
	bs, _ := json.Marshal(status)
	if err := os.WriteFile(filepath.Join(store, "status.json"), bs, 0o600); err != nil {
		t.Fatal(err)
	}

	u := startServe(t, "--store", store)
	base, _, _ := strings.Cut(u, "/?token=")
	ctx, cancel := context.WithTimeout(browserCtx(t), 60*time.Second)
	defer cancel()
	err = chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.WaitVisible(chromedp.CSS(`#sources tr[data-source="`+a+`"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-fleet.png")
	for _, check := range []struct{ expr, want string }{
		{`String(document.querySelectorAll("#sources tbody tr").length)`, "2"},
		{`String(window.pwned)`, "undefined"},
		{`document.querySelector('#sources tr[data-source="` + a + `"] td:nth-child(2)').textContent`, host},
		{`document.querySelector('#sources tr[data-source="` + a + `"] td:nth-child(7)').textContent`, "5"},
		{`document.querySelector("#alert-list tr.alert .detail").textContent`, "entry 3 does not chain: prev <i>abc</i>"},
		{`document.querySelector("#alert-list tr.alert td:nth-child(4) a").getAttribute("href")`, "/sources/" + a + "/entry/3"},
	} {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](check.expr))
		if err != nil || got != check.want {
			t.Errorf("%s = %q (%v), want %q", check.expr, got, err, check.want)
		}
	}
	// Drill into source a: its sessions, a blocked one, its timeline.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#sources tr[data-source="`+a+`"] a.sid`)),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.Click(chromedp.CSS("a.count.o-blocked")),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.Click(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.WaitVisible(chromedp.CSS(".call.o-blocked")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-fleet-session.png")
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil || !strings.HasPrefix(loc, "/sources/"+a+"/sessions/ses_") {
		t.Errorf("drilled to %q (%v)", loc, err)
	}
	ok, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verification h2")))
	if err != nil || !strings.Contains(ok, "ok") {
		t.Errorf("verification: %q %v", ok, err)
	}
	// What-if under the source's pages too: a policy picked and posted
	// through the session page's form, answered under /sources/<id>/.
	file := filepath.Join(t.TempDir(), "deny-all.yaml")
	if err := os.WriteFile(file, []byte("version: 1\ndefault: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS(`#whatif-form input[type=file]`), []string{file}),
		chromedp.Click(chromedp.CSS("#whatif-run")),
		chromedp.WaitVisible(chromedp.CSS("#whatif-summary")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-fleet-whatif.png")
	loc, err = chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil || !strings.HasPrefix(loc, "/sources/"+a+"/sessions/ses_") || !strings.HasSuffix(loc, "/whatif") {
		t.Errorf("what-if at %q (%v)", loc, err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#whatif tr.w-decision").length`)); err != nil || n == 0 {
		t.Errorf("decisions a deny-all policy changes: %d (%v)", n, err)
	}
	back, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#whatif-summary a").getAttribute("href")`))
	if err != nil || !strings.HasPrefix(back, "/sources/"+a+"/sessions/") {
		t.Errorf("what-if's way back: %q (%v)", back, err)
	}
	_ = base
	ledgertest.MustVerify(t, pa)
	ledgertest.MustVerify(t, filepath.Join(store, "collector.db"))
}
