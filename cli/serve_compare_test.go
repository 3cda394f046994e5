package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/cli"
)

// TestServe_Compare: two sessions' tool calls side by side, picked on the
// listing (two ticked boxes, one form: no script needed), in HTTP and in
// Chromium; a session beside itself is all the same; hostile picks are
// refused.
func TestServe_Compare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", path).wantCode(t, cli.ExitOK)
	u := startServe(t, "--ledger", path)
	c, base := consoleClient(t, u)
	const a, b = "ses_1b91c9b1", "ses_577e2999"
	if list := getPage(t, c, base+"/", 200); !strings.Contains(list, `id="compare-form"`) ||
		!strings.Contains(list, `name="s" value="`+a+`" form="compare-form"`) {
		t.Fatalf("no compare picks on the listing")
	}
	page := getPage(t, c, base+"/compare?s="+a+"&s="+b, 200)
	if !strings.Contains(page, `id="compare"`) || !strings.Contains(page, `href="/sessions/`+a+`#seq-`) ||
		!strings.Contains(page, `href="/sessions/`+b+`#seq-`) || strings.Count(page, `<tr class="c-`) < 2 {
		t.Fatalf("compare: %.3000s", page)
	}
	self := getPage(t, c, base+"/compare?a="+a+"&b="+a, 200)
	if strings.Contains(self, `class="c-differ"`) || strings.Contains(self, `class="c-only-`) || !strings.Contains(self, `class="c-same"`) {
		t.Errorf("a session beside itself differs: %.2000s", self)
	}
	for _, q := range []string{"s=" + a, "s=" + a + "&s=" + b + "&s=" + a, "a=%3Cscript%3E&b=" + b,
		"a=" + strings.Repeat("x", 10000) + "&b=" + b, "a=javascript:alert(1)%20&b=" + b, ""} {
		getPage(t, c, base+"/compare?"+q, 400)
	}
	getPage(t, c, base+"/compare?a=ses_nope&b="+b, 404)

	ctx, cancel := context.WithTimeout(browserCtx(t), 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr")),
		chromedp.Click(chromedp.CSS(`input[name=s][value="`+a+`"]`)),
		chromedp.Click(chromedp.CSS(`input[name=s][value="`+b+`"]`)),
		chromedp.Click(chromedp.CSS("#compare-run")),
		chromedp.WaitVisible(chromedp.CSS("#compare tbody tr")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-compare.png")
	head, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#compare thead")))
	if err != nil || !strings.Contains(head, a) || !strings.Contains(head, b) {
		t.Errorf("compare heading: %q %v", head, err)
	}
}
