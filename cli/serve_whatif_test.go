package cli_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opx-dev/opx/cli"
)

// TestServe_WhatIf: a policy file uploaded on a session's page lists
// every verdict it would change (three writes blocked), as `opx replay
// --policy` does, and records nothing; a policy that does not parse is
// a bad request.
func TestServe_WhatIf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", path).wantCode(t, cli.ExitOK)
	before := len(ledgerEntries(t, 1<<20, "--ledger", path))
	u := startServe(t, "--ledger", path)
	c, base := consoleClient(t, u)
	const ses = "ses_1b91c9b1"
	if page := getPage(t, c, base+"/sessions/"+ses, 200); !strings.Contains(page, `id="whatif-form"`) {
		t.Fatal("no what-if form on the session page")
	}
	post := func(policy string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("policy", "no-writes.yaml")
		fw.Write([]byte(policy))
		mw.Close()
		req, _ := http.NewRequest("POST", base+"/sessions/"+ses+"/whatif", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Origin", base)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const noWrites = "version: 1\ndefault: allow\ndeny:\n  - name: no-writes\n    tools: [\"write_file\"]\n"
	code, page := post(noWrites)
	if code != 200 || !strings.Contains(page, `id="whatif"`) || strings.Count(page, `<tr class="w-decision">`) != 3 ||
		!strings.Contains(page, "policy:no-writes") {
		t.Fatalf("what-if: %d %.3000s", code, page)
	}
	if code, _ := post("version: [\n"); code != 400 {
		t.Errorf("a broken policy: %d, want 400", code)
	}
	if code, _ := post(strings.Repeat("#", 1<<20+1)); code != 400 {
		t.Errorf("a policy over 1 MiB: %d, want 400", code)
	}
	if after := len(ledgerEntries(t, 1<<20, "--ledger", path)); after != before {
		t.Errorf("the ledger grew from %d to %d entries", before, after)
	}

	// In Chromium, through the session page's form: the file picked and
	// posted as a reader would.
	file := filepath.Join(t.TempDir(), "no-writes.yaml")
	if err := os.WriteFile(file, []byte(noWrites), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(browserCtx(t), 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.Navigate(base+"/sessions/"+ses),
		chromedp.SetUploadFiles(chromedp.CSS(`#whatif-form input[type=file]`), []string{file}),
		chromedp.Click(chromedp.CSS("#whatif-run")),
		chromedp.WaitVisible(chromedp.CSS("#whatif")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-whatif.png")
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#whatif tr.w-decision").length`))
	if err != nil || n != 3 {
		t.Errorf("decisions changed in the browser: %d %v", n, err)
	}
	if after := len(ledgerEntries(t, 1<<20, "--ledger", path)); after != before {
		t.Errorf("the browser's what-if grew the ledger from %d to %d entries", before, after)
	}
}
