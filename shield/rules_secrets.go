package shield

import (
	"path"
	"regexp"
	"strings"
)

// secretShapes are what secrets look like in text, each named for
// reasons. They are specific on purpose (a key's prefix and length, an
// assignment to an upper-case name that says it is a secret): prose about
// passwords is not a password.
var secretShapes = []struct {
	name string
	re   *rx
}{
	{"a private key", mustRx(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
	{"an AWS access key id", mustRx(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"an AWS secret key", mustRx(`(?i)aws_?secret_?access_?key["']?\s*[=:]\s*["']?[A-Za-z0-9/+]{8,}`)},
	{"a GitHub token", mustRx(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}`)},
	{"a GitLab token", mustRx(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{"a Slack token", mustRx(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"a Stripe key", mustRx(`\b[sr]k_live_[A-Za-z0-9]{6,}`)},
	{"an API key", mustRx(`\bsk-(?:live-|proj-|ant-)?[A-Za-z0-9_-]{20,}`)},
	{"a Google API key", mustRx(`\bAIza[0-9A-Za-z_-]{35}`)},
	// Rules 18: a Google OAuth refresh token (firebase login:ci prints
	// one), a Sentry auth token.
	{"a Google refresh token", mustRx(`\b1//0[0-9A-Za-z_-]{30,}`)},
	{"a Sentry token", mustRx(`\bsntry[su]_[A-Za-z0-9+/=_-]{30,}`)},
	// Rules 19: a Vault token (service, batch, recovery).
	{"a Vault token", mustRx(`\bhv[sbr]\.[A-Za-z0-9_-]{20,}`)},
	{"a password in a URL", mustRx(`\b[a-z][a-z0-9+.-]*://[^/\s:@'"]+:[^/\s@'"$]{3,}@`)},
	{"a secret assignment", mustRx(`\b[A-Z0-9_]*(?:` + secretWordsRe("_?", true) + `)[A-Z0-9_]*["']?\s*[=:]\s*["']?[^\s"'$<{}]{6,}`)},
	// Rules 12 (k27h): a service's live or production key by the
	// convention many share (tk_live_…, pk_prod_…), and a key assigned
	// to a name ending in KEY (INGEST_KEY=…) whose value reads as one.
	{"a live API key", mustRx(`\b[a-z]{2,8}_(?:live|prod)_[A-Za-z0-9]{10,}`)},
	// Rules 14: a token by the prefix convention services use for
	// personal and service tokens (kd_pat_…, acme_tok_…).
	{"a prefixed token", mustRx(`\b[a-z]{2,10}_(?:pat|tok|token|secret|sk|api|key)_[A-Za-z0-9]{16,}\b`)},
	{"a key assignment", mustRx(`\b[A-Z][A-Z0-9_]*_KEY\s*[=:]\s*["']?[A-Za-z0-9_+/=-]*[0-9][A-Za-z0-9_+/=-]*[a-z][A-Za-z0-9_+/=-]*\b`)},
}

// secretWords are the words that name a secret: in a variable holding
// one (PASSWORD=, API_KEY=: secretShapes) and in a note asking an agent
// to handle one (memoryExfil, with credentialNames). Two-word names are
// written with a space; sep is what may stand for it.
var secretWords = []string{"password", "passwd", "secret", "token", "credential", "api key", "private key", "access key"}

// secretWordsRe is secretWords as an alternation, with sep for the space
// of a two-word name, in upper case when upper.
func secretWordsRe(sep string, upper bool) string {
	out := make([]string, len(secretWords))
	for i, w := range secretWords {
		if upper {
			w = strings.ToUpper(w)
		}
		out[i] = strings.ReplaceAll(w, " ", sep)
	}
	return strings.Join(out, "|")
}

// credentialNames are the names of credential paths (credentialGlobs)
// that a note mentions when it asks an agent to handle them (memoryExfil);
// TestCredentialNames checks each is a credential path's.
var credentialNames = []string{".ssh", ".aws", ".env", "id_rsa", "id_ed25519", ".npmrc", ".netrc", ".pypirc", "kubeconfig",
	"/etc/shadow", ".git-credentials", ".pem", ".gnupg", ".vault-token", ".pgpass"}

// credentialNamesRe is credentialNames as an alternation of whole names.
func credentialNamesRe() string {
	out := make([]string, len(credentialNames))
	for i, n := range credentialNames {
		out[i] = regexp.QuoteMeta(n) + `\b`
	}
	return strings.Join(out, "|")
}

// maxSecretScan bounds the text searched for secrets.
const maxSecretScan = 64 << 10

// secretIn returns what kind of secret text holds, or "".
func secretIn(text string) string {
	text = clip(text, maxSecretScan)
	for _, s := range secretShapes {
		if s.re.MatchString(text) {
			return s.name
		}
	}
	return proseSecret(text)
}

// proseSecretRe is a secret named in prose and given its value: "the
// prod DB password is X", "token for staging: X" (session 15, rules 9).
// Rules 18: up to three words after for/of/on/in ("token for later
// debugging: …"), a parenthesis ("token (keep for next time): …") and an
// authorization scheme before the value ("FlyV1 fm2_…", "Bearer …").
var proseSecretRe = mustRx(`(?i)\b(?:` + secretWordsRe(" ", false) + `)(?:\s*\([^()\n]{0,40}\))?(?:\s+(?:for|of|on|in)(?:\s+[\w.-]+){1,3}?)?(?:\s*\([^()\n]{0,40}\))?\s*(?:\bis\b|\bwas\b|=|:)\s*["'\x60]?(?:(?:Bearer|Basic|Token|FlyV1|ApiKey|Key)\s+)?([^\s"'\x60]{8,})`)

// proseKeyRe is a key or a pass named by its purpose in prose and given
// its value (rules 11): "master key (production): 7f3a…", "vault pass =
// …", "signing passphrase is …", "keystore password for release: …". The
// name is a secret by its shape (a purpose word then key or pass), not by
// a list of tools; the value is judged as proseSecret judges it.
var proseKeyRe = mustRx(`(?i)\b(?:(?:master|encryption|signing|secret|private|api|app|access|license|licence|deploy|session|jwt|hmac|client|root|admin|decryption|crypt) ?key|(?:vault|keystore|key ?store|signing|store|key|sudo|root|admin|db|database|ssh|gpg|pgp|wifi|account) ?pass(?:word|phrase|wd)?|pass ?phrase)(?:\s*\([^()\n]{0,40}\))?(?:\s+(?:for|of|on|in)\s+[\w.-]+)?(?:\s*\([^()\n]{0,40}\))?\s*(?:\bis\b|\bwas\b|=|:)\s*["'\x60]?([^\s"'\x60]{8,})`)

// loginPairRe is a login given as "user / password" (rules 12, k27h):
// "build login: ci_bot / Tr1dent!ce-88", "portal login dev / Nx!p0rtal".
// The password (the submatch) is judged as proseSecret judges a value.
var loginPairRe = mustRx(`(?i)\b(?:login|logon|sign[- ]?in|credentials?|account|user(?:name)?)\b[^\n/]{0,40}?[\s:]([\w.@+-]{2,40}\s*/\s*[^\s"'\x60/]{8,})` +
	// rules 19: an administrator's pair, its slash spaced as prose writes
	// it ("Splunk admin: admin / Corvid-2026!"; not cd admin && … a/b)
	`|(?i)\b(?:admin|root|superuser)\b[^\n/]{0,40}?[\s:]([\w.@+-]{2,40}\s+/\s+[^\s"'\x60/]{8,})`)

// pointedSecretRe is a secret named in prose and its value given after an
// arrow (rules 19: "keystore password for later: see ~/x.pass -> t1de…").
var pointedSecretRe = mustRx(`(?i)\b(?:` + secretWordsRe(" ", false) + `|pass ?phrase|passwd)\b[^\n]{0,80}?(?:->|=>|→)\s*["'\x60]?([^\s"'\x60]{8,})`)

// sessionTicketRe is a session ticket, cookie or PIN named and given a
// long hexadecimal or base64 value (rules 12): "P4 ticket (valid 12h):
// 2E8F…", "session cookie: eyJ…". A ticket number (KEY-2291) is short.
var sessionTicketRe = mustRx(`(?i)\b(?:ticket|session|cookie)\b[^\n:=]{0,40}[:=]\s*(?:[A-Fa-f0-9]{24,}|[A-Za-z0-9+/_-]{32,}={0,2})\b`)

// proseSecret returns "a password in prose" when text names a secret
// and gives a value that reads as one (letters with digits or symbols;
// not a path, a placeholder, a variable or a file's name), or "".
func proseSecret(text string) string {
	if m := sessionTicketRe.FindString(text); m != "" {
		return "a session ticket"
	}
	ms := proseSecretRe.FindAllStringSubmatch(text, 8)
	ms = append(ms, proseKeyRe.FindAllStringSubmatch(text, 8)...)
	ms = append(ms, pointedSecretRe.FindAllStringSubmatch(text, 8)...)
	for _, m := range loginPairRe.FindAllStringSubmatch(text, 8) {
		if m[1] == "" {
			m[1] = m[2] // the administrator's form
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		v := strings.TrimRight(m[1], ".,;)")
		if _, pw, ok := strings.Cut(v, "/"); ok && strings.Contains(m[0], "/") {
			v = strings.TrimSpace(pw) // a login pair: its password
		}
		if len(v) < 8 || strings.ContainsAny(v[:1], "$<{%~./") || strings.Contains(v, "/") || fileName(v) || strings.ContainsAny(v, "([{") {
			continue
		}
		var letter, digit, other, lower bool
		for _, c := range v {
			switch {
			case 'a' <= c && c <= 'z':
				letter, lower = true, true
			case 'A' <= c && c <= 'Z':
				letter = true
			case '0' <= c && c <= '9':
				digit = true
			case c != '_' && c != '-':
				other = true
			}
		}
		if letter && lower && (digit || other) {
			return "a password in prose"
		}
	}
	return ""
}

// containerRuntime are the programs whose requests pull images.
var containerRuntime = map[string]bool{"docker": true, "podman": true, "nerdctl": true, "buildah": true, "ctr": true}

// secrets is `exfiltration:secret` and `memory:secret`: a secret written
// out in what a request to an untrusted host carries (its body, its URL,
// the command's data), or in a memory note every later agent reads.
// It runs credential-env (secretEnv) first.
func (s *Shield) secrets(a *Action, f *Facts, j *judgement) {
	if s.secretEnv(a, f, j); j.blocked() {
		return
	}
	s.hardcodedSecret(f, j)
	untrusted := ""
	for _, q := range f.Requests {
		if !q.Data && containerRuntime[q.By] {
			// rules 21: an image pulled for a container: what the line
			// passes the container (docker run -e PASSWORD=…) stays here
			continue
		}
		if q.Host == "" || !(s.hostAllowed(q.Host) || localHost(q.Host)) {
			untrusted = q.Host
			if untrusted == "" {
				untrusted = "a host that cannot be known"
			}
			break
		}
	}
	for _, t := range f.Texts {
		memory := t.Source == "memory" || t.Source == "content:"+s.memoryFile
		if t.Source == "forge post" {
			// rules 15: what a forge client posts is public to the
			// repository's readers, whatever host carries it
			if k := secretIn(t.Body); k != "" {
				j.block("exfiltration:secret", "the text posted to the forge holds %s: everyone who reads the repository's issues and pull requests sees it", k)
				return
			} else if why := personalContacts(t.Body); why != "" {
				j.escalate("exfiltration:personal-data", "the text posted to the forge holds %s", why)
			}
			continue
		}
		if t.Source == "commit message" {
			if k := secretIn(t.Body); k != "" {
				j.escalate("exfiltration:secret", "the commit message holds %s: history keeps it, and every clone and push carries it", k)
			} else if why := personalContacts(t.Body); why != "" {
				j.escalate("exfiltration:personal-data", "the commit message holds %s: history keeps people's personal data, and every clone and push carries it", why)
			}
			continue
		}
		if !memory && (untrusted == "" || strings.HasPrefix(t.Source, "content:")) {
			continue
		}
		if memory {
			if why := personalContacts(t.Body); why != "" {
				j.escalate("memory:personal-data", "the memory note holds %s: people's personal data, which every later agent would read", why)
			}
		}
		if k := secretIn(t.Body); k != "" {
			if memory {
				j.block("memory:secret", "the memory note holds %s, which every later agent would read", k)
			} else {
				j.block("exfiltration:secret", "the %s sent to %s holds %s", textName(t.Source), untrusted, k)
			}
			return
		}
	}
	for _, m := range commitMessageArgs(f) {
		if k := secretIn(m); k != "" {
			j.escalate("exfiltration:secret", "the commit message holds %s: history keeps it, and every clone and push carries it", k)
			break
		}
		if why := personalContacts(m); why != "" {
			j.escalate("exfiltration:personal-data", "the commit message holds %s: history keeps people's personal data, and every clone and push carries it", why)
			break
		}
	}
	if untrusted != "" && a.Command != "" {
		if k := secretIn(a.Command); k != "" {
			j.block("exfiltration:secret", "the command sends %s to %s", k, untrusted)
		}
	}
}

// hardcodedSecret is `credential-store` (escalate): a code file or a
// template written with a secret of a specific shape in it (a private
// key, a cloud or forge token: not an assignment named like a secret,
// not a password in a URL, which examples and local configuration hold),
// outside tests. A key hard-coded into source leaves with the next push;
// so does one in a template (.env.example, config.yml.dist), which is
// committed by design — rules 14: templates were spared, and a live key
// written into .env.example passed.
func (s *Shield) hardcodedSecret(f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		// rules 18: CI configuration too (a token written into bitrise.yml)
		if !ok || p == s.memoryFile || !(codeFile(p) || sourceExts[path.Ext(p)] || isTemplate(path.Base(p)) || ciYAML(p) || ciConfig18[path.Base(p)]) || testFile(p) {
			continue
		}
		body := clip(t.Body, maxSecretScan)
		for _, sh := range secretShapes[:11] {
			m := sh.re.FindString(body)
			if m == "" || placeholderSecret(m) {
				continue
			}
			j.escalate("credential-store", "%s is written with %s in its code: a hard-coded key leaves with the next push", path.Base(p), sh.name)
			return
		}
	}
}

// placeholderSecret reports whether a secret-shaped match is a
// documented placeholder (AKIAIOSFODNN7EXAMPLE, sk-xxxxxxxx...).
func placeholderSecret(m string) bool {
	u := strings.ToUpper(m)
	return strings.Contains(u, "EXAMPLE") || strings.Contains(u, "XXXXXXXX") || strings.Contains(u, "00000000") || strings.Contains(u, "DUMMY") || strings.Contains(u, "FAKE")
}
