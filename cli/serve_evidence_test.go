package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger/tlog"
)

// TestServe_Evidence_CosignedAfterFirstView: the console folds the
// checkpoints' evidence as entries arrive (it reads only what was
// appended since its last answer): a session shown with a signed
// checkpoint and no witness gains its "witnessed" badges once a
// witness's cosignature is recorded, and the checkpoint it names is the
// one `opx ledger checkpoint --cosigned` merges.
func TestServe_Evidence_CosignedAfterFirstView(t *testing.T) {
	path, key := signedSample(t)
	v, err := tlog.ParseVerifierKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c, base := consoleClient(t, startServe(t, "--ledger", path))
	const ses = "ses_1b91c9b1"
	before := getPage(t, c, base+"/sessions/"+ses, 200)
	if !strings.Contains(before, "b-signed") || strings.Contains(before, "b-witness") || strings.Contains(before, "Cosigned by") {
		t.Fatalf("before any cosignature: signed %v, witnessed %v", strings.Contains(before, "b-signed"), strings.Contains(before, "b-witness"))
	}
	r := run(t, "ledger", "checkpoint", "--ledger", path)
	r.wantCode(t, cli.ExitOK)
	w := newTestWitness(t, "w1.example")
	recordCosigned(t, path, "w1.example", w.cosign(t, signed{Path: path, Dir: filepath.Dir(path), Key: v}, r.stdout))
	after := getPage(t, c, base+"/sessions/"+ses, 200)
	if !strings.Contains(after, "b-witness") || !strings.Contains(after, "Cosigned by <code>w1.example&#43;00000000</code>") {
		t.Fatalf("after a cosignature: %.3000s", after[strings.Index(after, `id="verification"`):])
	}
	run(t, "ledger", "checkpoint", "--cosigned", "--ledger", path).wantOut(t, "— w1.example ")
}
