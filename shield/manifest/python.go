package manifest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// pyName normalizes a Python distribution name (PEP 503).
func pyName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == '.' {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// pyURLPrefix reports whether s starts as a URL, VCS reference or path.
func pyURLPrefix(s string) bool {
	for _, p := range []string{"git+", "hg+", "svn+", "bzr+", "http://", "https://", "file:", "ftp://", "./", "../", "/", "~", "git@", "ssh://"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return s == "." || s == ".."
}

func pyArchive(s string) bool {
	for _, x := range []string{".whl", ".tar.gz", ".zip", ".tgz", ".tar.bz2"} {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

func pyURLish(s string) bool { return pyURLPrefix(s) || pyArchive(s) }

// pyReq parses a PEP 508 requirement (or a bare URL or path): its
// normalized name, its URL when it names one, and its version part.
func pyReq(s string) (name, url, spec string, ok bool) {
	s = strings.TrimSpace(s)
	bare := func() (string, string, string, bool) {
		u := s
		if i := strings.Index(u, " ;"); i >= 0 {
			u = strings.TrimSpace(u[:i])
		}
		name := u
		if i := strings.Index(u, "#egg="); i >= 0 {
			egg := u[i+5:]
			if j := strings.IndexAny(egg, "&[ "); j >= 0 {
				egg = egg[:j]
			}
			name = pyName(egg)
		}
		return name, u, "", true
	}
	if pyURLPrefix(s) {
		return bare()
	}
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '_' || s[i] == '-') {
		i++
	}
	if i == 0 {
		return "", "", "", false
	}
	name = pyName(s[:i])
	rest := strings.TrimSpace(s[i:])
	if strings.HasPrefix(rest, "[") {
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return "", "", "", false
		}
		rest = strings.TrimSpace(rest[j+1:])
	}
	if strings.HasPrefix(rest, "@") {
		u := strings.TrimSpace(rest[1:])
		if j := strings.Index(u, " ;"); j >= 0 {
			u = strings.TrimSpace(u[:j])
		}
		if u == "" {
			return "", "", "", false
		}
		return name, u, "", true
	}
	if pyArchive(s) {
		return bare()
	}
	if j := strings.IndexByte(rest, ';'); j >= 0 {
		rest = strings.TrimSpace(rest[:j])
	}
	if rest != "" && !strings.ContainsAny(rest[:1], "=<>!~(*,") {
		return "", "", "", false
	}
	return name, "", rest, true
}

// tables returns an array of TOML tables (or one table) as a list.
func tables(v any) []map[string]any {
	switch x := v.(type) {
	case []map[string]any:
		return x
	case []any:
		var out []map[string]any
		for _, e := range x {
			if t := tbl(e); t != nil {
				out = append(out, t)
			}
		}
		return out
	case map[string]any:
		return []map[string]any{x}
	}
	return nil
}

// pyReqFact judges one PEP 508 requirement string under prefix.
func pyReqFact(fs *facts, prefix, s string, kind string) error {
	name, url, spec, ok := pyReq(s)
	if !ok {
		return fmt.Errorf("manifest: cannot parse requirement %q", clip(s))
	}
	k := prefix + " " + name
	switch {
	case url != "":
		fs.set(k, fact{kind: KindSource, val: s, cmp: url, flag: true})
	case kind != "":
		fs.set(k, fact{kind: kind, val: s, cmp: "registry", flag: true})
	default:
		fs.note(k, spec)
	}
	return nil
}

var pipSourceOpts = map[string]string{
	"-i": "--index-url", "--index-url": "--index-url", "--extra-index-url": "--extra-index-url",
	"-f": "--find-links", "--find-links": "--find-links", "--trusted-host": "--trusted-host",
}

// requirementsFacts reads a pip requirements or constraints file.
func requirementsFacts(data []byte, fs *facts) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	var joined []string
	var cur strings.Builder
	for _, l := range ls {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		joined = append(joined, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		joined = append(joined, cur.String())
	}
	for n, l := range joined {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if i := strings.Index(l, "\t#"); i >= 0 {
			l = l[:i]
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if t[0] == '-' {
			opt, val, _ := strings.Cut(t, "=")
			if o, v, ok := strings.Cut(t, " "); ok && (!strings.Contains(o, "=")) {
				opt, val = o, v
			}
			val = strings.TrimSpace(val)
			if long, ok := pipSourceOpts[opt]; ok {
				k := long
				if long != "--index-url" {
					k += " " + val
				}
				if long == "--index-url" && defaultPyIndex(val) {
					fs.note(k, val)
				} else {
					fs.add(KindSource, k, val)
				}
				continue
			}
			if opt == "-e" || opt == "--editable" {
				name, url, _, _ := pyReq(val)
				if url == "" {
					url = val
				}
				if local := !strings.Contains(val, ":") && !strings.HasPrefix(val, "git@"); local && !leaves(val) {
					fs.note("requirement "+name, val) // the project's own tree, as `pip install -e .`
				} else {
					fs.set("requirement "+name, fact{kind: KindSource, val: val, cmp: url, flag: true})
				}
			}
			continue // -r, -c, --hash alone, --pre, --no-binary, …: names only
		}
		req, opts, _ := strings.Cut(t, " --")
		var hashes []string
		for _, o := range strings.Fields(strings.ReplaceAll(" --"+opts, "=", " ")) {
			if strings.Contains(o, ":") && !strings.HasPrefix(o, "--") {
				hashes = append(hashes, o)
			}
		}
		if opts == "" {
			req = t
		}
		name, url, spec, ok := pyReq(req)
		if !ok {
			return fmt.Errorf("manifest: requirements: line %d: cannot parse %q", n+1, clip(t))
		}
		k := "requirement " + name
		if url != "" {
			fs.set(k, fact{kind: KindSource, val: req, cmp: url, flag: true})
		} else {
			fs.note(k, spec)
		}
		if len(hashes) > 0 && strings.HasPrefix(spec, "==") {
			fs.set("hash "+name+spec, fact{kind: KindChecksum, val: hashList(hashes), flag: true, changedOnly: true})
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// pytestPlugin is a plugin named on pytest's command line (-p NAME,
// not -p no:NAME, which turns one off).
var pytestPlugin = regexp.MustCompile(`(?:^|\s)-p\s*(?:[^n\s]|n[^o]|no[^:])`)

var pyWhere = []string{"git", "url", "path", "source", "file", "index", "hg", "svn", "bzr"}

func pyprojectFacts(data []byte, fs *facts) error {
	m, err := decodeTOML(data, "pyproject.toml")
	if err != nil {
		return err
	}
	reqs := func(prefix string, v any, kind string) error {
		l, _ := v.([]any)
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				continue // include-group tables
			}
			if err := pyReqFact(fs, prefix, s, kind); err != nil {
				return fmt.Errorf("manifest: pyproject.toml: %s: %w", prefix, err)
			}
		}
		return nil
	}
	p := tbl(m["project"])
	if err := reqs("project.dependencies", p["dependencies"], ""); err != nil {
		return err
	}
	for g, v := range tbl(p["optional-dependencies"]) {
		if err := reqs("project.optional-dependencies."+g, v, ""); err != nil {
			return err
		}
	}
	for g, v := range tbl(m["dependency-groups"]) {
		if err := reqs("dependency-groups."+g, v, ""); err != nil {
			return err
		}
	}
	if bs := tbl(m["build-system"]); bs != nil {
		if err := reqs("build-system.requires", bs["requires"], KindRuns); err != nil {
			return err
		}
		for _, k := range []string{"build-backend", "backend-path"} {
			if v, ok := bs[k]; ok {
				fs.add(KindRuns, "build-system."+k, str(v))
			}
		}
	}
	// rules 19: plugins the tools load on every run (pytest's pytest11
	// entry points, flake8's and pylint's), declared by the package:
	// code that runs at test and lint time.
	for _, g := range []string{"pytest11", "flake8.extension", "flake8.report", "pylint.plugins"} {
		for name, v := range tbl(tbl(p["entry-points"])[g]) {
			fs.add(KindRuns, "project.entry-points."+g+"."+name, str(v))
		}
	}
	tool := tbl(m["tool"])
	if o := tbl(tbl(tool["pytest"])["ini_options"]); o != nil {
		if v, ok := o["addopts"]; ok && pytestPlugin.MatchString(str(v)) {
			fs.add(KindRuns, "tool.pytest.ini_options.addopts", str(v))
		}
	}
	// poetry
	po := tbl(tool["poetry"])
	pdeps := func(prefix string, t map[string]any) {
		for name, v := range t {
			if l, ok := v.([]any); ok { // multiple constraints
				for i, x := range l {
					sourceFact(fs, fmt.Sprintf("%s.%s[%d]", prefix, name, i), x, pyWhere...)
				}
				continue
			}
			sourceFact(fs, prefix+"."+name, v, pyWhere...)
		}
	}
	pdeps("tool.poetry.dependencies", tbl(po["dependencies"]))
	pdeps("tool.poetry.dev-dependencies", tbl(po["dev-dependencies"]))
	for g, v := range tbl(po["group"]) {
		pdeps("tool.poetry.group."+g+".dependencies", tbl(tbl(v)["dependencies"]))
	}
	sources := func(head string, v any) {
		for _, t := range tables(v) {
			n := str(t["name"])
			if n == "" {
				n = str(t["url"])
			}
			u := str(t["url"])
			if defaultPyIndex(u) {
				fs.note(head+" "+n, u)
			} else {
				fs.add(KindSource, head+" "+n, u)
			}
			if t["verify_ssl"] == false {
				fs.add(KindChecksum, head+" "+n+" verify_ssl", "false")
			}
		}
	}
	sources("[[tool.poetry.source]]", po["source"])
	sources("[[tool.pdm.source]]", tbl(tool["pdm"])["source"])
	// uv
	uv := tbl(tool["uv"])
	uvIdx := func(prefix string, t map[string]any) {
		for _, k := range []string{"index-url", "extra-index-url", "find-links", "default-index", "allow-insecure-host", "index-strategy", "no-verify-hashes"} {
			v, ok := t[k]
			if !ok {
				continue
			}
			kind := KindSource
			if k == "allow-insecure-host" || k == "no-verify-hashes" {
				kind = KindChecksum
			}
			if s := str(v); k == "index-url" && defaultPyIndex(s) || k == "default-index" && defaultPyIndex(s) || k == "no-verify-hashes" && v == false {
				fs.note(prefix+k, s)
			} else {
				fs.add(kind, prefix+k, s)
			}
		}
	}
	uvIdx("tool.uv.", uv)
	uvIdx("tool.uv.pip.", tbl(uv["pip"]))
	sources("[[tool.uv.index]]", uv["index"])
	for name, v := range tbl(uv["sources"]) {
		if t := tbl(v); t != nil && len(t) == 1 && t["workspace"] == true {
			fs.note("tool.uv.sources."+name, "workspace")
			continue
		}
		if l, ok := v.([]any); ok {
			for i, x := range l {
				sourceFact(fs, fmt.Sprintf("tool.uv.sources.%s[%d]", name, i), x, pyWhere...)
			}
			continue
		}
		sourceFact(fs, "tool.uv.sources."+name, v, pyWhere...)
	}
	// rules 29: poetry's build script (poetry-core runs it at every
	// build of the package, sdists and installs from source included),
	// and pdm-backend's custom hook
	if b, ok := po["build"]; ok {
		if t := tbl(b); t != nil {
			if v, ok := t["script"]; ok {
				fs.add(KindRuns, "tool.poetry.build.script", str(v))
			}
		} else if s := str(b); s != "" {
			fs.add(KindRuns, "tool.poetry.build", s)
		}
	}
	if v, ok := tbl(tbl(tool["pdm"])["build"])["custom-hook"]; ok {
		fs.add(KindRuns, "tool.pdm.build.custom-hook", str(v))
	}
	// setuptools / hatch build hooks run at build
	if st := tbl(tool["setuptools"]); st != nil {
		if v, ok := st["cmdclass"]; ok {
			fs.add(KindRuns, "tool.setuptools.cmdclass", str(v))
		}
	}
	var hooks func(prefix string, t map[string]any, depth int)
	hooks = func(prefix string, t map[string]any, depth int) {
		if depth > 6 {
			return
		}
		for k, v := range t {
			if k == "hooks" {
				for h, hv := range tbl(v) {
					fs.add(KindRuns, prefix+"hooks."+h, str(hv))
				}
				continue
			}
			if c := tbl(v); c != nil {
				hooks(prefix+k+".", c, depth+1)
			}
		}
	}
	hooks("tool.hatch.", tbl(tool["hatch"]), 0)
	if pdm := tbl(tool["pdm"]); pdm != nil {
		if b := tbl(pdm["build"]); b != nil {
			if v, ok := b["run-setuptools"]; ok && v == true {
				fs.add(KindRuns, "tool.pdm.build.run-setuptools", "true")
			}
		}
		if s := tbl(pdm["scripts"]); s != nil {
			for _, k := range []string{"post_install", "pre_install", "post_lock", "pre_lock", "pre_build", "post_build"} {
				if v, ok := s[k]; ok {
					fs.add(KindRuns, "tool.pdm.scripts."+k, str(v))
				}
			}
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

func pipfileFacts(data []byte, fs *facts) error {
	m, err := decodeTOML(data, "Pipfile")
	if err != nil {
		return err
	}
	for _, t := range tables(m["source"]) {
		n, u := str(t["name"]), str(t["url"])
		if defaultPyIndex(u) {
			fs.note("[[source]] "+n, u)
		} else {
			fs.add(KindSource, "[[source]] "+n, u)
		}
		if t["verify_ssl"] == false {
			fs.add(KindChecksum, "[[source]] "+n+" verify_ssl", "false")
		}
	}
	for sec, v := range m {
		if sec == "source" || sec == "requires" || sec == "scripts" || sec == "pipenv" {
			continue
		}
		for name, d := range tbl(v) {
			sourceFact(fs, sec+"."+name, d, pyWhere...)
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// diffPipfileLock judges Pipfile.lock: its sources, and its packages as a
// lockfile (hashes, git/path/file origins, index names).
func diffPipfileLock(before, after []byte) ([]Change, error) {
	type pkg struct {
		Version  string   `json:"version"`
		Hashes   []string `json:"hashes"`
		Index    string   `json:"index"`
		Git      string   `json:"git"`
		Ref      string   `json:"ref"`
		Path     string   `json:"path"`
		File     string   `json:"file"`
		Editable bool     `json:"editable"`
	}
	type lock struct {
		Meta struct {
			Sources []struct {
				Name      string `json:"name"`
				URL       string `json:"url"`
				VerifySSL *bool  `json:"verify_ssl"`
			} `json:"sources"`
		} `json:"_meta"`
		Default map[string]pkg `json:"default"`
		Develop map[string]pkg `json:"develop"`
	}
	parse := func(data []byte, fs *facts, m map[string]lockEntry) error {
		var l lock
		if err := json.Unmarshal(data, &l); err != nil {
			return fmt.Errorf("manifest: Pipfile.lock: %w", err)
		}
		for _, s := range l.Meta.Sources {
			if defaultPyIndex(s.URL) {
				fs.note("_meta.sources "+s.Name, s.URL)
			} else {
				fs.add(KindSource, "_meta.sources "+s.Name, s.URL)
			}
			if s.VerifySSL != nil && !*s.VerifySSL {
				fs.add(KindChecksum, "_meta.sources "+s.Name+" verify_ssl", "false")
			}
		}
		for sec, ps := range map[string]map[string]pkg{"default": l.Default, "develop": l.Develop} {
			for name, p := range ps {
				e := lockEntry{version: p.Version, integrity: hashList(p.Hashes)}
				switch {
				case p.Git != "":
					e.origin, e.show = "git "+p.Git, p.Git+"@"+p.Ref
				case p.Path != "":
					e.origin, e.show = localOrigin("path", p.Path), p.Path
				case p.File != "":
					e.origin, e.show = urlOrigin(p.File), p.File
				case p.Index != "" && p.Index != "pypi":
					e.origin, e.show = "index "+p.Index, "index "+p.Index
				}
				if err := addEntry(m, sec+"."+name, e); err != nil {
					return err
				}
			}
		}
		if fs.over {
			return errTooMany
		}
		return nil
	}
	bf, af := newFacts(), newFacts()
	bm, am := map[string]lockEntry{}, map[string]lockEntry{}
	if before != nil {
		if err := parse(before, bf, bm); err != nil {
			return nil, err
		}
	}
	if err := parse(after, af, am); err != nil {
		return nil, err
	}
	cs := factChanges(bf, af)
	return append(cs, lockChanges(bm, am, map[string]bool{})...), nil
}

func poetryLock(data []byte, m map[string]lockEntry) error {
	var lf struct {
		Package []struct {
			Name    string `toml:"name"`
			Version string `toml:"version"`
			Files   []struct {
				Hash string `toml:"hash"`
			} `toml:"files"`
			Source struct {
				Type      string `toml:"type"`
				URL       string `toml:"url"`
				Reference string `toml:"reference"`
			} `toml:"source"`
		} `toml:"package"`
	}
	if _, err := toml.Decode(string(data), &lf); err != nil {
		return fmt.Errorf("manifest: poetry.lock: %w", err)
	}
	for _, p := range lf.Package {
		var hs []string
		for _, f := range p.Files {
			hs = append(hs, f.Hash)
		}
		e := lockEntry{version: p.Version, integrity: hashList(hs)}
		if p.Source.Type != "" {
			e.origin, e.show = p.Source.Type+" "+p.Source.URL, p.Source.Type+" "+p.Source.URL
			if p.Source.Type == "directory" || p.Source.Type == "file" {
				e.origin = localOrigin(p.Source.Type, p.Source.URL)
			}
		}
		if err := addEntry(m, pyName(p.Name)+"@"+p.Version, e); err != nil {
			return err
		}
	}
	return nil
}

func uvLock(data []byte, m map[string]lockEntry) error {
	var lf struct {
		Package []struct {
			Name    string            `toml:"name"`
			Version string            `toml:"version"`
			Source  map[string]string `toml:"source"`
			Sdist   struct {
				Hash string `toml:"hash"`
			} `toml:"sdist"`
			Wheels []struct {
				Hash string `toml:"hash"`
			} `toml:"wheels"`
		} `toml:"package"`
	}
	if _, err := toml.Decode(string(data), &lf); err != nil {
		return fmt.Errorf("manifest: uv.lock: %w", err)
	}
	for _, p := range lf.Package {
		hs := []string{p.Sdist.Hash}
		for _, w := range p.Wheels {
			hs = append(hs, w.Hash)
		}
		e := lockEntry{version: p.Version, integrity: strings.TrimSpace(hashList(hs))}
		for _, k := range sortedKeys(p.Source) {
			v := p.Source[k]
			if k == "subdirectory" {
				continue
			}
			if k == "git" || k == "url" {
				if i := strings.IndexByte(v, '#'); i >= 0 {
					v = v[:i]
				}
			}
			e.origin, e.show = k+":"+v, k+":"+p.Source[k]
			if k == "editable" || k == "virtual" || k == "directory" || k == "path" {
				e.origin = localOrigin(k+":", v)
			}
			break
		}
		if e.origin == "registry:https://pypi.org/simple" {
			e.origin = "" // shown as default
		}
		if err := addEntry(m, pyName(p.Name)+"@"+p.Version, e); err != nil {
			return err
		}
	}
	return nil
}

// setupCfgFacts reads setup.cfg.
func setupCfgFacts(data []byte, fs *facts) error {
	var perr error
	err := iniLines(data, "setup.cfg", func(sec, k, v string) {
		k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
		switch {
		case sec == "options" && (k == "install_requires" || k == "setup_requires" || k == "tests_require"),
			strings.HasPrefix(sec, "options.extras_require"):
			for _, r := range strings.Split(v, "\n") {
				if r = strings.TrimSpace(r); r == "" || r[0] == '#' {
					continue
				}
				if err := pyReqFact(fs, sec+"."+k, r, ""); err != nil && perr == nil {
					perr = fmt.Errorf("manifest: setup.cfg: %w", err)
				}
			}
		case k == "dependency_links":
			if v != "" {
				fs.add(KindSource, sec+"."+k+" "+v, v)
			}
		case sec == "easy_install" && (k == "index_url" || k == "find_links" || k == "allow_hosts"):
			fs.add(KindSource, sec+"."+k, v)
		case k == "cmdclass" || sec == "options.cmdclass":
			if v != "" {
				fs.add(KindRuns, sec+"."+k+" "+v, v)
			}
		}
	}, false)
	if err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// pipConfFacts reads pip.conf / pip.ini.
func pipConfFacts(data []byte, fs *facts) error {
	return iniLines(data, "pip.conf", func(sec, k, v string) {
		k = strings.ReplaceAll(strings.ToLower(k), "_", "-")
		switch k {
		case "index-url", "index":
			if defaultPyIndex(v) {
				fs.note(sec+"."+k, v)
			} else {
				fs.add(KindSource, sec+"."+k, v)
			}
		case "extra-index-url", "find-links", "trusted-host":
			for _, x := range strings.Fields(v) {
				fs.add(KindSource, sec+"."+k+" "+x, x)
			}
		case "cert", "client-cert":
			fs.add(KindChecksum, sec+"."+k, v)
		}
	}, false)
}

// pypircFacts reads .pypirc: where packages are published.
func pypircFacts(data []byte, fs *facts) error {
	return iniLines(data, ".pypirc", func(sec, k, v string) {
		if strings.ToLower(k) == "repository" {
			if trimURL(v) == "https://upload.pypi.org/legacy" {
				fs.note(sec+".repository", v)
			} else {
				fs.add(KindSource, sec+".repository", v)
			}
		}
	}, false)
}

// factChanges diffs two fact sets already extracted.
func factChanges(b, a *facts) []Change {
	out, _ := diffFacts(b, a)
	return out
}
