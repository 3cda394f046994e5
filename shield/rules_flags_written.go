package shield

import (
	"strings"
)

// Flags written into files (rules 13; docs/shield-rules.md
// "supply-chain:source"). A command line in a CI file, an Earthfile, a
// Makefile, a script or any build file runs later with the flags it is
// written with. An edit that adds a flag turning a transport, a checksum
// or a signature's verification off (insecureFlag, as on a command line),
// or takes away the flag that holds an install to its lockfile (--locked,
// --frozen-lockfile, --require-hashes, npm ci …) from a line it otherwise
// keeps, changes where code comes from for every later run. Prose is not
// read.

// pinFlags hold an install to what its lockfile pins.
var pinFlags = setOf("--locked", "--frozen", "--frozen-lockfile", "--immutable", "--require-hashes", "--no-update", "--locked-deps",
	"--deps-locked", "--lockfile-only", "--pure-lockfile", "--ci", "--check-lock")

// writtenFlags returns why the edit of p weakens how a written command
// fetches code, or "".
func writtenFlags(p string, plus, minus []string) string {
	if proseFile(p) || len(plus) == 0 {
		return ""
	}
	removedFlags := map[string]bool{}
	for _, l := range minus[:min(len(minus), 256)] {
		for _, w := range strings.Fields(l) {
			removedFlags[strings.Trim(w, `"',`)] = true
		}
	}
	for _, l := range plus[:min(len(plus), 256)] {
		for _, w := range strings.Fields(l) {
			w = strings.Trim(w, `"',`)
			if strings.HasPrefix(w, "-") && !removedFlags[w] && insecureFlag.MatchString(w) {
				return "adds " + clipText(w, 40) + " to " + clipText(strings.TrimSpace(l), 80)
			}
		}
	}
	// a pin flag taken from a line kept otherwise
	for _, m := range minus[:min(len(minus), 256)] {
		for _, w := range strings.Fields(m) {
			if !pinFlags[w] {
				continue
			}
			without := strings.Join(strings.Fields(strings.Replace(m, w, "", 1)), " ")
			for _, l := range plus[:min(len(plus), 256)] {
				if strings.Join(strings.Fields(l), " ") == without {
					return "takes " + w + " from " + clipText(strings.TrimSpace(m), 80) + ": the install no longer holds to its lockfile"
				}
			}
		}
		// npm ci (installs the lockfile) made npm install (resolves anew)
		if i := strings.Index(m, "npm ci"); i >= 0 {
			swapped := strings.Join(strings.Fields(m[:i]+"npm install"+m[i+len("npm ci"):]), " ")
			for _, l := range plus[:min(len(plus), 256)] {
				if strings.Join(strings.Fields(l), " ") == swapped {
					return "makes " + clipText(strings.TrimSpace(m), 60) + " an npm install: the install no longer holds to its lockfile"
				}
			}
		}
	}
	return ""
}

// proseFile reports whether p is prose (documentation quotes commands).
func proseFile(p string) bool {
	ext := strings.ToLower(p[strings.LastIndexByte(p, '.')+1:])
	if !strings.Contains(p, ".") {
		ext = ""
	}
	return proseExt["."+ext]
}
