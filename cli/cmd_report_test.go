package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
)

// sampleLedgerID is the sample's ledger id (fixtures/fixturegen).
const sampleLedgerID = "5a3c0e1f9b8d4c7a6e2f1d0c9b8a7f6e"

// readReport returns the report at path and checks that it is one
// self-contained file: nothing that could load a script, a style sheet, a
// font or an image.
func readReport(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.HasPrefix(html, "<!DOCTYPE html>") {
		t.Errorf("not an HTML document: %.80q", html)
	}
	lower := strings.ToLower(html)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", " src=", "@import", "url(", "href="} {
		if strings.Contains(lower, bad) {
			t.Errorf("report holds %q: it must load nothing", bad)
		}
	}
	return html
}

func headHash(t *testing.T, path string) string {
	t.Helper()
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h.Hash.String()
}

func TestReport_Sample(t *testing.T) {
	path := replaySample(t)
	out := filepath.Join(t.TempDir(), "report.html")
	r := run(t, "report", injection, "-o", out, "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, fmt.Sprintf("ok: %d entries", factsOf(t, path).entries), "wrote "+out+": session "+injection+", 1 turn, 4 tool calls, 3 blocked")
	html := readReport(t, out)
	for _, want := range []string{
		"Verification: ok", headHash(t, path), sampleLedgerID,
		"Blocked actions (3)", `<code class="rule">credential-path</code>`, `<td class="reason">` + injectionReason + `</td>`,
		`<code class="rule">exfiltration</code>`, `<code class="rule">pipe-to-shell</code>`,
		"Follow the README setup", "do the setup steps from README.md", "scripted/opx-scripted-1",
		"Tokens by model", "Verdicts by tier and rule", "Tool calls", "The session took no snapshots",
		"note by ir-analyst",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("report mode %v, %v; want 0600", fi.Mode(), err)
	}
}

// TestReport_Changes: the fix session's report reconstructs its file
// changes from the snapshots: a new file and a file a command created,
// from /dev/null (their content is in later snapshots), the edit whose
// pre-state retention pruned, and a command that changed nothing.
func TestReport_Changes(t *testing.T) {
	path := replaySample(t)
	out := filepath.Join(t.TempDir(), "fix.html")
	run(t, "report", "ses_02f8c314", "-o", out, "--ledger", path, "--no-workspace").wantCode(t, cli.ExitOK)
	html := readReport(t, out)
	for _, want := range []string{
		// html/template writes + as &#43;.
		`--- /dev/null</span><span class="hdr">&#43;&#43;&#43; b/billing/totals_test.go</span>`,
		`&#43;&#43;&#43; b/billing/coverage.out</span><span class="hunk">@@ -0,0 &#43;1 @@</span><span class="add">&#43;mode: set</span>`,
		"basis: pre-state and post-state content both from the ledger",
		fmt.Sprintf("pre-state content pruned by retention (entry %d)", factsOf(t, path).pruned),
		"the command changed no file",
		"The workspace was not read (--no-workspace)",
		"approved</span> by alice", "denied</span> by timeout",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestReport_Overwrite(t *testing.T) {
	path := replaySample(t)
	tests := []struct {
		name    string
		force   bool
		code    int
		kept    bool
		message string
	}{
		{"kept without --force", false, cli.ExitError, true, "exists; pass --force to overwrite it"},
		{"replaced with --force", true, cli.ExitOK, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(out, []byte("earlier work\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"report", injection, "-o", out, "--ledger", path}
			if tt.force {
				args = append(args, "--force")
			}
			r := run(t, args...)
			r.wantCode(t, tt.code)
			r.wantErr(t, tt.message)
			b, _ := os.ReadFile(out)
			if kept := string(b) == "earlier work\n"; kept != tt.kept {
				t.Errorf("file kept %v, want %v", kept, tt.kept)
			}
		})
	}
}

// TestReport_ForceNeverReplacesASpecialFile: --force replaces a report,
// never a FIFO or a device named as output (a rename over /dev/null, as
// root, would leave a regular file in its place).
func TestReport_ForceNeverReplacesASpecialFile(t *testing.T) {
	path := replaySample(t)
	fifo := filepath.Join(t.TempDir(), "report.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "report", injection, "-o", fifo, "--force", "--ledger", path)
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, "not a regular file")
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer the FIFO: %v, %v", fifo, fi.Mode(), err)
	}
}

func TestReport_Usage(t *testing.T) {
	path := replaySample(t)
	out := filepath.Join(t.TempDir(), "r.html")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no -o", []string{"report", injection}, "missing -o FILE"},
		{"no session", []string{"report", "-o", out}, "missing SESSION"},
		{"--at 0", []string{"report", injection, "-o", out, "--at", "0"}, "--at 0 is the genesis entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(tt.args, "--ledger", path)...)
			r.wantCode(t, cli.ExitUsage)
			r.wantErr(t, tt.msg)
			if _, err := os.Stat(out); err == nil {
				t.Error("a report was written after a usage error")
			}
		})
	}
}

func TestReport_UnknownSession(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	r := run(t, "report", "ses_nope", "-o", out, "--ledger", replaySample(t))
	r.wantCode(t, cli.ExitError)
	r.wantErr(t, `unknown session "ses_nope"`, "`opx sessions` lists the sessions")
	if r.stdout != "" { // looked up before the ledger is verified
		t.Errorf("stdout before the unknown session:\n%s", r.stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a report was written for an unknown session")
	}
}

// TestReport_Tampered: a ledger that does not verify still gets its
// report, which says so first, and the command exits 4.
func TestReport_Tampered(t *testing.T) {
	path, _ := rewrittenVerdict(t, replaySample(t), injection)
	out := filepath.Join(t.TempDir(), "r.html")
	r := run(t, "report", injection, "-o", out, "--ledger", path)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "hash-mismatch", "FAILED", "wrote "+out)
	html := readReport(t, out)
	for _, want := range []string{"Verification: FAILED", "what follows may not be what was recorded", "<code>hash-mismatch</code>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Index(html, "Verification: FAILED") > strings.Index(html, `id="timeline"`) {
		t.Error("the failure is not said before the timeline")
	}
}

// TestReport_HostileText_Escaped: markup recorded in the ledger is text in
// the report, never markup.
func TestReport_HostileText_Escaped(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	run(t, "report", "ses_evil", "-o", out, "--ledger", hostileLedger(t)).wantCode(t, cli.ExitOK)
	html := readReport(t, out)
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the recorded <script> is not shown escaped")
	}
}

