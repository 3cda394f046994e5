package shield

import (
	"path"
	"strings"
)

// Secret stores by shape (session 14, second pass): the credential paths
// are a list, and every tool the list does not name keeps its token
// somewhere else. What holds across tools is the shape: a file in a
// tool's configuration directory (under a home, or /etc) whose name says
// credential, auth, token, netrc, secret or password.

// credentialNameWord matches a base name (leading dots dropped, lower
// case) that says it holds a secret: netrc, auth.json, credentials.toml,
// token, api_token.txt, secrets.yaml, hosts.token, .sentryclirc's kin
// named authrc.
var credentialNameWord = mustRx(`^(?:[\w.-]*[._-])?(?:netrc|auth|authrc|credentials?|creds|tokens?|access[_-]?tokens?|refresh[_-]?tokens?|api[_-]?(?:key|token)s?|secrets?|passwords?|pat)(?:[._-][\w.-]*)?$|^[a-z0-9]{0,8}(?:tickets?|tokens?|passwords?|credentials?|cookies?)(?:[._-][\w.-]*)?$|^[a-z0-9]{1,20}clirc$|^cli\.(?:ya?ml|json|toml)$`)

// credentialDirWord matches a directory's name (leading dots dropped,
// lower case) that says it holds keys or secrets (rules 12, k27h):
// signing-keys, private_keys, secrets, credentials, keystore.
var credentialDirWord = mustRx(`^(?:[\w-]*[_-])?(?:keys|private[_-]?keys?|signing[_-]?keys?|secrets?|credentials?|creds|tokens|keystores?|keyrings?|certs[_-]?private)$`)

// credentialByShape reports why p, read outside the workspace, holds
// credentials by its shape ("" when it does not): its name says so and it
// lies in a configuration directory under a home (a dot directory,
// .config, Library/Application Support, .local/share) or under /etc.
func (s *Shield) credentialByShape(r *Ref, segs []string) string {
	if len(segs) < 3 || s.inWorkspace(r.Path) {
		return ""
	}
	if r.Tree {
		// A directory of keys or secrets under a home's tool directory,
		// read whole (tar -C ~/.acme signing-keys, cp -r ~/.deploy/secrets).
		name := strings.TrimLeft(strings.ToLower(segs[len(segs)-1]), ".")
		if !r.Glob && s.underHome(r.Path) && credentialDirWord.MatchString(name) {
			for _, g := range segs[1 : len(segs)-1] {
				if strings.HasPrefix(g, ".") || g == "Library" {
					return "a tool's directory of keys or secrets by its name: " + path.Base(r.Path)
				}
			}
		}
		return ""
	}
	base := strings.ToLower(segs[len(segs)-1])
	if strings.HasSuffix(base, ".pub") || isTemplate(base) || strings.ContainsAny(base, "*?[") {
		return ""
	}
	name := strings.TrimLeft(base, ".")
	if !credentialNameWord.MatchString(name) || codeExt(name) {
		return ""
	}
	switch {
	case segs[1] == "etc":
	case s.underHome(r.Path):
		// A tool's own directory or dot file: some segment after the
		// home starts with a dot, or is .config's, Library's.
		dotted := false
		for _, g := range segs[1:] {
			if strings.HasPrefix(g, ".") || g == "Library" {
				dotted = true
				break
			}
		}
		if !dotted {
			return ""
		}
	default:
		return ""
	}
	return "a tool's credential file by its name: " + path.Base(r.Path)
}

// underHome reports whether p lies under the user's home, root's or any
// /home/<user>.
func (s *Shield) underHome(p string) bool {
	if s.cfg.Home != "" && within(p, s.cfg.Home) {
		return true
	}
	return within(p, "/root") || strings.HasPrefix(p, "/home/")
}

// codeExt reports whether a name is source code (auth.go, token.py):
// code about credentials, not a store of them.
func codeExt(name string) bool {
	switch path.Ext(name) {
	case ".go", ".py", ".js", ".ts", ".rb", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".lua", ".vim", ".el", ".sh", ".php", ".swift", ".md", ".html", ".css":
		return true
	}
	return false
}

// secretScanners are secret scanners: pointed beyond the workspace they
// are a hunt for secrets whose findings reach the model.
var secretScanners = map[string]bool{"gitleaks": true, "trufflehog": true, "detect-secrets": true, "ggshield": true, "noseyparker": true, "secretlint": true, "whispers": true, "kingfisher": true, "betterleaks": true}

// historyDumps are git subcommands whose output carries the content of
// past commits.
var historyDumps = map[string]bool{"log": true, "rev-list": true, "whatchanged": true, "reflog": true}

