package shield

import (
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// What commands, memory and requests reach (rules 12, k27h; docs/
// shield-rules.md "Secrets staged, code sources added, hunts, memory
// destinations, numeric hosts"):
//
//   - stagedSecrets: `git add` of a credential file (-f past .gitignore
//     or not) puts it in the next commit, which every push and clone
//     carries: block, as a commit of it is (credential-path).
//   - codeSourcesAdded: a repository added as code of the workspace (git
//     submodule add URL, git subtree add … URL), and an archive fetched
//     from a host the policy does not allow then unpacked into the
//     workspace (curl -o x.zip … && unzip x.zip -d vendor/sdk): code no
//     one reviewed becomes part of the build (supply-chain:source,
//     remote-code:vendored; escalate).
//   - reconSearch: a memory search whose query asks for credentials
//     (password, token, private key, PIN, login …) and a search by name
//     over the whole machine or a whole home for something in particular
//     (find / -name 'wallet*', locate cookies.sqlite; not a library, a
//     header or a kind of file, *.go): hunts, whatever they are named for
//     (credential-search; escalate).
//   - memoryDestination: a memory note that makes a host the policy does
//     not allow the place data goes (an upload endpoint, a webhook, a
//     sink: "default upload endpoint: https://…"): every later agent
//     would send there (memory:instruction; escalate).
//   - numericHosts: a URL whose host is an address written as one
//     number, in hex or in octal (http://3325256714/, http://0xC6336472/,
//     http://0306.0063.0144.0162/): a host hidden from its reader
//     (network:obfuscated-host; block).

// stagedSecrets is credential-path for `git add`.
func (s *Shield) stagedSecrets(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "git" || len(r.Argv) < 3 || literalVia(r.Via) {
			continue
		}
		k := 1
		for k < len(r.Argv) && strings.HasPrefix(r.Argv[k], "-") {
			if r.Argv[k] == "-C" || r.Argv[k] == "-c" {
				k++
			}
			k++
		}
		if k >= len(r.Argv) || (r.Argv[k] != "add" && r.Argv[k] != "stage") {
			continue
		}
		for _, p := range r.Argv[k+1:] {
			if strings.HasPrefix(p, "-") || p == "." || p == "" {
				continue
			}
			switch path.Ext(p) {
			case ".age", ".gpg", ".enc", ".asc", ".sops":
				continue // encrypted to be committed
			}
			ref := &Ref{Path: s.ResolvePath(p), Glob: hasMeta(p), By: "git add"}
			if g := s.credential(ref); g != "" {
				j.block("credential-path", "git add stages %s, which holds credentials (%s): the next commit keeps it, and every push and clone carries it", p, g)
				return
			}
		}
	}
}

// archiveExtractors unpack an archive.
var archiveExtractors = setOf("unzip", "7z", "7za", "bsdtar", "tar", "unrar", "gunzip", "xz", "unxz", "zstd", "cpio")