func TestReport_Stdout(t *testing.T) {
	r := run(t, "report", injection, "-o", "-", "--ledger", replaySample(t))
	r.wantCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(r.stdout), "</html>") {
		t.Errorf("stdout is not the report: %.100q", r.stdout)
	}
}

// chromium returns Debian's chromium, skipping the test when it is not
// installed, except on CI (.ci/run installs it), where that fails.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (.ci/run installs Debian's chromium): %v", err)
		}
		t.Skip("chromium is not installed; .ci/run installs Debian's chromium")
	}
	return p
}

// TestReport_Chromium renders the report of the sample's prompt injection
// in headless Chromium and checks, in the DOM the browser built, that the
// verification status and the three blocked actions, with their rules and
// reasons, are there.
func TestReport_Chromium(t *testing.T) {
	bin := chromium(t)
	path := replaySample(t)
	out := filepath.Join(t.TempDir(), "report.html")
	run(t, "report", injection, "-o", out, "--ledger", path).wantCode(t, cli.ExitOK)

	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(home, "profile"),
		"--dump-dom", "file://"+out)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	d := string(dom)
	if !strings.Contains(d, "<body>") || !strings.Contains(d, "</html>") {
		t.Fatalf("chromium did not render the report:\n%.500s\n%s", d, stderr.String())
	}
	for _, want := range []string{
		"Verification: ok", headHash(t, path),
		"Blocked actions (3)",
		`<code class="rule">credential-path</code></td><td class="reason">` + injectionReason + "</td>",
		`<code class="rule">exfiltration</code></td><td class="reason">sends a credential file to a host not in the allow list</td>`,
		`<code class="rule">pipe-to-shell</code></td><td class="reason">pipes a downloaded script into a shell</td>`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the rendered DOM lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`<tr class="blocked-action">`).FindAllString(d, -1)); n != 3 {
		t.Errorf("%d blocked actions in the rendered table, want 3", n)
	}
}
