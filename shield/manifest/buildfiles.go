package manifest

import (
	"bytes"
	"path"
	"regexp"
	"strings"
)

// Build files Shield has no parser for (issue 27, session 14): the one
// table of files that build, package, infrastructure and check tools read
// to fetch or run code, by name and by path, across ecosystems. A change
// to one is judged by the shape of the text it adds and removes (shape.go),
// not by a per-ecosystem parser: a parser does not transfer to the next
// ecosystem, a shape does. Files with a parser (Format's other names) keep
// it: it is more precise.
//
// Each entry names who reads the file, for reasons. Keep the table in this
// one place; docs/shield-rules.md "supply-chain:shape" lists it.

// ShapeFormat is the Format of a build file judged by shape.
const ShapeFormat = "build-config"

// buildNames are build files by exact base name, with who reads them.
var buildNames = map[string]string{
	// Gradle, Maven, sbt, Ant/Ivy (JVM)
	"build.gradle": "gradle", "build.gradle.kts": "gradle", "settings.gradle": "gradle",
	"settings.gradle.kts": "gradle", "gradle.properties": "gradle", "init.gradle": "gradle",
	"init.gradle.kts": "gradle", "gradle-wrapper.properties": "the Gradle wrapper",
	"verification-metadata.xml": "gradle", "verification-keyring.keys": "gradle",
	"libs.versions.toml": "gradle", "gradle.lockfile": "gradle", "buildscript-gradle.lockfile": "gradle",
	"pom.xml": "maven", "extensions.xml": "maven", "maven-wrapper.properties": "the Maven wrapper",
	"jvm.config": "maven", "maven.config": "maven", "settings-security.xml": "maven", "settings.xml": "maven",
	"build.sbt": "sbt", "plugins.sbt": "sbt", ".sbtopts": "sbt", ".jvmopts": "sbt",
	"build.xml": "ant", "ivy.xml": "ivy", "ivysettings.xml": "ivy", "toolchains.xml": "maven",
	// .NET
	"nuget.config": "NuGet", "NuGet.Config": "NuGet", "NuGet.config": "NuGet", "packages.config": "NuGet",
	"Directory.Build.props": "msbuild", "Directory.Build.targets": "msbuild", "Directory.Packages.props": "msbuild",
	"global.json": "dotnet", "packages.lock.json": "NuGet", "dotnet-tools.json": "dotnet",
	// PHP
	"composer.json": "composer", "composer.lock": "composer",
	// infrastructure
	".terraform.lock.hcl": "terraform", ".terraformrc": "terraform", "terraform.rc": "terraform",
	"terragrunt.hcl": "terragrunt", "Chart.yaml": "helm", "Chart.lock": "helm", "helmfile.yaml": "helmfile",
	"values.yaml": "helm", "kustomization.yaml": "kustomize", "kustomization.yml": "kustomize",
	"requirements.yml": "ansible-galaxy", "galaxy.yml": "ansible-galaxy", "ansible.cfg": "ansible",
	".ansible-lint": "ansible-lint", "Pulumi.yaml": "pulumi", "packer.pkr.hcl": "packer",
	// C, C++, Bazel
	"WORKSPACE": "bazel", "WORKSPACE.bazel": "bazel", "MODULE.bazel": "bazel", "MODULE.bazel.lock": "bazel",
	".bazelrc": "bazel", ".bazelversion": "bazelisk", "CMakeLists.txt": "cmake", "CMakePresets.json": "cmake",
	"conanfile.txt": "conan", "conanfile.py": "conan", "conan.lock": "conan", "remotes.json": "conan",
	"vcpkg.json": "vcpkg", "vcpkg-configuration.json": "vcpkg", "meson.build": "meson", "BUCK": "buck",
	// Apple, Dart, Elixir, Erlang, Haskell, OCaml, Nix
	"Package.swift": "SwiftPM", "Package.resolved": "SwiftPM", "Podfile": "CocoaPods", "Podfile.lock": "CocoaPods",
	"Cartfile": "Carthage", "Cartfile.resolved": "Carthage", "Cartfile.private": "Carthage",
	"pubspec.yaml": "pub", "pubspec.lock": "pub", "mix.exs": "mix", "mix.lock": "mix",
	"rebar.config": "rebar3", "rebar.lock": "rebar3", "cabal.project": "cabal", "cabal.project.freeze": "cabal",
	"cabal.project.local": "cabal", "stack.yaml": "stack", "stack.yaml.lock": "stack", "opam": "opam",
	"dune-project": "dune", "flake.nix": "nix", "flake.lock": "nix", "default.nix": "nix", "shell.nix": "nix",
	// JavaScript beyond npm's parsed files, Deno, Bun
	"deno.json": "deno", "deno.jsonc": "deno", "deno.lock": "deno", "import_map.json": "deno",
	"bunfig.toml": "bun", "bun.lock": "bun", "pnpm-workspace.yaml": "pnpm", ".pnpmfile.cjs": "pnpm",
	"lerna.json": "lerna", ".bowerrc": "bower", "bower.json": "bower",
	// Electron packaging (rules 18): hooks it runs while it packs and signs
	"electron-builder.yml": "electron-builder", "electron-builder.yaml": "electron-builder",
	"electron-builder.json": "electron-builder", "electron-builder.json5": "electron-builder",
	"electron-builder.toml": "electron-builder", "electron-builder.config.js": "electron-builder",
	"electron-builder.config.cjs": "electron-builder", "electron-builder.config.mjs": "electron-builder",
	"electron-builder.config.ts": "electron-builder", "forge.config.js": "electron-forge", "forge.config.ts": "electron-forge",
	// Python beyond the parsed files, conda
	"environment.yml": "conda", "environment.yaml": "conda", ".condarc": "conda", "conda-lock.yml": "conda",
	"uv.toml": "uv", "pdm.toml": "pdm", ".pdm.toml": "pdm", "hatch.toml": "hatch", "tox.ini": "tox",
	"pytest.ini": "pytest", ".coveragerc": "coverage", "mypy.ini": "mypy", ".flake8": "flake8",
	"ruff.toml": "ruff", ".ruff.toml": "ruff", ".pylintrc": "pylint", ".bandit": "bandit",
	// Rust and toolchains, version managers, wrappers
	"rust-toolchain": "rustup", "rust-toolchain.toml": "rustup", ".tool-versions": "asdf",
	".mise.toml": "mise", "mise.toml": "mise", ".sdkmanrc": "sdkman",
	// Ruby and other tools' configuration that loads code or sets checks
	".rspec": "rspec", ".rubocop.yml": "rubocop", ".golangci.yml": "golangci-lint", ".golangci.yaml": "golangci-lint",
	".swiftlint.yml": "swiftlint", ".hadolint.yaml": "hadolint", ".tflint.hcl": "tflint", ".yamllint": "yamllint",
	"checkstyle.xml": "checkstyle", "detekt.yml": "detekt", ".scalafmt.conf": "scalafmt", ".scalafix.conf": "scalafix",
	"phpcs.xml": "phpcs", "phpcs.xml.dist": "phpcs", "phpstan.neon": "phpstan", "phpstan.neon.dist": "phpstan",
	"psalm.xml": "psalm", "phpunit.xml": "phpunit", "phpunit.xml.dist": "phpunit",
	"sonar-project.properties": "sonar", ".semgrep.yml": "semgrep", ".semgrepignore": "semgrep",
	".trivyignore": "trivy", "trivy.yaml": "trivy", ".snyk": "snyk", ".checkov.yml": "checkov",
	".gitattributes": "git", ".eslintrc": "eslint", ".eslintrc.json": "eslint", ".eslintrc.yml": "eslint",
	".eslintignore": "eslint", ".prettierignore": "prettier", ".stylelintrc": "stylelint", "codecov.yml": "codecov",
	".markdownlint.json": "markdownlint", ".editorconfig-checker.json": "editorconfig-checker",
	"lefthook.yml": "lefthook", ".lefthook.yml": "lefthook", "lefthook-local.yml": "lefthook",
	".gitleaks.toml": "gitleaks", ".secretlintrc": "secretlint", ".secretlintrc.json": "secretlint",
	".trufflehog.yml": "trufflehog", ".secrets.baseline": "detect-secrets",
	// Data and ML stacks (rules 10): package and channel lists, engine
	// defaults that name jars and repositories, environments' specs.
	"packages.yml": "dbt", "package-lock.yml": "dbt", "dependencies.yml": "dbt", "dbt_project.yml": "dbt",
	".mambarc": "conda", "pixi.toml": "pixi", "pixi.lock": "pixi", "conda.yaml": "conda", "MLproject": "mlflow",
	"spark-defaults.conf": "spark", "renv.lock": "renv", ".Rprofile": "R", "Rprofile.site": "R",
	"Project.toml": "julia", "Manifest.toml": "julia", "JuliaProject.toml": "julia", "meltano.yml": "meltano",
	"nextflow.config": "nextflow", "spack.yaml": "spack", "spack.lock": "spack", "packages.yaml": "spack", "requirements.R": "R", "DESCRIPTION": "R",
}

