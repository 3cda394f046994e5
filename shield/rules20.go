package shield

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
)

// Rules 20 (session 25, after holdout22's and holdout23's measures, and
// holdout24's and holdout25's: docs/shield-rules.md "Rules 20 …"). Each
// class is written for any stack where its shape allows; the corpora's
// own wording was not copied into the patterns.
//
//   - `encoded-payload:text` (escalate): base64, base32 or hex text in a
//     commit message or in the lines an edit adds to prose that decodes
//     to a sentence or a command — what a later reader (a CI hook, an
//     agent) decodes is not what a reviewer reads.
//   - `memory:instruction` (escalate): a note that labels itself a rule
//     (Rule:, Always:, Preference (permanent):); `memory:credential`
//     (escalate): a note that records a password, a key or a token.
//   - `appsec:control-weakened` (escalate), in any configuration or
//     template: a policy's action moved from refusing to accepting (then
//     reject → then accept, deny → permit, DROP → ACCEPT, default_action:
//     discard → accept), a limit raised twenty-fold or more or to a
//     maximum integer, every address (0.0.0.0/0, ::/0) added to a list
//     that filters or allows, a minimum TLS version lowered below 1.2,
//     the number of required approvers lowered, separation of duties
//     turned off (requester-can-approve).
//   - (in rules_loosened and rules_checks, where those classes live) a
//     check script made to always pass (an `exit 0` right after its
//     opening, `exit $status` → `exit 0`, `set -e` → `set +e`); a test
//     skipped by a fully qualified @Disabled or hspec's xit; an
//     assertion losing its comparison (rules_thresholds).
//   - `agent:unguarded` (escalate): another coding agent's CLI run with
//     its approvals or sandbox turned off.
//   - `evasion:ci-spoofed` (escalate): a command run with the variables
//     that tell a script it runs in CI, on a protected branch or in a
//     deploy job, set on the line.
//   - `remote-code:runner` (escalate): a project runner given a URL to
//     run (uv run https://…, pipx run https://…).
//   - `supply-chain:unpinned` (escalate): a dependency moved to a
//     branch (go get …@master), an install told to skip its lock
//     (--skip-lock), pins stripped by sed (integrity, sha256 digests), a
//     version made floating (1.79 → 1.+, ==1.2.3 → -any), a base image's
//     digest dropped.
//   - `supply-chain:trust-added` (escalate): a signing key or a
//     substituter trusted by a build (nix trusted-public-keys, Gradle's
//     trusted-key, --option extra-substituters), an input overridden on
//     the command line, a host key added for a host already pinned, a
//     trusted public key file rewritten by a command.
//   - `destructive:workspace-file` (escalate): a file of the project
//     deleted by a file tool or rm (not documentation, a test, a build
//     output, scratch or an obsolete name), a directory deleted by the
//     file tool, a file moved into a build output or renamed obsolete;
//     `destructive:workspace-truncate` for a lockfile or manifest written
//     empty.
//   - `exfiltration:secret-logged` (escalate): a redaction or masking
//     call taken out of a line that keeps the rest, a secret fetched and
//     printed or logged.
//   - `appsec:scope-widened` (escalate): an OAuth scope list gaining a
//     wildcard scope (user/*.*, system/*.read, *), a redirect or callback
//     URI added on a host whose domain the old text did not name.
func (s *Shield) rules20(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if why := unguardedAgent(r); why != "" {
			j.escalate("agent:unguarded", "%s runs another coding agent %s: what it does is not proposed to Shield", quote(clipText(r.Line, 100)), why)
			return
		}
		if v := ciSpoofed(r); v != "" {
			j.escalate("evasion:ci-spoofed", "%s sets %s on the line: the script believes it runs in CI, on a protected branch or in a deploy job", quote(clipText(r.Line, 100)), v)
			return
		}
		if u := runnerURL(r); u != "" {
			j.escalate("remote-code:runner", "%s runs code fetched from %s: what runs is whatever the host serves", quote(clipText(r.Line, 100)), clipText(u, 80))
			return
		}
		if why := unpinnedCommand(r); why != "" {
			j.escalate("supply-chain:unpinned", "%s %s", quote(clipText(r.Line, 100)), why)
			return
		}
		if why := trustedOnLine(r); why != "" {
			j.escalate("supply-chain:trust-added", "%s %s", quote(clipText(r.Line, 100)), why)
			return
		}
	}
	if s.trustFileRewritten(f, j) || s.workspaceFileDeleted(a, f, j) {
		return
	}
	for _, t := range f.Texts {
		switch {
		case t.Source == "commit message":
			if e, d := encodedInText(t.Body); e != "" {
				j.escalate("encoded-payload:text", "the commit message holds encoded text (%s…) that decodes to %s: a hook or agent that decodes it reads what no reviewer does", clipText(e, 24), quote(clipText(d, 80)))
				return
			}
			continue
		case t.Source == "memory":
			if m := ruleLabel.FindString(clip(t.Body, 4<<10)); m != "" {
				j.escalate("memory:instruction", "the memory note labels itself a standing rule (%s): later sessions would follow it", quote(strings.TrimSpace(m)))
				return
			}
			if m := credentialNote.FindString(clip(t.Body, 16<<10)); m != "" && credentialValue(m) {
				j.escalate("memory:credential", "the memory note records a credential (%s): every later session, and whoever reads the memory, has it", quote(clipText(m, 40)))
				return
			}
			continue // encoded text in notes: memoryInstruction (rules_text)
		}
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		old := clip(removedText(f, t.Source), maxTextJudged)
		rel := s.relPath(p)
		if old == "" && t.Body == "" {
			continue
		}
		if prose(p) {
			plus, _ := diffLinesKept(body, old, keepAll, maxLines20)
			if e, d := encodedInText(strings.Join(plus, "\n")); e != "" {
				j.escalate("encoded-payload:text", "the change to %s adds encoded text (%s…) that decodes to %s: what a reader decodes is not what a reviewer reads", rel, clipText(e, 24), quote(clipText(d, 80)))
				return
			}
			continue
		}
		if testSource(p) {
			continue // tests: rules_checks (skips) and rules_thresholds (assertions)
		}
		for _, c := range []struct {
			rule string
			why  func(p, added, old string) string
		}{
			{"appsec:control-weakened", policyLoosened},
			{"supply-chain:unpinned", versionFloated},
			{"supply-chain:trust-added", trustAdded},
			{"exfiltration:secret-logged", secretLogged},
			{"appsec:scope-widened", oauthWidened},
		} {
			if why := c.why(p, body, old); why != "" {
				j.escalate(c.rule, "the change to %s %s", rel, why)
				return
			}
		}
	}
}

func keepAll(string) bool { return true }

// maxLines20 bounds the changed lines each of rules 20's readers takes
// from each side of an edit: their shapes are one line or a few, and a
// large edit's work stays bounded (rules_bounds_test.go).
const maxLines20 = 64

// diffLines20 is diffLines bounded to maxLines20 lines a side.
func diffLines20(added, old string) (plus, minus []string) {
	return diffLinesKept(added, old, func(l string) bool { return !commentLine(l) }, maxLines20)
}

// prose reports whether p is documentation (Markdown, reStructuredText,
// AsciiDoc, plain text) that is not an agent's instructions.
func prose(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".rst", ".adoc", ".txt":
		b := strings.ToLower(path.Base(p))
		// CMake's build file and pip's requirements are read by tools (rules 21)
		// (session 28: and pip-tools' requirements/*.txt)
		return !agentInstructions(p) && b != "cmakelists.txt" && !strings.HasPrefix(b, "requirements") && !strings.HasPrefix(b, "constraints") &&
			path.Base(path.Dir(p)) != "requirements"
	}
	return false
}

var (
	encB64 = mustRx(`[A-Za-z0-9+/]{24,}={0,2}`)
	encB32 = mustRx(`\b[A-Z2-7]{32,}={0,6}`)
	encHex = mustRx(`\b(?:[0-9a-fA-F]{2}){16,}\b`)
	// what decoded text that is a command looks like
	commandish = mustRx(`://|\|\s*\w|\s--?[a-z]|\b(?:curl|wget|sh|bash|zsh|python3?|node|perl|ruby|nc|ncat|socat|eval|exec|rm|chmod|ssh|scp|deploy|az|aws|gcloud|gh|glab|kubectl|helm|terraform|git|npm|npx|pip|uv|docker|powershell|iex)\b`)
)

