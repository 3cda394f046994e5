package manifest

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Rules 29 (session 30, supply chain): changes that moved where code
// comes from without naming a new host, and so passed the readers above.
// Each is judged by comparing the two sides, never by the words used:
//
//   - forkedVersions: a dependency's version gains a vendor or fork
//     suffix while its release numbers stay (1.79 → 1.79-velatap,
//     <version>3.8.2</version> → 3.8.2-tmta1): a rebuild that only some
//     other repository serves. Standard qualifiers (-rc.1, -beta, -M1,
//     .Final, -jre, -android, -RELEASE, -SNAPSHOT, .post1, +build
//     metadata where the ecosystem ignores it) and real bumps pass.
//   - AliasRetargeted: an import map or alias keeps its key but points at
//     another package (deno.json "mqtt": "npm:mqtt@5" → "npm:mqtt-pro@5",
//     jsr: and CDN URLs alike; tsconfig paths and bundler aliases through
//     shield's rule): the code importing the key now gets another package.
//   - droppedPins: a dependency loses its explicit source, index or
//     registry (poetry source =, a [tool.uv.sources] index, Pipfile
//     index =, Cargo registry =, an .npmrc @scope:registry line) while the
//     file still names it: an internal name may now resolve from the
//     public index (dependency confusion).
//   - submodulesMoved: a .gitmodules submodule's branch added or changed,
//     or its url moved to another host or owner.
//
// Every reader is bounded: at most maxPairLines changed lines a side, each
// at most maxPairLine bytes, are paired.

const (
	maxPairLines = 200
	maxPairLine  = 400
)

// rules29Changes are the changes the rules-29 readers find between the
// two sides of the file p of format f (before nil: a new file, nothing
// to compare).
func rules29Changes(p, f string, before, after []byte) []Change {
	if before == nil || after == nil {
		return nil
	}
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	var out []Change
	if versionedFormat(f, base) {
		out = append(out, forkedVersions(f, string(before), string(after))...)
	}
	if f == ShapeFormat {
		out = append(out, AliasRetargeted(string(before), string(after), false)...)
	}
	out = append(out, droppedPins(f, before, after)...)
	if base == ".gitmodules" {
		out = append(out, submodulesMoved(string(before), string(after))...)
	}
	return out
}

// versionedFormat reports whether a file of format f named base lists
// dependencies by version (not a lockfile, not code, not an image list).
func versionedFormat(f, base string) bool {
	switch f {
	case "package.json", "Cargo.toml", "pyproject.toml", "requirements", "Pipfile", "go.mod", "setup.cfg", "Gemfile":
		return true
	case ShapeFormat:
		switch base {
		case "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties",
			"libs.versions.toml", "build.sbt", "plugins.sbt", "Directory.Packages.props", "packages.config",
			"composer.json", "pubspec.yaml", "mix.exs", "Package.swift", "Podfile", "conanfile.txt", "vcpkg.json",
			"deno.json", "deno.jsonc", "import_map.json", "Project.toml", "DESCRIPTION", "environment.yml", "environment.yaml":
			return true
		}
		for _, s := range []string{".gradle", ".gradle.kts", ".versions.toml", ".sbt", ".csproj", ".fsproj", ".vbproj", ".props", ".nuspec"} {
			if strings.HasSuffix(base, s) {
				return true
			}
		}
	}
	return false
}

// changedLines returns the trimmed lines of a side that the other side
// lacks (comments and blanks dropped), in order, at most maxPairLines,
// each at most maxPairLine bytes (longer ones are skipped).
func changedLines(side, other string) []string {
	have := map[string]int{}
	n := 0
	for l := range strings.SplitSeq(other, "\n") {
		if n++; n > maxLines {
			break
		}
		have[strings.TrimSpace(l)]++
	}
	var out []string
	n = 0
	for l := range strings.SplitSeq(side, "\n") {
		if n++; n > maxLines || len(out) >= maxPairLines {
			break
		}
		t := strings.TrimSpace(l)
		if t == "" || len(t) > maxPairLine || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") {
			continue
		}
		if have[t] > 0 {
			have[t]--
			continue
		}
		out = append(out, t)
	}
	return out
}

// versionTokens splits a line at every byte that cannot be part of a
// version or a name (quotes, =, :, <, >, ^, ~, @, spaces, brackets).
func versionTokens(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || r == '+')
	})
}

