package shield

import (
	"path"
	"strings"
)

// Personal data added to what telemetry sends (rules 12, issue 27 ninth
// pass; docs/shield-rules.md "(rules 12)"). Telemetry, analytics, crash
// reporting and tracking code sends what it collects to a third party
// or a backend nobody reviews per event; an edit that adds people's
// content to it (friends or contacts, chat or messages, location, the user's home directory or documents, the clipboard,
// keystrokes, screenshots) sends that data out with every event. It is
// `exfiltration:personal-data` (escalate). Counters, timings and build
// facts pass; tests are spared.

var (
	telemetryPath = mustRx(`(?i)telemetry|analytics|tracking|tracker|crash|metrics|beacon|sentry|bugsnag|datadog|amplitude|mixpanel|posthog`)
	personalData  = mustRx(`(?i)\b(?:friends?(?:_?list)?|contacts|address_?book|chat\w{0,12}|direct_?messages|inbox|gps|latitude|longitude|geoloc\w{0,10}|ssn|clipboard|keystrokes?|keylog\w{0,8}|screenshots?|photos?)\b|SpecialFolder\.(?:UserProfile|Personal|MyDocuments|Desktop)|\bos\.homedir\s*\(|\bexpanduser\s*\(\s*["']~|\bgetenv\s*\(\s*["'](?:HOME|USERPROFILE)["']|\bUserHomeDir\s*\(|\bFPlatformProcess::UserDir\b|\bpersistentDataPath\b`)
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
		plus, minus := diffLines(added, old)
		oldLower := strings.ToLower(clipRaw(old, maxAppsecText))
		if why, rule := endpointMoved(plus, minus, oldLower); why != "" {
			j.escalate(rule, "%s %s in %s", toolName(a), why, s.relPath(p))
			return
		}
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

// endpointURL is a URL literal's host.
var endpointURL = mustRx(`(?i)["'](?:https?|wss?)://([A-Za-z0-9.-]{1,253})(?::\d{1,5})?[/"']`)

// endpointMoved returns why an edit of telemetry code moves where it sends
// (a URL literal replaced by one whose host the file did not name: an
// unreviewed destination, exfiltration:written-code; or loopback: the
// reports go nowhere, appsec:control-weakened), or "".
func endpointMoved(plus, minus []string, oldLower string) (why, rule string) {
	was := ""
	for _, l := range minus {
		if m := endpointURL.FindStringSubmatch(l); m != nil {
			was = strings.ToLower(m[1])
			break
		}
	}
	if was == "" {
		return "", ""
	}
	for _, l := range plus {
		m := endpointURL.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		h := strings.ToLower(m[1])
		switch {
		case h == was:
		case loopback(h) || h == "0.0.0.0" || h == "localhost":
			return "points what telemetry reports at " + h + " (was " + was + "): the reports go nowhere", "appsec:control-weakened"
		case !strings.Contains(oldLower, h):
			return "moves where telemetry sends its data from " + was + " to " + h + ", a host the file did not name", "exfiltration:written-code"
		}
	}
	return "", ""
}
