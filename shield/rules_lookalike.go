package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// Look-alike and known-bad packages (`supply-chain:lookalike`,
// `supply-chain:known-bad`, escalate): a dependency added, by an install
// command or a manifest written, whose name is a small edit away from a
// popular package of its ecosystem (a typosquat: raect-dom, requets), a
// separator or digit-for-letter variant of one, or holds characters
// outside ASCII (a homoglyph); or a name and version on the short list of
// known-compromised releases. The lists are small on purpose and
// documented in docs/shield-rules.md: they catch the everyday squat of
// the packages most depended on, not every squat.

// knownBad are releases known to have been compromised or published as
// malware: ecosystem -> name -> versions ("" for every version).
var knownBad = map[string]map[string][]string{
	"npm": {"event-stream": {"3.3.6"}, "flatmap-stream": {""}, "ua-parser-js": {"0.7.29", "0.8.0", "1.0.0"}, "node-ipc": {"10.1.1", "10.1.2", "10.1.3"},
		"crossenv": {""}, "cross-env.js": {""}, "coa": {"2.0.3", "2.0.4", "2.1.1", "2.1.3", "3.0.1", "3.1.3"}, "rc": {"1.2.9", "1.3.9", "2.3.9"},
		"colors": {"1.4.1", "1.4.2", "1.4.44-liberty-2"}, "faker": {"6.6.6"}, "eslint-scope": {"3.7.2"}, "peacenotwar": {""},
		"discord.dll": {""}, "jquery.js": {""}, "mongose": {""}, "babelcli": {""}, "nodesass": {""}, "http-proxy.js": {""}},
	"pypi": {"python3-dateutil": {""}, "jeIlyfish": {""}, "colourama": {""}, "python-sqlite": {""}, "ctx": {"0.2.2", "0.2.6"},
		"urlib3": {""}, "request": {""}, "djanga": {""}, "setup-tools": {""}, "acqusition": {""}, "apidev-coop": {""}},
	"crates": {"rustdecimal": {""}, "faster_log": {""}, "async_println": {""}},
	"rubygems": {"rest-client": {"1.6.10", "1.6.11", "1.6.12", "1.6.13"}, "strong_password": {"0.0.7"}, "bootstrap-sass": {"3.2.0.3"},
		"atlas-client": {""}},
	"go": {"github.com/boltdb-go/bolt": {""}},
}

// pkgRef is a dependency a command or a manifest adds.
type pkgRef struct{ eco, name, version, by string }