// releaseCore splits a version token into its release numbers (an
// optional v, then digits and dots, at least one digit) and the rest;
// ok false when the token does not begin with a release number.
func releaseCore(t string) (core, rest string, ok bool) {
	i := 0
	if i < len(t) && (t[i] == 'v' || t[i] == 'V') {
		i++
	}
	digits := false
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		digits = digits || t[i] != '.'
		i++
	}
	if !digits {
		return "", "", false
	}
	core, rest = strings.TrimRight(t[:i], "."), t[i:]
	if strings.HasSuffix(t[:i], ".") {
		rest = "." + rest // 4.1.100.Final: the dot belongs to the qualifier
	}
	return core, rest, true
}

// standardQualifiers are the words versions carry that the ecosystems'
// own registries publish: pre-releases, release markers, runtime and
// platform variants, build numbers (digits after them are allowed).
var standardQualifiers = map[string]bool{
	"rc": true, "cr": true, "beta": true, "alpha": true, "a": true, "b": true, "m": true, "milestone": true, "pre": true,
	"preview": true, "dev": true, "post": true, "snapshot": true, "final": true, "ga": true, "release": true, "sp": true,
	"jre": true, "jdk": true, "java": true, "android": true, "native": true, "mt": true, "jvm": true, "js": true, "lts": true,
	"stable": true, "nightly": true, "canary": true, "next": true, "experimental": true, "incubating": true, "build": true,
	"r": true, "v": true, "p": true, "hotfix": true, "incompatible": true, "jakarta": true, "javax": true,
	"cu": true, "cpu": true, "rocm": true, "xpu": true, "linux": true, "x86_64": true, "amd64": true, "arm64": true, "aarch64": true,
	"win": true, "windows": true, "macos": true, "darwin": true, "osx": true, "musl": true, "gnu": true, "universal": true,
	"ce": true, "ee": true, "oss": true, "bin": true, "all": true, "debug": true, "kotlin": true, "scala": true, "rev": true,
}

// nonStandard returns the part of a version's qualifier that no
// ecosystem's registry publishes as a standard one (the vendor or fork
// suffix), or "". python says + begins a local version (PEP 440: served
// only by another index), which the others ignore as build metadata.
func nonStandard(rest string, python bool) string {
	if rest == "" {
		return ""
	}
	if i := strings.IndexByte(rest, '+'); i >= 0 && !python {
		rest = rest[:i] // build metadata: ignored when resolving
	}
	for part := range strings.FieldsFuncSeq(strings.ToLower(rest), func(r rune) bool { return r == '-' || r == '.' || r == '_' || r == '+' }) {
		word := strings.TrimRight(part, "0123456789")
		if word == "" || standardQualifiers[word] {
			continue
		}
		if len(part) >= 7 && hexWord(part) {
			continue // a commit hash (Go pseudo-versions, snapshot builds)
		}
		return part
	}
	return ""
}

func hexWord(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f':
		default:
			return false
		}
	}
	return digit
}

// forkedVersions pairs each changed line of before with one of after
// that differs in exactly one token, where the old token is a release
// (with a standard qualifier or none) and the new one the same release
// numbers with a suffix no standard qualifier explains.
func forkedVersions(f, before, after string) []Change {
	python := f == "pyproject.toml" || f == "requirements" || f == "Pipfile" || f == "setup.cfg"
	minus, plus := changedLines(before, after), changedLines(after, before)
	if len(minus) == 0 || len(plus) == 0 {
		return nil
	}
	plusToks := make([][]string, len(plus))
	for i, l := range plus {
		plusToks[i] = versionTokens(l)
	}
	var out []Change
	for _, m := range minus {
		mt := versionTokens(m)
		for k, pt := range plusToks {
			if len(pt) != len(mt) {
				continue
			}
			diff := -1
			for i := range mt {
				if mt[i] != pt[i] {
					if diff >= 0 {
						diff = -2
						break
					}
					diff = i
				}
			}
			if diff < 0 {
				continue
			}
			oc, or, ok1 := releaseCore(mt[diff])
			nc, nr, ok2 := releaseCore(pt[diff])
			if !ok1 || !ok2 || oc != nc || nonStandard(or, python) != "" {
				continue
			}
			suffix := nonStandard(nr, python)
			if suffix == "" {
				continue
			}
			key := "version " + mt[diff]
			if diff > 0 && !strings.EqualFold(mt[diff-1], "version") {
				key = mt[diff-1] + " " + key
			}
			out = append(out, Change{Kind: KindSource, Key: key,
				Detail: fmt.Sprintf("now %s (was %s): the same release with the suffix %q no standard qualifier explains, a rebuild only another repository serves (%s)", clip(pt[diff]), clip(mt[diff]), clip(suffix), clip(plus[k]))})
			break
		}
		if len(out) >= maxChanges {
			break
		}
	}
	return out
}

