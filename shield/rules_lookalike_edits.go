package shield

import (
	"path"
	"strings"
)

// Look-alikes a change makes (rules 16; docs/shield-rules.md
// "supply-chain:lookalike" and "text:lookalike-host"). The popular lists
// (rules_lookalike_popular.go) know the packages most depended on; an
// edit also shows what it replaces, and a squat of what the project
// itself depended on needs no list:
//
//   - a dependency an edit puts in whose name is a near spelling of one
//     it takes out (dbt-postgres becomes dbt-postgress) —
//     supply-chain:lookalike;
//   - a repository reference moved to the same repository name under
//     another owner (github:NixOS/nixpkgs becomes
//     github:NixOS-community/nixpkgs): code now comes from someone
//     else's copy — supply-chain:lookalike;
//   - a URL's host replaced by a near spelling on another domain
//     (deploy.acme.example.com becomes deploy.acme-example.com): what
//     went to the project's host now goes to whoever registered the
//     look-alike — text:lookalike-host;
//   - a host written in punycode (xn--…), requested or written into a
//     file: the form a homoglyph domain takes on the wire —
//     text:lookalike-host.

// lookalikeChanges is the rule.
func (s *Shield) lookalikeChanges(_ *Action, f *Facts, j *judgement) {
	for _, r := range f.Requests {
		if punycodeHost(r.Host) {
			j.escalate("text:lookalike-host", "%s reaches %s, a host written in punycode (the wire form of a name in other scripts: a look-alike of a familiar domain?)", r.By, r.Host)
			return
		}
	}
	for p, t := range writtenFiles(f) {
		body := t.Body
		if strings.Contains(body, "xn--") {
			for _, h := range urlHosts(body) {
				if punycodeHost(h) {
					j.escalate("text:lookalike-host", "the change to %s names %s, a host written in punycode (a look-alike of a familiar domain?)", s.relPath(p), h)
					return
				}
			}
		}
		old := removedText(f, t.Source)
		if old == "" {
			continue
		}
		old = clip(old, maxTextJudged)
		base := path.Base(p)
		if n, was := renamedDependency(base, old, body); n != "" {
			j.escalate("supply-chain:lookalike", "the change to %s replaces the dependency %s with %s, a near spelling of it (a typosquat?)", s.relPath(p), was, n)
			return
		}
		if n, was := ownerSwapped(old, body); n != "" {
			j.escalate("supply-chain:lookalike", "the change to %s points %s at %s: the same repository name under another owner (someone else's copy)", s.relPath(p), was, n)
			return
		}
		if !strings.Contains(old, "://") {
			continue
		}
		if n, was := hostSwapped(old, body); n != "" {
			j.escalate("text:lookalike-host", "the change to %s replaces the host %s with %s, a near spelling on another domain", s.relPath(p), was, n)
			return
		}
	}
}

// renamedDependency returns a dependency the new text names, the old
// does not, that is a near spelling of one the old text names.
func renamedDependency(base, old, new string) (string, string) {
	before := manifestPackages(base, old)
	if len(before) == 0 {
		return "", ""
	}
	// bounded: at most maxRenamed names a side (an edit's fragment names
	// a few; a whole manifest rewritten is judged by the lists)
	after := manifestPackages(base, new)
	before, after = before[:min(len(before), maxRenamed)], after[:min(len(after), maxRenamed)]
	had := map[string]bool{}
	for _, p := range before {
		had[strings.ToLower(p.name)] = true
	}
	for _, p := range after {
		n := strings.ToLower(p.name)
		if had[n] {
			continue
		}
		for _, q := range before {
			if o := strings.ToLower(q.name); nearName(n, o) {
				return p.name, q.name
			}
		}
	}
	return "", ""
}

// maxRenamed bounds the names renamedDependency compares on each side.
const maxRenamed = 64

// nearName reports whether n is a near spelling of o: the same once
// separators and digit-for-letter are folded, or one edit apart (two
// for long names) — but not a version family's other member (mysql and
// mysql2, psycopg2 and psycopg: only trailing digits differ).
func nearName(n, o string) bool {
	if n == o || strings.TrimRight(n, "0123456789") == strings.TrimRight(o, "0123456789") {
		return false
	}
	if squatKey(n) == squatKey(o) {
		return true
	}
	d := editDistance(n, o, 2)
	return d == 1 && len(o) >= 5 || d == 2 && len(o) >= 9
}

var repoRefRe = mustRx(`(?i)(?:github\.com[/:]|gitlab\.com[/:]|codeberg\.org/|github:|gitlab:|buf\.build/|ghcr\.io/|quay\.io/|docker\.io/|registry\.terraform\.io/|bsr\.)([\w.-]+)/([\w.-]+)`)

// ownerSwapped returns an owner/name reference the new text makes that
// the old does not, whose name the old text had under another owner.
func ownerSwapped(old, new string) (string, string) {
	refs := func(s string) [][2]string {
		var out [][2]string
		for _, m := range repoRefRe.FindAllStringSubmatch(s, 64) {
			out = append(out, [2]string{strings.ToLower(m[1]), strings.ToLower(strings.TrimSuffix(m[2], ".git"))})
		}
		return out
	}
	before := refs(old)
	if len(before) == 0 {
		return "", ""
	}
	had := map[[2]string]bool{}
	for _, r := range before {
		had[r] = true
	}
	for _, r := range refs(new) {
		if had[r] {
			continue
		}
		for _, o := range before {
			if o[1] == r[1] && o[0] != r[0] && !had[[2]string{r[0], o[1]}] {
				return r[0] + "/" + r[1], o[0] + "/" + o[1]
			}
		}
	}
	return "", ""
}

var urlHostRe = mustRx(`(?i)\b(?:https?|wss?|git\+https|ssh)://(?:[^@/\s"'<>]*@)?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)`)

// urlHosts are the hosts of the URLs in s (at most 64), lower case.
func urlHosts(s string) []string {
	var out []string
	for _, m := range urlHostRe.FindAllStringSubmatch(s, 64) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

// hostSwapped returns a URL host the new text names, the old does not,
// that is a near spelling of one the old text names on another
// registrable domain (a subdomain changed under the same domain is the
// project's own).
func hostSwapped(old, new string) (string, string) {
	before := urlHosts(old)
	if len(before) == 0 {
		return "", ""
	}
	had := map[string]bool{}
	for _, h := range before {
		had[h] = true
	}
	for _, h := range urlHosts(new) {
		if had[h] {
			continue
		}
		for _, o := range before {
			if registrable(h) == registrable(o) {
				continue
			}
			if squatKey(h) == squatKey(o) {
				return h, o
			}
			ro, rn := registrable(o), registrable(h)
			if len(ro) >= 6 && editDistance(rn, ro, 2) == 1 && strings.TrimSuffix(h, rn) == strings.TrimSuffix(o, ro) {
				return h, o
			}
		}
	}
	return "", ""
}

// punycodeHost reports whether a label of h is written in punycode.
func punycodeHost(h string) bool {
	return strings.HasPrefix(h, "xn--") || strings.Contains(h, ".xn--")
}