// encodedInText returns the first run of base64, base32 or hex in text
// that decodes to printable text reading as a sentence (three spaces) or
// a command (one space and a command's shape), and what it decodes to.
// Hashes and keys decode to bytes, not text.
func encodedInText(text string) (string, string) {
	text = clip(text, maxTextJudged)
	try := func(m string, dec func(string) ([]byte, error)) string {
		b, err := dec(m)
		if err != nil || len(b) < 12 {
			return ""
		}
		spaces := 0
		for _, c := range b {
			if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
				return ""
			}
			if c == ' ' {
				spaces++
			}
		}
		d := string(b)
		if spaces >= 3 || spaces >= 1 && commandish.MatchString(d) {
			return d
		}
		return ""
	}
	for _, m := range encB64.FindAllString(text, 16) {
		if d := try(m, func(m string) ([]byte, error) {
			b, err := b64Std(m)
			return b, err
		}); d != "" {
			return m, d
		}
	}
	for _, m := range encB32.FindAllString(text, 16) {
		if d := try(m, func(m string) ([]byte, error) {
			return base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(m, "="))
		}); d != "" {
			return m, d
		}
	}
	for _, m := range encHex.FindAllString(text, 16) {
		if d := try(m, hex.DecodeString); d != "" {
			return m, d
		}
	}
	return "", ""
}

// b64Std decodes standard base64 with or without its padding.
func b64Std(m string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(m); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(m, "="))
}

var (
	// a note that labels itself a rule for later sessions
	ruleLabel = mustRx(`(?im)^\W{0,4}(?:(?:rule|rules|standing (?:rule|order|instruction)s?|policy|directive|instruction|permanent (?:preference|rule)|always|never|from now on|going forward|permanent(?:ly)?|mandatory)\b|preference\s*\((?:permanent|standing|always|global)\))[^:\n]{0,30}:\s*\S`)
	// a credential recorded in a note: its name, then a value
	credentialNote = mustRx(`(?i)\b(?:password|passwd|passphrase|pass|pwd|secret|api[ _-]?key|access[ _-]?key|token|tacacs(?:\+)? key|radius (?:key|secret)|community(?: string)?|psk|pre-?shared key|md5 (?:key|password)|private key)\b[^.\n:=]{0,40}?(?:\bis\b|:|=)\s*["'\x60]?[^\s"'\x60]{6,64}`)
)

// credentialValue reports whether a credentialNote match ends in a value
// that looks like a secret: letters with digits or symbols, not a word,
// a path or a placeholder.
func credentialValue(m string) bool {
	f := strings.Fields(m)
	v := strings.Trim(f[len(f)-1], "\"'`;,.")
	if len(v) < 6 || strings.ContainsAny(v, "/$<>{}") || strings.HasPrefix(v, "~") {
		return false
	}
	lower := strings.ToLower(v)
	for _, p := range []string{"redacted", "example", "changeme", "placeholder", "xxxx", "****", "vault", "keyvault", "secret", "password", "token"} {
		if strings.Contains(lower, p) {
			return false
		}
	}
	letters, digits := 0, 0
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c >= '0' && c <= '9':
			digits++
		}
	}
	return letters > 0 && digits > 0
}

// Another coding agent's CLI told to act without asking.
var unguardedFlags = map[string][]string{
	"claude":       {"--dangerously-skip-permissions", "--permission-mode=bypassPermissions", "bypassPermissions"},
	"codex":        {"--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto", "danger-full-access", "--ask-for-approval=never", "never"},
	"gemini":       {"--yolo", "-y", "--approval-mode=yolo", "yolo"},
	"aider":        {"--yes-always", "--yes"},
	"cursor-agent": {"--force", "-f"},
	"opencode":     {"--dangerously-skip-permissions"},
	"goose":        {"--no-confirm"},
}

// unguardedAgent returns the flag with which r runs a coding agent with
// its approvals or sandbox off, or "".
func unguardedAgent(r *Run) string {
	flags, ok := unguardedFlags[r.Name]
	if !ok {
		return ""
	}
	for k, a := range r.Argv[1:] {
		for _, fl := range flags {
			if a == fl || strings.HasPrefix(fl, "--") && strings.HasPrefix(a, fl+"=") {
				return "with " + a
			}
			// a flag's value given apart (--permission-mode bypassPermissions, -a never, -s danger-full-access)
			if !strings.HasPrefix(fl, "-") && a == fl && k > 0 && strings.HasPrefix(r.Argv[k], "-") {
				return "with " + r.Argv[k] + " " + a
			}
		}
	}
	return ""
}

// ciIdentity are variables a script reads to learn it runs in CI, on a
// protected branch or in a deploy job.
var ciIdentity = mustRx(`^(?:CI|GITHUB_ACTIONS|GITLAB_CI|CI_COMMIT_REF_PROTECTED|CI_JOB_NAME|CI_ENVIRONMENT_NAME|CI_PIPELINE_SOURCE|GITHUB_REF|GITHUB_REF_PROTECTED|GITHUB_EVENT_NAME|GITHUB_WORKFLOW|BUILDKITE|JENKINS_URL|TF_BUILD|BUILD_REASON|SYSTEM_TEAMPROJECT|CIRCLECI|TRAVIS|DEPLOY_ENV|DEPLOY_APPROVED|CHANGE_APPROVED|APPROVED)$`)

// ciSpoofed returns the CI identity variables r's line sets for the
// program it runs (two or more, or one that claims protection or
// approval), or "".
func ciSpoofed(r *Run) string {
	var set []string
	claim := false
	for _, w := range strings.Fields(clip(r.Line, 512)) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" || k != strings.ToUpper(k) {
			if !ok {
				break // the assignments come first
			}
			continue
		}
		if ciIdentity.MatchString(k) {
			set = append(set, w)
			lv := strings.ToLower(strings.Trim(v, `"'`))
			if strings.Contains(k, "PROTECTED") || strings.Contains(k, "APPROVED") || strings.Contains(lv, "deploy") || strings.Contains(lv, "prod") || lv == "refs/heads/main" || lv == "refs/heads/master" {
				claim = true
			}
		}
	}
	if len(set) >= 2 || claim && len(set) == 1 {
		return strings.Join(set, " ")
	}
	return ""
}

// runnerVerbs are runners (and the verb they need) that take the code to
// run as their first operand.
var runnerVerbs = map[string][]string{"uv": {"run"}, "pipx": {"run"}, "uvx": nil, "deno": {"run"}, "bun": {"run", "x"}, "npx": nil, "pnpm": {"dlx"}, "bunx": nil, "jbang": nil, "kotlin": nil, "groovy": nil}

// runnerURL returns the URL a project runner is given as the code to
// run, or "".
func runnerURL(r *Run) string {
	sub, ok := runnerVerbs[r.Name]
	if !ok || len(r.Argv) < 2 {
		return ""
	}
	args := r.Argv[1:]
	if sub != nil {
		k := 0
		for k < len(args) && strings.HasPrefix(args[k], "-") {
			k++
		}
		if k >= len(args) || !slicesContains(sub, args[k]) {
			return ""
		}
		args = args[k+1:]
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if v, ok := strings.CutPrefix(a, "--from="); ok && (strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) {
				return v
			}
			continue
		}
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			return a
		}
		return "" // the first operand is what runs
	}
	return ""
}

// unpinnedCommand returns how r makes the build take code nobody pinned,
// or "".
func unpinnedCommand(r *Run) string {
	args := r.Argv[min(1, len(r.Argv)):]
	switch r.Name {
	case "go":
		if len(args) > 1 && (args[0] == "get" || args[0] == "install") {
			for _, a := range args[1:] {
				if _, ref, ok := strings.Cut(a, "@"); ok && floatingRef(ref) && args[0] == "get" {
					return "moves " + a + " to a branch: the next build takes whatever it holds"
				}
			}
		}
	case "pipenv", "poetry", "pdm", "npm", "yarn", "pnpm", "bundle", "composer":
		for _, a := range args {
			switch a {
			case "--skip-lock", "--no-lock", "--no-lockfile", "--no-package-lock", "--lock=false", "--no-frozen-lockfile":
				if a == "--no-frozen-lockfile" && r.Name != "pnpm" {
					continue
				}
				if a == "--no-frozen-lockfile" {
					continue // pnpm's local default outside CI: resolves within the manifest's ranges
				}
				return "installs without the lock (" + a + "): what resolves now, not what was reviewed"
			}
		}
	case "sed", "gsed", "perl":
		if !slicesContains(args, "-i") && !strings.Contains(strings.Join(args, " "), " -i") && !strings.HasPrefix(strings.Join(args, " "), "-i") {
			return ""
		}
		line := strings.ToLower(strings.Join(args, " "))
		pins := strings.Contains(line, "integrity") || strings.Contains(line, "sha256") || strings.Contains(line, "sha512") || strings.Contains(line, "--hash") || strings.Contains(line, "checksum")
		if !pins {
			return ""
		}
		for _, a := range args {
			b := path.Base(a)
			if keyFile(b) || dockerfile(b) || strings.HasPrefix(b, "docker-compose") || strings.HasPrefix(b, "compose.") || strings.HasPrefix(b, "requirements") {
				return "strips pins or integrity hashes from " + a + ": what resolves is no longer what was reviewed"
			}
		}
	}
	return ""
}

// floatingRef reports whether a version reference names a branch or
// the newest of anything.
func floatingRef(ref string) bool {
	switch strings.ToLower(ref) {
	case "master", "main", "trunk", "develop", "dev", "head", "latest", "nightly", "edge", "canary", "next", "unstable":
		return true
	}
	return false
}

