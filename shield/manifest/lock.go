package manifest

import (
	"net/url"
	"sort"
	"strings"
)

// lockEntry is one package a lockfile pins.
type lockEntry struct {
	version   string
	origin    string // where it comes from, without the version ("" = the default)
	show      string // the resolved location as written
	integrity string // its recorded hash(es)
	runs      bool   // it runs a script at install
}

type lockFunc func(data []byte, m map[string]lockEntry) error

var (
	npmDefaults   = set("https://registry.npmjs.org", "https://registry.yarnpkg.com", "http://registry.npmjs.org", "http://registry.yarnpkg.com", "npm:", "workspace:")
	cargoDefaults = set("registry+https://github.com/rust-lang/crates.io-index", "sparse+https://index.crates.io/")
	pyDefaults    = set("registry:https://pypi.org/simple", "registry:https://pypi.org/simple/", "editable:.", "virtual:.", "directory:.")
)

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// addEntry records e under k, bounded.
func addEntry(m map[string]lockEntry, k string, e lockEntry) error {
	if len(m) >= maxEntries {
		return errTooMany
	}
	m[k] = e
	return nil
}

// diffLock reports, for each package: its origin changed to a non-default
// one; its hash changed while its version stayed; a new package from an
// origin neither default nor already used by the lockfile; an install
// script newly recorded.
func diffLock(before, after []byte, fn lockFunc, defaults map[string]bool) ([]Change, error) {
	b, a := map[string]lockEntry{}, map[string]lockEntry{}
	if before != nil {
		if err := fn(before, b); err != nil {
			return nil, err
		}
	}
	if err := fn(after, a); err != nil {
		return nil, err
	}
	return lockChanges(b, a, defaults), nil
}

func lockChanges(b, a map[string]lockEntry, defaults map[string]bool) []Change {
	allowed := map[string]bool{}
	for _, e := range b {
		if e.origin != "" {
			allowed[e.origin] = true
		}
	}
	var out []Change
	for k, ae := range a {
		be, ok := b[k]
		switch {
		case ok && ae.origin != be.origin && !(defaultOrigin(ae.origin, defaults) && defaultOrigin(be.origin, defaults)):
			// Moved to another origin; from a private one to the public
			// registry included (dependency confusion).
			out = append(out, Change{KindSource, k, "now " + clip(ae.show) + " (was " + clip(orDefault(be.show)) + ")", ""})
		case !ok && ae.origin != "" && !defaults[ae.origin] && !allowed[ae.origin]:
			out = append(out, Change{KindSource, k, "now " + clip(ae.show) + " (new)", ""})
		case ok && ae.version == be.version && be.integrity != "" && ae.integrity != be.integrity:
			out = append(out, Change{KindChecksum, k, "hash now " + clip(ae.integrity) + " (was " + clip(be.integrity) + ") at " + clip(ae.version), ""})
		}
		if ae.runs && !(ok && be.runs) {
			out = append(out, Change{KindRuns, k, "runs an install script (" + clip(ae.version) + ")", ""})
		}
	}
	return out
}

// localOrigin is "" (the project's own tree) for a relative path that
// stays inside it, else where it leads.
func localOrigin(kind, p string) string {
	if p == "" || p == "." || !leaves(p) && !strings.Contains(p, ":") {
		return ""
	}
	return kind + " " + p
}

func orDefault(s string) string {
	if s == "" {
		return "default registry"
	}
	return s
}

// urlOrigin reduces a resolved location to where it comes from: the scheme
// and host of an http(s) URL; the whole location (without a fragment) of a
// git or other URL; the location itself otherwise.
func urlOrigin(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			if strings.HasSuffix(u.Path, ".git") || strings.Contains(u.Path, "/tarball/") || u.Host == "codeload.github.com" {
				return u.Scheme + "://" + u.Host + u.Path
			}
			return u.Scheme + "://" + strings.ToLower(u.Host)
		}
		return s
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	return s
}

// hashList joins hashes in a stable order.
func hashList(xs []string) string {
	xs = append([]string(nil), xs...)
	sort.Strings(xs)
	return strings.Join(xs, " ")
}

// defaultOrigin reports whether origin is the ecosystem's default ("" or
// one of defaults).
func defaultOrigin(origin string, defaults map[string]bool) bool {
	return origin == "" || defaults[origin]
}
