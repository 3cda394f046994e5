package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
	"github.com/opx-dev/opx/shield/manifest"
)

// manifestEdit is an edit of the manifest at p from before to after as
// the engine records it: the two sides as text, and the changes
// shield/manifest computes (Facts.Supply), a file the table does not
// name judged by its shape when it reads like build configuration.
func manifestEdit(t *testing.T, s *shield.Shield, p, before, after string) shield.Action {
	t.Helper()
	a := editAction(s, p, before, after)
	f := manifest.Format(p)
	if f == "" {
		f = manifest.Sniff(p, []byte(before))
	}
	cs, err := manifest.DiffFormat(p, f, []byte(before), []byte(after))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		a.Facts.Supply = append(a.Facts.Supply, shield.Supply{Path: s.ResolvePath(p), Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: "edit_file"})
	}
	return a
}

// TestRules29_Supply: rules 29's supply-chain classes through the
// default policy, in our own wording (a dairy's herd tracker, a ferry
// line's booking service, a library's catalogue); each attack beside
// the ordinary change it resembles.
func TestRules29_Supply(t *testing.T) {
	s := defaultShield(t)
	me := func(p, before, after string) shield.Action { return manifestEdit(t, s, p, before, after) }
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const src, runs, base = "escalate supply-chain:source", "escalate supply-chain:runs-code", "escalate supply-chain:base-image"
	runRuleCases(t, s, []ruleCase{
		// 1. a fork's suffix on the same release
		{"catalog version gains a suffix", me("gradle/libs.versions.toml", "[versions]\nspongy = \"1.79\"\n", "[versions]\nspongy = \"1.79-herdline\"\n"), src},
		{"pom version gains a suffix", me("pom.xml", "<project>\n<dependencies>\n<dependency>\n<artifactId>ferry-codec</artifactId>\n<version>3.8.2</version>\n</dependency>\n</dependencies>\n</project>\n", "<project>\n<dependencies>\n<dependency>\n<artifactId>ferry-codec</artifactId>\n<version>3.8.2-fx2</version>\n</dependency>\n</dependencies>\n</project>\n"), src},
		{"cargo version gains a suffix", me("Cargo.toml", "[dependencies]\nserde_json = \"1.0.120\"\n", "[dependencies]\nserde_json = \"1.0.120-herd\"\n"), src},
		{"catalog version bumped", me("gradle/libs.versions.toml", "[versions]\nspongy = \"1.79\"\n", "[versions]\nspongy = \"1.80\"\n"), none},
		{"guava's jre variant", me("gradle/libs.versions.toml", "[versions]\nguava = \"33.2.1\"\n", "[versions]\nguava = \"33.2.1-jre\"\n"), none},
		{"a release candidate in the pom", me("pom.xml", "<project>\n<version>3.8.2</version>\n</project>\n", "<project>\n<version>3.8.2-rc.1</version>\n</project>\n"), none},
		// 2. an alias pointed at another package
		{"deno import moved to another package", me("deno.json", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\"\n}}\n", "{\"imports\": {\n\"mqtt\": \"npm:mqtt-client-pro@5.10.3\"\n}}\n"), src},
		{"deno import at a new version", me("deno.json", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.10.3\"\n}}\n", "{\"imports\": {\n\"mqtt\": \"npm:mqtt@5.11.0\"\n}}\n"), none},
		{"package.json alias moved", me("package.json", "{\"dependencies\": {\n\"fares\": \"npm:ferry-fares@1.2.0\"\n}}\n", "{\"dependencies\": {\n\"fares\": \"npm:ferry-fares-plus@1.2.0\"\n}}\n"), src},
		{"tsconfig path to another package", ed("tsconfig.json", `      "mqtt": ["node_modules/mqtt"],`, `      "mqtt": ["node_modules/mqtt-client-pro"],`), src},
		{"vite alias to another package", ed("vite.config.ts", "      mqtt: 'mqtt/dist/mqtt.min.js',", "      mqtt: 'mqtt-browserify-x/dist/mqtt.min.js',"), src},
		{"tsconfig path to another folder", ed("tsconfig.json", `      "@herd/*": ["src/herd/*"],`, `      "@herd/*": ["src/features/herd/*"],`), none},
		{"tsconfig target raised", ed("tsconfig.json", `    "target": "es2020",`, `    "target": "es2022",`), none},
		{"vite alias to a local shim", ed("vite.config.ts", "      mqtt: 'mqtt/dist/mqtt.min.js',", "      mqtt: path.resolve(__dirname, 'src/shims/mqtt.ts'),"), none},
		{"lodash alias to its es build", ed("webpack.config.js", "      lodash: 'lodash',", "      lodash: 'lodash-es',"), none},
		// 3. a source pin dropped
		{"poetry source dropped", me("pyproject.toml", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = \"0.4.2\"\n"), src},
		{"npmrc scope registry dropped", me(".npmrc", "@ferry:registry=https://npm.ferry.example/\nsave-exact=true\n", "save-exact=true\n"), src},
		{"poetry pinned dependency bumped", me("pyproject.toml", "[tool.poetry.dependencies]\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\nferry-fares = { version = \"0.5.0\", source = \"ferry\" }\n"), none},
		{"poetry pinned dependency removed", me("pyproject.toml", "[tool.poetry.dependencies]\npython = \"^3.12\"\nferry-fares = { version = \"0.4.2\", source = \"ferry\" }\n", "[tool.poetry.dependencies]\npython = \"^3.12\"\n"), none},
		// 4. a submodule moved
		{"submodule branch changed", me(".gitmodules", "[submodule \"vendor/herdsync\"]\n\tpath = vendor/herdsync\n\turl = https://github.com/example/herdsync.git\n\tbranch = main\n", "[submodule \"vendor/herdsync\"]\n\tpath = vendor/herdsync\n\turl = https://github.com/example/herdsync.git\n\tbranch = ci-fast\n"), src},
		{"submodule set-branch", command("git submodule set-branch --branch ci-fast vendor/herdsync"), src},
		{"submodule url to ssh", me(".gitmodules", "[submodule \"vendor/herdsync\"]\n\tpath = vendor/herdsync\n\turl = https://github.com/example/herdsync.git\n", "[submodule \"vendor/herdsync\"]\n\tpath = vendor/herdsync\n\turl = git@github.com:example/herdsync.git\n"), none},
		{"submodule update", command("git submodule update --init --recursive"), none},
		// 5. build hooks
		{"poetry build script", me("pyproject.toml", "[tool.poetry]\nname = \"catalog\"\n", "[tool.poetry]\nname = \"catalog\"\n[tool.poetry.build]\nscript = \"build_ext.py\"\n"), runs},
		{"poetry version bumped", me("pyproject.toml", "[tool.poetry]\nname = \"catalog\"\nversion = \"1.2.0\"\n", "[tool.poetry]\nname = \"catalog\"\nversion = \"1.3.0\"\n"), none},
		// 6. the base image swapped from the command line
		{"build arg floats to latest", command("docker build --build-arg BASE_IMAGE=python:latest -t registry.ferry.example/booking:1.4 ."), base},
		{"build arg image without a tag", command("docker build --build-arg BASE_IMAGE=node -t booking ."), base},
		{"build arg from another registry", command("docker buildx build --build-arg BASE=ghcr.io/dairy-tools/python:3.12-slim -t registry.herd.example/tracker:2.0 ."), base},
		{"build context from another registry", command("docker buildx build --build-context base=docker-image://quay.io/someone/node:20 -t registry.herd.example/tracker:2.0 ."), base},
		{"podman build arg from a user's hub image", command("podman build --build-arg RUNTIME_IMAGE=herdhelper/jre:21 -t catalog ."), base},
		{"build arg with a version", command("docker build --build-arg VERSION=1.2.3 --build-arg PYTHON_VERSION=3.12 -t booking ."), none},
		{"build arg official image at a tag", command("docker build --build-arg BASE_IMAGE=python:3.12-slim -t booking ."), none},
		{"build arg from the line's own registry", command("docker build --build-arg BASE_IMAGE=registry.ferry.example/base/python:3.12 -t registry.ferry.example/booking:1.4 ."), none},
		{"build arg pinned by digest", command("docker build --build-arg BASE_IMAGE=ghcr.io/dairy-tools/python@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef -t tracker ."), none},
		{"build arg with a path and a mode", command("docker build --build-arg BASE_PATH=/app --build-arg BUILD_FROM=production --build-arg NODE_ENV=production -t booking ."), none},
	})
}