// aliasSpecPrefixes begin a package specifier in an import map's value:
// the name follows (with an optional @scope/), then @version or a path.
var aliasSpecPrefixes = []string{"npm:", "jsr:", "https://esm.sh/", "https://cdn.skypack.dev/", "https://unpkg.com/",
	"https://cdn.jsdelivr.net/npm/", "https://deno.land/x/", "https://ga.jspm.io/npm:", "https://esm.run/"}

// specPackage returns the text of l before a package specifier, the
// specifier's kind and the package it names; ok false when l holds none.
func specPackage(l string) (lead, kind, pkg string, ok bool) {
	best := -1
	for _, p := range aliasSpecPrefixes {
		if i := strings.Index(l, p); i >= 0 && (best < 0 || i < best) {
			best, kind = i, p
		}
	}
	if best < 0 {
		return "", "", "", false
	}
	rest := l[best+len(kind):]
	rest = strings.TrimPrefix(rest, "/")
	return l[:best], kind, packageName(rest), true
}

// packageName reads the package a specifier begins with: @scope/name
// or name, up to @version, a path, a quote or the end.
func packageName(s string) string {
	end := func(c byte, scoped bool, slash bool) bool {
		return c == '@' || c == '"' || c == '\'' || c == ' ' || c == ',' || c == ']' || c == '}' || c == ')' || (c == '/' && (!scoped || slash))
	}
	scoped := strings.HasPrefix(s, "@")
	i, slash := 0, false
	if scoped {
		i = 1
	}
	for i < len(s) && i < 214 {
		c := s[i]
		if end(c, scoped, slash) {
			break
		}
		if c == '/' {
			slash = true
		}
		i++
	}
	return strings.ToLower(s[:i])
}

// AliasRetargeted reports the import-map entries and aliases whose key a
// change keeps while pointing it at another package: a changed line of
// before and one of after that begin alike up to a package specifier
// (npm:, jsr:, a CDN's URL) naming different packages, or a line
// `KEY: VALUE` (JSON, JS, TS) whose value names a package (bare, or
// beneath node_modules/) other than the one it named, when entries is
// set (a tsconfig's paths, a bundler's aliases: shield's rule) and the
// entry named the package its key names. A new version of the same
// package, and an alias to a path of the workspace, pass.
func AliasRetargeted(before, after string, entries bool) []Change {
	minus, plus := changedLines(before, after), changedLines(after, before)
	if len(minus) == 0 || len(plus) == 0 {
		return nil
	}
	var out []Change
	for _, m := range minus {
		mlead, mkind, mpkg, mok := specPackage(m)
		mkey, mval, mkv := aliasPair(m)
		for _, p := range plus {
			if mok {
				if lead, kind, pkg, ok := specPackage(p); ok && lead == mlead && kind == mkind && pkg != mpkg && pkg != "" && !samePackage(mpkg, pkg) {
					out = append(out, Change{Kind: KindSource, Key: "import " + strings.Trim(strings.TrimSpace(strings.TrimRight(mlead, `:="' `)), `"'`),
						Detail: fmt.Sprintf("now %s%s (was %s%s): the name the code imports is served by another package", kind, clip(pkg), kind, clip(mpkg))})
					break
				}
				continue
			}
			if !mkv || !entries || aliasTarget(mval) != strings.ToLower(mkey) {
				break
			}
			if key, val, ok := aliasPair(p); ok && key == mkey && val != mval {
				np := aliasTarget(val)
				if np == "" || np == aliasTarget(mval) || samePackage(aliasTarget(mval), np) {
					continue
				}
				out = append(out, Change{Kind: KindSource, Key: "alias " + clip(key),
					Detail: fmt.Sprintf("now %s (was %s): the name the code imports is served by another package", clip(val), clip(mval))})
				break
			}
		}
		if len(out) >= maxChanges {
			break
		}
	}
	return out
}

// samePackage reports whether now is was under another build's name the
// ecosystems publish alongside it (lodash → lodash-es) or a types
// package of it.
func samePackage(was, now string) bool {
	return now == was+"-es" || was == now+"-es" || now == "@types/"+was
}

