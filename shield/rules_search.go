package shield

import (
	"path"
	"strings"
)

// keyMaterial matches what a search for credentials looks for by content:
// key blocks, and the fixed prefixes of cloud, forge and service tokens.
var keyMaterial = mustRx(`(?i:private[ _.\\-]*key|BEGIN[ _.\\-]*(?:RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED)|aws_secret_access_key|aws_session_token|client_secret)|` +
	`AKIA|ASIA|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abpr]-|sk_live|rk_live|sk-(?:proj|ant)|AIza|SG\.|npm_[A-Za-z]|hf_[A-Za-z]`)

// secretWords are what a search for credentials looks for by name, judged
// only when it searches beyond the workspace (in the workspace, code about
// tokens and passwords is ordinary work).
var secretSearchWords = mustRx(`(?i)passw|secret|token|api[_-]?key|credential|auth`)

// searchers search file content (grep and kin) or names (find and kin).
var (
	contentSearchers = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "ugrep": true, "git": true, "zgrep": true}
	fieldExtractors  = setOf("jq", "yq", "gojq", "jaq", "dasel", "xq", "tomlq", "awk", "gawk", "sed", "cut", "python", "python3", "node", "ruby", "perl")
	nameSearchers    = map[string]bool{"find": true, "fd": true, "fdfind": true, "locate": true, "mlocate": true, "plocate": true}
)

// credentialSearch is `credential-search` (escalate): a search beyond the
// workspace whose pattern is key material, a token's prefix or a secret
// word (grep -r "BEGIN RSA PRIVATE KEY" ~, rg 'AKIA[0-9A-Z]{16}' /,
// grep -ri password /etc), or a search anywhere for credential files by
// name (find / -name id_rsa, find ~ -name '*.pem'). It is how a session
// finds secrets whose paths it does not know; what it prints reaches the
// model. A search of the workspace's own code (grep -rn token src, a scan
// for leaked keys: grep -rn AKIA .) is not.
func (s *Shield) credentialSearch(_ *Action, f *Facts, j *judgement) {
	s.secretHunt(f, j)
	for i := range f.Runs {
		r := &f.Runs[i]
		argv := r.Argv
		if r.Name == "git" {
			if len(argv) < 2 || argv[1] != "grep" {
				continue
			}
			argv = argv[1:]
		}
		switch {
		case contentSearchers[r.Name]:
			outside := false
			for _, rf := range f.Reads {
				if rf.By == r.Name && !s.inWorkspace(rf.Path) {
					outside = true
				}
			}
			for _, a := range argv[1:] {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--regexp=") && !strings.HasPrefix(a, "-e") {
					continue
				}
				if outside && keyMaterial.MatchString(a) {
					j.escalate("credential-search", "%s searches outside the workspace for key material or a token (%s): a hunt for secrets", r.Name, clipText(a, 60))
					return
				}
				if outside && secretSearchWords.MatchString(a) {
					j.escalate("credential-search", "%s searches outside the workspace for %s: a hunt for secrets", r.Name, clipText(a, 60))
					return
				}
			}
		case fieldExtractors[r.Name]:
			// rules 15: a tool's configuration outside the workspace read
			// on the line (cat ~/.config/argocd/config | yq '.users[].auth-token',
			// jq -r .token ~/.config/acme/hosts.json) and a secret field
			// picked out of it
			from := ""
			for _, rf := range f.Reads {
				if !s.inWorkspace(rf.Path) && s.underHome(rf.Path) && !rf.Glob {
					from = rf.Path
					break
				}
			}
			if from == "" {
				continue
			}
			for _, a := range argv[1:] {
				if strings.HasPrefix(a, "-") || !secretSearchWords.MatchString(a) || s.ResolvePath(a) == from {
					continue
				}
				if strings.Contains(a, "/") && !strings.ContainsAny(a, "[|$ ") {
					continue // a path, not an expression
				}
				j.escalate("credential-search", "%s picks %s out of %s, outside the workspace: a secret a tool keeps, printed", r.Name, clipText(a, 60), from)
				return
			}
		case nameSearchers[r.Name]:
			// find's -name/-iname/-path/-wholename PATTERN; fd and
			// locate take the pattern as an argument.
			for k := 1; k < len(argv); k++ {
				pat := argv[k]
				if r.Name == "find" {
					if !findNameTest(pat) || k+1 >= len(argv) {
						continue
					}
					k++
					pat = path.Base(argv[k])
				}
				if credentialName(pat) {
					j.escalate("credential-search", "%s looks for files named %s, as credentials are named", r.Name, clipText(pat, 60))
					return
				}
			}
		}
	}
}

// findNameTest reports whether a find argument is a test of names.
func findNameTest(a string) bool {
	switch a {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
		return true
	}
	return false
}

// credentialNameRe matches the names (and name patterns) credential files
// have, as a search by name spells them.
var credentialNameRe = mustRx(`(?i)^\*?\.?(?:id_(?:rsa|dsa|ecdsa|ed25519)\*?|[*]?\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ovpn|keytab|tfstate)|\.env\*?|\.?netrc|\.git-credentials|credentials(?:\.json)?\*?|\.npmrc|\.pypirc|kubeconfig|wallet\.dat|\*?secret\*?|\*?token\*?|\*?passw\*?)$`)

func credentialName(p string) bool {
	return credentialNameRe.MatchString(strings.Trim(p, `"'`))
}