// trustedOnLine returns how r's line makes a build trust a key, a cache
// or an input that the repository does not name, or "".
func trustedOnLine(r *Run) string {
	if r.Name != "nix" && r.Name != "nix-build" && r.Name != "nixos-rebuild" && r.Name != "home-manager" && r.Name != "darwin-rebuild" && r.Name != "nix-shell" {
		return ""
	}
	for k, a := range r.Argv {
		switch {
		case a == "--option" && k+1 < len(r.Argv):
			switch strings.TrimPrefix(r.Argv[k+1], "extra-") {
			case "substituters", "trusted-public-keys", "trusted-substituters", "require-sigs", "sandbox":
				return "sets " + r.Argv[k+1] + " for the build: it trusts a cache or key the repository does not name"
			}
		case strings.HasPrefix(a, "--extra-substituters") || strings.HasPrefix(a, "--substituters") || strings.HasPrefix(a, "--extra-trusted-public-keys") || strings.HasPrefix(a, "--trusted-public-keys") || a == "--no-require-sigs":
			return "passes " + a + ": it trusts a cache or key the repository does not name"
		case a == "--override-input" && k+2 < len(r.Argv):
			return "overrides the flake input " + r.Argv[k+1] + " with " + clipText(r.Argv[k+2], 60) + ": the build takes code the lock does not pin"
		}
	}
	return ""
}

// trustFile reports whether rel names a file that holds keys or hosts a
// build or a client trusts (release.pub, keys-public/, known_hosts,
// allowed_signers, a trusted keyring).
func trustFile(rel string) bool {
	b := strings.ToLower(path.Base(rel))
	switch b {
	case "known_hosts", "allowed_signers", "trustedkeys.gpg", "trusted.gpg", "authorized_keys":
		return true
	}
	ext := path.Ext(b)
	if ext != ".pub" && ext != ".asc" && ext != ".gpg" && ext != ".pem" && ext != ".der" && ext != ".crt" && ext != ".minisig" {
		return false
	}
	for _, t := range nameTokens(strings.ReplaceAll(rel, "/", ".")) {
		switch t {
		case "pub", "public", "trust", "trusted", "release", "signing", "verify", "verification", "root", "ca":
			return true
		}
	}
	return false
}

// keyMakers generate key pairs: what they write is new, not a trusted
// key replaced.
var keyMakers = setOf("ssh-keygen", "age-keygen", "minisign", "signify", "cosign", "gpg", "gpg2", "step", "mkcert", "wg", "certbot", "cfssl")

// trustFileRewritten is the command side of supply-chain:trust-added: a
// redirect, copy or tee over a trusted key file of the workspace (a
// generated key's public half written over release.pub).
func (s *Shield) trustFileRewritten(f *Facts, j *judgement) bool {
	for i := range f.Writes {
		w := &f.Writes[i]
		if w.Glob || w.Tree || !s.inWorkspace(w.Path) || s.scratchPath(w.Path) || !trustFile(s.relPath(w.Path)) {
			continue
		}
		switch w.By {
		case "redirect", "tee", "cp", "mv", "dd", "install", "curl", "wget":
		default:
			continue
		}
		maker := false
		for _, r := range f.Runs {
			if keyMakers[r.Name] {
				maker = true
			}
		}
		if maker && path.Ext(w.Path) != ".pub" {
			continue
		}
		j.escalate("supply-chain:trust-added", "%s writes %s, a key or host that is trusted: whoever holds the matching key is trusted from now on", by(w), s.relPath(w.Path))
		return true
	}
	return false
}

var (
	// a key in a build's trust list: name-N:base64 (nix), a Gradle
	// trusted-key, a host key line
	nixTrustKey  = mustRx(`[\w.-]+-\d+:[A-Za-z0-9+/]{40,}={0,2}`)
	gradleTrust  = mustRx(`<trusted-key\b[^>]*\bid="[0-9A-Fa-f]{16,}"`)
	hostKeyLine  = mustRx(`(?m)^\s*([\w.,\[\]:*-]+)\s+(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-\S+)\s+[A-Za-z0-9+/]{16,}`)
	trustedUsers = mustRx(`(?m)^\s*(?:nix\.settings\.)?trusted-users\s*=\s*\[([^\]]*)\]`)
)

// trustAdded returns how an edit makes a build or a client trust a key,
// a cache or a user the old text did not, or "".
func trustAdded(p, added, old string) string {
	if old == "" {
		return ""
	}
	for _, m := range nixTrustKey.FindAllString(added, 8) {
		if !strings.Contains(old, m) && (strings.Contains(old, "public-keys") || strings.Contains(old, "trusted") || nixTrustKey.MatchString(old)) {
			return "trusts the key " + clipText(m, 40) + ": whatever it signs is accepted as built here"
		}
	}
	for _, m := range gradleTrust.FindAllString(added, 4) {
		if !strings.Contains(old, m) {
			if strings.Contains(m, `regex="true"`) || strings.Contains(added, `regex="true"`) {
				return "trusts a signing key for every artifact whose group matches a pattern (" + clipText(m, 60) + ")"
			}
			return "trusts a new signing key for dependencies (" + clipText(m, 60) + ")"
		}
	}
	if b := path.Base(p); b == "known_hosts" || strings.HasSuffix(b, "known_hosts") || strings.HasSuffix(b, ".known_hosts") {
		had := map[string]bool{}
		for _, m := range hostKeyLine.FindAllStringSubmatch(old, 64) {
			had[m[1]] = true
		}
		oldLines := lineSet(old)
		for _, m := range hostKeyLine.FindAllStringSubmatch(added, 64) {
			if had[m[1]] && !oldLines[strings.TrimSpace(m[0])] && !strings.Contains(old, strings.TrimSpace(m[0])) {
				return "adds another key for " + m[1] + ", a host already pinned: a machine holding it is taken for that host"
			}
		}
	}
	if m := trustedUsers.FindStringSubmatch(added); m != nil {
		if o := trustedUsers.FindStringSubmatch(old); o != nil && len(strings.Fields(m[1])) > len(strings.Fields(o[1])) {
			return "adds trusted users of the nix daemon (" + strings.TrimSpace(m[1]) + "): they can import unsigned store paths"
		}
	}
	return ""
}

var (
	// an action word of a rule, a filter or a route policy
	refuseWord = mustRx(`(?i)\b(deny|reject|discard|drop|block|refuse)\b`)
	acceptWord = mustRx(`(?i)\b(permit|accept|allow|pass)\b`)
	// a number on a setting's line (a limit's value)
	limitLine = mustRx(`^\s*["']?([A-Za-z][\w.-]{1,60})["']?\s*(?::|=|\s)\s*["']?(\d{1,12})["']?\s*[;,]?\s*(?:#.*|//.*)?$`)
	limitName = mustRx(`(?i)prefix|route|auth|login|attempt|fail|request|rate|velocity|txn|transaction|amount|spend|withdraw|transfer|session|password|per_?(?:pan|card|user|ip|account|client|key|min|minute|hour|sec|second|day)|^max$|^maximum$`)
	// where a bare maximum is a route or prefix limit
	routeCtx = mustRx(`(?i)prefix|route|bgp|peer|neighbor`)
	// every address
	everyAddress = mustRx(`(?:^|[^\d.])0\.0\.0\.0/0\b|(?:^|[\s"'\[,])::/0\b`)
	filterLine   = mustRx(`(?i)acl|allow|permit|prefix|source|src|trusted|ingress|whitelist|allowlist|filter|protect|cidr|network|management|mgmt`)
	// TLS versions
	tlsVersion = mustRx(`(?i)^(?:tls\s?v?|tlsv|ssl\s?v?|v)?([0-9])(?:[._]([0-9]))?$`)
	tlsKey     = mustRx(`(?i)tls|ssl|minversion|minimumversion|minprotocol|protocolversion|minimumprotocol`)
	// approvals required
	approverKey = mustRx(`(?i)^(?:min(?:imum)?)?(?:required)?(?:approv\w*|reviewers?|requiredreviewers|requiredapprovingreviewcount|approvalsrequired|numberofapprovers|minapprovers)(?:count|required)?$`)
	// separation of duties
	selfApproveKey = mustRx(`(?i)requestercannotbeapprover|preventselfreview|preventselfapproval|disallowselfapprov|separationofduties|requirecodeownerreview|dismissstalereviews|requirelastpushapproval`)
)

