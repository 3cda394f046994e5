package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/checkpoint"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/replaytest"
)

// startServe runs `opx serve args...` in-process and returns the URL it
// printed (with the token); the server stops when the test ends.
func startServe(t testing.TB, args ...string) string {
	t.Helper()
	app := cli.NewApp()
	pr, pw := io.Pipe()
	app.Writer, app.ErrWriter = pw, io.Discard
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	release := lockSetup(app)
	go func() {
		err := app.RunContext(ctx, append([]string{"opx", "serve"}, args...))
		release()
		pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "http://"); ok {
			go io.Copy(io.Discard, pr)
			return "http://" + u
		}
	}
	t.Fatalf("serve printed no URL: %v", sc.Err())
	return ""
}

// signedSample is the sample ledger imported, with its key recorded and a
// signed checkpoint of all of it, as an engine leaves it; and the key.
func signedSample(t *testing.T) (path, key string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "ledger.db")
	run(t, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", path).wantCode(t, cli.ExitOK)
	ctx := context.Background()
	k := checkpoint.NewKeeper(dir)
	l, err := ledger.Open(path, ledger.Options{NoSync: true, SignCheckpoint: k.Sign})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := k.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	app, err := l.Checkpoint(ctx, ledger.Sync)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Publish(ctx, l, app.Seq); err != nil {
		t.Fatal(err)
	}
	v, ok := k.Verifier()
	if !ok {
		t.Fatal("no verifier key")
	}
	return path, v.String()
}

// browserCtx starts headless Chromium; without it the test is skipped,
// except under CI=true where that is a failure.
func browserCtx(t *testing.T) context.Context {
	t.Helper()
	exe := "/usr/bin/chromium"
	if _, err := os.Stat(exe); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium: %v (.ci/run installs it)", err)
		}
		t.Skipf("no chromium: %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts is where screenshots go: $OPX_TEST_ARTIFACTS, else a temp dir.
func artifacts(t *testing.T) string {
	if d := os.Getenv("OPX_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// TestServe_Browser drives real Chromium through the console on the
// sample ledger: the sessions, a session with a blocked call, a verdict
// expanded, a proof downloaded and checked with verify-proof.
func TestServe_Browser(t *testing.T) {
	path, key := signedSample(t)
	url := startServe(t, "--ledger", path)
	ctx, cancel := context.WithTimeout(browserCtx(t), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-sessions.png")
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sessions tbody tr").length`))
	if err != nil || n < 10 {
		t.Fatalf("sessions listed: %d %v", n, err)
	}
	// The blocked filter, then the first blocked session.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("a.count.o-blocked")),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.Click(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.WaitVisible(chromedp.CSS("#verification")),
		chromedp.WaitVisible(chromedp.CSS(".call.o-blocked")),
	)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verification h2")))
	if err != nil || !strings.Contains(ok, "ok") {
		t.Fatalf("verification: %q %v", ok, err)
	}
	// Expand the blocking verdict: its reason shows.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".call.o-blocked details.verdict.d-block > summary")),
		chromedp.WaitVisible(chromedp.CSS(".call.o-blocked details.verdict.d-block[open] .reason")),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-session.png")
	// Download the proof of the blocking verdict and check it offline.
	err = chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: ptrTrue()})
			return err
		}),
		chromedp.Click(chromedp.CSS(".call.o-blocked details.verdict.d-block[open] a.proof")),
	)
	if err != nil {
		t.Fatal(err)
	}
	var proof string
	for ev, err := range progress {
		if err != nil {
			t.Fatal(err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			proof = filepath.Join(dir, ev.GUID)
			break
		}
	}
	r := run(t, "ledger", "verify-proof", proof, "--key", key)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "ok")
}

func ptrTrue() *bool { b := true; return &b }

