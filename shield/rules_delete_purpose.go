package shield

import (
	"path"
	"strings"
)

// Deletes and moves judged by the purpose of what they remove (rules 12,
// issue 27 ninth pass; docs/shield-rules.md "destructive:purpose-file").
// A single delete inside the workspace is usually a refactor and passes;
// what an attack deletes instead is a file by what it does for the
// project, whatever its stack:
//
//   - a key or certificate (what signs, verifies or trusts);
//   - a file that governs the repository (.gitignore, .gitattributes,
//     CODEOWNERS, SECURITY.md, dependency-update bots, git's LFS and
//     submodule maps);
//   - a security component: code or configuration whose name says it
//     verifies, sandboxes, guards, signs, authenticates, authorizes,
//     limits or checks integrity;
//   - a configuration the build, the toolchain or the deploy reads
//     (configuration and build-language files, Kconfig fragments and
//     defconfigs, linker scripts and partition tables);
//   - a program's entry point (main, app_main, index, Program, lib.rs).
//
// A move of one of those counts as its delete unless it is a rename in
// place (same directory, same extension): sandbox.lua to sandbox.lua.bak
// or CODEOWNERS to docs/old/ removes it from where it is read.
//
// What stays allowed, so a reader can predict it: build outputs and
// caches (buildOutput), tests, fixtures and examples (testSource),
// generated files, and files whose name or directory says they are
// obsolete or scratch (old, legacy, deprecated, unused, scratch, tmp,
// backup, draft, archive, a .old or .bak suffix); any other source file
// deleted alone (a refactor) passes as before.

// purposeDeleteBy are the deleters judged here: file tools, rm, git rm,
// mv and unlink (find -delete and globs are destructive:workspace-tree's).
var purposeDeleteBy = map[string]bool{"delete_file": true, "move_file": true, "rm": true, "git": true, "mv": true,
	"unlink": true, "git rm": true, "git mv": true, "shred": true, "srm": true, "trash": true, "trash-put": true, "gio": true}

// keyExts are keys and certificates by extension.
var keyExts = map[string]bool{".pem": true, ".crt": true, ".cer": true, ".der": true, ".key": true, ".pub": true, ".p12": true,
	".pfx": true, ".jks": true, ".keystore": true, ".p8": true, ".gpg": true, ".asc": true, ".bks": true, ".mobileprovision": true}

// repoGoverning are files that govern the repository itself, by base name.
var repoGoverning = map[string]bool{".gitignore": true, ".gitattributes": true, ".gitmodules": true, ".lfsconfig": true,
	"CODEOWNERS": true, "SECURITY.md": true, "SECURITY.txt": true, "security.txt": true, "SECURITY.rst": true,
	".dockerignore": true, ".npmignore": true, ".helmignore": true, ".gcloudignore": true, ".vercelignore": true,
	"dependabot.yml": true, "dependabot.yaml": true, "renovate.json": true, "renovate.json5": true, ".renovaterc": true,
	".renovaterc.json": true, ".snyk": true, ".trivyignore": true, ".gitleaks.toml": true, ".semgrep.yml": true,
	".bazelversion": true, ".nvmrc": true, ".tool-versions": true, ".python-version": true, "rust-toolchain.toml": true, "rust-toolchain": true}

// securityTokens are words of a file's name (split at case and
// separators) that say it enforces a control.
var securityTokens = map[string]bool{"sandbox": true, "sandboxed": true, "guard": true, "guards": true, "verify": true, "verifier": true,
	"verification": true, "integrity": true, "signing": true, "signer": true, "signature": true, "signatures": true, "sign": true,
	"auth": true, "authn": true, "authz": true, "authenticate": true, "authentication": true, "authorize": true, "authorization": true,
	"acl": true, "acls": true, "rbac": true, "permission": true, "permissions": true, "policy": true, "policies": true,
	"intention": true, "intentions": true, "firewall": true, "seccomp": true, "apparmor": true, "selinux": true, "csrf": true,
	"ratelimit": true, "limiter": true, "throttle": true, "anticheat": true, "cheat": true, "security": true, "secure": true,
	"sanitize": true, "sanitizer": true, "validator": true, "crypto": true, "encrypt": true, "encryption": true, "tamper": true,
	"attestation": true, "attest": true, "cosign": true, "sigstore": true, "provenance": true, "allowlist": true, "denylist": true,
	"csp": true, "cors": true, "middleware": true, "mfa": true, "otp": true, "totp": true, "captcha": true, "waf": true, "rack_attack": true}