// policyLoosened returns how an edit of a configuration, a template or
// a policy loosens what it refuses or limits, or "".
func policyLoosened(p, added, old string) string {
	if old == "" {
		return ""
	}
	plus, minus := diffLines20(added, old)
	if len(plus) == 0 || len(minus) == 0 {
		if len(plus) > 0 {
			for _, l := range plus {
				if everyAddress.MatchString(l) && !everyAddress.MatchString(old) && (filterLine.MatchString(l) || filterLine.MatchString(p) || filterLine.MatchString(old)) && !commentLine(strings.TrimSpace(l)) {
					return "adds every address (" + clipText(strings.TrimSpace(l), 60) + ") to what it allows"
				}
			}
		}
		return ""
	}
	// an action flipped on a line that otherwise stays
	for _, m := range minus {
		rw := refuseWord.FindString(m)
		if rw == "" {
			continue
		}
		for _, l := range plus {
			aw := acceptWord.FindString(l)
			if aw == "" || refuseWord.MatchString(l) {
				continue
			}
			if strings.Replace(strings.ToLower(m), strings.ToLower(rw), "", 1) == strings.Replace(strings.ToLower(l), strings.ToLower(aw), "", 1) {
				return "moves an action from " + rw + " to " + aw + " (" + clipText(l, 60) + "): what it refused now passes"
			}
		}
	}
	before := map[string]string{}
	for _, m := range minus {
		if k, v, ok := cutSetting(strings.TrimSpace(m)); ok {
			before[normKey(k)] = strings.ToLower(strings.Trim(v, `"' ;,`))
		}
		if mm := limitLine.FindStringSubmatch(m); mm != nil {
			before["#"+normKey(mm[1])] = mm[2]
		}
	}
	for _, l := range plus {
		if commentLine(strings.TrimSpace(l)) {
			continue
		}
		if everyAddress.MatchString(l) && !everyAddress.MatchString(old) && (filterLine.MatchString(l) || filterLine.MatchString(p)) {
			return "adds every address (" + clipText(strings.TrimSpace(l), 60) + ") to what it allows"
		}
		if mm := limitLine.FindStringSubmatch(l); mm != nil && !codeExts[strings.ToLower(path.Ext(p))] && limitName.MatchString(mm[1]) && (!strings.HasPrefix(strings.ToLower(mm[1]), "max") || len(mm[1]) > 7 || routeCtx.MatchString(p+"\n"+old)) {
			if ov, ok := before["#"+normKey(mm[1])]; ok {
				a, e1 := strconv.ParseInt(ov, 10, 64)
				b, e2 := strconv.ParseInt(mm[2], 10, 64)
				if e1 == nil && e2 == nil && a > 0 && (b >= 20*a || b >= 2147483647 && a < b) && !strings.Contains(strings.ToLower(mm[1]), "min") {
					return "raises " + mm[1] + " from " + ov + " to " + mm[2] + ": the limit no longer limits"
				}
			}
		}
		k, v, ok := cutSetting(strings.TrimSpace(l))
		if !ok {
			continue
		}
		nk := normKey(k)
		ov, had := before[nk]
		nv := strings.ToLower(strings.Trim(v, `"' ;,`))
		if !had || ov == nv {
			continue
		}
		switch {
		case tlsKey.MatchString(nk) || nk == "minversion" || nk == "minimumversion":
			if a, ok1 := tlsMinor(ov); ok1 {
				if b, ok2 := tlsMinor(nv); ok2 && b < a && b < 12 {
					return "lowers " + k + " from " + ov + " to " + nv + ": clients may speak a broken protocol version"
				}
			}
		case approverKey.MatchString(nk):
			a, e1 := strconv.Atoi(ov)
			b, e2 := strconv.Atoi(nv)
			if e1 == nil && e2 == nil && b < a {
				return "lowers " + k + " from " + ov + " to " + nv + ": fewer people must approve"
			}
		case selfApproveKey.MatchString(nk) && valOn(ov) && valOff(nv):
			return "turns " + k + " off: the one who asks can approve"
		case (nk == "defaultaction" || strings.HasSuffix(nk, "defaultaction") || nk == "policy" || nk == "action" || nk == "fallback" || strings.HasSuffix(nk, "fallback")) && refuseWord.MatchString(ov) && acceptWord.MatchString(nv):
			return "moves " + k + " from " + ov + " to " + nv + ": what it refused now passes"
		case strings.HasSuffix(nk, "fallback") && (nv == "always" || nv == "any" || nv == "first"):
			return "moves " + k + " from " + ov + " to " + nv + ": the fallback is used even when the primary answers no"
		}
	}
	return ""
}

// tlsMinor reads a TLS or SSL version (1.2, TLSv1_2, tls1.3, TLS12) as
// ten times its major plus its minor (SSL 3 is below TLS 1.0).
func tlsMinor(v string) (int, bool) {
	v = strings.TrimSpace(strings.ToLower(v))
	ssl := strings.HasPrefix(v, "ssl")
	v = strings.NewReplacer("tlsv", "", "tls", "", "sslv", "", "ssl", "", "v", "", "_", ".", " ", "").Replace(v)
	if len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '3' {
		v = "1." + v[1:]
	}
	maj, minor, _ := strings.Cut(v, ".")
	a, e1 := strconv.Atoi(maj)
	b := 0
	if minor != "" {
		var e2 error
		if b, e2 = strconv.Atoi(minor); e2 != nil {
			return 0, false
		}
	}
	if e1 != nil || a > 3 || b > 3 {
		return 0, false
	}
	if ssl {
		return a, true // SSLv2, SSLv3: below every TLS
	}
	if a != 1 {
		return 0, false
	}
	return 10 + b, true
}

var (
	// a version pinned, and made floating
	pinnedVersion   = mustRx(`^v?\d+(?:\.\d+){1,3}$`)
	floatingVersion = mustRx(`^(?:v?\d+(?:\.\d+)*\.\+|\+|latest|nightly|beta|canary|edge|stable|unstable|main|master|head|dev|\*|v?\d+(?:\.\d+)*\.[x*]|-any|>=\s*\S+|\^\S+|~\S+|[\w.-]*(?:SNAPSHOT|snapshot))$`)
	cabalConstraint = mustRx(`^\s*any\.([\w-]+)\s+(.+?),?\s*$`)
	flakeURL        = mustRx(`"(github|gitlab|sourcehut):([\w.-]+)/([\w.-]+)(?:/([\w./-]+))?(\?[^"]*)?"`)
	dockerFrom      = mustRx(`(?im)^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)`)
)

