package shield

import (
	"slices"
	"strings"
)

// printVerbs are framework verbs that print decrypted secrets or the
// configuration that holds them, by tool (verbs as verbMatches reads
// them).
var printVerbs = map[string][]string{
	"rails":               {"credentials:show", "secrets:show", "encrypted:show", "credentials:diff"},
	"rake":                {"credentials:show", "secrets:show"},
	"artisan":             {"env:decrypt", "config:show"},
	"manage.py":           {"diffsettings"},
	"django-admin":        {"diffsettings"},
	"console":             {"secrets:reveal", "secrets:decrypt-to-local", "debug:container --env-vars", "debug:dotenv"},
	"dotnet-user-secrets": {"list"},
	"fastlane":            {"match decrypt", "match export"},
	"ansible-vault":       {"view", "decrypt"},
	"sops":                {"-d", "--decrypt", "decrypt"},
	"heroku":              {"config", "config:get"},
	"netlify":             {"env:get", "env:list --plain"},
	"doppler":             {"secrets", "secrets get", "secrets download"},
	"infisical":           {"secrets", "export"},
	"vault":               {"kv get"},
	"op":                  {"read", "item get"},
	"bw":                  {"get password", "get item"},
	"ace":                 {"env:decrypt"},
	"wrangler":            {"secret get"},
}

// consoleSecretRe is code given to a framework's console or runner that
// reads secrets or the configuration that holds them: config("app.key"),
// env('DB_PASSWORD'), Rails.application.credentials, settings.SECRET_KEY,
// Configuration["ConnectionStrings:..."], ENV.to_h, os.environ.
var consoleSecretRe = mustRx(`(?i)\bconfig\s*\(|\benv\s*\(|getenv\b|credentials\b|secret_key|secrets?\b|\bENV\b\s*(?:\.to_h|\.inspect|\[)|os\.environ|process\.env|connectionstrings|\bDATABASES\b|password|api_key`)

// consoleVerbs are the verbs that run code given on the line, by tool, and
// the options that give it.
var consoleVerbs = map[string]string{"artisan": "tinker", "rails": "runner", "manage.py": "shell", "django-admin": "shell"}

// frameworkSecrets is `credential-print` (block; rules 11): a framework or
// secret manager's verb that prints decrypted secrets or the configuration
// holding them (rails credentials:show, ansible-vault view, dotnet
// user-secrets list, fastlane match decrypt, sops -d, heroku config), code
// given to a framework's console that reads them (artisan tinker
// --execute with config(), rails runner with credentials), and a package
// manager's stored registry credentials read back (bundle config get of
// a host, composer config of http-basic). What they print reaches the
// model as surely as a cat of the file.
func (s *Shield) frameworkSecrets(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		c, ok := frameworkOf(r)
		if !ok {
			continue
		}
		if why := printsSecrets(c); why != "" {
			j.block("credential-print", "%s %s: what it prints reaches the model", quote(r.Line), why)
			return
		}
	}
}

// namesOnly are the options with which a secret manager's listing prints
// the secrets' names, never their values (rules 14: doppler secrets
// --only-names), by tool.
var namesOnly = map[string][]string{"doppler": {"--only-names"}}

// printsSecrets says how a call prints secrets, or "".
func printsSecrets(c frameworkCall) string {
	for _, o := range namesOnly[c.tool] {
		// The listing itself (doppler secrets), not a verb after it
		// (secrets get, secrets download print values whatever else).
		if p := c.positional(); c.has(o) && len(p) >= 1 && p[0] == "secrets" &&
			!slices.ContainsFunc(p[1:], func(w string) bool { return w == "get" || w == "download" || w == "substitute" }) {
			return ""
		}
	}
	for _, v := range printVerbs[c.tool] {
		if strings.HasPrefix(v, "-") {
			if c.has(v) {
				return "decrypts secrets to its output (" + c.tool + " " + v + ")"
			}
			continue
		}
		if verbMatches(c, v) {
			return "prints decrypted secrets or the configuration that holds them (" + c.tool + " " + v + ")"
		}
	}
	if verb, ok := consoleVerbs[c.tool]; ok && verbMatches(c, verb) {
		code := strings.Join(c.args, " ")
		if m := consoleSecretRe.FindString(code); m != "" {
			return "runs code that reads secrets or their configuration (" + m + ")"
		}
	}
	switch c.tool {
	case "bundle", "bundler":
		// bundle config (all settings, credentials among them) or
		// bundle config get KEY where KEY is a gem server's host.
		p := c.positional()
		if len(p) >= 1 && p[0] == "config" && (len(p) == 1 || p[1] == "list" || p[1] == "get" && len(p) == 3 && credentialKey(p[2])) {
			return "prints the stored gem server credentials (bundle " + strings.Join(p, " ") + ")"
		}
	case "composer":
		p := c.positional()
		if len(p) == 2 && p[0] == "config" && credentialKey(p[1]) {
			return "prints a stored registry credential (composer config " + p[1] + ")"
		}
	case "npm", "pnpm", "yarn":
		p := c.positional()
		if len(p) == 3 && p[0] == "config" && p[1] == "get" && credentialKey(p[2]) {
			return "prints a stored registry token (" + c.tool + " config get " + p[2] + ")"
		}
	}
	return ""
}

// credentialKey reports whether a package manager's setting key holds a
// credential: a host (bundler's key for a gem server, enterprise.x.com,
// BUNDLE_GEMS__X__COM), composer's http-basic/github-oauth/gitlab-token/
// bearer keys, an _auth or _authToken key.
func credentialKey(k string) bool {
	l := strings.ToLower(k)
	switch {
	case strings.HasPrefix(l, "http-basic") || strings.HasPrefix(l, "github-oauth") || strings.HasPrefix(l, "gitlab-token") || strings.HasPrefix(l, "gitlab-oauth") || strings.HasPrefix(l, "bearer") || strings.HasPrefix(l, "bitbucket-oauth"):
		return true
	case strings.Contains(l, "_auth") || strings.Contains(l, "token") || strings.Contains(l, "password"):
		return true
	case strings.HasPrefix(l, "bundle_") && strings.Contains(l, "__"):
		return true
	case strings.Count(l, ".") >= 1 && !strings.ContainsAny(l, "/ ") && !strings.HasPrefix(l, ".") && hostLike(l):
		return true
	}
	return false
}

// hostLike reports whether s reads as a host name (labels of letters,
// digits and hyphens, a last label of letters).
func hostLike(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	for _, c := range last {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