var (
	pkgJSONDepRe = mustRx(`"((?:@[\w.-]+/)?[^"\s/@]+)"\s*:\s*"([~^>=<]*\s*[\w.*+-]*)"`)
	reqLineRe    = mustRx(`(?m)^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:(?:==|>=|~=|<=|!=|>|<)\s*([\w.*+-]+))?`)
	cargoDepRe   = mustRx(`(?m)^\s*([A-Za-z0-9_-]+)\s*=\s*(?:"([^"]*)"|\{[^}\n]*?version\s*=\s*"([^"]*)")`)
	gemLineRe    = mustRx(`(?m)^\s*gem\s+["']([\w.-]+)["'](?:\s*,\s*["'][~>=<\s]*([\w.]+)["'])?`)
	goRequireRe  = mustRx(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}/[\w./-]+)\s+(v[\w.+-]+)`)
)

// installedPackages are the packages f's commands and manifest writes add.
func installedPackages(f *Facts) []pkgRef {
	var out []pkgRef
	for i := range f.Runs {
		out = append(out, installArgs(f.Runs[i].Argv)...)
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		out = append(out, manifestPackages(path.Base(p), clip(t.Body, maxTextJudged))...)
	}
	return out
}

// manifestPackages are the dependencies a manifest's text (the whole
// file or a fragment an edit puts in) names, for the manifests read by
// name: package.json, requirements files, Cargo.toml, Gemfile, go.mod,
// and (rules 16) Python's build and task files (a quoted requirement
// with a version: pyproject.toml, setup.py, setup.cfg, noxfile.py,
// tox.ini), Pipfile, MSBuild project files' PackageReference and
// composer.json.
func manifestPackages(base, body string) []pkgRef {
	var out []pkgRef
	switch {
	case base == "package.json" || base == "deno.json" || base == "deno.jsonc":
		for _, m := range pkgJSONDepRe.FindAllStringSubmatch(body, 200) {
			if m[1] != "name" && m[1] != "version" && !strings.Contains(m[2], " ") {
				out = append(out, pkgRef{"npm", m[1], strings.TrimLeft(m[2], "~^=<> "), base})
			}
		}
	case (strings.HasPrefix(base, "requirements") || strings.HasPrefix(base, "constraints")) && (strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".in")):
		for _, m := range reqLineRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"pypi", m[1], m[2], base})
		}
	case base == "pyproject.toml" || base == "setup.py" || base == "setup.cfg" || base == "noxfile.py" || base == "tox.ini" || base == "environment.yml":
		for _, m := range pyReqStrRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"pypi", m[1], m[2], base})
		}
	case base == "Pipfile":
		for _, m := range pipfileDepRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"pypi", m[1], m[2], base})
		}
	case base == "Cargo.toml":
		for _, m := range cargoDepRe.FindAllStringSubmatch(body, 200) {
			switch m[1] {
			case "name", "version", "edition", "authors", "license", "description", "resolver", "members", "path", "rust-version", "readme", "repository", "homepage", "build", "publish", "default", "features":
				continue
			}
			out = append(out, pkgRef{"crates", m[1], m[2] + m[3], base})
		}
	case base == "Gemfile":
		for _, m := range gemLineRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"rubygems", m[1], m[2], base})
		}
	case base == "go.mod":
		for _, m := range goRequireRe.FindAllStringSubmatch(body, 400) {
			out = append(out, pkgRef{"go", m[1], m[2], base})
		}
	case strings.HasSuffix(base, "proj") || base == "Directory.Packages.props" || base == "packages.config":
		for _, m := range nugetRefRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"nuget", m[1] + m[3], m[2], base})
		}
	case base == "composer.json":
		for _, m := range composerDepRe.FindAllStringSubmatch(body, 200) {
			out = append(out, pkgRef{"packagist", m[1], m[2], base})
		}
	}
	return out
}

var (
	// a quoted requirement with a version ("requests==2.32.3",
	// 'dbt-postgres>=1.8'): Python build and task files quote many other
	// strings, so one without a version is not read as a package
	pyReqStrRe    = mustRx(`["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]"']*\])?\s*(?:==|>=|~=|<=|!=|===|>|<)\s*([\w.*+-]+)`)
	pipfileDepRe  = mustRx(`(?m)^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(?:"([^"]*)"|\{)`)
	nugetRefRe    = mustRx(`<Package(?:Reference|Version)\s+(?:Include|Update)\s*=\s*"([\w.-]+)"(?:\s+Version\s*=\s*"([^"]*)")?|<package\s+id\s*=\s*"([\w.-]+)"`)
	composerDepRe = mustRx(`"([a-z0-9][\w.-]*/[a-z0-9][\w.-]*)"\s*:\s*"([^"]*)"`)
)