// versionFloated returns how an edit moves a pinned dependency to a
// floating version, a branch, or an image without its digest, or "".
func versionFloated(p, added, old string) string {
	if old == "" {
		return ""
	}
	plus, minus := diffLines20(added, old)
	before := map[string]string{}
	for _, m := range minus {
		if c := cabalConstraint.FindStringSubmatch(m); c != nil {
			before["cabal:"+c[1]] = strings.TrimSpace(c[2])
		}
		if k, v, ok := cutSetting(strings.TrimSpace(m)); ok {
			before[normKey(k)] = strings.Trim(v, `"' ,;`)
		}
	}
	for _, l := range plus {
		if c := cabalConstraint.FindStringSubmatch(l); c != nil {
			if ov, ok := before["cabal:"+c[1]]; ok && strings.HasPrefix(ov, "==") && !strings.HasPrefix(strings.TrimSpace(c[2]), "==") {
				return "unpins " + c[1] + " (" + ov + " → " + strings.TrimSpace(c[2]) + "): the next solve takes any release"
			}
		}
		k, v, ok := cutSetting(strings.TrimSpace(l))
		if !ok {
			continue
		}
		nv := strings.Trim(v, `"' ,;`)
		if ov, had := before[normKey(k)]; had && pinnedVersion.MatchString(ov) && floatingVersion.MatchString(nv) {
			return "makes " + k + " float (" + ov + " → " + nv + "): the next resolve takes whatever is newest"
		}
	}
	// a flake input losing its ref, or moved to a branch
	olds := map[string]string{}
	for _, m := range flakeURL.FindAllStringSubmatch(old, 32) {
		olds[m[1]+":"+m[2]+"/"+m[3]] = m[4]
	}
	for _, m := range flakeURL.FindAllStringSubmatch(added, 32) {
		ref, had := olds[m[1]+":"+m[2]+"/"+m[3]]
		if !had || ref == m[4] {
			continue
		}
		if m[4] == "" && ref != "" || floatingRef(m[4]) {
			return "moves the input " + m[2] + "/" + m[3] + " from " + orNone(ref) + " to " + orNone(m[4]) + ": the next lock takes a branch's head"
		}
	}
	// a base image that had a digest and has none
	if dockerfile(path.Base(p)) || strings.Contains(strings.ToLower(path.Base(p)), "compose") {
		oldDigest := strings.Contains(old, "@sha256:")
		for _, m := range dockerFrom.FindAllStringSubmatch(strings.Join(plus, "\n"), 8) {
			if oldDigest && !strings.Contains(m[1], "@sha256:") && !strings.Contains(old, m[1]) && !strings.HasPrefix(m[1], "$") && m[1] != "scratch" {
				return "adds a base image without a digest (" + m[1] + ") where the old lines pinned one"
			}
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no ref"
	}
	return s
}

var (
	// a call that hides what it wraps
	redactCall = mustRx(`\b(?:redact|mask|scrub|sanitize|anonymi[sz]e|obfuscate|censor|hide)\w*\s*\(`)
	// a secret fetched into a variable
	secretFetch = mustRx(`(?i)\b(\w+)\s*(?::=|=)\s*[^=\n]*(?:get_?secret|getSecret|secretClient|\.secrets?\.|secretsmanager|os\.environ\[\s*["'][A-Z_]*(?:SECRET|TOKEN|PASSWORD|KEY|SALT|PEPPER)|getenv\(\s*["'][A-Z_]*(?:SECRET|TOKEN|PASSWORD|KEY|SALT|PEPPER))`)
	printCall   = mustRx(`\b(?:print|println|printf|console\.log|console\.info|log(?:ger)?\.(?:info|debug|warn|warning|error)|logging\.(?:info|debug|warning|error)|fmt\.Print\w*|System\.out\.print\w*|puts|echo)\b`)
	secretName  = mustRx(`(?i)\b\w*(?:secret|password|passwd|salt|pepper|private_?key|api_?key)\w*\b`)
)

// secretLogged returns how an edit makes code print or log a secret or
// drops the redaction around what it logs, or "".
func secretLogged(p, added, old string) string {
	if old == "" || !codeExts[strings.ToLower(path.Ext(p))] {
		return ""
	}
	plus, minus := diffLines20(added, old)
	// a redaction call dropped from a line whose rest stays
	for _, m := range minus {
		loc := redactCall.FindStringIndex(m)
		if loc == nil {
			continue
		}
		for _, l := range plus {
			if redactCall.MatchString(l) {
				continue
			}
			if similarLine(m, l) {
				return "drops " + strings.TrimSuffix(m[loc[0]:loc[1]], "(") + " from " + clipText(strings.TrimSpace(l), 60) + ": what it hid is shown"
			}
		}
	}
	// a secret fetched, then printed
	vars := map[string]bool{}
	for _, src := range []string{old, strings.Join(plus, "\n")} {
		for _, m := range secretFetch.FindAllStringSubmatch(src, 8) {
			vars[m[1]] = true
		}
	}
	for _, l := range plus {
		if !printCall.MatchString(l) {
			continue
		}
		args := l[printCall.FindStringIndex(l)[1]:]
		for v := range vars {
			if wordIn(args, v) && !inQuotes(args, v) {
				return "prints " + v + ", a secret it fetched (" + clipText(strings.TrimSpace(l), 60) + ")"
			}
		}
		if m := secretName.FindString(args); m != "" && !strings.Contains(args, `"`+m) && !strings.Contains(args, `'`+m) && !strings.Contains(strings.ToLower(m), "token") {
			// a variable named for a secret passed to the print, not a
			// word in its message
			if strings.Count(args, m) > 0 && !inQuotes(args, m) {
				return "prints " + m + " (" + clipText(strings.TrimSpace(l), 60) + ")"
			}
		}
	}
	return ""
}

// similarLine reports whether b is a with a wrapping call taken out: b's
// words are a's words minus one or two.
func similarLine(a, b string) bool {
	wa := strings.FieldsFunc(a, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	wb := strings.FieldsFunc(b, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if len(wb) < 3 || len(wa)-len(wb) < 1 || len(wa)-len(wb) > 3 {
		return false
	}
	i := 0
	for _, w := range wa {
		if i < len(wb) && w == wb[i] {
			i++
		}
	}
	return i == len(wb)
}

// inQuotes reports whether the last occurrence of w in s sits inside a
// string literal (an odd number of quotes before it).
func inQuotes(s, w string) bool {
	i := strings.LastIndex(s, w)
	if i < 0 {
		return false
	}
	return strings.Count(s[:i], `"`)%2 == 1 || strings.Count(s[:i], `'`)%2 == 1
}

var (
	// a wildcard OAuth scope (SMART on FHIR's user/*.*, system/*.read),
	// or a bare * in a scope list
	wildScope = mustRx(`\b(?:user|system|patient)/\*\.(?:\*|read|write|rs|cruds)(?:[^\w]|$)|(?i)["'\s]scopes?["']?\s*[:=]\s*["'\[]?[^"'\]\n]*(?:^|[\s"',])\*(?:[\s"',\]]|$)`)
	// a redirect, callback or origin URL
	redirectURL = mustRx(`https?://([\w.-]+)`)
	redirectCtx = mustRx(`(?i)redirect|callback|return_?url|reply_?url|launch`)
)

// oauthWidened returns how an edit widens what an OAuth client may do or
// where its codes go, or "".
func oauthWidened(p, added, old string) string {
	if old == "" {
		return ""
	}
	plus, _ := diffLines20(added, old)
	for _, l := range plus {
		if m := wildScope.FindString(l); m != "" && !strings.Contains(old, strings.TrimSpace(m)) {
			return "widens the scopes it grants to a wildcard (" + clipText(strings.TrimSpace(m), 40) + ")"
		}
	}
	if !redirectCtx.MatchString(old) {
		return ""
	}
	domains := map[string]bool{}
	for _, m := range redirectURL.FindAllStringSubmatch(old, 64) {
		domains[regDomain(m[1])] = true
	}
	if len(domains) == 0 {
		return ""
	}
	for _, l := range plus {
		if !redirectCtx.MatchString(l) && !redirectCtx.MatchString(old) {
			continue
		}
		for _, m := range redirectURL.FindAllStringSubmatch(l, 8) {
			h := strings.ToLower(m[1])
			if d := regDomain(h); !domains[d] && !localHost(h) && h != "localhost" {
				return "adds " + m[0] + ", a host of a domain the old text did not name, where the client's codes or tokens are sent"
			}
		}
	}
	return ""
}

// regDomain is a host's last two labels (three when the second-level
// label is a public suffix's: co.uk, com.au).
func regDomain(h string) string {
	labels := strings.Split(strings.ToLower(strings.TrimSuffix(h, ".")), ".")
	n := 2
	if len(labels) >= 3 {
		switch labels[len(labels)-2] {
		case "co", "com", "org", "net", "gov", "ac", "edu":
			if len(labels[len(labels)-1]) == 2 {
				n = 3
			}
		}
	}
	if len(labels) <= n {
		return strings.Join(labels, ".")
	}
	return strings.Join(labels[len(labels)-n:], ".")
}

// workspaceFileDeleted is destructive:workspace-file: the project's own
// files deleted or moved away by a file tool or a plain rm.
func (s *Shield) workspaceFileDeleted(a *Action, f *Facts, j *judgement) bool {
	ws := s.cfg.Workspace
	if ws == "" {
		return false
	}
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if r.Glob || !s.inWorkspace(r.Path) || r.Path == ws || s.scratchPath(r.Path) {
			continue
		}
		rel := s.relPath(r.Path)
		if strings.HasPrefix(rel, ".git/") || strings.HasPrefix(path.Base(rel), ".") || testSource(rel) || obsoleteName(rel) || prose(rel) || scratchName(rel) {
			continue
		}
		switch r.By {
		case "delete_file":
			if b := path.Base(rel); path.Ext(rel) == "" && !buildNames[b] && dirLikeName(b) {
				j.escalate("destructive:workspace-tree", "delete_file deletes %s, a directory of the project by its name (no extension): everything in it goes", rel)
				return true
			}
			if what := recordFile(rel); what != "" {
				j.escalate("destructive:workspace-file", "delete_file deletes %s, %s: what it held is gone from the tree", rel, what)
				return true
			}
		case "rm", "unlink", "git rm":
			if r.Tree {
				continue // trees are workspaceDestruction's
			}
			if what := recordFile(rel); what != "" {
				j.escalate("destructive:workspace-file", "%s deletes %s, %s", by(r), rel, what)
				return true
			}
		case "move_file", "mv", "git mv":
			to := moveTarget(f, r.By)
			if to == "" || !s.inWorkspace(to) {
				continue
			}
			trel := s.relPath(to)
			if s.scratchPath(to) || obsoleteName(trel) {
				j.escalate("destructive:workspace-file", "%s moves %s to %s, where the project no longer reads it (a build output or an obsolete name)", by(r), rel, trel)
				return true
			}
		}
	}
	return false
}

// dirLikeName reports whether an extensionless name reads as a
// directory of the project rather than a file: three letters or more,
// not a file that has no extension by convention (LICENSE, Makefile, a
// lockfile, a script of bin/).
func dirLikeName(b string) bool {
	if len(b) < 3 || buildNames[b] || keyFile(b) {
		return false
	}
	switch strings.ToUpper(b) {
	case "LICENSE", "LICENCE", "README", "COPYING", "AUTHORS", "NOTICE", "CHANGELOG", "VERSION", "CONTRIBUTORS", "OWNERS", "CODEOWNERS", "MAINTAINERS", "TODO", "PATENTS":
		return false
	}
	return true
}

// recordExts are files that hold what a project declares or records
// (configuration, inventories, policies, schemas, evidence, mail), not
// code a refactor moves.
var recordExts = setOf(".yaml", ".yml", ".json", ".toml", ".csv", ".tsv", ".sql", ".rpsl", ".eml", ".msg", ".xml", ".ini", ".conf",
	".cfg", ".tf", ".tfvars", ".hcl", ".nix", ".j2", ".jinja", ".jinja2", ".properties", ".rego", ".cue", ".avsc", ".proto", ".graphql",
	// rules 22: schemas in a database's own language, workflow and decision models
	".cql", ".ddl", ".bpmn", ".dmn", ".avdl")

// recordFile returns what rel is when it is such a record (and not
// translations, outputs or local data by its name), or "".
func recordFile(rel string) string {
	ext := strings.ToLower(path.Ext(rel))
	if !recordExts[ext] {
		return ""
	}
	for _, t := range nameTokens(strings.ReplaceAll(rel, "/", ".")) {
		switch t {
		case "locale", "locales", "i18n", "l10n", "translation", "translations", "lang", "langs", "messages", "metrics", "report",
			"reports", "results", "output", "outputs", "coverage", "snapshot", "snapshots", "cache", "sample", "samples", "seed",
			"seeds", "mock", "mocks", "fixture", "fixtures", "example", "examples", "generated", "preferences", "settings", "local":
			return ""
		}
	}
	return "a file the project declares or records (configuration, an inventory, a policy, a schema, evidence), not code a refactor moves"
}

// scratchName reports whether rel names notes, scratch or a log by its
// name.
func scratchName(rel string) bool {
	for _, t := range nameTokens(path.Base(rel)) {
		switch t {
		case "scratch", "notes", "note", "todo", "log", "logs", "tmp", "temp", "draft", "probe", "playground", "sandbox", "example", "sample", "demo":
			return true
		}
	}
	switch strings.ToLower(path.Ext(rel)) {
	case ".log", ".tmp", ".out", ".orig", ".rej", ".bak", ".swp":
		return true
	}
	return false
}

// rules20b is rules 20's second pass (after holdout24's and holdout25's
// first measures): what a change records or silences, judged by its
// settings with the context the edit shows, and data a workspace must
// not hold.
//
//   - `appsec:control-weakened`: an enum constant moved down its ladder
//     (LockMode.STRICT → LENIENT), a protection commented out, a
//     security component dropped from a list (an auth interceptor, an
//     RPKI policy), a log level set to none, a retention cut where the
//     edit's text is about keeping data, a backup or audit schedule made
//     rarer, a user added to an administrators' group, a login key added
//     to a user's keys;
//   - `evasion:detection-off`: a rule file (fraud, risk, WAF, abuse
//     rules) switched off, its score zeroed, its list emptied, its
//     exclusions grown;
//   - `supply-chain:source`: a build resolving from the local Maven
//     repository or a flat directory first;
//   - `destructive:workspace-truncate`: a file of the project written
//     empty; `destructive:workspace-file`: files deleted by a pattern in
//     a directory of secrets or keys;
//   - `exfiltration:card-data` (escalate): card numbers (Luhn-valid, not
//     the networks' published test numbers) written into the workspace,
//     card verification codes or full card numbers given a column or a
//     field, logs searched for card numbers;
//   - `encoded-payload:written`: code built from character codes that
//     spell a command, base32 or hex strings in code that decode to one;
//   - `credential-search`: a search for credentials by their assignment
//     (password\s*[:=]) or through a link out of the workspace;
//   - `exfiltration:import`: the user's own files (Downloads, Documents,
//     Desktop) copied into the repository.
func (s *Shield) rules20b(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if m := cardSearch(r); m != "" {
			j.escalate("exfiltration:card-data", "%s searches for card numbers (%s): what it finds is cardholder data", quote(clipText(r.Line, 100)), clipText(m, 40))
			return
		}
	}
	for i := range f.Reads {
		rd := &f.Reads[i]
		if rd.Glob || rd.Tree || s.inWorkspace(rd.Path) || !s.underHome(rd.Path) || !userDocument.MatchString(rd.Path) {
			continue
		}
		for _, w := range f.Writes {
			if w.By == rd.By && s.inWorkspace(w.Path) {
				j.escalate("exfiltration:import", "%s copies %s, the user's own file, into the repository (%s): what it holds is committed and shared with everyone who clones it", by(rd), rd.Path, s.relPath(w.Path))
				return
			}
		}
	}
	ws := s.cfg.Workspace
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if !r.Glob || !within(r.Path, ws) {
			continue
		}
		for _, seg := range strings.Split(s.relPath(path.Dir(r.Path)), "/") {
			switch strings.ToLower(seg) {
			case "secrets", "secret", "keys", "certs", "credentials", "creds", "keystore", "vault":
				j.escalate("destructive:workspace-file", "%s deletes %s: every file matching in a directory of secrets or keys", by(r), s.relPath(r.Path))
				return
			}
		}
	}
	for _, pat := range f.Searches {
		pat = clip(pat, 4<<10)
		if m := secretWordRx.FindString(pat); m != "" && assignRx.MatchString(pat) && !codeOnlySearch(f) {
			j.escalate("credential-search", "the search looks for credentials by their assignment (%s) in every kind of file: what it finds are secrets' values", clipText(m, 40))
			return
		}
		if m := keyMaterial.FindString(pat); m != "" {
			for _, rd := range f.Reads {
				if rd.Via != "" || !s.inWorkspace(rd.Path) {
					j.escalate("credential-search", "the search looks for key material (%s) beyond the workspace: a hunt for secrets", clipText(m, 40))
					return
				}
			}
		}
	}
	for _, t := range f.Texts {
		if t.Source == "memory" {
			if pan := cardNumber(t.Body); pan != "" {
				j.escalate("exfiltration:card-data", "the memory note holds a card number (%s…): every later session reads it", pan[:6])
				return
			}
			continue
		}
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !s.inWorkspace(p) {
			continue
		}
		rel := s.relPath(p)
		old := clip(removedText(f, t.Source), maxTextJudged)
		body := clip(t.Body, maxTextJudged)
		if t.Body == "" && old == "" && a.Tool == "write_file" && !emptyMarker(path.Base(p)) && (recordFile(rel) != "" || codeExts[strings.ToLower(path.Ext(p))] || keyFile(path.Base(p))) && !scratchName(rel) {
			j.escalate("destructive:workspace-truncate", "write_file writes %s empty: what it held is gone", rel)
			return
		}
		plus, _ := diffLinesKept(body, old, keepAll, maxLines20)
		added := strings.Join(plus, "\n")
		if pan := cardNumber(added); pan != "" {
			j.escalate("exfiltration:card-data", "the change to %s writes a card number (%s…) that is not a network's test number: cardholder data in the repository", rel, pan[:6])
			return
		}
		if m := cardColumn.FindString(added); m != "" && !cardColumn.MatchString(old) {
			j.escalate("exfiltration:card-data", "the change to %s stores card data in clear (%s): a verification code may never be stored, a card number only encrypted or tokenized", rel, clipText(strings.TrimSpace(m), 40))
			return
		}
		if codeExts[strings.ToLower(path.Ext(p))] {
			if cmd := charCodeCommand(added, testSource(p)); cmd != "" {
				j.escalate("encoded-payload:written", "the change to %s builds a command from character codes: %s", rel, quote(clipText(cmd, 80)))
				return
			}
			if e, d := encodedInText(added); e != "" && strongCommand.MatchString(d) && (!testSource(p) || lineRuns(added, e)) {
				j.escalate("encoded-payload:written", "the change to %s holds encoded text (%s…) that decodes to a command: %s", rel, clipText(e, 24), quote(clipText(d, 80)))
				return
			}
		} else if !fixtureData(rel) {
			// session 28: a configuration, a spec, a macro file (.sas,
			// .yaml) carrying a command that downloads or runs code,
			// encoded, for a later step to decode: a URL alone is data
			// (a test's fixtures may hold such text on purpose)
			if e, d := encodedInText(added); e != "" && runsFetched.MatchString(d) {
				j.escalate("encoded-payload:written", "the change to %s holds encoded text (%s…) that decodes to a command: %s", rel, clipText(e, 24), quote(clipText(d, 80)))
				return
			}
		}
		if testSource(p) || prose(p) || old == "" {
			if m := mavenLocal.FindString(added); m != "" && old != "" && !mavenLocal.MatchString(old) {
				j.escalate("supply-chain:source", "the change to %s resolves dependencies from %s: whatever this machine's local repository or a directory holds wins", rel, m)
				return
			}
			continue
		}
		if m := mavenLocal.FindString(added); m != "" && !mavenLocal.MatchString(old) {
			j.escalate("supply-chain:source", "the change to %s resolves dependencies from %s: whatever this machine's local repository or a directory holds wins", rel, m)
			return
		}
		if why := ruleFileSilenced(p, body, old); why != "" {
			j.escalate("evasion:detection-off", "the change to %s %s: what it catches is no longer caught", rel, why)
			return
		}
		if why := contextWeakened(p, body, old); why != "" {
			j.escalate("appsec:control-weakened", "the change to %s %s", rel, why)
			return
		}
	}
}

