package shield

import (
	"path"
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
	commitApprovalClaim = mustRx(`(?i)\bapproved[- ]by\s*:\s*@?[\w.-]{2,}|\bpre-?(?:approved|reviewed|authori[sz]ed|cleared|vetted|signed[- ]off)\b|\(\s*(?:reviewed|approved|acked|signed[- ]off|vetted|cleared)[- ]by\s*:?\s*[^)\n]{1,40}\)|\b(?:reviewed|approved|signed[- ]off|cleared|vetted|authori[sz]ed|ok'?d)\s+by\s+(?:the\s+)?(?:security|legal|compliance|infosec|appsec|management|leadership|cto|ciso|release\s+manager|code\s*owners?)\b`)
	commitCertTrailer   = mustRx(`(?im)^\s*(?:Signed-off-by|Tested-by)\s*:\s*\S[^\n]{0,80}`)
	commitBotOrder      = mustRx(`(?i)(?:^|[\s(\[])@[\w.-]*(?:bot|ai|agent|copilot|claude|gpt|rabbit|review|reviewer|renovate|dependabot|mergify|bors|codex|devin|sweep|merge)[\w.-]*\s*[:,]?\s*(?:please\s+)?(?:auto-?approve|approve|auto-?merge|merge|lgtm|ship\s+it|skip|ignore|disable|bypass|r\+|land|force)\b|\b(?:bors|homu)\s+r\+`)
	commitKeyValue      = mustRx(`\b([A-Z][A-Z0-9_]{0,40}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|PW))\s*[=:]\s*["']?([^\s"',;)]{8,200})`)
	commitSpokenSecret  = mustRx(`(?i)\b(?:pw|pwd|pass|password|passwd|passphrase|passcode|pin)\b\s*(?:[:=]|is)?\s+["']?([^\s"',;)]{8,120})`)
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

// askedWhy begins the why of a ChangedPrefix entry that names a change
// Shield asked about (escalated): "changed: /ws/x — a change Shield asked
// about (appsec:control-weakened)".
const askedWhy = "a change Shield asked about ("

// maxAskedText bounds the text of a change askedChange judges a second
// time (Sensitive runs before Evaluate): a larger change is not
// remembered for flow:commit-carries.
const maxAskedText = 64 << 10

// askedNot are rules that ask about a change for where it is rather than
// what it does (an agent instruction file, a CI workflow, an editor's
// settings) or for what the session did before: committing such a change
// once it is approved is ordinary.
var askedNot = []string{"instructions:agent-file", "runs-later:", "flow:", "policy:", "shell:", "unknown", "too-large"}

// askedChange names, for Sensitive, the file a change writes or deletes
// in the workspace when tier 1 asks about the change (or blocks it), or
// "". The engine keeps it in the taint projection once the call ran (an
// escalation approved), so a later commit naming or staging that file is
// judged with it (flow:commit-carries). changed are the tool files the
// action changes (changedFiles, as Sensitive computed them).
func (s *Shield) askedChange(a *Action, f *Facts, changed []string) string {
	ws := s.cfg.Workspace
	if ws == "" || a.Tool == "git_commit" {
		return ""
	}
	var p string
	for _, refs := range [][]Ref{f.Writes, f.Deletes} {
		for i := range refs {
			r := &refs[i]
			if p == "" && !r.Glob && !metaWriters[r.By] && within(r.Path, ws) && r.Path != ws && !within(r.Path, path.Join(ws, ".git")) && !s.buildOutput(r.Path) {
				p = r.Path
			}
		}
	}
	if p == "" {
		return ""
	}
	size := 0
	for _, t := range f.Texts {
		size += len(t.Body)
	}
	if size > maxAskedText {
		return "" // judged once, by Evaluate: not again here
	}
	for _, c := range changed {
		if strings.HasPrefix(c, ChangedPrefix+p+changedSep) {
			return "" // already named, as a file a tool runs
		}
	}
	// judged by the rules about what a change does: a CI workflow's edit
	// is asked for where it is, and remembered only when a rule about its
	// content asks too. One pass serves Evaluate too (rules_memo.go): the
	// full verdict, watching what askedChange keeps; a second pass, with
	// keep, only when a finding it would drop changed the full verdict.
	kept := func(rule string) bool {
		for _, n := range askedNot {
			if strings.HasPrefix(rule, n) {
				return false
			}
		}
		return true
	}
	j := judgement{watch: kept}
	s.runRules(a, f, &j)
	s.memo.put(a, j.v, j.set)
	if j.unwatched {
		j = judgement{keep: kept}
		s.runRules(a, f, &j)
	}
	if !j.set || j.v.Decision == Allow {
		return ""
	}
	return ChangedPrefix + p + changedSep + askedWhy + j.v.Rule + ")"
}

// committedPaths are the paths a commit names or stages: the git_commit
// tool's paths, git commit's and git add's path arguments ("." and -A
// stage the workspace).
func (s *Shield) committedPaths(a *Action, f *Facts) []string {
	var out []string
	if a.Tool == "git_commit" {
		for i := range f.Reads {
			if f.Reads[i].By == "git_commit" && len(out) < 64 {
				out = append(out, f.Reads[i].Path)
			}
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "git" || len(r.Argv) < 2 {
			continue
		}
		args := r.Argv[1:]
		k := 0
		for k < len(args) && (args[k] == "-C" || args[k] == "-c") {
			k += 2
		}
		if k >= len(args) || args[k] != "add" && args[k] != "commit" && args[k] != "stage" {
			continue
		}
		sub := args[k]
		for n := k + 1; n < len(args) && len(out) < 64; n++ {
			x := args[n]
			switch {
			case x == "-m" || x == "--message" || x == "-F" || x == "--file" || x == "--author" || x == "-C" || x == "--reuse-message":
				n++
			case x == "-A" || x == "--all" || sub == "commit" && x == "-a":
				out = append(out, s.cfg.Workspace)
			case sub == "commit" && shortCluster(x, 'm'):
				if strings.Contains(x, "a") {
					out = append(out, s.cfg.Workspace)
				}
				n++
			case x == "--":
			case strings.HasPrefix(x, "-"):
			default:
				out = append(out, s.ResolvePath(x))
			}
		}
	}
	return out
}

// commitCarriesAsked is `flow:commit-carries` (escalate): a commit that
// names or stages a file this session changed in a call Shield asked
// about. A commit that names nothing is not judged by this rule: the
// approved change was already answered by a human, and a refused one
// never ran.
func (s *Shield) commitCarriesAsked(a *Action, f *Facts, j *judgement) bool {
	if len(a.Taint) == 0 {
		return false
	}
	paths := s.committedPaths(a, f)
	if len(paths) == 0 {
		return false
	}
	for _, t := range a.Taint {
		if !t.Changed() {
			continue
		}
		_, why, _ := strings.Cut(t.What, changedSep)
		if !strings.HasPrefix(why, askedWhy) {
			continue
		}
		changed := t.changedPath()
		for _, p := range paths {
			if p == changed || within(changed, p) {
				j.escalate("flow:commit-carries", "this commit carries %s, which this session changed in call %s: %s", s.relPath(changed), t.Call, why)
				return true
			}
		}
	}
	return false
}

// commitCarries judges what a commit carries (escalate): a change Shield
// asked about, and the messages of the git_commit tool and of git commit
// -m.
func (s *Shield) commitCarries(a *Action, f *Facts, j *judgement) {
	if s.commitCarriesAsked(a, f, j) {
		return
	}
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