// installArgs are the packages an install command names. Options
// before the verb are read per program (pnpm -C web add x, yarn
// workspace web add x, npm -w web install x), and so are the options
// after it that take a value (pnpm's -w takes none: pnpm add -w lodahs
// names lodahs).
func installArgs(argv []string) []pkgRef {
	if len(argv) < 3 {
		return nil
	}
	name := path.Base(argv[0])
	args := argv[1:]
	if name == "npm" || name == "pnpm" || name == "yarn" || name == "bun" {
		args = manifest.SkipNPMGlobals(name, args)
		if name == "yarn" && len(args) >= 2 && args[0] == "workspace" {
			args = args[2:] // yarn workspace web add x
		}
	}
	if len(args) < 2 {
		return nil
	}
	sub, rest := args[0], args[1:]
	eco := ""
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		if sub == "add" || sub == "install" || sub == "i" || sub == "in" || sub == "ins" {
			eco = "npm"
		}
	case "pip", "pip3", "pipx":
		if sub == "install" {
			eco = "pypi"
		}
	case "uv":
		if sub == "add" {
			eco = "pypi"
		} else if (sub == "pip" || sub == "tool") && len(rest) > 0 && rest[0] == "install" {
			eco, rest = "pypi", rest[1:]
		}
	case "poetry", "pdm", "pipenv":
		if sub == "add" || sub == "install" {
			eco = "pypi"
		}
	case "cargo":
		if sub == "add" || sub == "install" || sub == "binstall" {
			eco = "crates"
		}
	case "go":
		if sub == "get" || sub == "install" {
			eco = "go"
		}
	case "gem":
		if sub == "install" {
			eco = "rubygems"
		}
	case "bundle":
		if sub == "add" {
			eco = "rubygems"
		}
	case "composer":
		if sub == "require" {
			eco = "packagist"
		}
	case "dart", "flutter":
		if sub == "pub" && len(rest) > 1 && rest[0] == "add" {
			eco, rest = "pub", rest[1:]
		}
	case "deno":
		if sub == "add" || sub == "install" {
			eco = "deno"
		}
	case "dotnet":
		// dotnet add [PROJECT] package NAME
		if sub == "add" {
			for k, a := range rest {
				if a == "package" && k+1 < len(rest) {
					eco, rest = "nuget", rest[k+1:]
					break
				}
			}
		}
	case "nuget":
		if sub == "install" {
			eco = "nuget"
		}
	}
	if eco == "" {
		return nil
	}
	var out []pkgRef
	skip := false
	for k, a := range rest {
		if skip {
			skip = false
			continue
		}
		if (a == "-v" || a == "--version") && (eco == "rubygems" || eco == "nuget") && len(out) > 0 && k+1 < len(rest) {
			out[len(out)-1].version = rest[k+1] // gem install NAME -v VERSION
		}
		if strings.HasPrefix(a, "-") {
			skip = manifest.InstallTakesValue(name, a)
			continue
		}
		if eco == "nuget" && len(out) == 1 {
			break // dotnet add package NAME: one package
		}
		e, n, v, ok := registryName(eco, a)
		if !ok {
			continue // a path, a URL or an archive: not a registry name
		}
		out = append(out, pkgRef{e, n, v, name + " " + sub})
	}
	return out
}

// registryName reads one install argument as a registry package: its
// ecosystem (deno's jsr: and npm: specifiers name theirs), name and
// version, or false for a path, a URL or an archive.
func registryName(eco, a string) (string, string, string, bool) {
	if strings.Contains(a, "://") || strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") ||
		strings.HasSuffix(a, ".whl") || strings.HasSuffix(a, ".tgz") || strings.HasSuffix(a, ".tar.gz") || strings.HasSuffix(a, ".gem") || strings.HasSuffix(a, ".nupkg") {
		return "", "", "", false
	}
	if eco == "deno" {
		switch {
		case strings.HasPrefix(a, "jsr:"):
			eco, a = "jsr", a[4:]
		case strings.HasPrefix(a, "npm:"):
			eco, a = "npm", a[4:]
		case strings.HasPrefix(a, "@"):
			eco = "jsr"
		default:
			return "", "", "", false
		}
	}
	if eco == "packagist" {
		n, v, _ := strings.Cut(a, ":")
		return eco, n, v, strings.Count(n, "/") == 1
	}
	slashes := strings.Count(a, "/")
	switch {
	case eco == "go":
	case (eco == "npm" || eco == "jsr") && strings.HasPrefix(a, "@"):
		if slashes != 1 {
			return "", "", "", false
		}
	case slashes > 0 || strings.Contains(a, "\\"):
		return "", "", "", false // a path or a git/github shorthand: judged as a source
	}
	n, v := splitPkgVersion(eco, a)
	return eco, n, v, n != ""
}