// obsoleteTokens are words of a name or directory that say the file is
// obsolete, scratch or a copy.
var obsoleteTokens = map[string]bool{"old": true, "legacy": true, "deprecated": true, "obsolete": true, "unused": true, "scratch": true,
	"tmp": true, "temp": true, "backup": true, "bak": true, "draft": true, "drafts": true, "archive": true, "archived": true, "attic": true,
	"wip": true, "probe": true, "playground": true, "orig": true, "junk": true, "trash": true, "spike": true}

// configExts are configuration and build-language files by extension.
var configExts = map[string]bool{".conf": true, ".cfg": true, ".hcl": true,
	".tf": true, ".tfvars": true, ".ld": true, ".lds": true, ".icf": true, ".bzl": true, ".bazel": true,
	".nix": true, ".cmake": true, ".gradle": true, ".kts": true, ".plist": true, ".xcconfig": true, ".props": true, ".targets": true,
	".csproj": true, ".vcxproj": true, ".sln": true, ".uproject": true, ".uplugin": true, ".asmdef": true, ".vdf": true,
	".cue": true, ".jsonnet": true, ".libsonnet": true, ".rego": true, ".sentinel": true, ".service": true, ".rules": true, ".lock": true, ".lockfile": true}

// dataConfigExts are formats that hold a tool's configuration or an
// application's data alike: a file of them counts as configuration the
// build or deploy reads when its name says which tool reads it
// (toolchainName).
var dataConfigExts = map[string]bool{".yml": true, ".yaml": true, ".toml": true, ".json": true, ".ini": true, ".properties": true, ".json5": true, ".jsonc": true}

// toolchainName is a name that says a build, deploy or CI tool reads the
// file.
var toolchainName = mustRx(`(?i)compose|docker|kustomiz|chart|values|skaffold|deploy|pipeline|workflow|build|lock|manifest|west|workspace|tsconfig|jsconfig|babel|webpack|vite|rollup|turbo|nx\.json|lerna|project|buildspec|cloudbuild|^app\.ya?ml|serverless|netlify|vercel|firebase|wrangler|fly\.toml|render\.ya?ml|nixpacks|devcontainer|cargo|pyproject|tox\.ini|setup\.cfg|bazel|pants|buck|meson|conan|vcpkg|platformio|idf_component|renovate|dependabot|codecov|sonar|tauri|capacitor|^eas\.json|angular|nest-cli|rush|^bun|^deno|partition|linker|policy|release|goreleaser|helmfile|kubeconfig|appspec|procfile|taskfile|lefthook|pre-commit|golangci|eslint|prettier|stylelint|biome|ruff|mypy|pytest|jest|vitest|karma|playwright|cypress|tauri|electron-builder|forge\.config|gradle|maven|pom|sbt|mix|rebar|stack\.ya?ml|cabal|dune|pubspec|podfile|cartfile|package`)

// codeExts are source files by extension.
var codeExts = map[string]bool{".go": true, ".rs": true, ".py": true, ".ts": true, ".tsx": true, ".js": true, ".jsx": true, ".mjs": true,
	".cjs": true, ".java": true, ".kt": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".cxx": true, ".rb": true,
	".php": true, ".swift": true, ".cs": true, ".scala": true, ".ex": true, ".exs": true, ".erl": true, ".lua": true, ".dart": true,
	".m": true, ".mm": true, ".sh": true, ".ps1": true, ".vue": true, ".svelte": true, ".gd": true, ".zig": true, ".nim": true, ".hs": true,
	".ml": true, ".clj": true, ".groovy": true, ".pl": true, ".r": true, ".jl": true, ".sol": true}

// buildNames are extensionless build and toolchain files by base name.
var buildNames = map[string]bool{"Makefile": true, "makefile": true, "GNUmakefile": true, "Dockerfile": true, "Containerfile": true,
	"Jenkinsfile": true, "Vagrantfile": true, "Brewfile": true, "Procfile": true, "BUILD": true, "WORKSPACE": true, "Kconfig": true,
	"CMakeLists.txt": true, "Tiltfile": true, "Earthfile": true, "Justfile": true, "justfile": true, "Caddyfile": true, "Podfile": true,
	"Fastfile": true, "Appfile": true, "Dangerfile": true, "Gemfile": true, "Rakefile": true, "Snakefile": true, "Pulumi.yaml": true}

// entryStems are entry points' names (without extension); index counts
// at a package's root or its src directory only (elsewhere it is a
// barrel of re-exports), lib only as Rust's crate root.
var entryStems = map[string]bool{"main": true, "app_main": true, "index": true, "program": true, "startup": true, "__main__": true,
	"lib": true, "__init__": true, "application": true, "server": true, "wsgi": true, "asgi": true, "manage": true, "bootstrap": true}

