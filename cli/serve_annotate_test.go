package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestServe_Annotate: in Chromium, a step of a session is annotated from
// its page; the ledger holds a ledger.note of the session about that
// seq, the timeline shows it with the step, opx report shows it, and
// the ledger still verifies strictly. Offline, the approvals inbox says
// there is nothing to approve.
func TestServe_Annotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", path).wantCode(t, cli.ExitOK)
	u := startServe(t, "--ledger", path)
	base, _, _ := strings.Cut(u, "/?token=")
	ctx, cancel := context.WithTimeout(browserCtx(t), 60*time.Second)
	defer cancel()
	const note = "seen by <b>the reviewer</b>: fine"
	err := chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Navigate(base+"/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#offline")),
		chromedp.Navigate(base+"/sessions/ses_889cc132"),
		chromedp.WaitVisible(chromedp.CSS(".call.o-blocked")),
	)
	if err != nil {
		t.Fatal(err)
	}
	seqText, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".call.o-blocked details.verdict .badge").dataset.seq`))
	if err != nil {
		t.Fatal(err)
	}
	about, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".call.o-blocked details.verdict > summary")),
		chromedp.Click(chromedp.CSS(".call.o-blocked details.verdict[open] a.annotate")),
		chromedp.WaitVisible(chromedp.CSS("form.note textarea")),
		chromedp.SendKeys(chromedp.CSS("form.note textarea"), note),
		chromedp.Click(chromedp.CSS("#add-note")),
		chromedp.WaitReady(chromedp.CSS(`.annot[data-about="`+seqText+`"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-annotated.png")
	shown, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`.annot[data-about="`+seqText+`"]`)))
	if err != nil || !strings.Contains(shown, note) {
		t.Errorf("annotation shown: %q %v", shown, err)
	}

	var found bool
	for _, en := range ledgerEntries(t, 3, "--ledger", path) {
		if en.Entry.Type != event.TypeNote {
			continue
		}
		var n event.Note
		if err := json.Unmarshal(en.Entry.Data, &n); err != nil {
			t.Fatal(err)
		}
		if n.About == about && n.Text == note && en.Entry.Session == "ses_889cc132" && n.Author != "" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ledger.note about %d in the ledger's last entries", about)
	}
	r := run(t, "report", "--ledger", path, "--no-workspace", "-o", "-", "ses_889cc132")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "about #"+seqText)
	ledgertest.MustVerify(t, path, event.StrictOptions())
}