// splitPkgVersion splits "name@1.2.3", "name==1.2", "name@v1" into name
// and version.
func splitPkgVersion(eco, a string) (string, string) {
	switch eco {
	case "pypi":
		if k := strings.IndexAny(a, "=<>~!["); k > 0 {
			return a[:k], strings.TrimLeft(a[k:], "=<>~!")
		}
	case "npm", "jsr", "go", "crates":
		if k := strings.LastIndexByte(a, '@'); k > 0 {
			return a[:k], a[k+1:]
		}
	}
	return a, ""
}

// lookalikePackages is `supply-chain:lookalike` and
// `supply-chain:known-bad` (escalate).
func (s *Shield) lookalikePackages(_ *Action, f *Facts, j *judgement) {
	for _, p := range installedPackages(f) {
		if why := knownBadRelease(p); why != "" {
			j.escalate("supply-chain:known-bad", "%s adds %s, %s", p.by, p.name, why)
			return
		}
		if of := lookalikeOf(p.eco, p.name); of == homoglyphName {
			j.escalate("supply-chain:lookalike", "%s adds %s, a %s package name with characters outside ASCII (a homoglyph of a name it looks like?)", p.by, p.name, p.eco)
			return
		} else if of != "" {
			j.escalate("supply-chain:lookalike", "%s adds %s, which looks like the popular %s package %s (a typosquat?)", p.by, p.name, p.eco, of)
			return
		}
	}
}

// knownBadRelease says why p is a known-compromised release, or "".
func knownBadRelease(p pkgRef) string {
	vs, ok := knownBad[p.eco][p.name]
	if !ok {
		vs, ok = knownBad[p.eco][strings.ToLower(p.name)]
	}
	if !ok {
		return ""
	}
	for _, v := range vs {
		if v == "" {
			return "a package published as malware"
		}
		if p.version == v {
			return "version " + v + ", a release known to have been compromised"
		}
	}
	return ""
}

// homoglyphName is what lookalikeOf returns for a name with characters
// outside ASCII.
const homoglyphName = "\x00homoglyph"

// lookalikeOf returns the popular package name looks like, homoglyphName,
// or "".
func lookalikeOf(eco, name string) string {
	for _, r := range name {
		if r > 0x7e {
			return homoglyphName
		}
	}
	list := popular[eco]
	low := strings.ToLower(name)
	for _, q := range list {
		if q == low || eco == "pypi" && pyNorm(q) == pyNorm(low) {
			return "" // the package itself
		}
	}
	if eco == "go" {
		return goLookalike(low, list)
	}
	key := squatKey(low)
	keys := popularKeys[eco]
	for i, q := range list {
		if scopedLookalike(low, q) {
			return q
		}
		if keys[i] == key {
			return q // a separator or digit-for-letter variant
		}
		d := editDistance(low, q, 2)
		if d == 1 && len(q) >= 5 || d == 2 && len(q) >= 9 {
			return q
		}
		// rules 17: a popular name with a squatter's suffix
		// (requests-toolbelt-ng, lodash-fixed, axios-pro)
		if rest, ok := strings.CutPrefix(low, q); ok && len(q) >= 4 && squatSuffix[strings.TrimLeft(rest, "-_.")] && rest != strings.TrimLeft(rest, "-_.") {
			return q
		}
	}
	return ""
}

// squatSuffix are the words a squatter appends to a popular name to pass
// as its new, fixed or faster edition.
var squatSuffix = map[string]bool{"ng": true, "pro": true, "plus": true, "fast": true, "faster": true, "lite": true, "fixed": true,
	"patched": true, "secure": true, "fork": true, "new": true, "v2": true, "next-gen": true, "nextgen": true, "official": true,
	"latest": true, "updated": true, "improved": true, "ultra": true}

