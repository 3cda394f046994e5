package manifest

import (
	"regexp"
	"strings"
)

// Pins, locks and audits loosened (issue 27, pass 8, rules 11): the shape
// rule's table of switches read by what they guard, in any build file
// the table names:
//
//   - a version pin made to float: Gradle's 1.+ and latest.release (sbt's
//     % "1.+" too), an
//     open range ([1.0,)), NuGet's Version="*", pub's any;
//   - a lock, audit or signature switch turned off or relaxed (NuGetAudit,
//     RestoreLockedMode, frozen lockfiles, signatureValidationMode accept,
//     dependency verification lenient);
//   - a package source mapping widened to every package ("*"), or
//     packages mapped to a source the file did not name;
//   - unstable versions accepted (composer's minimum-stability dev,
//     prefer-stable off);
//   - project repositories preferred over the settings' (Gradle's
//     repositoriesMode PREFER_PROJECT where it failed on them);
//   - a reference to a binary outside the tree (a HintPath to ../../..,
//     /tmp, a home directory).

var (
	// a version that floats: Gradle dynamic versions, open ranges, any
	floatingVersion = regexp.MustCompile(`["'][\w.-]+:[\w.-]+:(?:[\d.]*\+|latest\.(?:release|integration|milestone))["']|(?i:version)\s*[=:]\s*["'](?:\*|[\d.]*\.\*|\[[\d.]+\s*,\s*\)|latest\.\w+|[\d.]*\+)["']|%%?\s*"(?:[\d.]*\+|latest\.\w+|\[[\d.]+\s*,\s*\))"`)
	// pub's any where the key named a version
	anyVersion = regexp.MustCompile(`^\s*([\w-]+):\s*any\s*$`)
	// lock, audit and signature switches: key (letters only) and the
	// values that relax them
	lockSwitchKey   = regexp.MustCompile(`(?i)^(?:nugetaudit|restorelockedmode|lockedmode|frozenlockfile|frozen|requirelockfile|lockfile|auditenabled|audit|packageverification|dependencyverification|verifydependencies|verifymetadata|signaturevalidationmode|requiresignatures|trustedsignersonly)$`)
	relaxedValue    = regexp.MustCompile(`(?i)^(?:false|no|off|0|disabled?|none|accept|lenient|warn|optional|never|permissive)$`)
	mappedSource    = regexp.MustCompile(`(?i)<packageSource\s+key\s*=\s*["']([^"']{1,80})["']`)
	wideMapping     = regexp.MustCompile(`(?i)<package\s+pattern\s*=\s*["']\*["']`)
	unstableMin     = regexp.MustCompile(`(?i)["']?minimum-stability["']?\s*[:=]\s*["']?(?:dev|alpha|beta|rc)\b`)
	preferStableOff = regexp.MustCompile(`(?i)["']?prefer-stable["']?\s*[:=]\s*false`)
	projectRepos    = regexp.MustCompile(`RepositoriesMode\.PREFER_PROJECT`)
	failOnProject   = regexp.MustCompile(`RepositoriesMode\.FAIL_ON_PROJECT_REPOS|RepositoriesMode\.PREFER_SETTINGS`)
	addKeyValue     = regexp.MustCompile(`(?i)<add\s+key\s*=\s*["']([^"']{1,80})["']\s+value\s*=\s*["']([^"']{0,200})["']`)
	hintPath        = regexp.MustCompile(`(?i)<HintPath>\s*([^<]+?)\s*</HintPath>`)
)

// lettersOnly is k lower case without separators (NuGetAudit,
// nuget-audit and nuget_audit are one key).
func lettersOnly(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lockLoosened reports what an added line t loosens, given the removed
// lines' text (old) and pairs; add records it.
func lockLoosened(t, old, beforeText string, removedPairs map[string]string, add func(kind, key, detail string)) {
	if m := mappedSource.FindStringSubmatch(t); m != nil && beforeText != "" && !strings.Contains(beforeText, `"`+m[1]+`"`) && !strings.Contains(beforeText, `'`+m[1]+`'`) {
		add(KindSource, "packages mapped to a new source", "now "+t+" (the file did not name the source "+m[1]+")")
	}
	if floatingVersion.MatchString(t) && !floatingVersion.MatchString(old) {
		add(KindSource, "floating version", "now "+t+" (a version that floats: what is fetched changes without a change here)")
	}
	if m := anyVersion.FindStringSubmatch(t); m != nil {
		if was := strings.Trim(removedPairs[m[1]], `"' `); was != "" && strings.ContainsAny(was[:1], "^~0123456789>=") {
			add(KindSource, "floating version", "now "+t+" (any version: what is fetched changes without a change here)")
		}
	}
	if wideMapping.MatchString(t) && !wideMapping.MatchString(old) {
		add(KindSource, "source mapping widened", "now "+t+" (every package may now come from this source)")
	}
	if unstableMin.MatchString(t) && !unstableMin.MatchString(old) || preferStableOff.MatchString(t) && !preferStableOff.MatchString(old) {
		add(KindSource, "unstable versions", "now "+t+" (development versions are resolved)")
	}
	if projectRepos.MatchString(t) && failOnProject.MatchString(old) {
		add(KindSource, "project repositories", "now "+t+" (a project's own repositories are preferred to the settings')")
	}
	if m := hintPath.FindStringSubmatch(t); m != nil {
		v := strings.ReplaceAll(m[1], `\`, "/")
		if outsidePath(v) || strings.Contains(v, "../../../") || strings.Contains(strings.ToLower(v), "/tmp/") || strings.Contains(strings.ToLower(v), "%temp%") || strings.Contains(strings.ToLower(v), "/users/") {
			add(KindSource, "path outside the tree", "now "+t+" (a binary referenced from outside the tree)")
		}
	}
	pairs := linePairs(t)
	if m := addKeyValue.FindStringSubmatch(t); m != nil {
		pairs = append(pairs, [2]string{m[1], m[2]})
		if om := addKeyValue.FindAllStringSubmatch(old, 64); om != nil {
			for _, o := range om {
				if o[1] == m[1] {
					removedPairs = map[string]string{m[1]: o[2]}
				}
			}
		}
	}
	for _, pr := range pairs {
		k := lettersOnly(pr[0])
		if lockSwitchKey.MatchString(k) && relaxedValue.MatchString(strings.Trim(pr[1], `"' `)) && !relaxedValue.MatchString(strings.Trim(removedPairs[pr[0]], `"' `)) {
			add(KindChecksum, pr[0], "now "+t+" (a lock, audit or signature check relaxed)")
		}
	}
}