// aliasPair reads a line `KEY: VALUE` or `"KEY": ["VALUE"]` (a JSON or
// JS object's entry) whose value is a single string literal.
func aliasPair(l string) (key, val string, ok bool) {
	l = strings.TrimRight(strings.TrimSpace(l), ",")
	i := strings.IndexByte(l, ':')
	if i <= 0 {
		return "", "", false
	}
	key = strings.TrimSpace(l[:i])
	if len(key) >= 2 && (key[0] == '"' || key[0] == '\'') && key[len(key)-1] == key[0] {
		key = key[1 : len(key)-1]
	}
	if key == "" || strings.ContainsAny(key, " *()") || strings.HasPrefix(key, "@/") || strings.HasPrefix(key, "~") || strings.HasPrefix(key, ".") || strings.HasPrefix(key, "#") {
		return "", "", false
	}
	v := strings.TrimSpace(l[i+1:])
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, "["), "]"))
	if len(v) < 2 || (v[0] != '"' && v[0] != '\'') || v[len(v)-1] != v[0] || strings.ContainsAny(v[1:len(v)-1], `"'`) {
		return "", "", false
	}
	return key, v[1 : len(v)-1], true
}

// aliasTarget is the package an alias's value names: the segment after
// node_modules/, or a bare specifier (not a path, URL or variable).
func aliasTarget(v string) string {
	if i := strings.LastIndex(v, "node_modules/"); i >= 0 {
		return packageName(v[i+len("node_modules/"):])
	}
	if v == "" || strings.ContainsAny(v[:1], "./~$<{#") || strings.HasPrefix(v, "@/") || strings.Contains(v, "://") || strings.Contains(v, "*") || strings.Contains(v, " ") {
		return ""
	}
	name := packageName(v)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '@' || c == '/') {
			return ""
		}
	}
	if !strings.ContainsAny(name, "-_@/") && strings.Contains(name, ".") {
		return "" // a file name (index.js), not a package
	}
	return name
}

// pinSources returns, for the formats that pin a dependency to a named
// source, each pinned dependency's source (dependency key → source), and
// the names the side still lists as dependencies (pinned or not).
func pinSources(f string, data []byte) (pins map[string]string, names map[string]bool) {
	pins, names = map[string]string{}, map[string]bool{}
	add := func(name string, v any, keys ...string) {
		if len(names) >= maxEntries {
			return
		}
		n := strings.ToLower(name)
		names[n] = true
		t := tbl(v)
		if l, ok := v.([]any); ok && len(l) > 0 {
			t = tbl(l[0])
		}
		for _, k := range keys {
			if s, ok := t[k].(string); ok && s != "" && !(k == "index" && s == "pypi") {
				pins[n] = k + " " + s
				return
			}
		}
	}
	switch f {
	case "pyproject.toml":
		m, err := decodeTOML(data, f)
		if err != nil {
			return nil, nil
		}
		tool := tbl(m["tool"])
		po := tbl(tool["poetry"])
		groups := []map[string]any{tbl(po["dependencies"]), tbl(po["dev-dependencies"])}
		for _, g := range tbl(po["group"]) {
			groups = append(groups, tbl(tbl(g)["dependencies"]))
		}
		for _, g := range groups {
			for name, v := range g {
				add(name, v, "source")
			}
		}
		for name, v := range tbl(tbl(tool["uv"])["sources"]) {
			add(name, v, "index")
		}
		p := tbl(m["project"])
		reqs := []any{p["dependencies"]}
		for _, v := range tbl(p["optional-dependencies"]) {
			reqs = append(reqs, v)
		}
		for _, v := range tbl(m["dependency-groups"]) {
			reqs = append(reqs, v)
		}
		for _, r := range reqs {
			l, _ := r.([]any)
			for _, x := range l {
				if s, ok := x.(string); ok && len(names) < maxEntries {
					names[strings.ToLower(pyReqName(s))] = true
				}
			}
		}
	case "Pipfile":
		m, err := decodeTOML(data, f)
		if err != nil {
			return nil, nil
		}
		for sec, v := range m {
			if sec == "source" || sec == "requires" || sec == "scripts" || sec == "pipenv" {
				continue
			}
			for name, d := range tbl(v) {
				add(name, d, "index")
			}
		}
	case "Cargo.toml":
		m, err := decodeTOML(data, f)
		if err != nil {
			return nil, nil
		}
		for _, t := range cargoDepTables {
			for name, v := range tbl(m[t]) {
				add(name, v, "registry", "registry-index")
			}
		}
		for _, t := range cargoDepTables {
			for name, v := range tbl(tbl(m["workspace"])[t]) {
				add(name, v, "registry", "registry-index")
			}
		}
	case "npmrc":
		_ = iniLines(data, ".npmrc", func(_, k, v string) {
			if strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry") && len(pins) < maxEntries {
				scope := strings.TrimSuffix(k, ":registry")
				names[scope] = true
				pins[scope] = "registry " + v
			}
		}, false)
	}
	return pins, names
}

// pyReqName is the project name a PEP 508 requirement begins with.
func pyReqName(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return s[:i]
		}
	}
	return s
}

