package judge_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/replay/projection"
	"github.com/opx-dev/opx/shield"
)

// TestChangedPrefix_Agrees: the taint projection counts changed build
// files apart by the prefix Shield writes (they cannot import each other).
func TestChangedPrefix_Agrees(t *testing.T) {
	if shield.ChangedPrefix != projection.ChangedPrefix {
		t.Fatalf("shield.ChangedPrefix %q != projection.ChangedPrefix %q", shield.ChangedPrefix, projection.ChangedPrefix)
	}
}

// TestObserve_ChangedBuildFile: what the engine records with a proposal
// (Observed.Sensitive) names a lifecycle script added to package.json,
// which it knows only from the manifest's before and after, and not a
// version bump.
func TestObserve_ChangedBuildFile(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{
		"package.json": `{"name":"x","scripts":{"test":"vitest"},"dependencies":{"zod":"3.23.8"}}`,
	})
	lifecycle := proposal(t, "edit_file", `{"path":"package.json","old":"\"test\":\"vitest\"","new":"\"test\":\"vitest\",\"postinstall\":\"node x.js\""}`)
	if got := e.Observe(lifecycle).Sensitive; len(got) != 1 || !strings.HasPrefix(got[0], shield.ChangedPrefix) {
		t.Errorf("a postinstall added: Sensitive %q, want the changed package.json", got)
	}
	bump := proposal(t, "edit_file", `{"path":"package.json","old":"3.23.8","new":"3.23.9"}`)
	if got := e.Observe(bump).Sensitive; len(got) != 0 {
		t.Errorf("a version bump: Sensitive %q, want nothing", got)
	}
}
