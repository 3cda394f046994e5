package shield

import (
	"path"
	"strings"
)

// Pins moved, lockfiles edited by hand, protections deleted (issue 27,
// pass 8, rules 11; docs/shield-rules.md "supply-chain:pin-moved").
//
//   - A reference pinned to what cannot move (a CI action at a commit
//     SHA, an image at a sha256 digest) moved to what can (a tag, a
//     branch, latest), or an image replaced by another publisher's
//     unpinned one: what runs changes without a change in the repository.
//   - A lockfile's version edited by the editor tools: lockfiles are
//     written by their package manager from the manifest; a version
//     typed into one names a release the manifest's resolution never
//     chose.
//   - A file whose whole purpose is a protection (a rate limiter, a
//     firewall, a content security policy, an audit trail, a network
//     security configuration) deleted: removal is the weakening.

var (
	// uses: owner/repo@ref, image: ref, FROM ref
	refLine = mustRx(`(?:\buses:\s*|\bimage:\s*|^FROM\s+(?:--platform=\S+\s+)?|^From:\s*)["']?([A-Za-z0-9][\w./-]{0,200})(?:@(sha256:[0-9a-f]{64}|[0-9a-f]{40})|:([\w.-]{1,128})(?:@(sha256:[0-9a-f]{64}))?|@([\w./-]{1,128}))?["']?`)
	// a lockfile by base name
	lockNames = map[string]bool{"Gemfile.lock": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
		"pnpm-lock.yaml": true, "poetry.lock": true, "Pipfile.lock": true, "uv.lock": true, "pdm.lock": true, "Cargo.lock": true,
		"composer.lock": true, "Podfile.lock": true, "pubspec.lock": true, "go.sum": true, "packages.lock.json": true,
		"gradle.lockfile": true, "mix.lock": true, "Package.resolved": true, "bun.lock": true, "flake.lock": true,
		"conan.lock": true, "Manifest.toml": true, "renv.lock": true, "Chart.lock": true, ".terraform.lock.hcl": true,
		// rules 22: spack's, pixi's, sbt's and buf's lockfiles
		"spack.lock": true, "pixi.lock": true, "build.sbt.lock": true, "buf.lock": true}
	lockVersion = mustRx(`\d+\.\d+(?:\.\d+)*(?:[-.+~][\w.]+)?`)
	// files whose whole purpose is a protection
	protectionFile = mustRx(`(?i)rack_?attack|rate_?limit|throttl|limiter|firewall|\bwaf\b|content_?security|\bcsp\b|secure_?headers|security_?headers|helmet|audit_?log|audit_?trail|auditing|network_security_config|filter_parameter_logging|brute_?force|fail2ban|jail\.local|apparmor|seccomp`)
)

// ref is one pinned or unpinned reference.
type ref struct{ name, pin, tag string }

func refsIn(lines []string) []ref {
	var out []ref
	for _, l := range lines {
		if len(out) >= 64 {
			break
		}
		// (From: is an Apptainer/Singularity definition's base image; rules 13)
		if !strings.Contains(l, "uses:") && !strings.Contains(l, "image:") && !strings.HasPrefix(l, "FROM") && !strings.HasPrefix(l, "From:") {
			continue
		}
		m := refLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		r := ref{name: strings.ToLower(m[1]), pin: m[2] + m[4], tag: m[3] + m[5]}
		out = append(out, r)
	}
	return out
}

// refOwner is a reference's publisher: the registry path without the
// last segment (docker.io/library/postgres: library), or the name itself
// for an official image ("postgres": library).
func refOwner(name string) string {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "docker.io/"), "registry-1.docker.io/")
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "library"
	}
	return name[:i]
}

