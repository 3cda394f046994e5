package judge_test

import "testing"

// TestManifests_SedSubstitution: a sed -i of a literal substitution on a
// manifest is applied by the engine to the file as read and judged by
// its change: a version bump passes, a source redirected escalates; a
// script it does not compute (a back-reference, several expressions)
// stays asked about.
func TestManifests_SedSubstitution(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{
		"package.json": "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\",\n  \"dependencies\": {\n    \"zod\": \"3.23.8\"\n  }\n}\n",
	})
	for _, c := range []struct{ cmd, want string }{
		{`sed -i 's/\"version\": \"1.0.0\"/\"version\": \"1.0.1\"/' package.json`, "allow policy:text-and-inspection"},
		{`sed -i 's/\"zod\": \"3.23.8\"/\"zod\": \"3.23.9\"/g' package.json`, "allow policy:text-and-inspection"},
		{`sed -i 's|\"zod\": \"3.23.8\"|\"zod\": \"github:evil/zod#main\"|' package.json`, "escalate supply-chain:source"},
		{`sed -i 's/1\\.0\\.0/1.0.1/' package.json`, "allow policy:text-and-inspection"},
		{`sed -i 's/[0-9]*\\.0\\.0/2.0.0/' package.json`, "allow policy:text-and-inspection"},
		{`sed -i 's/\\(zod\\)/\\1-x/' package.json`, "escalate supply-chain:unjudged"},
		{`sed -i -e 's/a/b/' -e 's/c/d/' package.json`, "escalate supply-chain:unjudged"},
	} {
		p := withObserved(e, proposal(t, "execute_command", `{"command":"`+c.cmd+`"}`))
		if got := decided(e.Evaluate(t.Context(), p)); got != c.want {
			t.Errorf("%s: %s, want %s (observed %+v)", c.cmd, got, c.want, p.Manifests)
		}
	}
}
