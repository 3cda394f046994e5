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
		{"app/Packages/manifest.json", "{\n  \"scopedRegistries\": [\n  ]\n}", true},
		{"deploy/components.yml", "components:\n  - name: auth\n    git: https://git.acme.io/auth.git\n", true},
		{"tools/deps.toml", "[remotes]\nmain = 1\nremote = \"https://mirror.acme.io\"\n", true},
		{"plugins/plugins-lock.json", `{"auth": {"version": "1.2.0", "url": "https://plugins.acme.io/auth-1.2.0.tgz"}}`, true},
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