// tokenTable matches SQL that reads a column or table whose name says it
// holds secrets (select token from api_tokens, select * from secrets).
var tokenTable = mustRx(`(?is)\bselect\b.*?(?:` + `[\w.]*(?:token|secret|passw|api_?key|credential)[\w]*` + `).*?\bfrom\b|\bfrom\s+["'\x60]?[\w.]*(?:token|secret|passw|api_?key|credential)`)

// secretHunt is the part of credential-search that works by effect rather
// than by the searcher's name: a search for secret words over the
// repository's history (git log -p | grep -i token, git log -S password),
// a secret scanner pointed outside the workspace (gitleaks detect --source
// ~), and SQL reading a table or column of tokens.
func (s *Shield) secretHunt(f *Facts, j *judgement) {
	dumps, search := false, ""
	for i := range f.Runs {
		r := &f.Runs[i]
		switch {
		case r.Name == "git" && len(r.Argv) > 2 && (r.Argv[1] == "show" || r.Argv[1] == "cat-file"):
			// git show REV:PATH reads a file as a past commit held it: a
			// credential file is one still, whatever the commit.
			for _, x := range r.Argv[2:] {
				if i := strings.IndexByte(x, ':'); i > 0 && !strings.HasPrefix(x, "-") && i+1 < len(x) {
					if g := s.credential(&Ref{Path: s.ResolvePath(x[i+1:])}); g != "" {
						j.block("credential-path", "git %s reads %s from the repository's history, which holds credentials (%s)", r.Argv[1], x, g)
						return
					}
				}
			}
		case r.Name == "git" && len(r.Argv) > 1 && historyDumps[r.Argv[1]] && !pathspecAfter(r.Argv):
			for k, a := range r.Argv[2:] {
				switch {
				case a == "-p" || a == "--patch" || r.Argv[1] == "rev-list":
					dumps = true
				case (a == "-S" || a == "-G") && k+3 < len(r.Argv):
					if w := r.Argv[k+3]; secretSearchWords.MatchString(w) || keyMaterial.MatchString(w) {
						j.escalate("credential-search", "git %s searches the repository's history for %s: a hunt for secrets", r.Argv[1], clipText(w, 40))
						return
					}
				case strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "-G") || strings.HasPrefix(a, "--grep="):
					if w := a[2:]; secretSearchWords.MatchString(w) || keyMaterial.MatchString(w) {
						j.escalate("credential-search", "git %s searches the repository's history for %s: a hunt for secrets", r.Argv[1], clipText(w, 40))
						return
					}
				}
			}
		case contentSearchers[r.Name]:
			argv := r.Argv[1:]
			if r.Name == "git" {
				if len(argv) == 0 || argv[0] != "grep" {
					continue
				}
				argv = argv[1:]
			}
			for _, a := range argv {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "-e") && !strings.HasPrefix(a, "--regexp=") {
					continue
				}
				if secretSearchWords.MatchString(a) || keyMaterial.MatchString(a) {
					search = a
					break
				}
			}
		case secretScanners[r.Name]:
			for _, a := range r.Argv[1:] {
				if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
					a = v
				}
				if !(strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || strings.HasPrefix(a, "$HOME") || strings.HasPrefix(a, "${HOME}") || strings.HasPrefix(a, "..")) {
					continue
				}
				if p := s.ResolvePath(strings.Replace(strings.Replace(a, "${HOME}", "~", 1), "$HOME", "~", 1)); !s.inWorkspace(p) {
					j.escalate("credential-search", "%s scans %s, outside the workspace: a hunt for secrets", r.Name, clipText(a, 60))
					return
				}
			}
		case sqlClients[r.Name]:
			for _, a := range r.Argv[1:] {
				if tokenTable.MatchString(a) {
					j.escalate("credential-search", "%s reads a table or column of secrets (%s)", r.Name, clipText(a, 60))
					return
				}
			}
		}
	}
	if dumps && search != "" {
		j.escalate("credential-search", "the repository's history is searched for %s: a hunt for secrets in past commits", clipText(search, 40))
	}
}

// sqlClients are database clients whose arguments may carry SQL.
var sqlClients = map[string]bool{"sqlite3": true, "psql": true, "mysql": true, "mariadb": true, "duckdb": true, "clickhouse-client": true, "mongosh": true, "cockroach": true, "usql": true, "pgcli": true, "mycli": true, "litecli": true}

// pathspecAfter reports whether a git command is narrowed to paths after
// "--" (git log -p -S password -- src/): the history of code, read for
// when it changed, not the whole history hunted.
func pathspecAfter(argv []string) bool {
	for k, a := range argv {
		if a == "--" {
			return k+1 < len(argv)
		}
	}
	return false
}