// pinMoved returns why an edit's added lines move a pinned reference to
// one that can change, or "".
func pinMoved(plus, minus []string) string {
	was := refsIn(minus)
	if len(was) == 0 {
		return ""
	}
	now := refsIn(plus)
	for _, o := range was {
		if o.pin == "" {
			// rules 13: a fixed tag replaced by another publisher's
			// floating one (nvcr.io/nvidia/pytorch:24.10-py3 ->
			// docker.io/someone/pytorch-cuda:latest)
			if o.tag == "" || o.tag == "latest" || len(was) != len(now) {
				continue
			}
			for _, n := range now {
				if n.pin == "" && (n.tag == "" || n.tag == "latest") && refOwner(n.name) != refOwner(o.name) {
					return "replaces " + o.name + ":" + o.tag + " with " + n.name + ":" + orLatest(n.tag) + ", another publisher's image at a tag that moves"
				}
			}
			continue
		}
		for _, n := range now {
			if n.pin != "" {
				continue
			}
			switch {
			case n.name == o.name:
				return "moves " + o.name + " from the pin " + clipText(o.pin, 20) + " to " + orLatest(n.tag) + ", which can change without a change here"
			case refOwner(n.name) != refOwner(o.name) && path.Base(n.name) != "" && len(was) == len(now):
				return "replaces " + o.name + " (pinned) with " + n.name + ":" + orLatest(n.tag) + ", another publisher's unpinned image"
			}
		}
	}
	return ""
}

func orLatest(tag string) string {
	if tag == "" {
		return "latest"
	}
	return tag
}

// lockName reports whether base names a lockfile: a known one, or by
// the conventions lockfiles of other ecosystems follow (rules 13:
// cabal.project.freeze, x.opam.locked, *-lock.json, *.lockfile, *.lock).
func lockName(base string) bool {
	if lockNames[base] {
		return true
	}
	for _, suf := range []string{".freeze", ".locked", "-lock.json", "-lock.yaml", ".lockfile", ".lock"} {
		if strings.HasSuffix(base, suf) && len(base) > len(suf) {
			return true
		}
	}
	return false
}

// lockHandEdited returns why an edit of a lockfile changes a version by
// hand, or "".
func lockHandEdited(base string, plus, minus []string) string {
	if !lockName(base) || len(plus) == 0 || len(minus) == 0 || len(plus) > 8 {
		return ""
	}
	for _, a := range plus {
		va := lockVersion.FindString(a)
		if va == "" {
			continue
		}
		for _, r := range minus {
			vr := lockVersion.FindString(r)
			if vr != "" && vr != va && lockVersion.ReplaceAllString(r, "#") == lockVersion.ReplaceAllString(a, "#") {
				return "a version in " + base + " edited by hand (" + vr + " → " + va + "): lockfiles are written by the package manager from the manifest, this release is one it never resolved"
			}
		}
	}
	return ""
}

// pinsAndLocks is `supply-chain:pin-moved` (escalate).
func (s *Shield) pinsAndLocks(a *Action, f *Facts, j *judgement) {
	for _, d := range f.Deletes {
		p := d.Path
		if p == "" || testSource(p) || !s.inWorkspace(p) || d.Glob || d.Tree {
			continue
		}
		if protectionFile.MatchString(path.Base(p)) {
			j.escalate("supply-chain:pin-moved", "deletes %s, a file whose whole purpose is a protection (rate limiting, a firewall, a security policy, an audit trail): removal is the weakening", s.relPath(p))
			return
		}
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || testSource(p) || !s.inWorkspace(p) {
			continue
		}
		var old string
		for _, r := range f.Removed {
			if r.Source == t.Source {
				old += r.Body + "\n"
			}
		}
		if old == "" {
			continue
		}
		plus, minus := diffLines(t.Body, old)
		if why := lockHandEdited(path.Base(p), plus, minus); why != "" {
			j.escalate("supply-chain:pin-moved", "%s", why)
			return
		}
		if why := pinMoved(plus, minus); why != "" {
			j.escalate("supply-chain:pin-moved", "the change to %s %s", s.relPath(p), why)
			return
		}
	}
}
