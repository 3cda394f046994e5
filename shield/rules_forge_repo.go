package shield

import (
	"strings"
)

// The workspace's own repository named explicitly (session 28, rules 26;
// docs/shield-rules.md). The default policy's forge-collaboration allows
// a comment, an edit, a close or an issue opened on the repository the
// workspace's remote names, and refuses any line with --repo/-R: a
// --repo can name someone else's repository (the text goes there). But
// `gh issue comment 412 --repo acme/app` where acme/app IS the
// workspace's own repository does what the same line without --repo
// does. So a run of gh or glab whose --repo (-R) value the workspace
// declares is matched against the allow rules as the line without that
// option and its value; deny and verify rules, the facts, tier 1 and the
// reasons keep the line as written.
//
// # Keys
//
// A repository is named by the key "repo:HOST/PATH" (lower case, ".git"
// and a trailing "/" stripped; a GitLab subgroup keeps its whole path,
// "repo:gitlab.com/group/sub/proj"), and its owner by "repo:HOST/OWNER/*"
// (another repository of the same owner or top group). The host is part
// of the key: the same owner name on another forge (acme on github.com
// and on a company's GitLab) is someone else. A value without a host is
// on the host the tool uses for it by default: github.com for gh,
// gitlab.com for glab (a line that sets GH_HOST, GITLAB_HOST … names no
// key). gh reads a three-part value as HOST/OWNER/REPO; glab reads a
// first part with a dot as a host and keeps subgroups; both take a URL
// (https://host/owner/repo, ssh://…, git@host:owner/repo.git). A value
// with an expansion ($, backquotes), any character but [a-z0-9._/-] in
// its path, or longer than maxRepoValue names nothing.
//
// # Declarations
//
// The workspace declares repositories only in its .git/config (each
// remote's url and pushurl), which the engine reads at the start of its
// walk (DeclaredTools(".git/config", …)). Not in package.json, Cargo.toml
// or go.mod: an agent edits those without being asked, whereas a write
// of .git/config is refused (runs-later:git-hook) and `git remote
// add|set-url` and `git config remote.X.url` are asked (network:raw), so
// what .git/config names is what the user set up or approved. A .git
// that is a file (a worktree's or a submodule's `gitdir: …`) is not
// followed: the configuration it points to lies outside the workspace,
// where the workspace's protections and the engine's reads do not reach.

// maxRepoValue bounds a --repo value or a remote URL read.
const maxRepoValue = 200

// maxRemotes bounds the remotes read from one .git/config, and
// maxGitConfigLine the length of a line read (longer ones are skipped).
const (
	maxRemotes       = 32
	maxGitConfigLine = 1024
)

// forgeHostVars are environment variables that send gh or glab to
// another host than the one a value's key names.
var forgeHostVars = []string{"GH_HOST", "GH_REPO", "GITLAB_HOST", "GITLAB_URI", "GL_HOST", "GITLAB_API_HOST", "GH_ENTERPRISE_TOKEN"}

// repoOption is one --repo/-R option in a list of words: the index of
// its first word, how many words it takes, and its value.
type repoOption struct {
	at, n int
	value string
}

// repoOptions finds the --repo/-R options of gh's or glab's words (from
// words[from]; up to "--", after which words are arguments): --repo V,
// --repo=V, -R V, -R=V and -RV, as their flag parser takes them.
func repoOptions(words []string, from int) []repoOption {
	var out []repoOption
	for i := from; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return out
		case w == "--repo" || w == "-R":
			if i+1 < len(words) {
				out = append(out, repoOption{i, 2, words[i+1]})
				i++
			} else {
				out = append(out, repoOption{i, 1, ""})
			}
		case strings.HasPrefix(w, "--repo="):
			out = append(out, repoOption{i, 1, w[len("--repo="):]})
		case strings.HasPrefix(w, "-R"):
			out = append(out, repoOption{i, 1, strings.TrimPrefix(w[2:], "=")})
		}
	}
	return out
}

