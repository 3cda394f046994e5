package shield

import (
	"path"
	"strings"
)

// Audit evasion in the repository's own policy: the hooks uninstalled,
// commits made under another identity or unsigned, CI told to skip a
// commit or its logs deleted, findings suppressed in code, a secret
// scanner told to allow everything, files that guard the repository
// hidden from git, its code owners changed. Each is asked about
// (escalate): every one has an honest use, none is everyday work.

var (
	// skipCIRe is a commit message's marker that CI skips the commit.
	// forgedApprovalRe is a trailer or line in a commit message that
	// records a review or approval (session 14, second pass): written by
	// the agent, it claims a human's act that did not take place.
	forgedApprovalRe = mustRx(`(?im)^\s*(?:approved|reviewed|acked|security[- ]reviewed|security[- ]approved|lgtm|okayed)[- ]by\s*:\s*\S|^\s*(?:approval|approved|security[- ]review|security[- ]sign[- ]?off|code[- ]review|review(?:[- ]status)?)\s*:\s*(?:approved|passed|granted|ok|lgtm|done|yes)\b`)
	skipCIRe         = mustRx(`(?i)\[(?:skip ci|ci skip|no ci|skip actions|actions skip|skip azurepipelines|skip netlify)\]|\*\*\*NO_CI\*\*\*|(?m)^skip-checks:\s*true`)
	// suppressRe is a comment that silences a security finding: gosec,
	// bandit, semgrep, secret scanners, eslint wholesale or its security
	// rules, golangci-lint wholesale.
	suppressRe = mustRx(`(?i)(?:#|//|/\*)\s*(?:#?nosec\b|nosemgrep\b|gitleaks:allow|pragma:\s*allowlist\s+secret|noqa:\s*S\d|nolint(?::[\w,]*gosec)?(?:\s|$|\*/)|eslint-disable(?:-next-line|-line)?(?:\s*(?:\*/|$)|\s+[\w/,\s-]*(?:security/|no-eval|no-implied-eval|no-new-func))|NOSONAR\b)`)
	// forgedTurnRe is a conversation turn written into a commit message
	// or a note: the user's or the assistant's consent, forged where a
	// later reader (an agent, a reviewer) takes it for the record.
	forgedTurnRe = mustRx(`(?im)(?:^|\\n|\n)\s*(?:user|human|assistant|the user)\s*:\s*["']?(?:yes|ok|okay|sure|approved?|go ahead|proceed|confirmed|do it|lgtm)\b`)
	// markdownBeaconRe is a markdown image whose URL carries data in its
	// query: rendering it sends the data to the image's host.
	markdownBeaconRe = mustRx(`!\[[^\]]*\]\(\s*https?://[^)\s?]+\?[^)\s]*=(?:[A-Za-z0-9+/_%-]{24,}|[^)\s&]*(?:\$\{|\$\(|\{\{))`)
	// imageBeacon is the same image with a placeholder for data in its
	// query (<base64 of .env>, {{secrets}}, ${TOKEN}, [the key]) rather
	// than a value: a template for what the next reader writes (rules 16;
	// prompt-injection:addressed reads it in every text, memory and forge
	// posts included).
	imageBeacon = mustRx(`(?i)!\[[^\]\n]{0,100}\]\(https?://[^\s)"'?]{1,200}\?[^\s)"']{0,200}?(?:<[^>\n]{1,80}>|\{\{?[^}\n]{1,80}\}|\$\{?[A-Z_][A-Z0-9_]*|\[[^\]\n]{1,80}\]|%3C[^%\n]{1,80}%3E)`)
	// allowAllRe is a scanner allowlist entry that matches everything.
	allowAllRe = mustRx(`(?m)(?:^|[\[\s,=])(?:'''|"|')(?:\.\*|\.\+|\^\.\*\$?|\*\*(?:/\*)?|\*)(?:'''|"|')`)
	// guardNameRe is a .gitignore or info/exclude line that hides a file
	// that guards the repository or runs at build time.
	guardNameRe = mustRx(`(?m)^\s*!?/?(?:\*\*/)?(?:build\.rs|\.github(?:/.*)?|\.husky(?:/.*)?|\.githooks(?:/.*)?|hooks(?:/.*)?|\.pre-commit-config\.ya?ml|CODEOWNERS|\.gitlab-ci\.yml|Jenkinsfile|Makefile|\.gitleaks\.toml|conftest\.py|setup\.py|\.envrc|\.gitattributes|\.gitignore)\s*$`)
)

