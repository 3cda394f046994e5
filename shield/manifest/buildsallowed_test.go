package manifest

import "testing"

// TestBuildsAllowed: a package added to the lists that let a package run
// its install scripts (bun's trustedDependencies, pnpm's
// onlyBuiltDependencies) is code that runs at install (rules 17).
func TestBuildsAllowed(t *testing.T) {
	before := []byte(`{"name":"x","trustedDependencies":["esbuild"],"pnpm":{"onlyBuiltDependencies":["sharp"]}}`)
	for _, after := range []string{
		`{"name":"x","trustedDependencies":["esbuild","eta-render-helpers"],"pnpm":{"onlyBuiltDependencies":["sharp"]}}`,
		`{"name":"x","trustedDependencies":["esbuild"],"pnpm":{"onlyBuiltDependencies":["sharp","nx-console-helpers"]}}`,
	} {
		ch, err := Diff("package.json", before, []byte(after))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range ch {
			found = found || c.Kind == KindRuns
		}
		if !found {
			t.Errorf("%s: %+v, want a KindRuns change", after, ch)
		}
	}
	ch, err := Diff("package.json", before, []byte(`{"name":"x","version":"2","trustedDependencies":["esbuild"],"pnpm":{"onlyBuiltDependencies":["sharp"]}}`))
	if err != nil || len(ch) != 0 {
		t.Errorf("an unrelated change: %+v %v, want none", ch, err)
	}
}
