package manifest

import "testing"

// TestDiff_GoToolchain (rules 21): a toolchain directive naming no Go
// release (a suffix is someone's own build) moves where the compiler
// comes from; a release toolchain, or none, does not.
func TestDiff_GoToolchain(t *testing.T) {
	const mod = "module example.com/svc\n\ngo 1.23.4\n"
	for _, c := range []struct {
		name, after string
		want        bool
	}{
		{"custom suffix", mod + "\ntoolchain go1.23.4-buildfarm\n", true},
		{"release", mod + "\ntoolchain go1.23.5\n", false},
		{"release candidate", mod + "\ntoolchain go1.24rc1\n", false},
	} {
		cs, err := Diff("go.mod", []byte(mod), []byte(c.after))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := false
		for _, ch := range cs {
			got = got || ch.Kind == KindSource && ch.Key == "toolchain"
		}
		if got != c.want {
			t.Errorf("%s: got %v, want %v (%+v)", c.name, got, c.want, cs)
		}
	}
}

// TestCommand_GitSubmoduleURL (rules 21): git commands that rewrite a
// submodule's URL in .gitmodules are source changes; reading them is not.
func TestCommand_GitSubmoduleURL(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"git", "submodule", "set-url", "--", "third_party/proto", "https://git.example.net/proto.git"}, true},
		{[]string{"git", "-C", "sub", "config", "-f", ".gitmodules", "submodule.proto.url", "https://git.example.net/proto.git"}, true},
		{[]string{"git", "config", "-f", ".gitmodules", "submodule.proto.branch", "main"}, false},
		{[]string{"git", "submodule", "status"}, false},
	} {
		cs, _, _ := Command(c.argv)
		if got := len(cs) > 0 && cs[0].Kind == KindSource; got != c.want {
			t.Errorf("%v: got %v, want %v (%+v)", c.argv, got, c.want, cs)
		}
	}
}