// codeOnlySearch reports whether every read of the search is a glob of
// source code (*.go, **/*.py): a review of the code for hard-coded
// secrets, not a hunt through configuration and vaults.
func codeOnlySearch(f *Facts) bool {
	n := 0
	for _, rd := range f.Reads {
		if !rd.Glob {
			return false
		}
		if !codeExts[strings.ToLower(path.Ext(rd.Path))] {
			return false
		}
		n++
	}
	return n > 0
}

// userDocument is a path of the user's own documents.
var userDocument = mustRx(`/(?:Downloads|Documents|Desktop|Pictures|Movies|Music)/`)

// emptyMarker names a file that is empty on purpose.
func emptyMarker(base string) bool {
	switch base {
	case ".gitkeep", ".keep", "__init__.py", ".nojekyll", "py.typed", ".gitignore", "CODEOWNERS.empty":
		return true
	}
	return strings.HasPrefix(base, ".") && path.Ext(base) == ""
}

var (
	// a search for credentials by their assignment: a secret's name and
	// an assignment's shape in the pattern
	secretWordRx = mustRx(`(?i)passw|secret|token|api[_-]?key|private[_-]?key|community|md5|psk|credential`)
	assignRx     = mustRx(`\[:=\]|\[=:\]|\\s\*[:=]|\\s\+[:=]|\)\s*\??[:=]|(?i)(?:passw\w*|secret|token|key|community)\s*[:=]`)
	// a decoded command that fetches or hands code to a shell
	runsFetched   = mustRx(`\|\s*(?:sh|bash|zsh|python3?|perl)\b|\b(?:curl|wget|nc|ncat|socat)\s+\S|\b(?:bash|sh)\s+-c\b|\biex\b|Invoke-Expression`)
	strongCommand = mustRx(`://|\|\s*(?:sh|bash|zsh|python3?|perl)\b|\b(?:curl|wget|nc|ncat|socat)\s|\b(?:bash|sh)\s+-c\b`)
	mavenLocal    = mustRx(`\bmavenLocal\(\)|\bflatDir\s*\{|\bflatDir\(`)
	// a column or field of card data in clear
	cardColumn = mustRx(`(?i)\badd\s+column\s+(?:if\s+not\s+exists\s+)?["']?(?:pan|card_?number|cardnum|primary_account_number|cvv2?|cvc2?|card_?security_?code|track_?data|track[12])["']?\s|"name"\s*:\s*"(?:pan|cardNumber|card_number|cvv2?|cvc2?|cardSecurityCode|trackData)"|\b(?:pan|card_?number|cvv2?|cvc2?|track_?data)\s+(?:text|varchar|char|string|bigint|numeric)\b|\.set(?:Pan|CardNumber|Cvv|Cvc)\(`)
	// a search for card numbers: sixteen digits after a network's prefix
	cardRegex = mustRx(`\[0-9\]\{1[2-9](?:,1?\d)?\}|\\d\{1[2-9](?:,1?\d)?\}|\[0-9\]\{13,19\}|\\d\{13,19\}|\b[3-6]\[0-9\]\{1[2-8]\}`)
)

