package cli_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestLedgerVerify_ExportKey: a session export of a signing ledger proves
// its place with the bundled checkpoint; verify says whether the key was
// pinned (--key) or bundled, refuses another key (exit 4), a malformed
// key (exit 2), and --key without an EXPORT (exit 2).
func TestLedgerVerify_ExportKey(t *testing.T) {
	sr := newSignedReview(t, false)
	out := filepath.Join(t.TempDir(), "a.jsonl.zst")
	run(t, "ledger", "export", "--ledger", sr.path, "--session", "ses_a", "-o", out).wantCode(t, cli.ExitOK)
	r := run(t, "ledger", "verify", out)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "signed checkpoint: tree", "the key bundled with the export", "pin the ledger's key from elsewhere with --key")
	r = run(t, "ledger", "verify", out, "--key", sr.vkey)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the key given with --key", "proved in it by inclusion")
	js := run(t, "ledger", "verify", out, "--key", sr.vkey, "--json").jsonObject(t)
	if p, _ := js["proved"].(map[string]any); p["key_pinned"] != true {
		t.Errorf("proved %v", js["proved"])
	}
	_, other, _ := tlog.GenerateKey("opx.local/ledger/00000000000000000000000000000000")
	r = run(t, "ledger", "verify", out, "--key", other)
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "checkpoint")
	run(t, "ledger", "verify", out, "--key", "junk").wantCode(t, cli.ExitUsage)
	run(t, "ledger", "verify", "--ledger", sr.path, "--key", sr.vkey).wantCode(t, cli.ExitUsage)
}

// TestLedgerExport_Tiles: export --tiles writes the static tree once,
// refuses an existing directory and -o beside it.
func TestLedgerExport_Tiles(t *testing.T) {
	sr := newSignedReview(t, false)
	dir := filepath.Join(t.TempDir(), "tiles")
	r := run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "wrote "+dir+": tree 14")
	if _, err := os.Stat(filepath.Join(dir, "checkpoint")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tile", "0", "000.p", "14")); err != nil {
		t.Error(err)
	}
	run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir).wantCode(t, cli.ExitError)
	run(t, "ledger", "export", "--ledger", sr.path, "--tiles", dir+"2", "-o", dir+".jsonl").wantCode(t, cli.ExitUsage)
}

// TestLedgerProve_OutsideCheckers runs the two checkers that do not use
// opx (ledger/testdata/verify-proof.sh: jq, openssl, sha256sum, base64,
// od; ledger/testdata/proofcheck: Go's standard library only) on the
// output of `opx ledger prove SEQ --json`, and on it with one hash changed.
func TestLedgerProve_OutsideCheckers(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "openssl", "sha256sum", "base64", "od", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed: %v", tool, err)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	sr := newSignedReview(t, false)
	src, _ := filepath.Abs(filepath.Join("..", "ledger", "testdata", "proofcheck", "proofcheck.go"))
	script, _ := filepath.Abs(filepath.Join("..", "ledger", "testdata", "verify-proof.sh"))
	bin := filepath.Join(t.TempDir(), "proofcheck")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Dir, build.Env = t.TempDir(), append(os.Environ(), "GO111MODULE=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build proofcheck: %v\n%s", err, out)
	}
	r := run(t, "ledger", "prove", fmt.Sprint(sr.seq["block"]), "--json", "--ledger", sr.path)
	r.wantCode(t, cli.ExitOK)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(r.stdout), 0o600)
	var p map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	hs := p["hashes"].([]any)
	h, err := base64.StdEncoding.DecodeString(hs[0].(string))
	if err != nil {
		t.Fatal(err)
	}
	h[5] ^= 1
	hs[0] = base64.StdEncoding.EncodeToString(h)
	bad := filepath.Join(dir, "bad.json")
	b, _ := json.Marshal(p)
	os.WriteFile(bad, b, 0o600)
	for name, check := range map[string]func(string) *exec.Cmd{
		"proofcheck":      func(f string) *exec.Cmd { return exec.Command(bin, "-key", sr.vkey, f) },
		"verify-proof.sh": func(f string) *exec.Cmd { return exec.Command("bash", script, f, sr.vkey) },
	} {
		if out, err := check(good).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ok: entry "+fmt.Sprint(sr.seq["block"])) {
			t.Errorf("%s on opx ledger prove's proof: %v\n%s", name, err, out)
		}
		out, err := check(bad).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "the path leads to root") {
			t.Errorf("%s on a tampered proof: %v\n%s", name, err, out)
		}
	}
}
