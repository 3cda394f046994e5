package manifest

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

func decodeTOML(data []byte, format string) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, fmt.Errorf("manifest: %s: %w", format, err)
	}
	return m, nil
}

func tbl(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return yamlShow(v)
}

// sourceFact judges a dependency written as a version string or a table:
// the keys in where name its source; the others (version, rev, branch,
// features) do not redirect it.
func sourceFact(fs *facts, k string, v any, where ...string) {
	t := tbl(v)
	if t == nil {
		fs.note(k, str(v))
		return
	}
	var cmp []string
	for _, w := range where {
		if x, ok := t[w]; ok && !(w == "index" && x == "pypi") {
			cmp = append(cmp, w+"="+str(x))
		}
	}
	if len(cmp) == 0 {
		fs.note(k, str(v))
		return
	}
	f := fact{kind: KindSource, val: str(v), cmp: strings.Join(cmp, " "), flag: true}
	if p, ok := t["path"].(string); ok && len(cmp) == 1 {
		f.local = p
	}
	fs.set(k, f)
}

var cargoDepTables = []string{"dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies"}
var cargoWhere = []string{"git", "path", "registry", "registry-index"}

func cargoTomlFacts(data []byte, fs *facts) error {
	m, err := decodeTOML(data, "Cargo.toml")
	if err != nil {
		return err
	}
	deps := func(prefix string, t map[string]any) {
		for _, sec := range cargoDepTables {
			for name, v := range tbl(t[sec]) {
				sourceFact(fs, prefix+sec+"."+name, v, cargoWhere...)
			}
		}
	}
	deps("", m)
	for tgt, v := range tbl(m["target"]) {
		deps("target."+tgt+".", tbl(v))
	}
	if w := tbl(m["workspace"]); w != nil {
		for name, v := range tbl(w["dependencies"]) {
			sourceFact(fs, "workspace.dependencies."+name, v, cargoWhere...)
		}
	}
	for src, v := range tbl(m["patch"]) {
		for name, d := range tbl(v) {
			fs.add(KindSource, "patch."+src+"."+name, str(d))
		}
	}
	for spec, d := range tbl(m["replace"]) {
		fs.add(KindSource, "replace."+spec, str(d))
	}
	if p := tbl(m["package"]); p != nil {
		if b, ok := p["build"]; ok && b != false {
			fs.add(KindRuns, "package.build", str(b))
		}
	}
	if l := tbl(m["lib"]); l != nil {
		for _, k := range []string{"proc-macro", "proc_macro"} {
			if l[k] == true {
				fs.add(KindRuns, "lib.proc-macro", "true")
			}
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

func cargoLock(data []byte, m map[string]lockEntry) error {
	var lf struct {
		Package []struct {
			Name     string `toml:"name"`
			Version  string `toml:"version"`
			Source   string `toml:"source"`
			Checksum string `toml:"checksum"`
		} `toml:"package"`
	}
	if _, err := toml.Decode(string(data), &lf); err != nil {
		return fmt.Errorf("manifest: Cargo.lock: %w", err)
	}
	for _, p := range lf.Package {
		e := lockEntry{version: p.Version, show: p.Source, integrity: p.Checksum, origin: urlOrigin(p.Source)}
		if strings.HasPrefix(p.Source, "registry+") || strings.HasPrefix(p.Source, "sparse+") {
			e.origin = p.Source
		}
		if err := addEntry(m, p.Name+"@"+p.Version, e); err != nil {
			return err
		}
	}
	return nil
}

// cargoConfigFacts reads .cargo/config.toml.
func cargoConfigFacts(data []byte, fs *facts) error {
	m, err := decodeTOML(data, ".cargo/config.toml")
	if err != nil {
		return err
	}
	for name, v := range tbl(m["source"]) {
		for k, x := range tbl(v) {
			switch k {
			case "replace-with", "registry", "directory", "local-registry", "git":
				fs.add(KindSource, "source."+name+"."+k, str(x))
			}
		}
	}
	for src, v := range tbl(m["patch"]) {
		// [patch] in a cargo configuration overrides dependencies as
		// Cargo.toml's does.
		for name, d := range tbl(v) {
			fs.add(KindSource, "patch."+src+"."+name, str(d))
		}
	}
	for name, v := range tbl(m["registries"]) {
		if x, ok := tbl(v)["index"]; ok {
			fs.add(KindSource, "registries."+name+".index", str(x))
		}
	}
	for _, k := range []string{"default", "index"} {
		if x, ok := tbl(m["registry"])[k]; ok {
			fs.add(KindSource, "registry."+k, str(x))
		}
	}
	for k, x := range tbl(m["build"]) {
		switch k {
		case "rustc-wrapper", "rustc-workspace-wrapper", "rustc", "rustdoc":
			fs.add(KindRuns, "build."+k, str(x))
		case "rustflags":
			if linkFlags(str(x)) {
				fs.add(KindRuns, "build."+k, str(x))
			}
		}
	}
	for t, v := range tbl(m["target"]) {
		for k, x := range tbl(v) {
			switch k {
			case "runner", "linker":
				fs.add(KindRuns, "target."+t+"."+k, str(x))
			case "rustflags":
				if linkFlags(str(x)) {
					fs.add(KindRuns, "target."+t+"."+k, str(x))
				}
			}
		}
	}
	if h := tbl(m["http"]); h != nil {
		if h["check-revoke"] == false {
			fs.add(KindChecksum, "http.check-revoke", "false")
		}
		if x, ok := h["cainfo"]; ok {
			fs.add(KindChecksum, "http.cainfo", str(x))
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

func linkFlags(s string) bool {
	return strings.Contains(s, "link-arg") || strings.Contains(s, "linker") || strings.Contains(s, "-Z") || strings.Contains(s, "plugin")
}