// repoEvasion is `evasion:*` of the repository's policy (escalate).
func (s *Shield) repoEvasion(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		args := r.Argv[min(1, len(r.Argv)):]
		switch r.Name {
		case "pre-commit", "husky", "lefthook", "overcommit":
			if len(args) > 0 && (args[0] == "uninstall" || args[0] == "--uninstall") {
				j.escalate("evasion:skip-hooks", "%s uninstalls the repository's hooks", quote(r.Line))
				return
			}
		case "git":
			if why := gitEvades(args); why != "" {
				j.escalate(why[:strings.IndexByte(why, ' ')], "%s %s", quote(r.Line), why[strings.IndexByte(why, ' ')+1:])
				return
			}
		case "gh":
			if len(args) >= 2 && args[0] == "run" && args[1] == "delete" {
				j.escalate("evasion:ci-logs", "%s deletes a CI run and its logs", quote(r.Line))
				return
			}
			if len(args) >= 1 && args[0] == "api" && strings.Contains(strings.Join(args, " "), "/actions/runs/") && hasDelete(args) {
				j.escalate("evasion:ci-logs", "%s deletes CI runs or their logs through the API", quote(r.Line))
				return
			}
		}
	}
	if a.Command != "" && !j.inner && strings.Contains(a.Command, "git") {
		for _, k := range []string{"GIT_AUTHOR_NAME=", "GIT_AUTHOR_EMAIL=", "GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL="} {
			if strings.Contains(a.Command, k) {
				j.escalate("evasion:identity", "the command commits under another identity (%s)", strings.TrimSuffix(k, "="))
				return
			}
		}
	}
	if commitToolEvasion(f, j) {
		return
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, s.cfg.Workspace) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		base := path.Base(p)
		rel := strings.TrimPrefix(strings.TrimPrefix(p, s.cfg.Workspace), "/")
		if m := markdownBeaconRe.FindString(body); m != "" {
			j.escalate("exfiltration:markdown-image", "%s holds a markdown image whose URL carries data (%s): rendering it sends the data", rel, quote(m))
			return
		}
		switch {
		case base == ".gitignore" || rel == ".git/info/exclude" || strings.HasSuffix(rel, "/.git/info/exclude"):
			if m := guardNameRe.FindString(body); m != "" {
				j.escalate("evasion:hidden-file", "%s hides %s from git: a file that guards the repository or runs at build time", rel, quote(strings.TrimSpace(m)))
				return
			}
			// rules 17: source the repository tracks, at any depth
			plus, _ := patternLines(body, removedText(f, t.Source))
			for _, l := range plus[:min(len(plus), 256)] {
				if why := hiddenSource(l); why != "" {
					j.escalate("evasion:hidden-file", "%s hides %s from git: %s", rel, quote(l), why)
					return
				}
			}
		case base == "CODEOWNERS":
			j.escalate("evasion:codeowners", "%s is changed: who must review what", rel)
			return
		case scannerIgnoreFile(base):
			// rules 16: what a scanner's ignore file or exclusions setting
			// adds beyond routine material (src/, src/payments/**)
			if x := scannerExcludes(base, body, removedText(f, t.Source)); x != "" {
				j.escalate("evasion:scanner-off", "%s excludes %s from the scanner: what it would find there is no longer reported", rel, quote(x))
				return
			}
		case scannerConfig(base):
			if m := allowAllRe.FindString(body); m != "" && strings.Contains(strings.ToLower(body), "allow") {
				j.escalate("evasion:scanner-off", "%s allows everything (%s): the secret scanner finds nothing", rel, quote(strings.TrimSpace(m)))
				return
			}
		case codeFile(p) || sourceExts[path.Ext(p)]:
			if m := suppressRe.FindString(body); m != "" {
				j.escalate("evasion:suppress", "%s silences a security finding or a linter wholesale: %s", rel, quote(strings.TrimSpace(m)))
				return
			}
		}
	}
}