// forgeRepo is the --repo/-R option of a run of gh or glab and the keys
// its value names (exact, owner), if it has exactly one and line (the
// whole command line) sends the tool nowhere else.
func forgeRepo(run *Run, line string) (repoOption, [2]string, bool) {
	if len(run.Argv) < 2 || (run.Argv[0] != "gh" && run.Argv[0] != "glab") {
		return repoOption{}, [2]string{}, false
	}
	for _, v := range forgeHostVars {
		if strings.Contains(line, v) {
			return repoOption{}, [2]string{}, false
		}
	}
	opts := repoOptions(run.Argv, 1)
	if len(opts) != 1 {
		return repoOption{}, [2]string{}, false
	}
	keys, ok := repoKeys(run.Argv[0], opts[0].value)
	return opts[0], keys, ok
}

// forgeRepoKeys are the keys a run's --repo value names (ToolchainKeys).
func forgeRepoKeys(run *Run, line string) []string {
	if _, keys, ok := forgeRepo(run, line); ok {
		return keys[:]
	}
	return nil
}

// repoKeys are the keys ("repo:HOST/PATH", "repo:HOST/OWNER/*") of a
// repository named by tool ("gh", "glab"; "" for a remote's URL, which
// names its host) as v.
func repoKeys(tool, v string) ([2]string, bool) {
	host, p, ok := splitRepo(tool, v)
	if !ok {
		return [2]string{}, false
	}
	owner, _, _ := strings.Cut(p, "/")
	return [2]string{"repo:" + host + "/" + p, "repo:" + host + "/" + owner + "/*"}, true
}

// splitRepo reads a repository's host and path from v (see repoKeys).
func splitRepo(tool, v string) (host, p string, ok bool) {
	if v == "" || len(v) > maxRepoValue || strings.ContainsAny(v, "$`") {
		return "", "", false
	}
	v = strings.ToLower(v)
	scheme := false
	for _, s := range []string{"https://", "http://", "ssh://", "git+ssh://", "ssh+git://", "git://"} {
		if rest, ok := strings.CutPrefix(v, s); ok {
			authority, rest, _ := strings.Cut(rest, "/")
			host, p, scheme = authority, rest, true
			if i := strings.LastIndexByte(host, '@'); i >= 0 {
				host = host[i+1:]
			}
			if i := strings.IndexByte(host, ':'); i >= 0 && strings.Trim(host[i+1:], "0123456789") == "" {
				host = host[:i]
			}
			break
		}
	}
	if !scheme {
		if h, rest, ok := strings.Cut(v, ":"); ok {
			if strings.Contains(h, "/") {
				return "", "", false // a path with a colon: no forge's
			}
			// scp-like: [user@]host:owner/repo
			if i := strings.LastIndexByte(h, '@'); i >= 0 {
				h = h[i+1:]
			}
			host, p = h, rest
		} else {
			p = v
		}
	}
	p = strings.TrimRight(p, "/")
	p = strings.TrimSuffix(p, ".git")
	p = strings.Trim(p, "/")
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || !repoChars(s) {
			return "", "", false
		}
	}
	if host == "" {
		switch tool {
		case "gh":
			// [HOST/]OWNER/REPO
			switch len(segs) {
			case 2:
				host = "github.com"
			case 3:
				host, segs = segs[0], segs[1:]
			default:
				return "", "", false
			}
		case "glab":
			// [HOST/]GROUP[/SUB…]/REPO, a host known by its dot
			if len(segs) >= 3 && strings.Contains(segs[0], ".") {
				host, segs = segs[0], segs[1:]
			} else {
				host = "gitlab.com"
			}
		default:
			return "", "", false // a local path, not a forge's repository
		}
	}
	if len(segs) < 2 || host == "" || !repoChars(host) || strings.Contains(host, "/") {
		return "", "", false
	}
	switch host {
	case "www.github.com", "ssh.github.com":
		host = "github.com"
	case "www.gitlab.com", "altssh.gitlab.com":
		host = "gitlab.com"
	}
	return host, strings.Join(segs, "/"), true
}

