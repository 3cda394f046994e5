package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// Rules 29, supply chain (session 30): where code comes from moved
// without a new host, or by the command line. Most of the class is
// judged where manifests are (shield/manifest rules29.go, reported as
// supply-chain:source or supply-chain:runs-code by supplyChain):
//
//   - a dependency's version gains a vendor or fork suffix while its
//     release numbers stay (1.79 → 1.79-velatap): a rebuild only another
//     repository serves;
//   - an import map's entry keeps its key but names another package
//     (npm:mqtt@5 → npm:mqtt-client-pro@5, jsr: and CDN URLs alike);
//   - a dependency's explicit source, index or registry pin removed while
//     it is still a dependency, an .npmrc scope's registry removed
//     (dependency confusion);
//   - a .gitmodules submodule's branch added or changed, its url moved to
//     another host or owner (and git submodule set-branch, git config -f
//     .gitmodules submodule.X.branch);
//   - poetry's build script and pdm-backend's custom hook (code run at
//     every build).
//
// Here, what no manifest reader sees:
//
//   - aliasRetargeted: a tsconfig's paths or a bundler's alias (vite,
//     webpack, rollup, babel's module-resolver …) keeps its key but points
//     at another package than the one it named (`mqtt: 'mqtt/dist/x.js'`
//     → `mqtt: 'mqtt-client-pro/dist/x.js'`): judged on an edit's two
//     sides with the manifest's reader.
//   - buildArgImage: `docker build --build-arg NAME=IMAGE` (podman,
//     buildah, nerdctl alike, and --build-context NAME=docker-image://REF)
//     whose value is an image reference that floats (:latest, no tag) or
//     comes from a registry other than the official ones and the ones the
//     same line tags or caches to: the base image is swapped from the
//     command line. A version (--build-arg VERSION=1.2.3), a pinned digest
//     and an official image at a tag pass.
func (s *Shield) rules29Supply(_ *Action, f *Facts, j *judgement) {
	if s.aliasRetargeted(f, j) {
		return
	}
	buildArgImage(f, j)
}

// aliasConfigs are the files that map an import's name to a package
// without being a manifest: TypeScript's and JavaScript's path maps and
// the bundlers' and transpilers' aliases.
func aliasConfig(p string) bool {
	base := strings.ToLower(path.Base(p))
	if strings.HasPrefix(base, "tsconfig") && strings.HasSuffix(base, ".json") || strings.HasPrefix(base, "jsconfig") && strings.HasSuffix(base, ".json") {
		return true
	}
	switch base {
	case ".babelrc", ".babelrc.json", ".swcrc":
		return true
	}
	stem, _, _ := strings.Cut(base, ".")
	switch stem {
	case "vite", "vitest", "webpack", "rollup", "babel", "esbuild", "next", "nuxt", "svelte", "astro", "metro", "craco", "rspack", "tsup", "quasar", "remix":
		ext := path.Ext(base)
		return strings.Contains(base, "config") && (ext == ".js" || ext == ".ts" || ext == ".mjs" || ext == ".cjs" || ext == ".mts" || ext == ".cts" || ext == ".json")
	}
	return false
}

// aliasRetargeted is `supply-chain:source` (escalate) for an edit of an
// alias configuration whose changed lines point a kept key at another
// package (manifest.AliasRetargeted with its entries). It reports whether
// it spoke.
func (s *Shield) aliasRetargeted(f *Facts, j *judgement) bool {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !aliasConfig(p) {
			continue
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue
		}
		cs := manifest.AliasRetargeted(clip(old, maxTextJudged), clip(t.Body, maxTextJudged), true)
		if len(cs) == 0 {
			continue
		}
		j.escalate("supply-chain:source", "the change points %s in %s at another package: %s", cs[0].Key, s.relPath(p), clipText(cs[0].Detail, 160))
		return true
	}
	return false
}

// imageBuilders are the programs whose build verb reads --build-arg.
var imageBuilders = setOf("docker", "podman", "nerdctl", "buildah", "finch", "img")

