package shield

import (
	"strings"
)

// Checks turned off by their effect (session 14, second pass): whatever
// the tool, a flag that says a check does not run or cannot fail, and
// SQL that removes the audit trail a database keeps.

var (
	// checkOffFlag is a command-line flag that switches a check off:
	// --no-lint, --skip-checks, --disable-typecheck, -Wno-error, a
	// negative test tag filter (--test_tag_filters=-integration), a
	// linter's --exit-zero. Tests skipped for a quick build (-DskipTests)
	// are not: a build, not a check, is what the line asks for.
	checkOffFlag = mustRx(`(?i)^--?(?:no|skip|disable|without|ignore)[-_]?(?:lint|linting|linter|lints|checks?|typecheck|type-?checks?|types|scan|scans|security|sast|vet|clippy|eslint|static-?analysis|analysis|analy[sz]e|werror|strict|warnings-as-errors)(?:=\S*)?$|` +
		`^-Wno-error(?:=\S+)?$|^--?(?:skip|disable|exclude)[-_]?(?:checks?|steps?|tasks?|linters?)?=(?:[\w-]*,)*(?:lint|linting|linters?|checks?|typecheck|type-check|scan|security|sast|vet|clippy|eslint|audit)(?:,|$)|^--?(?:test_tag_filters|test-tag-filters)=(?:\S*,)?-|^--exit-zero$|^--lint=(?:false|off|0|none)$|^--strict=(?:false|off|0)$|^--fail-on=(?:none|never|off)$|^--max-warnings[= ](?:-1|\d{3,})$`)
	// auditTrail is SQL that removes what audits a database: a trigger
	// dropped or disabled whose name says audit, rows of an audit, history
	// or activity table deleted, the table truncated or dropped.
	auditTrail = mustRx(`(?is)\b(?:drop|disable)\s+trigger\b[^;]{0,200}?(?:audit|history|journal|activity)|` +
		`\balter\s+table\b[^;]{0,200}?\bdisable\s+trigger\b|` +
		`\b(?:delete\s+from|truncate(?:\s+table)?|drop\s+table(?:\s+if\s+exists)?)\s+["'\x60\[]?[\w.]*(?:audit|activity_log|event_log|access_log|history_log|change_log|changelog_entries)|` +
		// rules 15: the right to rewrite the audit trail granted
		`\bgrant\s+(?:all(?:\s+privileges)?|(?:delete|update|truncate|alter)(?:\s*,\s*(?:delete|update|truncate|alter|insert|select))*)\s+on\s+(?:table\s+)?["'\x60\[]?[\w.\]\[]*(?:audit|activity_log|event_log|access_log|history_log|change_log|changelog_entries)`)
)

// checksOff is the effect-based part of destructive:workspace-checks.
func (s *Shield) checksOff(f *Facts, j *judgement) bool {
	for i := range f.Runs {
		r := &f.Runs[i]
		if len(r.Argv) < 2 || r.Name == "echo" || r.Name == "printf" || r.Name == "git" && r.Argv[1] == "commit" {
			continue
		}
		for k, a := range r.Argv[1:] {
			if a == "--" {
				break
			}
			if checkOffFlag.MatchString(a) || strings.Contains(a, "=-Wno-error") || strings.Contains(a, " -Wno-error") || a == "--max-warnings" && k+2 < len(r.Argv) && checkOffFlag.MatchString(a+"="+r.Argv[k+2]) {
				j.escalate("destructive:workspace-checks", "%s turns a check off or makes it unable to fail (%s)", quote(r.Line), a)
				return true
			}
			if runsSQLClient(r) {
				if m := auditTrail.FindString(a); m != "" {
					j.escalate("destructive:workspace-checks", "%s removes the database's audit trail (%s)", r.Name, clipText(m, 80))
					return true
				}
			}
		}
	}
	for _, t := range f.Texts {
		if !strings.HasPrefix(t.Source, "content:") {
			continue
		}
		if m := auditTrail.FindString(clip(t.Body, maxTextJudged)); m != "" {
			j.escalate("destructive:workspace-checks", "the content of %s removes the database's audit trail (%s)", strings.TrimPrefix(t.Source, "content:"), clipText(m, 80))
			return true
		}
	}
	return false
}