// repoChars reports whether s (lower case) is made of [a-z0-9._-].
func repoChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}

// ownRepoRun is run as the allow rules match it: without its --repo/-R
// option and value when the workspace declares the repository it names
// (a.Toolchain, exactly or by its owner); else run itself. The option
// must be found once in the line as written (outside quotes) with the
// same value, or run is left as it is.
func ownRepoRun(a *Action, run Run) Run {
	if len(a.Toolchain) == 0 {
		return run
	}
	opt, keys, ok := forgeRepo(&run, a.Command)
	if !ok || (declaredBy(a, keys[0]) == "" && declaredBy(a, keys[1]) == "") {
		return run
	}
	words, ok := lineWords(run.Line)
	if !ok {
		return run
	}
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.text
	}
	inLine := repoOptions(texts, 0)
	if len(inLine) != 1 || inLine[0].value != opt.value || inLine[0].n != opt.n {
		return run
	}
	first, last := words[inLine[0].at], words[inLine[0].at+inLine[0].n-1]
	start := strings.TrimRight(run.Line[:first.start], " \t")
	out := run
	out.Line = start + run.Line[last.end:]
	out.Argv = append(append(make([]string, 0, len(run.Argv)-opt.n), run.Argv[:opt.at]...), run.Argv[opt.at+opt.n:]...)
	return out
}

// lineWord is one word of a simple command as written: its text with
// the quotes taken away, and where it lies in the line.
type lineWord struct {
	text       string
	start, end int
}

// lineWords splits a simple command into its words as the shell would
// (blanks outside quotes separate them; '…', "…" and \ quote), false
// for an unterminated quote.
func lineWords(line string) ([]lineWord, bool) {
	var out []lineWord
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n') {
			i++
		}
		if i >= len(line) {
			break
		}
		start := i
		var b strings.Builder
		for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\n' {
			switch c := line[i]; c {
			case '\'':
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					return nil, false
				}
				b.WriteString(line[i+1 : i+1+j])
				i += j + 2
			case '"':
				i++
				for {
					if i >= len(line) {
						return nil, false
					}
					if line[i] == '"' {
						i++
						break
					}
					if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
						i++
					}
					b.WriteByte(line[i])
					i++
				}
			case '\\':
				if i+1 < len(line) {
					b.WriteByte(line[i+1])
				}
				i += 2
			default:
				b.WriteByte(c)
				i++
			}
		}
		if i > len(line) {
			i = len(line)
		}
		out = append(out, lineWord{b.String(), start, i})
	}
	return out, true
}

// GitRemoteRepos calls add with the keys (repoKeys) of the repositories
// a .git/config's remotes name (their url and pushurl), at most
// maxRemotes remotes. b is read line by line; a line longer than
// maxGitConfigLine is skipped, and so is a last line without its newline
// when b fills MaxToolchainFileBytes (the file was cut there).
func GitRemoteRepos(b []byte, add func(key string)) {
	if len(b) > MaxToolchainFileBytes {
		b = b[:MaxToolchainFileBytes]
	}
	text := string(b)
	if len(b) == MaxToolchainFileBytes {
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		} else {
			return
		}
	}
	remotes := 0
	in := false
	for len(text) > 0 {
		l, rest, _ := strings.Cut(text, "\n")
		text = rest
		if len(l) > maxGitConfigLine {
			continue
		}
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(l, "[")))
			in = strings.HasPrefix(name, "remote ") || strings.HasPrefix(name, "remote\t") || strings.HasPrefix(name, "remote.")
			if in {
				if remotes++; remotes > maxRemotes {
					return
				}
			}
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		if k = strings.ToLower(strings.TrimSpace(k)); k != "url" && k != "pushurl" {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, `"`) {
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				continue
			}
			v = v[1 : 1+end]
		} else if i := strings.IndexAny(v, ";#"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if keys, ok := repoKeys("", v); ok {
			add(keys[0])
			add(keys[1])
		}
	}
}
