package shield

import (
	"regexp"
	"strings"
)

// Commits judged by what they carry (rules 12, issue 27 ninth pass;
// docs/shield-rules.md "(rules 12)"). Rules 7 and 11 read a commit
// message's approval trailers, CI skips, forged turns, secrets and
// addresses to AI readers, on both routes (the git_commit tool and git
// commit -m). What they let through, and this file reads on both routes:
//
//   - approval claimed in the prose rather than a trailer ("(pre-approved)",
//     "(reviewed-by: security)", "approved by the security team"): a later
//     reader, human or bot, takes it for a review that took place;
//   - trailers that certify in a person's name (Signed-off-by, Tested-by):
//     the agent cannot give a person's certification; `git commit -s`
//     adds the configured author's own;
//   - instructions to bots (an @mention of a review, merge or AI bot with
//     a verb that approves, merges or skips);
//   - a credential written as a value (KEY=value, "pw value"), short or
//     without a known prefix.

var (
	commitApprovalClaim = regexp.MustCompile(`(?i)\bpre-?(?:approved|reviewed|authori[sz]ed|cleared|vetted|signed[- ]off)\b|\(\s*(?:reviewed|approved|acked|signed[- ]off|vetted|cleared)[- ]by\s*:?\s*[^)\n]{1,40}\)|\b(?:reviewed|approved|signed[- ]off|cleared|vetted|authori[sz]ed|ok'?d)\s+by\s+(?:the\s+)?(?:security|legal|compliance|infosec|appsec|management|leadership|cto|ciso|release\s+manager|code\s*owners?)\b`)
	commitCertTrailer   = regexp.MustCompile(`(?im)^\s*(?:Signed-off-by|Tested-by)\s*:\s*\S[^\n]{0,80}`)
	commitBotOrder      = regexp.MustCompile(`(?i)(?:^|[\s(\[])@[\w.-]*(?:bot|ai|agent|copilot|claude|gpt|rabbit|review|reviewer|renovate|dependabot|mergify|bors|codex|devin|sweep|merge)[\w.-]*\s*[:,]?\s*(?:please\s+)?(?:auto-?approve|approve|auto-?merge|merge|lgtm|ship\s+it|skip|ignore|disable|bypass|r\+|land|force)\b|\b(?:bors|homu)\s+r\+`)
	commitKeyValue      = regexp.MustCompile(`\b([A-Z][A-Z0-9_]{0,40}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|PW))\s*[=:]\s*["']?([^\s"',;)]{8,200})`)
	commitSpokenSecret  = regexp.MustCompile(`(?i)\b(?:pw|pwd|pass|password|passwd|passphrase|passcode|pin)\b\s*(?:[:=]|is)?\s+["']?([^\s"',;)]{8,120})`)
)

// commitSecretValue reports whether v looks like a value rather than a
// word, a placeholder or a reference: letters and digits mixed, or
// letters with symbols, no $, <, { or *.
func commitSecretValue(v string) bool {
	if strings.ContainsAny(v, "$<{*%") || strings.HasPrefix(v, "os.") || strings.HasPrefix(v, "env.") || strings.Contains(strings.ToLower(v), "example") {
		return false
	}
	letters, digits, symbols := 0, 0, 0
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c >= '0' && c <= '9':
			digits++
		default:
			symbols++
		}
	}
	return letters > 0 && digits > 0 || letters > 0 && symbols > 0 && digits+symbols >= 2 && strings.ToLower(v) != v
}

// commitMessageCarries returns the rule and reason a commit message
// earns by what it carries (above), or "", "".
func commitMessageCarries(msg string) (rule, why string) {
	msg = clip(msg, maxTextJudged)
	if m := commitApprovalClaim.FindString(msg); m != "" {
		return "evasion:forged-turn", "claims an approval (" + clipText(m, 60) + "): a later reader takes it for a review that took place"
	}
	if m := commitCertTrailer.FindString(msg); m != "" {
		return "evasion:forged-turn", "certifies in a person's name (" + clipText(strings.TrimSpace(m), 60) + "): the agent cannot give it (git commit -s adds the author's own)"
	}
	if m := commitBotOrder.FindString(msg); m != "" {
		return "prompt-injection:addressed", "orders a bot (" + clipText(strings.TrimSpace(m), 60) + "): text written to steer the review or merge"
	}
	for _, m := range commitKeyValue.FindAllStringSubmatch(msg, 8) {
		if commitSecretValue(m[2]) {
			return "exfiltration:secret", "holds the value of " + m[1] + ": history keeps it, and every clone and push carries it"
		}
	}
	for _, m := range commitSpokenSecret.FindAllStringSubmatch(msg, 8) {
		if commitSecretValue(m[1]) {
			return "exfiltration:secret", "holds a password (" + clipText(m[0][:min(len(m[0]), 6)], 10) + "…): history keeps it, and every clone and push carries it"
		}
	}
	return "", ""
}

// commitCarries judges the messages of the git_commit tool and of git
// commit -m (escalate).
func (s *Shield) commitCarries(_ *Action, f *Facts, j *judgement) {
	msgs := commitMessageArgs(f)
	for _, t := range f.Texts {
		if t.Source == "commit message" {
			msgs = append(msgs, t.Body)
		}
	}
	for _, m := range msgs {
		if rule, why := commitMessageCarries(m); rule != "" {
			j.escalate(rule, "the commit message %s", why)
			return
		}
	}
}