// buildSuffixes are build files by how their name ends.
var buildSuffixes = []struct{ suffix, reader string }{
	{".gradle", "gradle"}, {".gradle.kts", "gradle"}, {".sbt", "sbt"},
	{".csproj", "msbuild"}, {".fsproj", "msbuild"}, {".vbproj", "msbuild"}, {".props", "msbuild"}, {".targets", "msbuild"},
	{".nuspec", "NuGet"}, {".tf", "terraform"}, {".tf.json", "terraform"}, {".tofu", "OpenTofu"}, {".pkr.hcl", "packer"},
	{".bzl", "bazel"}, {".cmake", "cmake"}, {".podspec", "CocoaPods"}, {".cabal", "cabal"}, {".opam", "opam"},
	{".nix", "nix"}, {"-suppressions.xml", "a dependency checker"}, {"suppressions.xml", "a dependency checker"},
	{".versions.toml", "gradle"},
}

// testRunnerConfig are JavaScript test runners' configuration files
// (vitest.config.ts, jest.config.mjs, playwright.config.ts): they name
// setup code the runner loads before every run (session 15).
var testRunnerConfig = regexp.MustCompile(`^(vitest|jest|playwright|cypress|karma|mocha|ava|wdio)\.(config|workspace|setup)(\.[\w-]+)?\.(js|mjs|cjs|ts|mts|cts|json)$|^\.(mocharc)\.(js|cjs|json|ya?ml)$`)