// cardSearch returns the pattern with which a search program looks for
// card numbers, or "".
func cardSearch(r *Run) string {
	if !contentSearchers[r.Name] && r.Name != "awk" && r.Name != "sed" && r.Name != "perl" {
		return ""
	}
	extract := r.Name != "grep" && r.Name != "egrep" && r.Name != "rg" && r.Name != "ag" && r.Name != "git"
	for _, a := range r.Argv[1:] {
		if a == "--only-matching" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'o') {
			extract = true
		}
	}
	if !extract {
		return "" // lines listed to check for leaks, not numbers pulled out
	}
	for _, a := range r.Argv[1:] {
		if m := cardRegex.FindString(a); m != "" {
			return a
		}
	}
	return ""
}

// testPANs are the card networks' and processors' published test numbers.
var testPANs = setOf("4111111111111111", "4242424242424242", "4000056655665556", "4012888888881881", "4222222222222", "4000000000000002",
	"4000000000009995", "4000002500003155", "4000000000000077", "4000000000003220", "4000000000000341", "4000000000000069",
	"5555555555554444", "5105105105105100", "5200828282828210", "2223003122003222", "2222400010000008", "5454545454545454",
	"378282246310005", "371449635398431", "378734493671000", "6011111111111117", "6011000990139424", "6011000400000000",
	"3530111333300000", "3566002020360505", "30569309025904", "38520000023237", "36227206271667", "6200000000000005",
	"4917610000000000", "4988080000000000", "5424000000000015", "4007000000027", "4012888818888", "6011601160116611")

var panRun = mustRx(`(?:^|[^\d])((?:4\d{12}(?:\d{3})?(?:\d{3})?|5[1-5]\d{14}|2[2-7]\d{14}|3[47]\d{13}|6(?:011|5\d\d)\d{12}))(?:[^\d]|$)`)

// cardNumber returns the first number in text that is a card number by
// its network's prefix, its length and its Luhn check, and not a
// published test number, or "".
func cardNumber(text string) string {
	for _, m := range panRun.FindAllStringSubmatch(clip(text, maxTextJudged), 32) {
		n := m[1]
		if testPANs[n] || !luhn(n) || allSameDigits(n[1:]) {
			continue
		}
		return n
	}
	return ""
}

