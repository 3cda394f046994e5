package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/cli"
)

// tailed is one entry of `opx ledger tail --json`.
type tailed struct {
	Seq   uint64 `json:"seq"`
	Entry struct {
		Type    string          `json:"type"`
		Session string          `json:"session"`
		Data    json.RawMessage `json:"data"`
	} `json:"entry"`
}

// ledgerEntries is `opx ledger tail --json -n N args...` (through the
// engine while one holds the ledger).
func ledgerEntries(t *testing.T, n int, args ...string) []tailed {
	t.Helper()
	r := run(t, append([]string{"ledger", "tail", "--json", "-n", strconv.Itoa(n)}, args...)...)
	r.wantCode(t, cli.ExitOK)
	var out struct{ Entries []tailed }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("tail: %v\n%s", err, r.stdout)
	}
	return out.Entries
}

// TestServe_ApprovalsLive: a live engine escalates a read; the inbox,
// open before it was asked, shows it without a reload (server-sent
// events), with the exact arguments and Shield's reason; the test
// approves it with a reason in Chromium; the tool runs, and the ledger
// holds approval.resolved by "opx serve" with the reason. A POST without
// the token, or from another origin, records nothing.
func TestServe_ApprovalsLive(t *testing.T) {
	e := startLiveEngine(t)
	u := startServe(t, "--workspace", e.ws)
	base, token, _ := strings.Cut(u, "/?token=")
	bctx := browserCtx(t)
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Navigate(base+"/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#none")),
	)
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan result, 1)
	go func() { sent <- run(t, "send", "--workspace", e.ws, "read", "it") }()
	id := e.pending(t)
	// No reload: the page learns of it from the event stream.
	err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("article.pending#"+id)))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-approvals.png")
	args, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("article.pending pre.args")))
	if err != nil || args != `{"path":"t3/a.md"}` {
		t.Errorf("arguments shown: %q %v", args, err)
	}
	reason, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("article.pending .reason")))
	if err != nil || !strings.Contains(reason, "human-reads") {
		t.Errorf("reason shown: %q %v", reason, err)
	}

	// Refused: no token, another origin; the approval still waits.
	for _, tc := range []struct{ name, cookie, origin string }{
		{"no token", "", base}, {"other origin", token, "http://evil.example"}, {"no origin", token, ""},
	} {
		req, _ := http.NewRequest("POST", base+"/approvals/"+id, strings.NewReader(url.Values{"answer": {"deny"}, "reason": {"forged"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.cookie != "" {
			req.AddCookie(&http.Cookie{Name: "opx_console", Value: tc.cookie})
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if got := e.pending(t); got != id {
		t.Fatalf("pending %s, want %s still waiting", got, id)
	}

	actx, acancel := context.WithTimeout(bctx, 15*time.Second)
	defer acancel()
	err = chromedp.Do(actx,
		chromedp.SendKeys(chromedp.CSS("article.pending input[name=reason]"), "checked in the console"),
		chromedp.Click(chromedp.CSS("article.pending button.approve")),
		chromedp.WaitVisible(chromedp.CSS("#done")),
	)
	if err != nil {
		body, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
		t.Logf("page: %s", body)
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-approved.png")
	s := <-sent
	s.wantCode(t, cli.ExitOK)
	s.wantOut(t, "got: the guarded file")
	s.wantErr(t, "approved by opx serve")

	var resolved int
	for _, en := range ledgerEntries(t, 40, "--workspace", e.ws) {
		if en.Entry.Type != "approval.resolved" {
			continue
		}
		resolved++
		var a struct {
			ApprovalID string `json:"approval_id"`
			By         string `json:"by"`
			Reason     string `json:"reason"`
			Approved   bool   `json:"approved"`
		}
		json.Unmarshal(en.Entry.Data, &a)
		if a.ApprovalID != id || a.By != "opx serve" || a.Reason != "checked in the console" || !a.Approved {
			t.Errorf("approval.resolved #%d: %s", en.Seq, en.Entry.Data)
		}
	}
	if resolved != 1 {
		t.Errorf("%d approval.resolved entries, want 1 (refused requests record nothing)", resolved)
	}
}
