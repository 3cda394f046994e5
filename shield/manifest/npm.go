package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// npmLifecycle are the scripts npm, yarn, pnpm or bun run by themselves on
// install, pack or publish.
var npmLifecycle = set("preinstall", "install", "postinstall", "prepare", "prepublish",
	"prepublishOnly", "prepack", "postpack", "preprepare", "postprepare", "preuninstall",
	"uninstall", "postuninstall", "dependencies", "pnpm:devPreinstall", "publish", "postpublish", "preversion", "version", "postversion")

var npmDepSections = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}

// npmRegistrySpec reports whether a dependency spec resolves from the
// configured registry (a range, a version, a tag, a workspace or catalog
// reference), not from git, a URL, a path, an alias or another protocol.
func npmRegistrySpec(spec string) bool {
	s := strings.TrimSpace(spec)
	if s == "" || s == "*" {
		return true
	}
	if strings.HasPrefix(s, "workspace:") || strings.HasPrefix(s, "catalog:") || strings.HasPrefix(s, "$") {
		return true
	}
	if strings.Contains(s, ":") || strings.Contains(s, "/") || strings.HasPrefix(s, ".") ||
		strings.HasSuffix(s, ".tgz") || strings.HasSuffix(s, ".tar.gz") || strings.HasSuffix(s, ".tar") ||
		strings.Contains(s, "@") || strings.HasPrefix(s, "~/") {
		return false
	}
	return true
}

// npmScalar shows a JSON value as a string.
func npmScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// npmDepFact judges one dependency-like entry.
func npmDepFact(fs *facts, k, spec string) {
	switch {
	case npmRegistrySpec(spec):
		fs.note(k, spec)
	case strings.HasPrefix(spec, "file:") || strings.HasPrefix(spec, "link:"):
		fs.set(k, fact{kind: KindSource, val: spec, flag: true, local: spec[5:]})
	default:
		fs.add(KindSource, k, spec)
	}
}

// npmWalkOverrides flattens nested overrides/resolutions.
func npmWalkOverrides(fs *facts, prefix string, v any, depth int) {
	if depth > maxDepth {
		fs.over = true
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			npmWalkOverrides(fs, prefix+"."+k, c, depth+1)
		}
	default:
		npmDepFact(fs, prefix, npmScalar(v))
	}
}