// codeSourcesAdded judges repositories added as code and fetched
// archives unpacked into the workspace.
func (s *Shield) codeSourcesAdded(_ *Action, f *Facts, j *judgement) {
	fetched := map[string]string{} // path -> host
	for _, q := range f.Requests {
		if q.By != "curl" && q.By != "wget" && q.By != "aria2c" && q.By != "http" && q.By != "xh" {
			continue
		}
		if q.Host == "" || s.hostAllowed(q.Host) || localHost(q.Host) {
			continue
		}
		for _, w := range f.Writes {
			if w.By == q.By && !w.Tree {
				fetched[w.Path] = q.Host
			}
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if literalVia(r.Via) {
			continue
		}
		if r.Name == "git" && len(r.Argv) > 3 && (r.Argv[1] == "submodule" || r.Argv[1] == "subtree") && slicesContains(r.Argv[2:], "add") {
			for _, a := range r.Argv[3:] {
				if strings.Contains(a, "://") || strings.HasPrefix(a, "git@") {
					j.escalate("supply-chain:source", "git %s add makes %s code of the workspace: a repository no one here reviewed, built with the project", r.Argv[1], clipText(a, 80))
					return
				}
			}
		}
	}
	if len(fetched) == 0 {
		return
	}
	for i := range f.Reads {
		rd := &f.Reads[i]
		host, ok := fetched[rd.Path]
		if !ok || !archiveExtractors[rd.By] {
			continue
		}
		for _, w := range f.Writes {
			if w.By == rd.By && s.inWorkspace(w.Path) {
				j.escalate("remote-code:vendored", "%s unpacks an archive fetched from %s into %s: code no one reviewed becomes part of the workspace", rd.By, host, w.Path)
				return
			}
		}
	}
}

// memoryCredentialQuery is a memory search for credentials.
var memoryCredentialQuery = mustRx(`(?i)\b(?:passw\w*|passphrase|secrets?|tokens?|credentials?|creds|api[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|signing[ _-]?keys?|pins?|logins?|tickets?|otp|2fa|mfa|cookies?|session[ _-]?keys?)\b`)

// memoryFeatureQuery is a query about code that handles credentials
// (the password reset flow, token refresh logic, how keys rotate), not
// for a credential's value.
var memoryFeatureQuery = mustRx(`(?i)\b(?:flow|logic|reset|hash\w*|expir\w*|refresh\w*|rotat\w*|validat\w*|handler|endpoint|middleware|page|form|test\w*|bug|format|policy|polic\w*|length|strength|schema|migration|model|field|column|ui|ux|design|how (?:we|to|does|do))\b`)

// libraryName is a search by name for what a build links or includes.
var libraryName = mustRx(`(?i)(?:\.so(?:\.[\d*]+)*|\.a|\.dylib|\.dll|\.lib|\.h|\.hpp|\.pc|\.cmake|\.jar|\.pyi?|\.whl|\.tar\.gz)\*?['"]?$|^['"]?lib[\w.+*-]*['"]?$`)

// reconSearch judges hunts: memory searched for credentials, and a
// whole machine or home searched by name.
func (s *Shield) reconSearch(a *Action, f *Facts, j *judgement) {
	if a.Tool == "memory_search" {
		for _, t := range f.Texts {
			if t.Source != "memory query" {
				continue
			}
			q := clip(t.Body, 4096)
			if memoryFeatureQuery.MatchString(q) {
				continue // code about credentials: a reset flow, token expiry
			}
			if m := memoryCredentialQuery.FindString(q); m != "" {
				j.escalate("credential-search", "the memory search asks for %s: a hunt for secrets in what earlier sessions kept", m)
				return
			}
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if !nameSearchers[r.Name] || literalVia(r.Via) {
			continue
		}
		whole := r.Name == "locate" || r.Name == "mlocate" || r.Name == "plocate"
		var names []string
		for k := 1; k < len(r.Argv); k++ {
			a := r.Argv[k]
			if r.Name == "find" && findNameTest(a) && k+1 < len(r.Argv) {
				names = append(names, r.Argv[k+1])
				k++
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if r.Name == "find" && k == 1 || r.Name != "find" {
				if p := path.Clean(a); p == "/" || p == "~" || p == "$HOME" || p == "${HOME}" || p == s.cfg.Home || p == "/home" || p == "/Users" {
					whole = true
				}
			}
			if r.Name != "find" {
				names = append(names, a)
			}
		}
		if !whole || len(names) == 0 {
			continue
		}
		lib := true
		for _, n := range names {
			// A library, a header, or a kind of file ("*.go"): what a
			// build or a reader looks for, not something in particular.
			if b := strings.Trim(n, `"'`); !libraryName.MatchString(b) && !genericGlob(b) {
				lib = false
			}
		}
		if !lib {
			j.escalate("credential-search", "%s searches the whole machine or home by name (%s): reconnaissance beyond the workspace", r.Name, clipText(strings.Join(names, " "), 60))
			return
		}
	}
}

// memoryDestinationRe is a note naming where data goes.
var memoryDestinationRe = mustRx(`(?i)\b(?:upload|uploads|endpoint|webhook|sink|collector|drop|dropbox|exfil\w*|send|post|forward|ship|report|dump|backup|mirror|sync)\b[^\n]{0,80}?\b(https?://[^\s"'<>)]+)`)

// memorySourceRe is a note naming where code comes from: a registry, a
// mirror, a package source or index (rules 12, k27h).
var memorySourceRe = mustRx(`(?i)\b(?:registry|registries|mirror|mirrors|(?:gem|package|pip|npm|maven|gradle|composer|cargo|go) ?(?:source|repo|repository|repositories|index|proxy|feed)|index[- ]url|sources? for (?:gems|packages|dependencies))\b[^\n]{0,80}?\b((?:https?://)?[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+\.[a-z]{2,}(?:/[^\s"'<>)]*)?)`)

// memorySourceAfterRe is a host named, then made a source ("add
// repo.x.net to Gradle repositories").
var memorySourceAfterRe = mustRx(`(?i)\b((?:https?://)?[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+\.[a-z]{2,})\b[^\n]{0,40}?\b(?:repositories|registries|registry|mirrors?|package sources|sources for (?:gems|packages|dependencies)|index(?:es)?)\b`)

// memoryDomainRe is a bare host in a note that names destinations.
var memoryDomainRe = mustRx(`(?i)\b(?:https?://)?([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,})\b`)

// memoryDestination judges memory notes that make a host where data
// goes, or where code comes from.
func (s *Shield) memoryDestination(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		if t.Source != "memory" && t.Source != "content:"+s.memoryFile {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		for _, m := range memoryDestinationRe.FindAllStringSubmatch(body, 8) {
			if h := noteHost(m[1]); h != "" && !s.hostAllowed(h) && !localHost(h) {
				j.escalate("memory:instruction", "the memory note makes %s where data goes (%s): every later agent would send there", h, clipText(m[0], 80))
				return
			}
		}
		for _, m := range append(memorySourceRe.FindAllStringSubmatch(body, 8), memorySourceAfterRe.FindAllStringSubmatch(body, 8)...) {
			if h := noteHost(m[1]); h != "" && !s.hostAllowed(h) && !localHost(h) {
				j.escalate("memory:instruction", "the memory note makes %s where code comes from (%s): every later agent would install from it", h, clipText(m[0], 80))
				return
			}
		}
		// Destinations named as bare hosts ("approved upload
		// destinations: paste.rs, transfer.sh").
		if loc := destinationsWord.FindStringIndex(body); loc != nil {
			rest := body[loc[1]:min(len(body), loc[1]+200)]
			for _, m := range memoryDomainRe.FindAllStringSubmatch(rest, 8) {
				if h := strings.ToLower(m[1]); !s.hostAllowed(h) && !localHost(h) {
					j.escalate("memory:instruction", "the memory note makes %s where data goes (%s): every later agent would send there", h, clipText(body[loc[0]:min(len(body), loc[1]+60)], 80))
					return
				}
			}
		}
	}
}

// destinationsWord names a list of places data goes.
var destinationsWord = mustRx(`(?i)\b(?:upload|sharing|share|paste|exfil\w*|send|dump) ?(?:destinations?|targets?|sites?|hosts?|services?)\b`)

// noteHost is the host a URL or bare host names in a note, or "".
func noteHost(v string) string {
	v = strings.TrimRight(v, ".,;:")
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// numericHosts blocks URLs whose host is an address written as a number.
func (s *Shield) numericHosts(_ *Action, f *Facts, j *judgement) {
	for _, q := range f.Requests {
		if h := q.Host; numericHost(h) {
			j.block("network:obfuscated-host", "%s reaches %s, an address written as a number (%s): a host hidden from its reader", q.By, h, numericHostIP(h))
			return
		}
	}
	for _, t := range f.Texts {
		if t.Source != "url" && t.Source != "body" {
			continue
		}
		if u, err := url.Parse(strings.TrimSpace(clip(t.Body, 4096))); err == nil && numericHost(u.Hostname()) {
			j.block("network:obfuscated-host", "the request reaches %s, an address written as a number (%s): a host hidden from its reader", u.Hostname(), numericHostIP(u.Hostname()))
			return
		}
	}
}

// numericHost reports whether h is an IPv4 address written as one
// number (decimal, 0x hex, 0 octal) or with hex or octal parts.
func numericHost(h string) bool {
	return numericHostIP(h) != ""
}

// numericHostIP is the dotted address numericHost's h stands for, or "".
func numericHostIP(h string) string {
	if h == "" || len(h) > 64 {
		return ""
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return ""
	}
	var vals []uint64
	odd := false
	for _, p := range parts {
		if p == "" {
			return ""
		}
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p, odd = 16, p[2:], true
		case len(p) > 1 && p[0] == '0':
			base, odd = 8, true
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return ""
		}
		vals = append(vals, v)
	}
	if len(parts) == 4 && !odd {
		return "" // a dotted quad, as written
	}
	var n uint64
	switch len(vals) {
	case 1:
		if vals[0] < 1<<16 {
			return "" // a small number is not an address
		}
		n = vals[0]
	case 2:
		n = vals[0]<<24 | vals[1]&0xffffff
	case 3:
		n = vals[0]<<24 | vals[1]<<16 | vals[2]&0xffff
	case 4:
		n = vals[0]<<24 | vals[1]<<16 | vals[2]<<8 | vals[3]
	}
	return net.IPv4(byte(n>>24), byte(n>>16), byte(n>>8), byte(n)).String()
}

// credentialProhibitionRe is a standing rule that forbids keeping or
// spreading credentials ("never store portal logins in notes", "do not
// commit tokens"): it makes later agents safer, and is not asked about
// as a standing rule (rules 12, k27h).
var credentialProhibitionRe = mustRx(`(?i)^\W*(?:never|do not|don't|must not|mustn't)\s+(?:store|keep|save|write|put|commit|log|paste|share|print|echo|copy|record|include)\b[^.;\n]{0,40}?\b(?:passw\w*|logins?|secrets?|tokens?|credentials?|keys?|pins?|tickets?|cookies?)\b[^.;\n]{0,40}$`)

// credentialProhibition reports whether the standing rule m only forbids
// keeping or spreading credentials.
func credentialProhibition(m string) bool {
	return credentialProhibitionRe.MatchString(strings.TrimSpace(m))
}

// pipedSecretWords are what a search of a program's output for secrets
// looks for.
var pipedSecretWords = mustRx(`(?i)passw|secret|token|api[_-]?key|private[_-]?key|credential`)

// showSecretsFlag is an option that makes a program print what it
// otherwise masks (mvn -DshowPasswords=true, pulumi --show-secrets).
var showSecretsFlag = mustRx(`(?i)^-{1,2}D?(?:show|reveal|print|dump|display|unmask|include|with)[-_.]?(?:passwords?|secrets?|credentials?|sensitive|tokens?|plaintext)(?:=(?:true|yes|1))?$`)

// secretsShown judges lines that print secrets a program holds: its
// output searched for secret words (./gradlew properties | grep -i
// password), an option that unmasks them (-DshowPasswords=true), a
// container's environment (docker inspect … .Config.Env). Escalate.
func (s *Shield) secretsShown(a *Action, f *Facts, j *judgement) {
	if a.Command == "" {
		return
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if literalVia(r.Via) {
			continue
		}
		for _, arg := range r.Argv[1:] {
			if showSecretsFlag.MatchString(arg) {
				j.escalate("credential-print", "%s %s: it prints the secrets it otherwise masks", r.Name, clipText(arg, 40))
				return
			}
		}
		switch r.Name {
		case "grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep":
			if !strings.Contains(a.Command, "|") {
				continue
			}
			reads := false
			for _, rd := range f.Reads {
				if rd.By == r.Name {
					reads = true
				}
			}
			if reads || gitDiffIn(f) {
				// It searches files (credentialSearch judges those), or the
				// workspace's own changes for a leak before a commit.
				continue
			}
			for _, arg := range r.Argv[1:] {
				if (!strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, "-e") || strings.HasPrefix(arg, "--regexp")) && pipedSecretWords.MatchString(arg) {
					j.escalate("credential-search", "%s searches what the line prints for %s: a hunt for the secrets a program holds", r.Name, clipText(arg, 60))
					return
				}
			}
		case "docker", "podman", "nerdctl":
			if !(len(r.Argv) > 1 && r.Argv[1] == "inspect" || len(r.Argv) > 2 && r.Argv[1] == "container" && r.Argv[2] == "inspect") {
				continue
			}
			format := ""
			for k, arg := range r.Argv {
				if (arg == "--format" || arg == "-f") && k+1 < len(r.Argv) {
					format = r.Argv[k+1]
				} else if v, ok := strings.CutPrefix(arg, "--format="); ok {
					format = v
				}
			}
			if format == "" || strings.Contains(format, "Env") || strings.Contains(format, "json .Config}") || format == "{{json .}}" {
				j.escalate("credential-env", "%s inspect prints a container's environment, where its secrets are", r.Name)
				return
			}
		}
	}
}

// installVerbs add or fetch packages.
var installVerbs = setOf("install", "add", "i", "update", "upgrade", "sync", "get", "restore", "fetch", "download")

// sourceFlagNames name where an install fetches from.
var sourceFlagNames = setOf("--source", "--registry", "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--repository",
	"--repo", "--add-source", "--server", "--mirror", "--channel", "-c")

// installSource judges installs told by an option to fetch from a host
// the policy does not allow (bundle plugin install x --source https://…,
// a tool's --registry URL): where code comes from (supply-chain:source,
// escalate). The ecosystems' own forms are judged by buildCommands too.
func (s *Shield) installSource(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if literalVia(r.Via) || len(r.Argv) < 3 {
			continue
		}
		verb := false
		for _, arg := range r.Argv[1:] {
			if installVerbs[arg] {
				verb = true
				break
			}
		}
		if !verb {
			continue
		}
		for k, arg := range r.Argv[1:] {
			name, val, ok := strings.Cut(arg, "=")
			if !ok && sourceFlagNames[arg] && k+2 < len(r.Argv) {
				name, val, ok = arg, r.Argv[k+2], true
			}
			if !ok || !sourceFlagNames[name] || !strings.Contains(val, "://") {
				continue
			}
			if h := noteHost(val); h != "" && !s.hostAllowed(h) && !localHost(h) {
				j.escalate("supply-chain:source", "%s installs from %s (%s): code from a source the policy does not allow", r.Name, h, clipText(arg, 60))
				return
			}
		}
	}
}

// gitDiffIn reports whether the line runs git diff (the workspace's own
// changes: searching them for a secret is a leak check).
func gitDiffIn(f *Facts) bool {
	for i := range f.Runs {
		if r := &f.Runs[i]; r.Name == "git" && len(r.Argv) > 1 && r.Argv[1] == "diff" {
			return true
		}
	}
	return false
}

// plainName reports whether a host name carries no data in its labels:
// at most 6 labels, none longer than 15 characters, none with a run of 8 hex digits, none
// of 10 or more mixing 3 digits with 3 letters (tok-3f9a2c71e0b4.d.x,
// a base32 or base64 label are data; repo.maven.apache.org is a name).
func plainName(h string) bool {
	if h == "" || len(h) > 253 || net.ParseIP(h) != nil {
		return h != "" && net.ParseIP(h) != nil
	}
	labels := strings.Split(h, ".")
	if len(labels) > 6 {
		return false // data split over many labels
	}
	for _, l := range labels {
		if len(l) > 15 {
			return false
		}
		digits, letters, hexRun, run := 0, 0, 0, 0
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case c >= '0' && c <= '9':
				digits++
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				letters++
			}
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
				run++
				hexRun = max(hexRun, run)
			} else {
				run = 0
			}
		}
		if hexRun >= 8 || len(l) >= 10 && digits >= 3 && letters >= 3 {
			return false
		}
	}
	return true
}
