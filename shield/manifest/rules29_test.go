package manifest

import (
	"strings"
	"testing"
)

// TestRules29_Supply: rules 29's manifest readers, both ways, in our own
// wording (a dairy's herd tracker, a ferry line's booking service, a
// library's catalogue): a version given a fork's suffix, an import map
// pointed at another package, a source pin dropped, a submodule moved,
// a build script added; each beside a change of the same file that passes.
func TestRules29_Supply(t *testing.T) {
	gm := func(url, branch string) string {
		s := "[submodule \"vendor/herdsync\"]\n\tpath = vendor/herdsync\n\turl = " + url + "\n"
		if branch != "" {
			s += "\tbranch = " + branch + "\n"
		}
		return s
	}
	cases := []struct {
		name, path, before, after string
		want                      string // "kind key-prefix", or "" for no change
	}{
		// a fork's suffix on the same release
		{"toml catalog gains a suffix", "gradle/libs.versions.toml", "[versions]\nspongy = \"1.79\"\nktor = \"2.3.12\"\n", "[versions]\nspongy = \"1.79-herdline\"\nktor = \"2.3.12\"\n", "source spongy version 1.79"},
		{"pom version gains a suffix", "pom.xml", "<dependency>\n<artifactId>ferry-codec</artifactId>\n<version>3.8.2</version>\n</dependency>\n", "<dependency>\n<artifactId>ferry-codec</artifactId>\n<version>3.8.2-fx2</version>\n</dependency>\n", "source version 3.8.2"},
		{"gradle coordinate gains a suffix", "app/build.gradle.kts", "implementation(\"org.example:marc4j:2.9.5\")\n", "implementation(\"org.example:marc4j:2.9.5-cat1\")\n", "source marc4j version 2.9.5"},
		{"npm range gains a suffix", "package.json", "{\"dependencies\": {\n\"date-fns\": \"^3.6.0\"\n}}\n", "{\"dependencies\": {\n\"date-fns\": \"^3.6.0-ferry.1\"\n}}\n", "source date-fns version 3.6.0"},
		{"cargo version gains a suffix", "Cargo.toml", "[dependencies]\nserde_json = \"1.0.120\"\n", "[dependencies]\nserde_json = \"1.0.120-herd\"\n", "source serde_json version 1.0.120"},
		{"python local version", "requirements.txt", "pydantic==2.8.2\n", "pydantic==2.8.2+catalog\n", "source pydantic version 2.8.2"},
		{"go module gains a suffix", "go.mod", "module example.com/herd\n\ngo 1.22\n\nrequire github.com/example/milk v1.4.0\n", "module example.com/herd\n\ngo 1.22\n\nrequire github.com/example/milk v1.4.0-herd.2\n", "source milk version v1.4.0"},
		{"a real bump", "gradle/libs.versions.toml", "[versions]\nspongy = \"1.79\"\n", "[versions]\nspongy = \"1.80\"\n", ""},
		{"guava's jre variant", "gradle/libs.versions.toml", "[versions]\nguava = \"33.2.1\"\n", "[versions]\nguava = \"33.2.1-jre\"\n", ""},
		{"netty's Final", "pom.xml", "<version>4.1.112</version>\n", "<version>4.1.112.Final</version>\n", ""},
		{"a release candidate", "pom.xml", "<version>3.8.2</version>\n", "<version>3.8.2-rc.1</version>\n", ""},
		{"a milestone", "build.gradle", "implementation 'org.example:flow:6.2.0'\n", "implementation 'org.example:flow:6.2.0-M2'\n", ""},
		{"a snapshot of the project", "pom.xml", "<version>1.4.0</version>\n", "<version>1.4.0-SNAPSHOT</version>\n", ""},
		{"npm build metadata", "package.json", "{\"dependencies\": {\n\"date-fns\": \"3.6.0\"\n}}\n", "{\"dependencies\": {\n\"date-fns\": \"3.6.0+build.7\"\n}}\n", ""},
		{"torch's CUDA build", "requirements.txt", "torch==2.3.1\n", "torch==2.3.1+cu121\n", ""},
		{"a post release", "requirements.txt", "pydantic==2.8.2\n", "pydantic==2.8.2.post1\n", ""},
		{"a pseudo-version", "go.mod", "module example.com/herd\n\ngo 1.22\n\nrequire github.com/example/milk v1.4.0\n", "module example.com/herd\n\ngo 1.22\n\nrequire github.com/example/milk v1.4.1-0.20240601120000-0123456789ab\n", ""},
		// import maps
		{"deno npm alias moved", "deno.json", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\"\n}}\n", "{\"imports\": {\n\"mqtt\": \"npm:mqtt-client-pro@5.10.3\"\n}}\n", "source import mqtt"},
		{"import map jsr alias moved", "import_map.json", "{\"imports\": {\n\"@std/path\": \"jsr:@std/path@1.0.2\"\n}}\n", "{\"imports\": {\n\"@std/path\": \"jsr:@stdlib-x/path@1.0.2\"\n}}\n", "source import @std/path"},
		{"an esm.sh alias moved", "import_map.json", "{\"imports\": {\n\"zod\": \"https://esm.sh/zod@3.23.8\"\n}}\n", "{\"imports\": {\n\"zod\": \"https://esm.sh/zod-next@3.23.8\"\n}}\n", "source import zod"},
		{"deno alias at a new version", "deno.json", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\"\n}}\n", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.11.0\"\n}}\n", ""},
		{"deno alias added", "deno.json", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\"\n}}\n", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\",\n\"zod\": \"npm:zod@3.23.8\"\n}}\n", ""},
		// source pins dropped
		{"poetry source dropped", "pyproject.toml", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = \"0.4.2\"\n", "source ferry-fares pin"},
		{"uv index dropped", "pyproject.toml", "[project]\nname = \"herd\"\ndependencies = [\"herd-core>=1.2\"]\n[tool.uv.sources]\nherd-core = { index = \"dairy\" }\n", "[project]\nname = \"herd\"\ndependencies = [\"herd-core>=1.2\"]\n", "source herd-core pin"},
		{"pipfile index dropped", "Pipfile", "[packages]\ncatalog-marc = {version = \"*\", index = \"library\"}\n", "[packages]\ncatalog-marc = \"*\"\n", "source catalog-marc pin"},
		{"cargo registry dropped", "Cargo.toml", "[dependencies]\nferry-proto = { version = \"0.9\", registry = \"ferry\" }\n", "[dependencies]\nferry-proto = \"0.9\"\n", "source ferry-proto pin"},
		{"npmrc scope registry dropped", ".npmrc", "@ferry:registry=https://npm.ferry.example/\nsave-exact=true\n", "save-exact=true\n", "source @ferry pin"},
		{"poetry pinned dependency bumped", "pyproject.toml", "[tool.poetry.dependencies]\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\nferry-fares = { version = \"0.5.0\", source = \"ferry\" }\n", ""},
		{"poetry pinned dependency removed whole", "pyproject.toml", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\npython = \"^3.12\"\n", ""},
		{"npmrc other setting changed", ".npmrc", "@ferry:registry=https://npm.ferry.example/\nsave-exact=true\n", "@ferry:registry=https://npm.ferry.example/\nsave-exact=false\n", ""},
		// submodules
		{"submodule branch added", ".gitmodules", gm("https://github.com/example/herdsync.git", ""), gm("https://github.com/example/herdsync.git", "feature-x"), "source"},
		{"submodule branch changed", ".gitmodules", gm("https://github.com/example/herdsync.git", "main"), gm("https://github.com/example/herdsync.git", "release-next"), "source submodule vendor/herdsync branch"},
		{"submodule url to another owner", ".gitmodules", gm("https://github.com/example/herdsync.git", "") + strings.ReplaceAll(gm("https://github.com/milkfork/other.git", ""), "herdsync", "other"), gm("https://github.com/milkfork/herdsync.git", "") + strings.ReplaceAll(gm("https://github.com/milkfork/other.git", ""), "herdsync", "other"), "source submodule vendor/herdsync url"},
		{"submodule moved to the next release", ".gitmodules", gm("https://github.com/example/herdsync.git", "v4.2.0"), gm("https://github.com/example/herdsync.git", "v4.3.0"), ""},
		{"submodule release branch moved on", ".gitmodules", gm("https://github.com/example/herdsync.git", "release/2026.2"), gm("https://github.com/example/herdsync.git", "release/2026.3"), ""},
		{"submodule release tag to a branch", ".gitmodules", gm("https://github.com/example/herdsync.git", "v4.2.0"), gm("https://github.com/example/herdsync.git", "v4-next"), "source submodule vendor/herdsync branch"},
		{"submodule url to ssh", ".gitmodules", gm("https://github.com/example/herdsync.git", ""), gm("git@github.com:example/herdsync.git", ""), ""},
		// build scripts
		{"poetry build script", "pyproject.toml", "[tool.poetry]\nname = \"catalog\"\n", "[tool.poetry]\nname = \"catalog\"\n[tool.poetry.build]\nscript = \"build_ext.py\"\n", "runs tool.poetry.build.script"},
		{"poetry build script legacy", "pyproject.toml", "[tool.poetry]\nname = \"catalog\"\n", "[tool.poetry]\nname = \"catalog\"\nbuild = \"build_ext.py\"\n", "runs tool.poetry.build"},
		{"pdm custom hook", "pyproject.toml", "[project]\nname = \"catalog\"\n", "[project]\nname = \"catalog\"\n[tool.pdm.build]\ncustom-hook = \"hooks.py\"\n", "runs tool.pdm.build.custom-hook"},
		{"poetry description changed", "pyproject.toml", "[tool.poetry]\nname = \"catalog\"\ndescription = \"a\"\n", "[tool.poetry]\nname = \"catalog\"\ndescription = \"b\"\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Format(c.path)
			if f == "" {
				f = Sniff(c.path, []byte(c.before))
			}
			cs, err := DiffFormat(c.path, f, []byte(c.before), []byte(c.after))
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(cs) != 0 {
					t.Errorf("want no change, got %+v", cs)
				}
				return
			}
			for _, ch := range cs {
				if strings.HasPrefix(ch.Kind+" "+ch.Key, c.want) {
					return
				}
			}
			t.Errorf("want %q, got %+v", c.want, cs)
		})
	}
}