func packageJSONFacts(data []byte, fs *facts) error {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("manifest: package.json: %w", err)
	}
	if m == nil {
		return fmt.Errorf("manifest: package.json: not an object")
	}
	if s, ok := m["scripts"].(map[string]any); ok {
		for name, v := range s {
			if npmLifecycle[name] {
				fs.add(KindRuns, "scripts."+name, npmScalar(v))
			}
		}
	}
	for _, sec := range npmDepSections {
		if d, ok := m[sec].(map[string]any); ok {
			for name, v := range d {
				npmDepFact(fs, sec+"."+name, npmScalar(v))
			}
		}
	}
	for _, sec := range []string{"overrides", "resolutions"} {
		if v, ok := m[sec]; ok {
			npmWalkOverrides(fs, sec, v, 0)
		}
	}
	if p, ok := m["pnpm"].(map[string]any); ok {
		if v, ok := p["overrides"]; ok {
			npmWalkOverrides(fs, "pnpm.overrides", v, 0)
		}
		buildsAllowed(fs, "pnpm.onlyBuiltDependencies", p["onlyBuiltDependencies"])
	}
	// rules 17: packages allowed to run their install scripts (bun runs
	// none but these; pnpm's list the same): a name added runs its code
	// at the next install
	buildsAllowed(fs, "trustedDependencies", m["trustedDependencies"])
	for _, sec := range []string{"publishConfig", "config"} {
		if c, ok := m[sec].(map[string]any); ok {
			for k, v := range c {
				if k == "registry" || strings.HasSuffix(k, ":registry") {
					if s := npmScalar(v); defaultNpmRegistry(s) {
						fs.note(sec+"."+k, s)
					} else {
						fs.add(KindSource, sec+"."+k, s)
					}
				}
			}
		}
	}
	if v, ok := m["packageManager"]; ok {
		if s := npmScalar(v); strings.Contains(s, "://") || strings.Contains(s, "file:") {
			fs.add(KindRuns, "packageManager", s)
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// buildsAllowed records each package a list allows to run install
// scripts (KindRuns: a name added is code that runs at install).
func buildsAllowed(fs *facts, key string, v any) {
	list, _ := v.([]any)
	for i, x := range list {
		if i >= maxEntries {
			fs.over = true
			return
		}
		if name, ok := x.(string); ok {
			fs.add(KindRuns, key+"."+name, "allowed to run its install scripts")
		}
	}
}

// npmLock reads package-lock.json / npm-shrinkwrap.json: v2/v3 "packages",
// else the v1 "dependencies" tree.
func npmLock(data []byte, m map[string]lockEntry) error {
	type pkg struct {
		Version          string          `json:"version"`
		Resolved         string          `json:"resolved"`
		Integrity        string          `json:"integrity"`
		HasInstallScript bool            `json:"hasInstallScript"`
		Link             bool            `json:"link"`
		Dependencies     json.RawMessage `json:"dependencies"`
	}
	var lf struct {
		Packages     map[string]pkg  `json:"packages"`
		Dependencies json.RawMessage `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &lf); err != nil {
		return fmt.Errorf("manifest: package-lock.json: %w", err)
	}
	entry := func(p pkg) lockEntry {
		e := lockEntry{version: p.Version, show: p.Resolved, integrity: p.Integrity, runs: p.HasInstallScript}
		switch {
		case p.Link:
			e.origin, e.show = "", "link "+p.Resolved
		case p.Resolved != "":
			e.origin = urlOrigin(p.Resolved)
		}
		return e
	}
	if lf.Packages != nil {
		for k, p := range lf.Packages {
			if k == "" {
				continue
			}
			if err := addEntry(m, k, entry(p)); err != nil {
				return err
			}
		}
		return nil
	}
	var walk func(prefix string, raw json.RawMessage, depth int) error
	walk = func(prefix string, raw json.RawMessage, depth int) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		if depth > maxDepth {
			return errTooMany
		}
		var deps map[string]pkg
		if err := json.Unmarshal(raw, &deps); err != nil {
			// a "requires"-style map of strings is not a tree
			return nil
		}
		for name, p := range deps {
			k := prefix + "node_modules/" + name
			if err := addEntry(m, k, entry(p)); err != nil {
				return err
			}
			if err := walk(k+"/", p.Dependencies, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk("", lf.Dependencies, 0)
}

// yarnLock reads yarn.lock, v1 (its own text format) or berry (YAML-like),
// with a bounded line scanner: entries are unindented "spec, spec:" lines
// and their fields are the lines indented below them.
func yarnLock(data []byte, m map[string]lockEntry) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	var name string
	var cur *lockEntry
	flush := func() error {
		if cur == nil {
			return nil
		}
		k := name + "@" + cur.version
		e := *cur
		cur = nil
		return addEntry(m, k, e)
	}
	for i, l := range ls {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			if err := flush(); err != nil {
				return err
			}
			if !strings.HasSuffix(t, ":") {
				return fmt.Errorf("manifest: yarn.lock: line %d: expected an entry", i+1)
			}
			h := strings.TrimSuffix(t, ":")
			if h == "__metadata" {
				continue
			}
			first, _, _ := strings.Cut(h, ",")
			first = strings.Trim(strings.TrimSpace(first), `"`)
			at := strings.IndexByte(first[min(1, len(first)):], '@') + 1
			if at <= 0 {
				return fmt.Errorf("manifest: yarn.lock: line %d: entry without a range", i+1)
			}
			name = first[:at]
			cur = &lockEntry{}
			continue
		}
		if cur == nil {
			if name == "" && !strings.HasPrefix(t, "version") && !strings.HasPrefix(t, "cacheKey") {
				return fmt.Errorf("manifest: yarn.lock: line %d: field outside an entry", i+1)
			}
			continue
		}
		if strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t\t") {
			continue // a field of a field (dependencies)
		}
		k, v, ok := strings.Cut(t, " ")
		if !ok {
			continue
		}
		k = strings.TrimSuffix(k, ":")
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch k {
		case "version":
			cur.version = v
		case "resolved":
			cur.show, cur.origin = v, urlOrigin(v)
		case "integrity", "checksum":
			cur.integrity = v
		case "resolution":
			cur.show = v
			r := v
			if j := strings.LastIndex(r, "@"); j > 0 {
				// name@protocol:… ; keep the protocol and, for URLs, where
				r = r[strings.Index(r[1:], "@")+2:]
			}
			switch {
			case strings.HasPrefix(r, "npm:"):
				cur.origin = "npm:"
			case strings.HasPrefix(r, "workspace:"):
				cur.origin = "workspace:"
			case strings.HasPrefix(r, "patch:") && strings.Contains(r, "@npm%3A") && strings.Contains(r, "#~builtin<"):
				cur.origin = "npm:" // yarn's own compatibility patches
			default:
				cur.origin = urlOrigin(r)
			}
		}
	}
	return flush()
}

