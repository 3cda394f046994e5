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
		// rules 22: the repository's own override, and a read of it
		{[]string{"git", "config", "submodule.proto.url", "https://git.example.net/proto.git"}, true},
		{[]string{"git", "config", "--get", "submodule.proto.url"}, false},
		{[]string{"cargo", "update", "--config", `patch.crates-io.cms.git="https://git.example.net/formats"`}, true},
	} {
		cs, _, _ := Command(c.argv)
		if got := len(cs) > 0 && cs[0].Kind == KindSource; got != c.want {
			t.Errorf("%v: got %v, want %v (%+v)", c.argv, got, c.want, cs)
		}
	}
}

// TestDiff_Rules22Build (rules 22): a conan package from a user's channel,
// sbt's meta-build running a program or its checksums emptied, and a lock
// check made a warning; bumps and dependency lists pass.
func TestDiff_Rules22Build(t *testing.T) {
	for _, c := range []struct {
		name, path, before, after, kind string
	}{
		{"conan user channel", "agent/conanfile.txt", "[requires]\nzlib/1.3.1\n", "[requires]\nzlib/1.3.1@metersoft/patched\n", KindSource},
		{"conan new package from a channel", "agent/conanfile.txt", "[requires]\nzlib/1.3.1\n", "[requires]\nzlib/1.3.1\nvendor-sdk/2.0.1@vendor/stable\n", KindSource},
		{"conan bump", "agent/conanfile.txt", "[requires]\nzlib/1.3.1\n", "[requires]\nzlib/1.3.2\n", ""},
		{"conan bump in a known channel", "agent/conanfile.txt", "[requires]\nzlib/1.3.1@acme/stable\n", "[requires]\nzlib/1.3.2@acme/stable\n", ""},
		{"sbt meta-build runs a shell", "project/Hooks.scala", "", "object Hooks { scala.sys.process.Process(Seq(\"sh\", \"-c\", \"id\")).! }\n", KindRuns},
		{"sbt meta-build dependencies", "project/Deps.scala", "", "import sbt._\n\nobject Deps {\n  val circe = \"io.circe\" %% \"circe-core\" % \"0.14.10\"\n}\n", ""},
		{"coursier checksums off", "build.sbt", "ThisBuild / useCoursier := true\n", "ThisBuild / useCoursier := true\nThisBuild / csrConfiguration := csrConfiguration.value.withChecksums(Vector(None))\n", KindChecksum},
		{"lock check made a warning", "build.sbt", "ThisBuild / dependencyLockAutoCheck := DependencyLockUpdateMode.CheckAfterUpdate\n", "ThisBuild / dependencyLockAutoCheck := DependencyLockUpdateMode.WarnOnError\n", KindChecks},
		{"a scalac option added", "build.sbt", "ThisBuild / scalacOptions += \"-deprecation\"\n", "ThisBuild / scalacOptions += \"-deprecation\"\nThisBuild / scalacOptions += \"-feature\"\n", ""},
	} {
		var before []byte
		if c.before != "" {
			before = []byte(c.before)
		}
		cs, err := Diff(c.path, before, []byte(c.after))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ""
		for _, ch := range cs {
			if got == "" {
				got = ch.Kind
			}
		}
		if got != c.kind {
			t.Errorf("%s: got %q, want %q (%+v)", c.name, got, c.kind, cs)
		}
	}
}

// TestDiff_PreCommitNarrowed (rules 22): a hook's files narrowed to one
// named file, or its exclude made to match everything, checks nothing; a
// hook's files moved to another directory pattern is ordinary.
func TestDiff_PreCommitNarrowed(t *testing.T) {
	const base = "repos:\n  - repo: local\n    hooks:\n      - id: policy-lint\n        name: policy lint\n        entry: scripts/lint.sh\n        language: script\n"
	for _, c := range []struct {
		name, before, after string
		want                bool
	}{
		{"narrowed to one file", base + "        files: ^(meters|relays)/\n", base + "        files: ^docs/placeholder\\.md$\n", true},
		{"exclude everything", base + "        files: ^(meters|relays)/\n", base + "        files: ^(meters|relays)/\n        exclude: .*\n", true},
		{"another directory", base + "        files: ^(meters|relays)/\n", base + "        files: ^(meters|relays|gateways)/\n", false},
		// session 28: narrowed to a README, or to a path named as nothing
		{"narrowed to a README", base + "        files: ^(meters|relays)/\n", base + "        files: ^meters/README\n", true},
		{"narrowed to nothing", base + "        files: ^(meters|relays)/\n", base + "        files: ^docs/none/\n", true},
		{"one directory of two", base + "        files: ^(meters|relays)/\n", base + "        files: ^meters/\n", false},
		{"every hook made manual", base, "default_stages: [manual]\n" + base, true},
		{"hooks run at commit and push", base, "default_stages: [pre-commit, pre-push]\n" + base, false},
		{"one hook made manual", base, base + "        stages: [manual]\n", true},
	} {
		cs, err := Diff(".pre-commit-config.yaml", []byte(c.before), []byte(c.after))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := false
		for _, ch := range cs {
			got = got || ch.Kind == KindChecks
		}
		if got != c.want {
			t.Errorf("%s: got %v, want %v (%+v)", c.name, got, c.want, cs)
		}
	}
}

// TestDiff_SpackRecipe (rules 22): a Spack recipe's version moved from a
// tagged commit to a branch is unpinned; a new tagged version is not.
func TestDiff_SpackRecipe(t *testing.T) {
	const before = "class MeterTools(CMakePackage):\n    git = \"https://git.example.org/meters/tools.git\"\n    version(\"2.1.0\", tag=\"v2.1.0\", commit=\"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567\")\n"
	for _, c := range []struct {
		name, after string
		want        bool
	}{
		{"version made a branch", "class MeterTools(CMakePackage):\n    git = \"https://git.example.org/meters/tools.git\"\n    version(\"2.1.0\", branch=\"main\")\n", true},
		{"a new tagged version", before + "    version(\"2.2.0\", tag=\"v2.2.0\", commit=\"1a1b2c3d4e5f60718293a4b5c6d7e8f901234567\")\n", false},
	} {
		cs, err := Diff("spack/repo/packages/meter-tools/package.py", []byte(before), []byte(c.after))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := len(cs) > 0; got != c.want {
			t.Errorf("%s: got %v, want %v (%+v)", c.name, got, c.want, cs)
		}
	}
}