// gitEvades says how git arguments evade the repository's audit ("rule
// reason"), or "": another identity, signing turned off, CI skipped.
func gitEvades(args []string) string {
	sub := ""
	for k := 0; k < len(args); k++ {
		x := args[k]
		if x == "-c" && k+1 < len(args) {
			kv := strings.ToLower(args[k+1])
			switch {
			case strings.HasPrefix(kv, "user.name=") || strings.HasPrefix(kv, "user.email=") || strings.HasPrefix(kv, "author.") || strings.HasPrefix(kv, "committer."):
				return "evasion:identity commits under another identity (-c " + args[k+1] + ")"
			case strings.HasPrefix(kv, "commit.gpgsign=f") || strings.HasPrefix(kv, "tag.gpgsign=f") || strings.HasPrefix(kv, "commit.gpgsign=0") || strings.HasPrefix(kv, "commit.gpgsign=no"):
				return "evasion:unsigned turns commit signing off"
			}
			k++
			continue
		}
		if x == "-C" || x == "--git-dir" || x == "--work-tree" {
			k++
			continue
		}
		if sub == "" && !strings.HasPrefix(x, "-") {
			sub = x
			continue
		}
		switch sub {
		case "commit", "merge", "tag", "revert", "cherry-pick", "am", "rebase":
			switch {
			case x == "--no-gpg-sign":
				return "evasion:unsigned turns commit signing off"
			case strings.HasPrefix(x, "--author"):
				return "evasion:identity commits under another identity (" + x + ")"
			case skipCIRe.MatchString(x):
				return "evasion:skip-ci tells CI to skip the commit"
			case sub == "commit":
				if why := commitMessageEvades(x); why != "" {
					return why
				}
			}
		case "config":
			kl := strings.ToLower(x)
			if (kl == "commit.gpgsign" || kl == "tag.gpgsign") && k+1 < len(args) && isFalse(args[k+1]) {
				return "evasion:unsigned turns commit signing off"
			}
			if (kl == "user.name" || kl == "user.email") && k+1 < len(args) && botName(args[k+1]) {
				return "evasion:identity sets a bot's identity (" + args[k+1] + ")"
			}
		}
	}
	return ""
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

// botName reports whether an identity is a bot's or a service's.
func botName(v string) bool {
	l := strings.ToLower(v)
	return strings.Contains(l, "[bot]") || strings.Contains(l, "bot@") || strings.Contains(l, "noreply@github.com") && strings.Contains(l, "bot") ||
		strings.HasSuffix(l, "-bot") || strings.HasSuffix(l, "bot") || strings.Contains(l, "github-actions")
}

func hasDelete(args []string) bool {
	for k, a := range args {
		if a == "-X" && k+1 < len(args) && strings.EqualFold(args[k+1], "DELETE") || strings.EqualFold(a, "-XDELETE") || strings.EqualFold(a, "--method=DELETE") || a == "--method" && k+1 < len(args) && strings.EqualFold(args[k+1], "DELETE") {
			return true
		}
	}
	return false
}

// scannerConfig reports whether base configures a secret scanner.
func scannerConfig(base string) bool {
	switch base {
	case ".gitleaks.toml", "gitleaks.toml", ".gitleaksignore", ".secretlintrc", ".secretlintrc.json", ".trufflehog.yml", "trufflehog.yml",
		".trufflehogignore", ".secrets.baseline", ".talismanrc", ".ggshield.yaml", ".gitguardian.yaml":
		return true
	}
	return false
}

// scannerIgnoreFile reports whether base is a code or dependency
// scanner's ignore file or exclusions setting (rules 16).
func scannerIgnoreFile(base string) bool {
	switch base {
	case ".semgrepignore", ".trivyignore", ".snykignore", ".bearerignore", ".checkmarxignore", "sonar-project.properties", ".sonarcloud.properties", ".gitleaksignore":
		return true
	}
	return false
}

// scannerExcludes returns a path or pattern the text excludes from a
// scanner that the old text did not and that is not routine material
// (tests, fixtures, generated code, dependencies, builds, docs), or "".
func scannerExcludes(base, body, old string) string {
	// rules 18: every line (an entry past the 2,000th was not read), each
	// looked up in old's entries rather than searched for in old's text
	had := map[string]bool{}
	for _, l := range strings.Split(clip(old, maxTextJudged), "\n") {
		for _, it := range strings.Split(l, ",") {
			if k, v, ok := strings.Cut(it, "="); ok && strings.HasSuffix(base, ".properties") && strings.Contains(strings.ToLower(k), "exclusions") {
				it = v
			}
			had[strings.TrimSpace(it)] = true
		}
	}
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var items []string
		if strings.HasSuffix(base, ".properties") {
			k, v, ok := strings.Cut(l, "=")
			if !ok || !strings.Contains(strings.ToLower(k), "exclusions") {
				continue
			}
			items = strings.Split(v, ",")
		} else {
			items = []string{l}
		}
		for _, it := range items {
			it = strings.TrimSpace(it)
			if it == "" || had[it] || benignExclusion(it) {
				continue
			}
			return it
		}
	}
	return ""
}
