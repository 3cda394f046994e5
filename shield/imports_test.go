package shield_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShield_ImportsNothingOfTheEngine: Shield is a top-level room, the
// judge, pure: no package of it depends on the engine (nor on anything
// above it), so it can be read, tested and benchmarked alone.
func TestShield_ImportsNothingOfTheEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, above := range []string{"engine", "fleet", "cli", "replay", "chronicle", "agent", "sandbox"} {
			if root := "github.com/opx-dev/opx/" + above; p == root || strings.HasPrefix(p, root+"/") {
				t.Errorf("shield depends on %s", p)
			}
		}
	}
}
