package judge_test

import "testing"

// TestManifests_PatchFile: a patch file in the workspace applied with
// git apply, git am or patch is read by the engine, and the manifests it
// targets are judged by the lines it adds; a patch of source code passes.
func TestManifests_PatchFile(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{
		"go.mod":     "module x\n\ngo 1.22\n",
		"fix.patch":  "diff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1,3 +1,4 @@\n module x\n+replace golang.org/x/mod => github.com/evil/mod v0.1.0\n",
		"pkg.diff":   "--- a/package.json\n+++ b/package.json\n@@ -1,3 +1,4 @@\n   \"scripts\": {\n+    \"postinstall\": \"node x.js\",\n",
		"typo.patch": "--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1,2 @@\n package main\n+// a comment\n",
	})
	for _, c := range []struct{ cmd, want string }{
		{"git apply fix.patch", "escalate supply-chain:source"},
		{"git am fix.patch", "escalate supply-chain:source"},
		{"patch -p1 < fix.patch", "escalate supply-chain:source"},
		{"patch -p1 -i pkg.diff", "escalate supply-chain:unjudged"},
		{"git apply typo.patch", "allow policy:git-local"},
	} {
		p := withObserved(e, proposal(t, "execute_command", `{"command":"`+c.cmd+`"}`))
		if got := decided(e.Evaluate(t.Context(), p)); got != c.want {
			t.Errorf("%s: %s, want %s (observed %+v)", c.cmd, got, c.want, p.Manifests)
		}
	}
}
