package cli_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"

	"github.com/opx-dev/opx/cli"
)

// consoleClient is an HTTP client that has presented the console's token
// (the cookie), and the console's base URL.
func consoleClient(t *testing.T, u string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	base, _, _ := strings.Cut(u, "/?token=")
	return c, base
}

func getPage(t *testing.T, c *http.Client, u string, want int) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %.300s", u, resp.StatusCode, want, b)
	}
	return string(b)
}

// TestServe_Workspace: a step of a session links to the workspace as of
// that step, rebuilt from the snapshots: pkg10/pkg10.go is absent before
// the call that creates it, and what that call left differs from what
// the session left; an entry of another session
// is refused.
func TestServe_Workspace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", path).wantCode(t, cli.ExitOK)
	u := startServe(t, "--ledger", path)
	c, base := consoleClient(t, u)
	const ses = "ses_1b91c9b1"
	page := getPage(t, c, base+"/sessions/"+ses, 200)
	if !strings.Contains(page, `href="/sessions/`+ses+`/workspace?at=855"`) {
		t.Fatalf("no workspace link on snapshot #855")
	}
	file := func(at string) string {
		return getPage(t, c, base+"/sessions/"+ses+"/workspace?at="+at+"&path="+url.QueryEscape("pkg10/pkg10.go"), 200)
	}
	list := getPage(t, c, base+"/sessions/"+ses+"/workspace?at=855", 200)
	if !strings.Contains(list, `id="wsfiles"`) || !strings.Contains(list, "pkg10/pkg10.go") {
		t.Fatalf("file list: %.2000s", list)
	}
	if absent := file("855"); !strings.Contains(absent, "not a file: absent") {
		t.Errorf("pkg10/pkg10.go before the call that created it: %.500s", absent)
	}
	before, after := file("857"), file("")
	pre := func(s string) string {
		_, x, _ := strings.Cut(s, `<pre class="value">`)
		x, _, _ = strings.Cut(x, "</pre>")
		return x
	}
	if pre(before) == "" || pre(after) == "" || pre(before) == pre(after) {
		t.Errorf("pkg10/pkg10.go at #857 and at the end:\n%s\n---\n%s", pre(before), pre(after))
	}
	if !strings.Contains(before, "package pkg10") {
		t.Errorf("content at #857: %.500s", pre(before))
	}
	getPage(t, c, base+"/sessions/"+ses+"/workspace?at=217", 404)
	getPage(t, c, base+"/sessions/"+ses+"/workspace?at=x", 400)
	getPage(t, c, base+"/sessions/"+ses+"/workspace?path=nope", 404)

	// In Chromium: from the step's files link to the list, then the file.
	ctx, cancel := context.WithTimeout(browserCtx(t), 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(u),
		chromedp.Navigate(base+"/sessions/"+ses),
		chromedp.Click(chromedp.CSS(`a.wslink[href$="workspace?at=855"]`)),
		chromedp.WaitVisible(chromedp.CSS("#wsfiles")),
		chromedp.Click(chromedp.CSS(`#wsfiles a[href$="path=pkg10%2fpkg10.go" i]`)),
		chromedp.WaitVisible(chromedp.CSS("#wsfile p.note")),
		chromedp.Navigate(base+"/sessions/"+ses+"/workspace?at=857"),
		chromedp.Click(chromedp.CSS(`#wsfiles a[href$="path=pkg10%2fpkg10.go" i]`)),
		chromedp.WaitVisible(chromedp.CSS("#wsfile pre.value")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-workspace.png")
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#wsfile pre.value")))
	if err != nil || !strings.Contains(got, "package pkg10") {
		t.Errorf("pkg10/pkg10.go at #857 in the browser: %q %v", got, err)
	}
}

// TestServe_Workspace_Manifest: a whole-workspace snapshot (before a
// shell command) names only the files whose content it stored, but its
// manifest names every file: the workspace page lists them all, from
// the manifest read out of the ledger.
func TestServe_Workspace_Manifest(t *testing.T) {
	const ses = "ses_manifest"
	var items []event.FileState
	var blobs [][]byte
	for _, p := range []string{"README.md", "cmd/main.go", "go.mod", "internal/x/x.go"} {
		body := []byte("content of " + p + "\n")
		items = append(items, event.FileState{Path: p, State: event.StateFile, Mode: 0o644, Size: int64(len(body)), Blob: ledger.Sum(body).String()})
		blobs = append(blobs, body)
	}
	manifest := (&chronicle.Tree{Items: items}).Encode()
	snap := &event.Snapshot{CallID: "c1", Tool: "run_command", Kind: event.KindWorkspace,
		Files: items[:1], ManifestBlob: ledger.Sum(manifest).String(), Entries: int64(len(items)), ManifestSize: int64(len(manifest))}
	h := ledger.Sum([]byte("x")).String()
	steps := []replaytest.Step{
		{Name: "created", Session: ses, Payload: &event.SessionCreated{Mode: "normal", Title: "a shell command"}},
		{Name: "msg", Session: ses, Payload: &event.ClientMessage{MessageID: "m1", Content: "run the tests", Client: "test"}},
		{Name: "proposed", Session: ses, Payload: &event.ToolProposed{MessageID: "m1", CallID: "c1", Tool: "run_command", Arguments: `{"command":"go test ./..."}`, ActionHash: h, Mutating: true}},
		{Name: "snapshot", Session: ses, Payload: snap, Blobs: append([][]byte{manifest}, blobs[0])},
		{Name: "answer", Session: ses, Payload: &event.ResponseComplete{MessageID: "m1", Content: "done", Thoughts: []event.Thought{}}},
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	seqs := replaytest.Write(t, path, steps)
	c, base := consoleClient(t, startServe(t, "--ledger", path))
	list := getPage(t, c, base+"/sessions/"+ses+"/workspace?at="+strconv.FormatUint(seqs["snapshot"], 10), 200)
	for _, it := range items {
		if !strings.Contains(list, "<code>"+it.Path+"</code>") {
			t.Errorf("%s not listed: %.3000s", it.Path, list)
		}
	}
	if !strings.Contains(list, "whole-workspace snapshot #"+strconv.FormatUint(seqs["snapshot"], 10)) {
		t.Errorf("the manifest is not named: %.2000s", list)
	}
}
