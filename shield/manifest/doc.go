// Package manifest judges an edit to a file that a toolchain later reads to
// fetch or run code, by the change it makes: both sides are parsed with a
// real parser and compared, never matched against phrases.
//
// It owns three questions about such files, environment variables and
// package-manager commands:
//
//   - KindSource: is where code comes from redirected? (a replace, a git
//     or URL or path dependency, another registry or index, a mirror)
//   - KindRuns: is code that runs at build, install or test time added or
//     changed? (npm lifecycle scripts, build.rs, setup.py, conftest.py, a
//     build backend, a go:generate line, a Gemfile statement that is Ruby)
//   - KindChecksum: is verification turned off, or a recorded hash changed
//     for a version that did not change? (go.sum, lockfile integrity,
//     GOSUMDB=off, strict-ssl=false)
//
// Rules 29 (rules29.go) compare the two sides for what names no new host:
// a version given a fork's suffix on the same release, an import map's
// entry pointed at another package, a dependency's source, index or
// registry pin dropped, a .gitmodules branch or owner moved (KindSource).
//
// A version bump within the same source, and a new dependency from the
// default registry, are not changes. A new file counts every present thing
// as added; a deleted file reports nothing (deletion is judged elsewhere).
//
// # Formats, and who reads them
//
//   - go: go.mod, go.work (golang.org/x/mod/modfile), go.sum, *.go (only
//     //go:generate lines, read by go generate)
//   - npm, yarn, pnpm, bun: package.json, package-lock.json,
//     npm-shrinkwrap.json, yarn.lock (v1 and berry, read by a bounded line
//     scanner), pnpm-lock.yaml, .npmrc, .yarnrc, .yarnrc.yml
//   - cargo: Cargo.toml, Cargo.lock, .cargo/config(.toml), build.rs
//   - pip, uv, poetry, pdm, pipenv, setuptools, pytest: requirements*.txt,
//     constraints*.txt, requirements/*.in, pyproject.toml, Pipfile,
//     Pipfile.lock, poetry.lock, uv.lock, setup.cfg, setup.py, pip.conf,
//     pip.ini, .pypirc (twine's publish target), conftest.py,
//     sitecustomize.py, usercustomize.py, *.pth (python at startup)
//   - bundler, rubygems: Gemfile (gems.rb), Gemfile.lock (gems.locked),
//     .gemrc, .bundle/config
//   - pre-commit: .pre-commit-config.yaml
//   - every other build, package, infrastructure and check tool's files
//     (one table, buildfiles.go: Gradle, Maven, sbt, NuGet, Composer,
//     Terraform, Helm, Ansible, Bazel, CMake, Conan, SwiftPM, pub, mix,
//     Nix, Deno, conda, linters and scanners …) and files whose content
//     reads like build configuration (Sniff): ShapeFormat, judged by the
//     shape of the lines a change adds and removes (shape.go), which also
//     reports KindChecks (a check made unable to fail) and KindDestroy (an
//     infrastructure guard switched off)
//
// Format names a path's kind; Diff judges an edit; Env judges one
// environment variable set for a command (GOPROXY, GOSUMDB, GOFLAGS,
// npm_config_*, PIP_INDEX_URL, CARGO_REGISTRIES_*, BUNDLE_MIRROR__*,
// NODE_OPTIONS, LD_PRELOAD...); Command judges a package-manager command
// line that edits manifests or configuration (go mod edit, go env -w, go
// work use, npm pkg set, npm/yarn/pnpm/bun add, npm config set, cargo add,
// poetry/pdm/uv add, pip install, pip config set, bundle add, bundle
// config, gem sources).
//
// # Bounds
//
// The package is pure: no filesystem, no environment, no clock. A side over
// MaxBytes is refused (ErrTooLarge); every reader is linear, examines at
// most 10,000 entries (100,000 lines for line readers) per side and then
// refuses ("too many entries to judge"); Diff returns at most 32 changes,
// one line each, values clipped to about 120 bytes and stripped of control
// characters. An error means a side could not be judged: the caller
// escalates.
//
// # Out of reach
//
//   - Typosquats and malicious packages published on the default registry:
//     a new dependency "reqeusts" from PyPI is, to this package, an ordinary
//     dependency. Names are not judged.
//   - What a fetched package itself does once installed (its own install
//     scripts, build scripts or import-time code) beyond what a lockfile
//     records (hasInstallScript, requiresBuild).
//   - Whether a path (a go.work use, a replace directory, a path
//     dependency) really leaves the workspace: reported when it may; the
//     caller resolves it.
//   - Code files are opaque: setup.py, conftest.py, build.rs and the like
//     are reported whenever they change, not parsed — except that a
//     conftest.py or build.rs change whose added lines reach nothing
//     beyond the test or the build (no process, network, file written,
//     environment read, code loaded or decoded, pytest hook, no name bound
//     from a capable module) is not reported (rules 16: a fixture that
//     returns a value, a cargo: directive).
//   - Makefiles, CI workflows, shell profiles and other files that run code
//     are out of scope (Format returns "").
//
// It imports only the standard library, golang.org/x/mod (modfile,
// module), github.com/BurntSushi/toml and go.yaml.in/yaml/v3.
package manifest
