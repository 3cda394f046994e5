package redrive_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCore_ImportsNoRedrive: the arrow runs one way, redrive → engine;
// the core reaches replay mode only through engine.ReplayMode.
func TestCore_ImportsNoRedrive(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/opx-dev/opx/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/opx-dev/opx/engine/redrive" {
			t.Fatal("the engine core imports engine/redrive")
		}
	}
}