// goLookalike compares a Go module path by its repository (host, owner,
// name: github.com/go-chii/chi/v5 is github.com/go-chii/chi): one edit
// from a popular one's, or the same name under an owner two edits away.
// A popular module's own packages and major versions are the module.
func goLookalike(p string, list []string) string {
	repo := goRepo(p)
	for _, q := range list {
		if repo == q || strings.HasPrefix(p, q+"/") {
			return ""
		}
	}
	for _, q := range list {
		if len(repo) >= 12 && editDistance(repo, q, 2) == 1 {
			return q
		}
		a, b := strings.Split(repo, "/"), strings.Split(q, "/")
		if len(a) == 3 && len(b) == 3 && a[0] == b[0] && a[2] == b[2] && len(b[1]) >= 5 && editDistance(a[1], b[1], 2) <= 2 {
			return q
		}
	}
	return ""
}

// goRepo is a module path's repository: its first three elements on a
// forge (github.com/owner/name), the path without a major version
// suffix elsewhere.
func goRepo(p string) string {
	parts := strings.Split(p, "/")
	switch parts[0] {
	case "github.com", "gitlab.com", "bitbucket.org", "codeberg.org":
		if len(parts) > 3 {
			parts = parts[:3]
		}
	default:
		if n := len(parts); n > 1 && len(parts[n-1]) >= 2 && parts[n-1][0] == 'v' && strings.Trim(parts[n-1][1:], "0123456789") == "" {
			parts = parts[:n-1]
		}
	}
	return strings.Join(parts, "/")
}

// scopedLookalike reports whether a scoped name (@std-lib/path) is a
// popular scoped package's name under a scope that imitates its scope:
// the same package name, and a scope that begins with the popular one or
// is one or two edits from it (the package name's own squats are edits
// of the whole name, judged after).
func scopedLookalike(n, q string) bool {
	if !strings.HasPrefix(n, "@") || !strings.HasPrefix(q, "@") {
		return false
	}
	ns, nn, ok1 := strings.Cut(n[1:], "/")
	qs, qn, ok2 := strings.Cut(q[1:], "/")
	if !ok1 || !ok2 || nn != qn || ns == qs {
		return false
	}
	return strings.HasPrefix(ns, qs) && len(ns)-len(qs) <= 4 || len(qs) >= 4 && editDistance(ns, qs, 2) <= 2
}

// pyNorm is PyPI's name normalization (PEP 503): -, _ and . are one.
func pyNorm(n string) string { return pyFold.Replace(strings.ToLower(n)) }

var pyFold = strings.NewReplacer("_", "-", ".", "-")

// squatFold folds what a squat varies without an edit a reader sees:
// separators, and digits for the letters they resemble.
var squatFold = strings.NewReplacer("-", "", "_", "", ".", "", "0", "o", "1", "l", "3", "e", "5", "s", "rn", "m", "vv", "w")

// squatKey is n folded by squatFold.
func squatKey(n string) string { return squatFold.Replace(n) }

// popularKeys are the popular names' squat keys, by ecosystem, in the
// lists' order (computed once: lookalikeOf reads them per package).
var popularKeys = func() map[string][]string {
	out := map[string][]string{}
	for eco, list := range popular {
		ks := make([]string, len(list))
		for i, q := range list {
			ks[i] = squatKey(q)
		}
		out[eco] = ks
	}
	return out
}()

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions, adjacent transpositions), or
// max+1 once it exceeds max.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return max + 1
	}
	var rows [3][65]int
	for jx := 0; jx <= len(b); jx++ {
		rows[0][jx] = jx
	}
	for i := 1; i <= len(a); i++ {
		prev2, prev, cur := &rows[(i+1)%3], &rows[(i+2)%3], &rows[i%3] // rows i-2, i-1, i
		cur[0] = i
		best := i
		for jx := 1; jx <= len(b); jx++ {
			cost := 1
			if a[i-1] == b[jx-1] {
				cost = 0
			}
			v := min(prev[jx]+1, cur[jx-1]+1, prev[jx-1]+cost)
			if i > 1 && jx > 1 && a[i-1] == b[jx-2] && a[i-2] == b[jx-1] {
				v = min(v, prev2[jx-2]+1)
			}
			cur[jx] = v
			best = min(best, v)
		}
		if best > max {
			return max + 1
		}
	}
	return rows[len(a)%3][len(b)]
}