// buildDirs are directories whose files a tool reads whatever their name
// (a wrapper's, an extension's or an init script's directory).
var buildDirs = map[string]string{
	".mvn": "maven", "wrapper": "a build wrapper", "init.d": "gradle", "buildSrc": "gradle",
	"build-logic": "gradle",
}

// buildFile names who reads p (a workspace-relative or absolute path) to
// fetch or run code, or "" when the table does not know it.
func buildFile(p string) string {
	base := path.Base(p)
	if r, ok := buildNames[base]; ok {
		return r
	}
	if m := testRunnerConfig.FindStringSubmatch(base); m != nil {
		return m[1]
	}
	if strings.IndexByte(base, '.') >= 0 {
		for _, s := range buildSuffixes {
			if strings.HasSuffix(base, s.suffix) {
				return s.reader
			}
		}
	}
	dir := path.Dir(p)
	// rules 22: sbt's meta-build (project/*.scala, project/project/*.scala)
	// is code sbt compiles and runs when it loads the build
	if strings.HasSuffix(base, ".scala") && path.Base(dir) == "project" {
		return "sbt"
	}
	// rules 22: a Spack recipe (a repo's packages/NAME/package.py) says
	// where its source comes from and what its build runs
	if base == "package.py" && path.Base(path.Dir(dir)) == "packages" {
		return "spack"
	}
	for i := 0; i < 3 && dir != "." && dir != "/" && dir != ""; i++ {
		if r, ok := buildDirs[path.Base(dir)]; ok {
			return r
		}
		dir = path.Dir(dir)
	}
	return ""
}

// BuildReader names who reads the build file at p (ShapeFormat), for
// reasons; "" when p is not in the table.
func BuildReader(p string) string { return buildFile(strings.ReplaceAll(p, "\\", "/")) }

