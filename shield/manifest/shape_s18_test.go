package manifest

import "testing"

// TestDiffShape_ElectronBuilderHooks (rules 18): electron-builder's
// configuration is a build file, and a hook it runs while it packs or
// signs is code that runs; other settings are not.
func TestDiffShape_ElectronBuilderHooks(t *testing.T) {
	cases := []struct{ name, path, before, after, want string }{
		{"beforePack added", "desktop/electron-builder.yml", "appId: a\nafterSign: build/notarize.cjs\n", "appId: a\nbeforePack: build/prepack.cjs\nafterSign: build/notarize.cjs\n", KindRuns},
		{"afterPack in json", "electron-builder.json", "{\n  \"appId\": \"a\"\n}\n", "{\n  \"appId\": \"a\",\n  \"afterPack\": \"./scripts/after.js\"\n}\n", KindRuns},
		{"product name changed", "desktop/electron-builder.yml", "appId: a\nproductName: A\n", "appId: a\nproductName: Shop\n", ""},
	}
	for _, c := range cases {
		cs, err := Diff(c.path, []byte(c.before), []byte(c.after))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := ""
		for _, ch := range cs {
			if ch.Kind == KindRuns {
				got = KindRuns
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q (%+v)", c.name, got, c.want, cs)
		}
	}
}

// TestLookalikeOf_DoubledLetter (rules 18): a name with its last letter
// doubled imitates the one the project uses (oban, obann); a longer
// extension does not (kotlin, kotlinx).
func TestLookalikeOf_DoubledLetter(t *testing.T) {
	known := map[string]bool{"oban": true, "kotlin": true, "jason": true}
	for id, want := range map[string]string{"obann": "oban", "jasonn": "jason", "kotlinx": "", "obanx": "", "oban": ""} {
		if got := lookalikeOf(id, known); got != want {
			t.Errorf("lookalikeOf(%q) = %q, want %q", id, got, want)
		}
	}
}