// governingName is a file under .github/ or .gitlab/ that governs the
// repository (owners, security policy and scanning, dependency bots,
// settings and rulesets), not a template.
var governingName = mustRx(`(?i)codeowners|security|codeql|dependabot|renovate|settings|ruleset|protection|scorecard|secret`)

// entryPoint reports whether rel, a code file named stem, is a program's
// entry point.
func entryPoint(rel, stem, ext string) bool {
	s := strings.ToLower(stem)
	switch {
	case !entryStems[s]:
		return false
	case s == "lib":
		return ext == ".rs"
	case s == "index":
		d := path.Base(path.Dir(rel))
		return d == "src" || d == "." || !strings.Contains(path.Dir(rel), "/")
	}
	return true
}

// nameTokens splits a name into lower-case words at separators and at
// case changes (IntegrityGuard: integrity, guard; verify_image: verify,
// image), at most 16.
func nameTokens(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 && len(out) < 16 {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	rs := []rune(clipRaw(name, 200))
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '@' || r == '+':
			flush()
		case r >= 'A' && r <= 'Z' && len(cur) > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z' && rs[i-1] >= 'A' && rs[i-1] <= 'Z'):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// obsoleteName reports whether rel (workspace-relative) says, by its
// name or a directory, that it is obsolete, scratch or generated.
func obsoleteName(rel string) bool {
	base := path.Base(rel)
	switch path.Ext(base) {
	case ".old", ".bak", ".orig", ".backup", ".tmp", ".swp", ".disabled", ".off":
		return true
	}
	l := strings.ToLower(rel)
	if strings.Contains(l, ".generated.") || strings.Contains(l, "_generated.") || strings.Contains(l, "_pb2") || strings.Contains(l, ".pb.") ||
		strings.HasSuffix(l, ".g.dart") || strings.HasSuffix(l, ".min.js") {
		return true
	}
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		if i < len(segs)-1 && (seg == "generated" || seg == "gen" || seg == "__generated__") {
			return true
		}
		for _, t := range nameTokens(seg) {
			if obsoleteTokens[t] {
				return true
			}
		}
	}
	return false
}

// filePurpose says what p (workspace-relative rel) is for the project
// when deleting it is asked about ("a key or certificate", …), or "".
func filePurpose(rel string) string {
	base := path.Base(rel)
	ext := strings.ToLower(path.Ext(base))
	stem := strings.TrimSuffix(base, path.Ext(base))
	dir := path.Base(path.Dir(rel))
	switch {
	case keyExts[ext] || strings.HasPrefix(base, "id_rsa") || strings.HasPrefix(base, "id_ed25519") || strings.HasPrefix(base, "id_ecdsa"):
		return "a key or certificate: what it signs, verifies or trusts goes with it"
	case repoGoverning[base] || (strings.HasPrefix(rel, ".github/") || strings.HasPrefix(rel, ".gitlab/")) && governingName.MatchString(base):
		return "a file that governs the repository (what git tracks and how, who reviews, how vulnerabilities are reported, dependency updates)"
	}
	code := codeExts[ext]
	config := configExts[ext] || buildNames[base] || strings.Contains(strings.ToLower(base), "defconfig") ||
		strings.HasPrefix(base, "sdkconfig") || strings.HasPrefix(base, "Kconfig") || strings.HasPrefix(base, "Dockerfile") ||
		dataConfigExts[ext] && toolchainName.MatchString(base) || ext == ".csv" && strings.Contains(strings.ToLower(base), "partition") ||
		strings.HasPrefix(base, ".") && ext == "" && (strings.HasSuffix(base, "rc") || strings.Contains(base, "config"))
	if code || config || dataConfigExts[ext] {
		toks := nameTokens(stem)
		if dir != "." && dir != "/" {
			toks = append(toks, nameTokens(dir)...)
		}
		for _, t := range toks {
			if securityTokens[t] {
				return "a security component (its name says " + t + "): what it enforces stops"
			}
		}
	}
	switch {
	case config, code && (dir == "config" || dir == "conf" || dir == "settings"):
		return "a configuration the build, toolchain or deploy reads: it falls back to defaults"
	case code && entryPoint(rel, stem, ext):
		return "a program's entry point: what builds or runs from it breaks"
	}
	return ""
}

// purposeDeletes is `destructive:purpose-file` (escalate): a delete or
// move that removes a file by its purpose (above).
func (s *Shield) purposeDeletes(_ *Action, f *Facts, j *judgement) {
	ws := s.cfg.Workspace
	if ws == "" {
		return
	}
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if r.Glob || !purposeDeleteBy[r.By] || !within(r.Path, ws) || r.Path == ws || within(r.Path, path.Join(ws, ".git")) || s.buildOutput(r.Path) {
			continue
		}
		rel := strings.TrimPrefix(r.Path, ws+"/")
		if testSource(rel) || obsoleteName(rel) {
			continue
		}
		move := r.By == "move_file" || r.By == "mv" || r.By == "git mv" || r.By == "git" && moveTarget(f, "git") != ""
		if move {
			if to := moveTarget(f, r.By); to != "" && within(to, ws) && path.Dir(to) == path.Dir(r.Path) && path.Ext(to) == path.Ext(r.Path) && !obsoleteName(strings.TrimPrefix(to, ws+"/")) {
				continue // a rename in place
			}
		}
		what := filePurpose(rel)
		if what == "" && r.Tree {
			// a directory named by purpose: keys/, certs/, a sandbox
			for _, t := range nameTokens(path.Base(rel)) {
				if t == "keys" || t == "certs" || t == "certificates" || securityTokens[t] {
					what = "a directory of keys or of a security component (" + path.Base(rel) + ")"
					break
				}
			}
		}
		if what == "" {
			continue
		}
		verb := "deletes"
		if move {
			verb = "moves away"
		}
		j.escalate("destructive:purpose-file", "%s %s %s, %s", by(r), verb, rel, what)
		return
	}
}

