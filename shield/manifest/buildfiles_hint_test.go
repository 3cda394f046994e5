package manifest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSniffHinted_Necessary: every text the shapes match holds a hint
// (sniffHinted is a necessary condition, never a different answer). The
// texts are built from the expressions' own words, in random case, among
// filler, and from the committed examples of build configuration.
func TestSniffHinted_Necessary(t *testing.T) {
	words := []string{"<repositories>", "repositories {", "pluginRepositories", "registry=", "registries:", "mirror=", "mirrors {",
		"feed=", "packageSources", "index-url", "extra_index", "distributionUrl", "dependencyVerification", "allowInsecureProtocol",
		"secure-http", "trusted_host", "pluginManagement", "buildscript", "source = \"https://x\"", "sources: git", "\"registry\":",
		"\"repository\":", "extra-substituters =", "trusted-public-keys =", "[lfs]", "[remote \"o\"]", "[submodule \"x\"]",
		"tarball: https://x", "resolved: \"git://x\"", "dependencies:", "dev-dependencies =", "requires =", "python_requires =",
		"lib_deps =", "platform_packages =", "remotes:", "dependency_overrides:", "overrides:", "resolutions:"}
	filler := []string{"name: x", "version = 1", "# comment", "  key: value", "{", "}", "enabled = true"}
	r := rand.New(rand.NewPCG(1, 2))
	randCase := func(s string) string {
		b := []byte(s)
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
	matched := 0
	for i := 0; i < 5000; i++ {
		var lines []string
		for k := 0; k < 1+r.IntN(5); k++ {
			lines = append(lines, filler[r.IntN(len(filler))])
		}
		if r.IntN(2) == 0 {
			lines = append(lines, randCase(words[r.IntN(len(words))]))
		}
		text := []byte(strings.Join(lines, "\n"))
		if buildShape.Match(text) || dependencyShape.Match(text) {
			matched++
			if !sniffHinted(text) {
				t.Fatalf("%q matches a shape but holds no hint", text)
			}
		}
	}
	if matched < 1000 {
		t.Fatalf("only %d texts matched: the test checks too little", matched)
	}
	if sniffHinted([]byte("name: x\nversion: 1\n")) {
		t.Errorf("a text without any hint is hinted")
	}
}