// buildArgImage is `supply-chain:base-image` (escalate): see rules29Supply.
func buildArgImage(f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if !imageBuilders[r.Name] || len(r.Argv) < 2 {
			continue
		}
		argv := r.Argv
		if len(argv) > 64 {
			argv = argv[:64]
		}
		build := false
		var args, own []string
		for k := 1; k < len(argv); k++ {
			a := argv[k]
			switch a {
			case "build", "bud":
				build = true
				continue
			}
			name, val, eq := strings.Cut(a, "=")
			if !eq && k+1 < len(argv) {
				val = argv[k+1]
			}
			switch name {
			case "--build-arg", "--build-context":
				if name == "--build-context" {
					_, v, _ := strings.Cut(val, "=")
					ref, ok := strings.CutPrefix(v, "docker-image://")
					if !ok {
						continue
					}
					val = "BASE_IMAGE=" + ref
				}
				args = append(args, val)
			case "-t", "--tag", "--cache-from", "--cache-to":
				own = append(own, val)
			}
		}
		if !build {
			continue
		}
		for _, a := range args {
			name, val, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			if why := floatingImage(name, val, own); why != "" {
				j.escalate("supply-chain:base-image", "%s builds with --build-arg %s=%s: %s, so the base image is swapped from the command line", r.Name, name, clipText(val, 80), why)
				return
			}
		}
	}
}

// imageArgNames are words in a build argument's name that say it holds
// an image.
var imageArgNames = []string{"IMAGE", "BASE", "FROM", "BUILDER", "RUNTIME", "REGISTRY", "DISTROLESS"}

// floatingImage says why an image reference given to a build argument is
// asked about (it floats, or comes from a registry the line does not
// otherwise use and no official one), or "".
func floatingImage(name, val string, own []string) string {
	val = strings.Trim(val, `"'`)
	if val == "" || strings.Contains(val, "://") || strings.Contains(val, "//") || strings.ContainsAny(val, " $`") || strings.Contains(val, "@sha256:") ||
		strings.HasPrefix(val, "/") || strings.HasPrefix(val, ".") {
		return ""
	}
	named := false
	for _, w := range imageArgNames {
		if strings.Contains(strings.ToUpper(name), w) {
			named = true
			break
		}
	}
	imageNamed := strings.Contains(strings.ToUpper(name), "IMAGE")
	repo, tag := val, ""
	if i := strings.LastIndexByte(val, ':'); i > strings.LastIndexByte(val, '/') {
		repo, tag = val[:i], val[i+1:]
	}
	host := ""
	if first, rest, ok := strings.Cut(repo, "/"); ok && rest != "" && (strings.ContainsAny(first, ".:") || first == "localhost") {
		host = strings.ToLower(first)
	}
	// An image reference: named so, or carrying a registry host, or a
	// repository with a tag that is not only a version.
	if !named && host == "" {
		return ""
	}
	if !imageShaped(repo) || tag != "" && !imageShaped(tag) {
		return ""
	}
	if tag == "" && (!named || host == "" && !imageNamed && !strings.Contains(repo, "/")) {
		return "" // registry.example.com/x as a plain value (a mirror setting), BASE=prod: not said to be an image
	}
	if tag == "" || strings.EqualFold(tag, "latest") || floatingTag(tag) {
		return "the image " + clipText(val, 80) + " floats (no tag or a moving one)"
	}
	for _, o := range own {
		oh := ""
		if first, rest, ok := strings.Cut(o, "/"); ok && rest != "" && strings.ContainsAny(first, ".:") {
			oh = strings.ToLower(first)
		}
		if host != "" && oh == host || host == "" && oh == "" && strings.Contains(repo, "/") && strings.HasPrefix(o, imageSeg(repo)+"/") {
			return ""
		}
	}
	full := repo
	if host == "" {
		full = "docker.io/" + repo
		if !strings.Contains(repo, "/") {
			return "" // an official image at a tag
		}
	}
	for _, o := range officialRegistries {
		if strings.HasPrefix(full+"/", o) || strings.HasPrefix(full, o) {
			return ""
		}
	}
	return "the image comes from " + clipText(repo, 60) + ", not an official registry nor one the line builds for"
}

// floatingTag reports a tag that names a moving line rather than a
// release (edge, nightly, main).
func floatingTag(t string) bool {
	switch strings.ToLower(t) {
	case "edge", "nightly", "main", "master", "dev", "develop", "head", "canary", "unstable", "current", "rolling":
		return true
	}
	return false
}

// imageShaped reports whether s reads as an image repository or tag:
// lower-case letters, digits and . _ - / : (and upper case in tags).
func imageShaped(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/' || c == ':') {
			return false
		}
	}
	return true
}

// imageSeg is a reference's first path segment.
func imageSeg(p string) string { s, _, _ := strings.Cut(p, "/"); return s }
