package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opx-dev/opx/fixtures/fixturegen"
)

// TestLedgerVerify_Fixtures runs `opx ledger verify` on the committed
// sample and on every broken variant, as an investigator would: the sample
// verifies strictly (exit 0); each variant exits 4 with exactly the
// failures expect.json lists.
func TestLedgerVerify_Fixtures(t *testing.T) {
	root := filepath.Join("..", "fixtures", "ledgers")
	run(t, "ledger", "verify", "--strict", filepath.Join(root, fixturegen.SampleName)).wantCode(t, 0)

	b, err := os.ReadFile(filepath.Join(root, fixturegen.BrokenDir, fixturegen.ExpectName))
	if err != nil {
		t.Fatal(err)
	}
	var variants []fixturegen.Variant
	if err := json.Unmarshal(b, &variants); err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		t.Run(v.File, func(t *testing.T) {
			path := filepath.Join(root, fixturegen.BrokenDir, v.File)
			for _, strict := range []bool{false, true} {
				args, want := []string{"ledger", "verify", "--json"}, v.Default
				if strict {
					args, want = append(args, "--strict"), v.Strict
				}
				r := run(t, append(args, path)...)
				wantCode := 4
				if len(want) == 0 {
					wantCode = 0
				}
				r.wantCode(t, wantCode)
				var rep struct {
					OK       bool                 `json:"ok"`
					Failures []fixturegen.Finding `json:"failures"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
					t.Fatalf("--json output: %v\n%s", err, r.stdout)
				}
				if rep.Failures == nil {
					rep.Failures = []fixturegen.Finding{}
				}
				if rep.OK != (len(want) == 0) || !slices.Equal(rep.Failures, want) {
					t.Errorf("strict=%v: ok=%v failures %v, want %v", strict, rep.OK, rep.Failures, want)
				}
			}
		})
	}
}
