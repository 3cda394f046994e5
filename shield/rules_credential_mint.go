package shield

import "strings"

// credentialMint is `credential-mint` (escalate; rules 14): a command
// that creates a credential with a service — a registry or forge token
// (npm token create, glab token create), a cloud or cluster key (kubectl
// create token, a service account's keys create), an API key. What it
// prints reaches the model, and the credential outlives the session with
// whatever scope the line gave it (npm token create --cidr=0.0.0.0/0).
// Local key generators (ssh-keygen, openssl, age-keygen, cosign
// generate-key-pair) make files in the workspace and are judged as such.
func (s *Shield) credentialMint(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if localKeygen[r.Name] || len(r.Argv) < 2 {
			continue
		}
		if c, ok := frameworkOf(r); ok && appKeygen[c.tool] {
			continue // artisan key:generate writes the app's own key locally
		}
		if what := mintsCredential(r.Argv[1:]); what != "" {
			j.escalate("credential-mint", "%s creates %s with a service: what it prints reaches the model, and it outlives the session", quote(r.Line), what)
			return
		}
	}
}

// localKeygen are programs that generate key material locally.
var localKeygen = setOf("ssh-keygen", "openssl", "age-keygen", "rage-keygen", "wg", "gpg", "gpg2", "minisign", "signify",
	"step", "mkcert", "cfssl", "keytool", "certbot", "ssh-add", "cosign", "sigstore", "git", "echo", "printf", "grep", "rg")

// appKeygen are frameworks whose key verbs generate the application's
// own secret locally (artisan key:generate, rails secret).
var appKeygen = setOf("artisan", "rails", "rake", "manage.py", "django-admin", "console", "ace", "mix")

// mintNouns name a credential; mintVerbs create one.
var (
	mintNouns = setOf("token", "tokens", "apikey", "apikeys", "api-key", "api-keys", "key", "keys", "access-key", "accesskey",
		"credential", "credentials", "cred", "creds", "pat", "pats", "secret-id", "authorization", "authorizations", "deploy-key",
		"deploy-keys", "app-password", "password", "passwords", "service-account-key")
	mintVerbs = setOf("create", "new", "add", "generate", "gen", "issue", "mint", "rotate", "reset", "renew", "regenerate")
)

// mintsCredential returns what credential argv (after the program)
// creates, or "": among its first words, a credential noun next to a
// creating verb (token create, create token), or one word joining both
// (create-access-key, tokens:create, api-key-create).
func mintsCredential(argv []string) string {
	var words []string
	for _, a := range argv {
		if !strings.HasPrefix(a, "-") && wordLike(a) {
			if words = append(words, strings.ToLower(a)); len(words) == 4 {
				break
			}
		}
	}
	for k, w := range words {
		if k+1 < len(words) {
			if mintNouns[w] && mintVerbs[words[k+1]] {
				return "a " + w
			}
			if mintVerbs[w] && mintNouns[words[k+1]] {
				return "a " + words[k+1]
			}
		}
		parts := strings.FieldsFunc(w, func(c rune) bool { return c == '-' || c == ':' || c == '_' || c == '.' })
		if len(parts) < 2 {
			continue
		}
		noun, verb := "", false
		for i, p := range parts {
			if mintNouns[p] {
				noun = p
			}
			if i+1 < len(parts) && mintNouns[p+"-"+parts[i+1]] {
				noun = p + "-" + parts[i+1]
			}
			verb = verb || mintVerbs[p]
		}
		if noun != "" && verb {
			return "a " + noun
		}
	}
	return ""
}