// moveTarget is where a move by `by` writes (its last write), or "".
func moveTarget(f *Facts, by string) string {
	for i := len(f.Writes) - 1; i >= 0; i-- {
		if f.Writes[i].By == by {
			return f.Writes[i].Path
		}
	}
	return ""
}

// Ignore and attribute files edited (rules 12): an ignore file (.gitignore,
// .dockerignore, .npmignore, .helmignore …) that stops ignoring secrets
// (a removed pattern naming .env, keys, certificates, credentials,
// secrets, state files, registry credentials) with no added line ignoring
// them again lets the next commit, image or package carry them; a
// .gitattributes that drops a `filter=lfs` line puts those binaries
// straight into git's history. `appsec:control-weakened`, escalate.

var (
	ignoreFile    = mustRx(`^\.(?:git|docker|npm|helm|gcloud|vercel|slug|cf|eslint|prettier)?ignore$|^\.dockerignore$`)
	ignoredSecret = mustRx(`(?i)\.env\b|\.pem\b|\.key\b|\.p12\b|\.pfx\b|\.jks\b|id_rsa|id_ed25519|secret|credential|\.tfstate|\.tfvars|\.npmrc|\.pypirc|kubeconfig|\.netrc|\.aws|service-account|\.keystore`)
)

// governingEdited judges edits of ignore and attribute files (above).
func (s *Shield) governingEdited(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, s.cfg.Workspace) || testSource(p) {
			continue
		}
		base := path.Base(p)
		gitattr := base == ".gitattributes"
		if !gitattr && !ignoreFile.MatchString(base) {
			continue
		}
		added, old := textOf(f, p)
		if old == "" {
			continue
		}
		plus, minus := patternLines(added, old)
		plusText := strings.Join(plus, "\n")
		for _, l := range minus {
			switch {
			case gitattr && strings.Contains(l, "filter=lfs") && !strings.Contains(plusText, strings.Fields(l)[0]+" filter=lfs"):
				j.escalate("appsec:control-weakened", "the change to %s stops storing %s through LFS: those binaries go into git's history", s.relPath(p), strings.Fields(l)[0])
				return
			case !gitattr && !strings.HasPrefix(l, "!") && ignoredSecret.MatchString(l) && !strings.Contains(plusText, l):
				j.escalate("appsec:control-weakened", "the change to %s stops ignoring %s: the next commit, image or package carries it", s.relPath(p), clipText(l, 60))
				return
			}
		}
		for _, l := range plus {
			if !gitattr && strings.HasPrefix(l, "!") && ignoredSecret.MatchString(l) {
				j.escalate("appsec:control-weakened", "the change to %s un-ignores %s: the next commit, image or package carries it", s.relPath(p), clipText(l, 60))
				return
			}
		}
	}
}

// patternLines is diffLines for pattern files, where a leading * is a
// glob, not a comment: only # starts one.
func patternLines(added, old string) (plus, minus []string) {
	return diffLinesKept(added, old, func(l string) bool { return !strings.HasPrefix(l, "#") }, 1024)
}
