package manifest

import "testing"

// Rules 12 (k27g): Sniff reads dependency declarations in any format
// (quoted registry keys, source keys given URLs, dependency tables) and
// lockfiles of any ecosystem that record URLs.
func TestSniff_Rules12(t *testing.T) {
	for _, c := range []struct {
		path, text string
		want       bool
	}{
		{"plugins/registry.json", `{"registries": [{"name": "main", "url": "https://plugins.acme.io"}]}`, true},
		// rules 13: override tables (Dart's pubspec_overrides.yaml, npm's overrides, yarn's resolutions)
		{"app/pubspec_overrides.yaml", "dependency_overrides:\n  http:\n    git:\n      url: https://github.com/someone/http\n", true},
		{"web/package-overrides.json", "{\n  \"overrides\": {\"lodash\": \"4.17.21\"}\n}", true},
		{"app/settings.yaml", "theme: dark\noverride_colors: false\n", false},
		{"app/Packages/manifest.json", "{\n  \"scopedRegistries\": [\n  ]\n}", true},
		{"deploy/components.yml", "components:\n  - name: auth\n    git: https://git.acme.io/auth.git\n", true},
		{"tools/deps.toml", "[remotes]\nmain = 1\nremote = \"https://mirror.acme.io\"\n", true},
		{"plugins/plugins-lock.json", `{"auth": {"version": "1.2.0", "url": "https://plugins.acme.io/auth-1.2.0.tgz"}}`, true},
		{"nix/nix.conf", "sandbox = true\nsubstituters = https://cache.nixos.org\n", true},
		{".lfsconfig", "[lfs]\n\turl = https://git.acme.io/acme/app.git/info/lfs\n", true},
		{".gitmodules", "[submodule \"vendor/ui\"]\n\tpath = vendor/ui\n\turl = https://git.acme.io/ui.git\n", true},
		{"api/openapi.yaml", "openapi: 3.1.0\ncomponents:\n  schemas: {}\n", false},
		{"config/app.json", `{"title": "Acme", "theme": "dark", "homepage": "https://acme.io"}`, false},
		{"config/locale.yml", "greeting: hello\nfarewell: bye\n", false},
		{"docs/notes.md", "dependencies: none\n", false},
	} {
		if got := Sniff(c.path, []byte(c.text)) != ""; got != c.want {
			t.Errorf("Sniff(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	for p, want := range map[string]bool{"a/manifest.json": true, "x.lock": true, ".lfsconfig": true, "main.go": false, "README.md": false} {
		if SniffCandidate(p) != want {
			t.Errorf("SniffCandidate(%s) != %v", p, want)
		}
	}
}

// Rules 12 (k27g): build hooks named as such, and recipe code required
// from another package, are code that runs (KindRuns) in a shape-judged
// file; other keys are not.
func TestShape_BuildHooksRules12(t *testing.T) {
	for _, c := range []struct {
		path, before, after string
		runs                bool
	}{
		{"tools/build.cfg", "[env]\nboard = x\n", "[env]\nboard = x\nextra_scripts = pre:scripts/hook.py\n", true},
		{"ci/buildspec.yml", "phases:\n  build:\n    commands: [make]\n", "phases:\n  build:\n    commands: [make]\npost_build_commands: ./upload.sh\n", true},
		{"recipes/conanfile.py", "class App(ConanFile):\n    name = 'app'\n", "class App(ConanFile):\n    name = 'app'\n    python_requires = 'helpers/0.3@team/stable'\n", true},
		{"tools/build.cfg", "[env]\nboard = x\n", "[env]\nboard = y\n", false},
	} {
		changes, err := diffShape(c.path, []byte(c.before), []byte(c.after))
		if err != nil {
			t.Fatal(err)
		}
		runs := false
		for _, ch := range changes {
			runs = runs || ch.Kind == KindRuns
		}
		if runs != c.runs {
			t.Errorf("%s: runs %v, want %v (%v)", c.path, runs, c.runs, changes)
		}
	}
}