// hostileJSON is v as JSON with its markup left as it is (not \u003c).
func hostileJSON(t *testing.T, v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// hostile is recorded content meant to run, hide or break layout.
const hostile = "<script>window.pwned=1;document.title='pwned'</script><img src=x onerror=\"window.pwned=2\">" +
	"<a href=\"javascript:window.pwned=3\">click</a> &lt;b&gt; &amp;amp; \x1b[31mred\x1b[0m \u202eevil\u202c \u200bzw"

// TestServe_Hostile renders a session whose recorded text is hostile, in
// Chromium: nothing runs, the controls show, the layout holds; and
// requests without the token, with a wrong one or from another origin
// are refused and record nothing.
func TestServe_Hostile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.db")
	steps := replaytest.MCPScene()
	m := replaytest.Find(steps, "m1")
	msg := *(m.Payload.(*event.ClientMessage))
	msg.Content = hostile + " " + strings.Repeat("A", 1<<20)
	m.Payload = &msg
	steps = replaytest.Replace(steps, "m1", m)
	c := replaytest.Find(steps, "created")
	cr := *(c.Payload.(*event.SessionCreated))
	cr.Title = hostile
	c.Payload = &cr
	steps = replaytest.Replace(steps, "created", c)
	// The tool's arguments and its result are hostile too (a file read
	// whose name and content are the attack, 1 MiB of result: 16 times
	// what the page shows of a value).
	args := hostileJSON(t, map[string]string{"path": hostile})
	for _, name := range []string{"c1.agent", "c1.proposed"} {
		st := replaytest.Find(steps, name)
		switch p := st.Payload.(type) {
		case *event.AgentToolCall:
			q := *p
			q.Arguments = args
			st.Payload = &q
		case *event.ToolProposed:
			q := *p
			q.Arguments = args
			st.Payload = &q
		}
		steps = replaytest.Replace(steps, name, st)
	}
	result := hostile + " " + strings.Repeat("R", 1<<20)
	done := replaytest.Find(steps, "c1.done")
	dn := *(done.Payload.(*event.ExecCompleted))
	dn.Result, dn.Size = result, int64(len(result))
	done.Payload = &dn
	steps = replaytest.Replace(steps, "c1.done", done)
	res := replaytest.Find(steps, "c1.result")
	rs := *(res.Payload.(*event.ToolResult))
	rs.Content, rs.Size = hostile, int64(len(hostile))
	res.Payload = &rs
	steps = replaytest.Replace(steps, "c1.result", res)
	replaytest.Write(t, path, steps)
	url := startServe(t, "--ledger", path)
	base, token, _ := strings.Cut(url, "/?token=")

	ctx, cancel := context.WithTimeout(browserCtx(t), 90*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#sessions tbody tr a.sid")),
		chromedp.Navigate(base+"/sessions/"+replaytest.MCPSession),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Every value opened, so that a payload hidden in a closed details
	// would have its chance to run.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#expand-all"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-hostile.png")
	for _, check := range []struct{ expr, want string }{
		{`String(window.pwned)`, "undefined"},
		{`String(document.title.includes("pwned"))`, "false"},
		{`String(document.querySelectorAll("main script, main img, main a[href^='javascript']").length)`, "0"},
		{`String(document.body.innerText.includes("\u241b[31m"))`, "true"},
		{`String(document.body.innerText.includes("\\u202e"))`, "true"},
		{`String(document.body.innerText.includes("\u202e"))`, "false"},
		{`String(document.body.innerText.includes("download the whole entry"))`, "true"},
		{`String(document.documentElement.scrollWidth <= window.innerWidth + 1)`, "true"},
		// The arguments and the result show the markup as text.
		{`String(document.querySelector(".call details.args pre").textContent.includes("<script>window.pwned=1"))`, "true"},
		{`String(Array.from(document.querySelectorAll(".exec pre.value")).some(p => p.textContent.includes("<img src=x onerror")))`, "true"},
		{`String(Array.from(document.querySelectorAll(".delivery pre.value")).some(p => p.textContent.includes("javascript:window.pwned=3")))`, "true"},
		{`String(document.querySelectorAll(".exec p.cut").length >= 1)`, "true"},
	} {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](check.expr))
		if err != nil || got != check.want {
			t.Errorf("%s = %q (%v), want %q", check.expr, got, err, check.want)
		}
	}

	// Refusals: no token, a wrong one, another origin.
	head := func() uint64 {
		l, err := ledger.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		h, err := l.Head()
		if err != nil {
			t.Fatal(err)
		}
		return h.Seq
	}
	before := head()
	for _, tc := range []struct {
		name, method, cookie, origin string
	}{
		{"no token", "GET", "", ""},
		{"wrong token", "GET", strings.Repeat("0", len(token)), ""},
		{"no token, post", "POST", "", base},
		{"other origin", "POST", token, "http://evil.example"},
		{"no origin", "POST", token, ""},
	} {
		req, _ := http.NewRequest(tc.method, base+"/sessions/"+replaytest.MCPSession, strings.NewReader("approve=1"))
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
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q", tc.name, csp)
		}
	}
	if after := head(); after != before {
		t.Errorf("ledger head moved from %d to %d: a refused request recorded something", before, after)
	}
}