// TestRules29_Commands: git's own commands that move what a submodule
// tracks.
func TestRules29_Commands(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"git", "submodule", "set-branch", "--branch", "next", "vendor/herdsync"}, true},
		{[]string{"git", "submodule", "set-branch", "-b", "next", "--", "vendor/herdsync"}, true},
		{[]string{"git", "config", "-f", ".gitmodules", "submodule.vendor/herdsync.branch", "next"}, true},
		{[]string{"git", "config", "-f", ".gitmodules", "submodule.vendor/herdsync.shallow", "true"}, false},
		{[]string{"git", "submodule", "update", "--init"}, false},
	} {
		cs, _, _ := Command(c.argv)
		if got := len(cs) > 0; got != c.want {
			t.Errorf("%v: got %+v, want a change %v", c.argv, cs, c.want)
		}
	}
}

// TestRules29_Bounds: the line pairing is bounded whatever the sides.
func TestRules29_Bounds(t *testing.T) {
	var b, a strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("x" + strings.Repeat("1", i%50) + " = \"1.0." + strings.Repeat("9", i%7) + "\"\n")
		a.WriteString("y" + strings.Repeat("1", i%50) + " = \"1.0." + strings.Repeat("9", i%7) + "-z\"\n")
	}
	if cs := forkedVersions("Cargo.toml", b.String(), a.String()); len(cs) > maxChanges {
		t.Errorf("%d changes", len(cs))
	}
	_ = AliasRetargeted(b.String(), a.String(), true)
}
