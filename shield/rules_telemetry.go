package shield

import (
	"path"
	"regexp"
	"strings"
)

// Personal data added to what telemetry sends (rules 12, issue 27 ninth
// pass; docs/shield-rules.md "(rules 12)"). Telemetry, analytics, crash
// reporting and tracking code sends what it collects to a third party
// or a backend nobody reviews per event; an edit that adds people's
// content to it (friends or contacts, chat or messages, email, phone,
// location, the user's home directory or documents, the clipboard,
// keystrokes, screenshots) sends that data out with every event. It is
// `exfiltration:personal-data` (escalate). Counters, timings and build
// facts pass; tests are spared.

var (
	telemetryPath = regexp.MustCompile(`(?i)telemetry|analytics|tracking|tracker|crash|metrics|beacon|sentry|bugsnag|datadog|amplitude|mixpanel|segment|posthog|reporter|reporting`)
	personalData  = regexp.MustCompile(`(?i)\b\w*(?:friends?|contacts?|chat|messages?|inbox|e_?mails?|phone|gps|latitude|longitude|geoloc\w*|birth\w*|ssn|clipboard|keystrokes?|keylog\w*|screenshots?|photos?)\w*\b|SpecialFolder\.(?:UserProfile|Personal|MyDocuments|Desktop)|\bos\.homedir\s*\(|\bexpanduser\s*\(\s*["']~|\bgetenv\s*\(\s*["'](?:HOME|USERPROFILE)["']|\bUserHomeDir\s*\(|\bFPlatformProcess::UserDir\b|\bpersistentDataPath\b`)
)

// telemetryPersonal is `exfiltration:personal-data` for an edit that adds
// personal data to telemetry code.
func (s *Shield) telemetryPersonal(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !codeExts[strings.ToLower(path.Ext(p))] || testSource(p) || !telemetryPath.MatchString(strings.TrimPrefix(p, s.cfg.Workspace)) {
			continue
		}
		added, old := textOf(f, p)
		if old == "" {
			continue // a new file: what it sends is judged by the sinks rules
		}
		plus, _ := diffLines(added, old)
		oldLower := strings.ToLower(clipRaw(old, maxAppsecText))
		for _, l := range plus {
			if commentLine(l) {
				continue
			}
			for _, m := range personalData.FindAllString(clipRaw(l, 4096), 4) {
				if !strings.Contains(oldLower, strings.ToLower(m)) {
					j.escalate("exfiltration:personal-data", "%s adds %s to what %s sends (%s): people's data leaves with every event", toolName(a), m, s.relPath(p), clipText(l, 80))
					return
				}
			}
		}
	}
}
