package cli_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
)

// runQuiet runs opx in-process with its output thrown away.
func runQuiet(tb testing.TB, args ...string) {
	app := cli.NewApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	release := lockSetup(app)
	err := app.Run(append([]string{"opx"}, args...))
	release()
	if err != nil {
		tb.Fatalf("opx %v: %v", args, err)
	}
}

// benchServe times GET path on the console against the CLI command of
// the same data, in the same run, and reports the ratio (target 1.5).
func benchServe(b *testing.B, path string, cliArgs ...string) {
	dst := filepath.Join(b.TempDir(), "sample.db")
	runQuiet(b, "ledger", "import", filepath.Join("..", "fixtures", "ledgers", "sample.jsonl.zst"), "--ledger", dst)
	url := startServe(b, "--ledger", dst)
	base, token, _ := strings.Cut(url, "/?token=")
	get := func() {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.AddCookie(&http.Cookie{Name: "opx_console", Value: token})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
	get() // the outcomes fold, once
	var web, cmd time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		get()
		t1 := time.Now()
		runQuiet(b, append(cliArgs, "--ledger", dst)...)
		web, cmd = web+t1.Sub(t0), cmd+time.Since(t1)
	}
	b.ReportMetric(float64(web.Microseconds())/float64(b.N), "console-µs/op")
	b.ReportMetric(float64(cmd.Microseconds())/float64(b.N), "cli-µs/op")
	b.ReportMetric(float64(web)/float64(cmd), "ratio")
}

// BenchmarkServe_SessionsPage: the sessions page beside opx sessions --json.
func BenchmarkServe_SessionsPage(b *testing.B) {
	benchServe(b, "/?otr=1", "sessions", "--json", "--all")
}

// BenchmarkServe_Timeline: a session's page beside opx replay --json.
func BenchmarkServe_Timeline(b *testing.B) {
	benchServe(b, "/sessions/ses_577e2999", "replay", "--json", "ses_577e2999")
}
