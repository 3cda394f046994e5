package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngine_ImportsNothingAbove: the engine and its packages depend on
// no room above them (fleet, cli): the fleet's collector imports the
// engine's packages, and the engine reaches the shipper only through
// outward.Shipper, which whoever starts the engine provides
// (Options.Fleet).
func TestEngine_ImportsNothingAbove(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, above := range []string{"fleet", "cli"} {
			if root := "github.com/opx-dev/opx/" + above; p == root || strings.HasPrefix(p, root+"/") {
				t.Errorf("the engine depends on %s", p)
			}
		}
	}
}