// Sniff is the content-shape fallback for a file the table does not know:
// ShapeFormat when p has a configuration file's extension and text (what
// a write leaves or adds) reads like build configuration (it names a
// repository, registry, feed, index, mirror or plugin source, a
// distribution URL, dependency verification or an insecure transport),
// else "".
func Sniff(p string, text []byte) string {
	base := strings.ToLower(path.Base(strings.ReplaceAll(p, "\\", "/")))
	ext := path.Ext(base)
	switch ext {
	case ".xml", ".json", ".jsonc", ".toml", ".yaml", ".yml", ".properties", ".conf", ".cfg", ".ini",
		".hcl", ".lock", ".config", ".kts", ".groovy", ".rc", ".env":
	default:
		if !strings.HasPrefix(base, ".") || strings.Contains(base[1:], ".") {
			return ""
		}
	}
	if len(text) > MaxBytes {
		text = text[:MaxBytes]
	}
	if sniffHinted(text) && (buildShape.Match(text) || dependencyShape.Match(text)) {
		return ShapeFormat
	}
	// a lockfile of any ecosystem that records where packages come from
	if strings.Contains(strings.TrimSuffix(base, ext), "lock") && bytes.Contains(text, []byte("://")) {
		return ShapeFormat
	}
	return ""
}

// sniffHints are words one of which every match of buildShape and
// dependencyShape holds (lower case): a text holding none, in ASCII,
// cannot match them, and the expressions (case-insensitive alternations
// the backtracker walks over the whole text) are not run.
var sniffHints = []string{"repositor", "registr", "mirror", "feed", "source", "index", "distributionurl", "dependenc",
	"allowinsecure", "secure-http", "trusted", "pluginmanagement", "buildscript", "substituters", "[lfs", "[remote",
	"[submodule", "://", "requires", "lib_deps", "platform_packages", "remotes", "overrides", "resolutions"}

// sniffHinted reports whether text may match buildShape or
// dependencyShape: it holds a sniffHint, or a byte outside ASCII (case
// folding outside ASCII is the expressions' to judge).
func sniffHinted(text []byte) bool {
	lower := make([]byte, len(text))
	for i, c := range text {
		if c >= 0x80 {
			return true
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, h := range sniffHints {
		if bytes.Contains(lower, []byte(h)) {
			return true
		}
	}
	return false
}

// SniffCandidate reports whether p is a file Sniff could judge by its
// text (a configuration file's extension, or a dotfile): the engine reads
// such a file's text to sniff it when what a call writes does not say
// (rules 12).
func SniffCandidate(p string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(p, "\\", "/")))
	switch path.Ext(base) {
	case ".xml", ".json", ".jsonc", ".toml", ".yaml", ".yml", ".properties", ".conf", ".cfg", ".ini",
		".hcl", ".lock", ".config", ".kts", ".groovy", ".rc", ".env":
		return true
	}
	return strings.HasPrefix(base, ".") && !strings.Contains(base[1:], ".")
}

// dependencyShape is text that declares dependencies or where they come
// from in any format (rules 12): a quoted registry or repository key (a
// JSON manifest's "scopedRegistries", "repositories"), a source key given
// a URL (url-base, service_url, git, tarball, resolved), a dependency
// table or list (dependencies, requires, lib_deps, remotes; not the
// generic components, projects or packages: an OpenAPI file has
// components); git-config sections
// that say where objects come from ([lfs], [remote "x"], [submodule "x"]:
// .lfsconfig, .gitmodules).
var dependencyShape = regexp.MustCompile(`(?i)registr(?:y|ies)["']\s*:|repositor(?:y|ies)["']\s*:|` +
	`(?:^|\s)(?:extra-|trusted-)?substituters\s*=|trusted-public-keys\s*=|(?m)^\s*\[(?:lfs|remote\s+"[^"]*"|submodule\s+"[^"]*")\]|` +
	`(?:url-base|service_url|registry_url|index_url|git|tarball|resolved|remote|repo)["']?\s*[=:]\s*["']?(?:https?|git|ssh)://|` +
	`(?m)^\s*["']?(?:dependencies|dev-?dependencies|requires|python_requires|lib_deps|platform_packages|remotes|dependency_overrides|overrides|resolutions)["']?\s*[:=]`)