// droppedPins reports each dependency pinned to a source on before that
// after still names without that pin: it now resolves from the default
// index or registry. An .npmrc scope's registry removed leaves every
// package of the scope to the public registry.
func droppedPins(f string, before, after []byte) []Change {
	switch f {
	case "pyproject.toml", "Pipfile", "Cargo.toml", "npmrc":
	default:
		return nil
	}
	bp, _ := pinSources(f, before)
	if len(bp) == 0 {
		return nil
	}
	ap, an := pinSources(f, after)
	if an == nil {
		return nil // after does not parse: the reader above says so
	}
	keys := make([]string, 0, len(bp))
	for k := range bp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		if _, still := ap[k]; still || (f != "npmrc" && !an[k]) {
			continue // still pinned (another pin is a source change), or no longer a dependency
		}
		what := "a dependency"
		if f == "npmrc" {
			what = "the scope " + k + "'s packages"
		}
		out = append(out, Change{Kind: KindSource, Key: clip(k) + " pin",
			Detail: fmt.Sprintf("now unpinned (was %s): %s may now resolve from the public registry or index (dependency confusion)", clip(bp[k]), what)})
		if len(out) >= maxChanges {
			break
		}
	}
	return out
}

// submodules reads .gitmodules: each submodule's url and branch.
func submodules(text string) map[string][2]string {
	out := map[string][2]string{}
	sec := ""
	n := 0
	for l := range strings.SplitSeq(text, "\n") {
		if n++; n > maxLines || len(out) >= maxEntries {
			break
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			sec = ""
			if name, ok := strings.CutPrefix(t, "[submodule"); ok {
				sec = strings.Trim(strings.TrimSpace(strings.TrimSuffix(name, "]")), `"`)
				out[sec] = out[sec]
			}
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if sec == "" || !ok {
			continue
		}
		e := out[sec]
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "url":
			e[0] = strings.TrimSpace(v)
		case "branch":
			e[1] = strings.TrimSpace(v)
		}
		out[sec] = e
	}
	return out
}

// urlOwner is a git URL's host and owner (github.com/acme), whatever the
// transport (https://, ssh://, git@host:owner/x), or the URL for a
// relative one.
func urlOwner(u string) string {
	u = strings.ToLower(strings.TrimSuffix(u, ".git"))
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if at := strings.IndexByte(u, '@'); at >= 0 && at < strings.IndexByte(u+"/", '/') {
			u = u[at+1:]
		}
	} else if at := strings.IndexByte(u, '@'); at >= 0 && strings.Contains(u[at:], ":") {
		u = strings.Replace(u[at+1:], ":", "/", 1)
	} else {
		return u
	}
	host, rest, _ := strings.Cut(u, "/")
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	owner, _, _ := strings.Cut(rest, "/")
	return host + "/" + owner
}

// numberedAlike reports whether two refs differ only in their numbers
// (v4.2.0 → v4.3.0, release/2026.2 → release/2026.3): the same line of
// releases, moved to another one of its releases.
func numberedAlike(a, b string) bool {
	skel := func(s string) (string, bool) {
		var out strings.Builder
		digit, in := false, false
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= '0' && c <= '9' {
				digit = true
				if !in {
					out.WriteByte('#')
				}
				in = true
				continue
			}
			in = false
			out.WriteByte(s[i])
		}
		return out.String(), digit
	}
	sa, da := skel(a)
	sb, db := skel(b)
	return da && db && sa == sb
}

// submodulesMoved reports each submodule (present on both sides) whose
// branch was added or changed (to another line than a release of the
// same numbering), or whose url moved to another host or owner (https
// to ssh of the same repository passes).
func submodulesMoved(before, after string) []Change {
	b, a := submodules(before), submodules(after)
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Change
	for _, n := range names {
		was, ok := b[n]
		now := a[n]
		if !ok {
			continue
		}
		if now[1] != "" && now[1] != was[1] && !numberedAlike(was[1], now[1]) {
			d := "now branch = " + clip(now[1]) + " (was "
			if was[1] == "" {
				d += "the recorded commit)"
			} else {
				d += clip(was[1]) + ")"
			}
			out = append(out, Change{Kind: KindSource, Key: "submodule " + clip(n) + " branch", Detail: d + ": what the submodule tracks moved"})
		}
		if was[0] != "" && now[0] != "" && urlOwner(was[0]) != urlOwner(now[0]) {
			out = append(out, Change{Kind: KindSource, Key: "submodule " + clip(n) + " url",
				Detail: "now " + clip(now[0]) + " (was " + clip(was[0]) + "): the submodule's code comes from another host or owner"})
		}
		if len(out) >= maxChanges {
			break
		}
	}
	return out
}