// pnpmLock reads pnpm-lock.yaml's packages.
func pnpmLock(data []byte, m map[string]lockEntry) error {
	var lf struct {
		Packages map[string]struct {
			Resolution struct {
				Integrity string `yaml:"integrity"`
				Tarball   string `yaml:"tarball"`
				Repo      string `yaml:"repo"`
				Commit    string `yaml:"commit"`
				Directory string `yaml:"directory"`
				Type      string `yaml:"type"`
			} `yaml:"resolution"`
			Version       string `yaml:"version"`
			RequiresBuild bool   `yaml:"requiresBuild"`
		} `yaml:"packages"`
	}
	if err := yaml.Unmarshal(data, &lf); err != nil {
		return fmt.Errorf("manifest: pnpm-lock.yaml: %w", err)
	}
	for k, p := range lf.Packages {
		r := p.Resolution
		e := lockEntry{version: p.Version, integrity: r.Integrity, runs: p.RequiresBuild}
		if e.version == "" {
			e.version = k
		}
		switch {
		case r.Tarball != "":
			e.show, e.origin = r.Tarball, urlOrigin(r.Tarball)
			if strings.HasPrefix(r.Tarball, "file:") {
				e.origin = r.Tarball
			}
		case r.Repo != "":
			e.show, e.origin = r.Repo+"#"+r.Commit, "git "+r.Repo
		case r.Directory != "":
			e.show, e.origin = r.Directory, "directory "+r.Directory
		}
		if err := addEntry(m, k, e); err != nil {
			return err
		}
	}
	return nil
}

// npmKey judges one .npmrc / npm config key.
func npmKey(k, v string) (fact, bool) {
	k = strings.ToLower(strings.TrimSpace(k))
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	switch {
	case strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry"):
		// A scope's registry moved anywhere else, the public registry
		// included (a private scope resolved from the public registry is
		// dependency confusion); a new scope on the public registry is
		// no change.
		return fact{kind: KindSource, val: v, flag: true, changedOnly: defaultNpmRegistry(v)}, true
	case k == "registry" || strings.HasSuffix(k, ":registry"):
		return fact{kind: KindSource, val: v, flag: !defaultNpmRegistry(v)}, true
	case k == "replace-registry-host":
		return fact{kind: KindSource, val: v, flag: v != "" && v != "npmjs"}, true
	case k == "strict-ssl" || k == "strict_ssl":
		return fact{kind: KindChecksum, val: v, flag: isFalse(v)}, true
	case k == "ca" || k == "cafile" || k == "ca[]":
		return fact{kind: KindChecksum, val: v, flag: v != "" && v != "null"}, true
	case k == "script-shell" || k == "node-options" || k == "git" || k == "onload-script" || k == "shell" && false:
		return fact{kind: KindRuns, val: v, flag: v != ""}, true
	case k == "ignore-scripts":
		return fact{val: v}, true
	}
	return fact{}, false
}