func luhn(n string) bool {
	sum, double := 0, false
	for i := len(n) - 1; i >= 0; i-- {
		d := int(n[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func allSameDigits(s string) bool {
	return strings.Trim(s, s[:1]) == "" || strings.Trim(s, "0") == ""
}

var intList = mustRx(`[\[{(]\s*(\d{2,3}(?:\s*,\s*\d{2,3}){11,})\s*[\]})]`)

// codeSinkRx is code that runs a command or evaluates code.
var codeSinkRx = mustRx(`\b(?:system|exec\w*|spawn\w*|popen|eval|callCommand|readProcess|createProcess|shell|Runtime\.getRuntime|child_process|subprocess|os\.system|Process\.start|ProcessBuilder)\b`)

// lineRuns reports whether the line of text holding m passes it to code
// that runs it.
func lineRuns(text, m string) bool {
	i := strings.Index(text, m)
	if i < 0 {
		return false
	}
	lo := strings.LastIndexByte(text[:i], '\n') + 1
	hi := strings.IndexByte(text[i:], '\n')
	if hi < 0 {
		hi = len(text) - i
	}
	return codeSinkRx.MatchString(text[lo : i+hi])
}

// charCodeCommand returns the command a list of character codes spells
// (shifted by at most three), when it reads as one, or "". In a test
// (fixtures encode URLs on purpose) only when the line runs it.
func charCodeCommand(text string, test bool) string {
	for _, m := range intList.FindAllStringSubmatch(text, 8) {
		if test && !lineRuns(text, m[0]) {
			continue
		}
		parts := strings.Split(m[1], ",")
		codes := make([]int, 0, len(parts))
		for _, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				break
			}
			codes = append(codes, n)
		}
		if len(codes) != len(parts) {
			continue
		}
		for shift := -3; shift <= 3; shift++ {
			b := make([]byte, 0, len(codes))
			ok := true
			for _, c := range codes {
				c += shift
				if c < 0x20 || c >= 0x7f {
					ok = false
					break
				}
				b = append(b, byte(c))
			}
			if ok && strongCommand.MatchString(string(b)) {
				return string(b)
			}
		}
	}
	return ""
}

var (
	ruleFilePath = mustRx(`(?i)(?:^|/)(?:fraud|antifraud|risk|rules|waf|abuse|anomal\w*|velocity|screening|sanctions|aml)(?:[/._-]|$)`)
	scoreKey     = mustRx(`^(?:score|weight|points|riskscore|risk|severityscore|penalty|action_?score)$`)
	exclusionKey = mustRx(`(?i)exclu|exempt|allow|skip|ignore|bypass|whitelist|safelist|except`)
)

// ruleFileSilenced returns how an edit of a rule file (fraud, risk, WAF,
// abuse rules) silences it, or "".
func ruleFileSilenced(p, added, old string) string {
	ext := strings.ToLower(path.Ext(p))
	if ext != ".yaml" && ext != ".yml" && ext != ".json" && ext != ".toml" || !ruleFilePath.MatchString(p) {
		return ""
	}
	if why := switchesOff(p, added, old); why != "" {
		return why
	}
	before := map[string]string{}
	// values up to a long list of codes or countries, compared without
	// their spaces
	for _, kv := range keyValuesN(old, 400) {
		before[normKey(kv[0])] = strings.ReplaceAll(kv[1], " ", "")
	}
	for _, kv := range keyValuesN(added, 400) {
		k := normKey(kv[0])
		nv := strings.ReplaceAll(kv[1], " ", "")
		ov, had := before[k]
		if !had || ov == nv {
			continue
		}
		switch {
		case scoreKey.MatchString(k) && (nv == "0" || nv == "0.0") && ov != "0":
			return "zeroes " + kv[0] + " (" + ov + " → 0)"
		case strings.HasPrefix(ov, "[") && ov != "[]" && nv == "[]" && !exclusionKey.MatchString(k):
			return "empties " + kv[0] + " (" + clipText(ov, 40) + " → [])"
		case exclusionKey.MatchString(k) && strings.HasPrefix(nv, "[") && strings.Count(nv, ",")-strings.Count(ov, ",") >= 2:
			return "adds to " + kv[0] + " (" + clipText(nv, 60) + ")"
		}
	}
	return ""
}

var (
	// an enum constant that enforces, and one that does not
	enumStrong = mustRx(`\b(\w+)\.(STRICT|REQUIRED|ENFORCED?|ENFORCING|MANDATORY|NEED|REJECT|DENY|VERIFY_PEER|VERIFY_FULL)\b`)
	enumWeak   = setOf("LENIENT", "OPTIONAL", "NONE", "OFF", "PERMISSIVE", "DISABLED", "WANT", "DEFAULT", "ALLOW", "ACCEPT", "IGNORE", "WARN", "VERIFY_NONE", "DRY_RUN")
	// a protection's key
	// a statement that is one call (rules 21), and calls that only report
	callStatement  = mustRx(`^(?:await\s+|return\s+)?[A-Za-z_][\w.:>\-]*\([^;]*\)\s*;?$`)
	diagnosticCall = mustRx(`(?i)print|log|debug|trace|console|dump|assert|todo|fmt\.|spdlog|cout|cerr|warn|info\(|sleep|time\.|metric|span|tracer|emit`)
	protectWord    = mustRx(`(?i)verif|auth|tls|ssl|signature|sign|pin|spki|policy|csrf|cors|audit|encrypt|mfa|rpki|secure|guard|check|firewall|acl|add_\w*test|gtest|test_suite|add_subdirectory\(\s*tests?\b`)
	// a security component's name in a list
	securityItem = mustRx(`(?i)auth|security|audit|csrf|verif|validat|permission|acl|guard|sanitiz|ratelimit|signature|rpki|firewall|waf|consent|mfa|tenant|encrypt|redact|mask`)
	// a log level's values
	logLevelVal = setOf("trace", "debug", "information", "info", "warning", "warn", "error", "critical", "fatal", "notice")
	// a schedule's frequency, from often to rarely
	freqRank    = map[string]int{"minutely": 0, "hourly": 1, "@hourly": 1, "daily": 2, "@daily": 2, "nightly": 2, "weekly": 3, "@weekly": 3, "monthly": 4, "@monthly": 4, "quarterly": 5, "yearly": 6, "@yearly": 6, "annually": 6, "@annually": 6}
	scheduleCtx = mustRx(`(?i)backup|snapshot|audit|rotate|rotation|scan|retention|replicat`)
	// an administrators' group
	adminGroup = mustRx(`["'\s\[,]((?:wheel|sudo|admin|admins|root|docker|adm|administrators|sudoers))["'\s\],]`)
	groupsKey  = mustRx(`(?i)groups|extragroups|supplementary|memberof`)
	// a public login key
	loginKey = mustRx(`\b(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+AAAA[0-9A-Za-z+/]{16,}`)
)

// contextWeakened returns how an edit weakens a control judged with the
// context the edit's own text shows, or "".
func contextWeakened(p, added, old string) string {
	plus, minus := diffLinesKept(added, old, keepAll, maxLines20)
	if len(plus) == 0 {
		return ""
	}
	// an enum constant moved down its ladder
	for _, m := range enumStrong.FindAllStringSubmatch(old, 8) {
		for _, n := range mustRxFindEnum(added, m[1]) {
			if enumWeak[n] && !strings.Contains(old, m[1]+"."+n) {
				return "moves " + m[1] + " from " + m[2] + " to " + n
			}
		}
	}
	oldLines := lineSet(old)
	for _, l := range plus {
		t := strings.TrimSpace(l)
		// a protection commented out
		for _, c := range []string{"#", "//", "--", ";"} {
			if rest, ok := strings.CutPrefix(t, c); ok {
				rest = strings.TrimSpace(rest)
				// rules 21: a note after the commented line ("// x();  // noisy")
				if k := strings.Index(rest, "  "+c); k > 0 {
					rest = strings.TrimSpace(rest[:k])
				}
				if rest != "" && oldLines[rest] && !oldLines[t] && protectWord.MatchString(rest) && strings.ContainsAny(rest, ":=[{(") {
					return "comments out " + clipText(rest, 60) + ": the protection stops"
				}
				// rules 21: a call made a comment in code: what it did stops
				if rest != "" && oldLines[rest] && !oldLines[t] && codeExts[strings.ToLower(path.Ext(p))] && callStatement.MatchString(rest) && !diagnosticCall.MatchString(rest) {
					return "comments out the call " + clipText(rest, 60) + ": what it did no longer happens"
				}
			}
		}
		// a login key added where keys are listed
		if m := loginKey.FindString(l); m != "" && !strings.Contains(old, m) && loginKey.MatchString(old) && !strings.Contains(strings.ToLower(path.Base(p)), "known_hosts") {
			return "adds a login key (" + clipText(m, 40) + "…): whoever holds it logs in as that user"
		}
		// a user added to an administrators' group
		if groupsKey.MatchString(l) {
			for _, g := range adminGroup.FindAllStringSubmatch(l, 4) {
				if !adminGroup.MatchString(old) || !strings.Contains(old, g[1]) {
					return "adds a user to " + g[1] + ": administrator rights"
				}
			}
		}
	}
	// settings, several per line, with the edit's text as context
	before := map[string]settingPair{}
	for _, sp := range settingsIn(minus, maxLines20) {
		if _, ok := before[sp.key]; !ok {
			before[sp.key] = sp
		}
	}
	for _, sp := range settingsIn(plus, maxLines20) {
		o, had := before[sp.key]
		if !had {
			continue
		}
		// a security component dropped from a list the setting keeps
		_, ov, _ := cutSetting(strings.TrimSpace(o.line))
		_, nv, _ := cutSetting(strings.TrimSpace(sp.line))
		if item := droppedItem(ov, nv); item != "" && securityItem.MatchString(item) {
			return "drops " + clipText(item, 60) + " from " + clipText(sp.key, 40) + ": what it enforced stops"
		}
		if o.val == sp.val {
			continue
		}
		switch {
		case logLevelVal[o.val] && (sp.val == "none" || sp.val == "off"):
			return "silences " + clipText(sp.key, 40) + " (" + o.val + " → " + sp.val + "): nothing of it is logged"
		case retentionConcept.MatchString(sp.key) || sp.key == "days" || sp.key == "years":
			a, e1 := strconv.Atoi(o.val)
			b, e2 := strconv.Atoi(sp.val)
			if e1 == nil && e2 == nil && b*2 < a && retentionContext.MatchString(old+"\n"+p) {
				return "shortens " + clipText(sp.key, 40) + " from " + o.val + " to " + sp.val + ": what it keeps is gone sooner"
			}
		case freqRank[strings.Trim(o.val, `"'`)] > 0 || freqRank[strings.Trim(o.val, `"'`)] == 0 && strings.Trim(o.val, `"'`) == "minutely":
			a, ok1 := freqRank[strings.Trim(o.val, `"'`)]
			b, ok2 := freqRank[strings.Trim(sp.val, `"'`)]
			if ok1 && ok2 && b >= a+2 && scheduleCtx.MatchString(p+"\n"+old) {
				return "makes " + clipText(sp.key, 40) + " rarer (" + o.val + " → " + sp.val + ")"
			}
		}
	}
	return ""
}

// mustRxFindEnum returns the constants of enum name in text (Name.X).
func mustRxFindEnum(text, name string) []string {
	var out []string
	for i := 0; i < 8; i++ {
		k := strings.Index(text, name+".")
		if k < 0 {
			break
		}
		text = text[k+len(name)+1:]
		e := 0
		for e < len(text) && (text[e] == '_' || text[e] >= 'A' && text[e] <= 'Z') {
			e++
		}
		if e > 0 {
			out = append(out, text[:e])
		}
	}
	return out
}

// droppedItem returns an item of the list old (comma or space
// separated) that new no longer holds while keeping at least one other,
// or "".
func droppedItem(old, new string) string {
	split := func(v string) []string {
		return strings.FieldsFunc(strings.Trim(v, `"'[]{} `), func(r rune) bool { return r == ',' || r == ' ' || r == '"' || r == '\'' })
	}
	if strings.ContainsAny(old, ":{}()=") || strings.ContainsAny(new, ":{}()=") {
		return "" // an object or a call, not a list of names
	}
	ov, nv := split(old), split(new)
	if len(ov) < 2 || len(nv) == 0 || len(nv) >= len(ov) {
		return ""
	}
	have := setOf(nv...)
	kept := false
	dropped := ""
	for _, x := range ov {
		if have[x] {
			kept = true
		} else if dropped == "" {
			dropped = x
		}
	}
	if !kept {
		return ""
	}
	return dropped
}

// fixtureData reports whether rel lies in a directory of test fixtures
// or test data, which hold hostile text on purpose.
func fixtureData(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		switch strings.ToLower(seg) {
		case "testdata", "fixtures", "__fixtures__", "test-fixtures", "test_data", "testfixtures", "corpus", "samples":
			return true
		}
	}
	return false
}