// iniLines walks INI-style lines ("[section]", "key = value", comments
// with # or ;), calling fn with the section and the key and value.
func iniLines(data []byte, format string, fn func(sec, k, v string), strict bool) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	sec := ""
	lastK := ""
	for i, l := range ls {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			if !strings.HasSuffix(t, "]") {
				return fmt.Errorf("manifest: %s: line %d: unclosed section", format, i+1)
			}
			sec = strings.TrimSpace(t[1 : len(t)-1])
			lastK = ""
			continue
		}
		if (l[0] == ' ' || l[0] == '\t') && lastK != "" {
			fn(sec, lastK, t) // continuation: one more value of the key
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok && !strict {
			k, v, ok = strings.Cut(t, ":")
		}
		if !ok {
			return fmt.Errorf("manifest: %s: line %d: expected key = value", format, i+1)
		}
		lastK = strings.TrimSpace(k)
		fn(sec, lastK, strings.TrimSpace(v))
	}
	return nil
}

func npmrcFacts(data []byte, fs *facts) error {
	return iniLines(data, ".npmrc", func(sec, k, v string) {
		if f, ok := npmKey(k, v); ok {
			fs.set(k, f)
		}
	}, true)
}

// yarnrcV1Facts reads .yarnrc (yarn 1): `key "value"` lines.
func yarnrcV1Facts(data []byte, fs *facts) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	for i, l := range ls {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(t, " ")
		if !ok {
			return fmt.Errorf("manifest: .yarnrc: line %d: expected key value", i+1)
		}
		k = strings.Trim(k, `"`)
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch {
		case k == "yarn-path":
			fs.add(KindRuns, k, v)
		default:
			if f, ok := npmKey(k, v); ok {
				fs.set(k, f)
			}
		}
	}
	return nil
}

// yarnrcFacts reads .yarnrc.yml (yarn berry).
func yarnrcFacts(data []byte, fs *facts) error {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("manifest: .yarnrc.yml: %w", err)
	}
	str := func(v any) string { return fmt.Sprint(v) }
	for k, v := range m {
		switch k {
		case "npmRegistryServer", "npmPublishRegistry":
			if s := str(v); defaultNpmRegistry(s) {
				fs.note(k, s)
			} else {
				fs.add(KindSource, k, s)
			}
		case "npmScopes":
			if sc, ok := v.(map[string]any); ok {
				for scope, c := range sc {
					if cm, ok := c.(map[string]any); ok {
						for _, kk := range []string{"npmRegistryServer", "npmPublishRegistry"} {
							if s, ok := cm[kk]; ok && !defaultNpmRegistry(str(s)) {
								fs.add(KindSource, "npmScopes."+scope+"."+kk, str(s))
							}
						}
					}
				}
			}
		case "unsafeHttpWhitelist", "caFilePath", "httpsCaFilePath":
			fs.add(KindChecksum, k, yamlShow(v))
		case "enableStrictSsl", "enableImmutableCache":
			if isFalse(str(v)) && k == "enableStrictSsl" {
				fs.add(KindChecksum, k, str(v))
			}
		case "checksumBehavior":
			if s := str(v); s == "ignore" || s == "update" {
				fs.add(KindChecksum, k, s)
			}
		case "yarnPath":
			fs.add(KindRuns, k, str(v))
		case "plugins":
			if l, ok := v.([]any); ok {
				for _, p := range l {
					name := yamlShow(p)
					if pm, ok := p.(map[string]any); ok {
						name = str(pm["path"])
					}
					fs.add(KindRuns, "plugins "+name, yamlShow(p))
				}
			}
		case "injectEnvironmentFiles":
			fs.add(KindRuns, k, yamlShow(v))
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// yamlShow shows a decoded YAML/TOML value in one line.
func yamlShow(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
