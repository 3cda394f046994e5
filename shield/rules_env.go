package shield

import (
	"slices"
	"strings"
)

// secretEnvName matches an environment variable's name that says it holds
// a secret: secretWords in upper case (TOKEN, SECRET, PASSWORD, API_KEY,
// ACCESS_KEY, PRIVATE_KEY, CREDENTIAL...), APIKEY, and AUTH as a word of
// its own (NPM_AUTH, but not SSH_AUTH_SOCK: a socket's path).
var secretEnvName = mustRx(`(?:` + secretWordsRe("_?", true) + `)|(?:^|_)AUTH(?:_TOKEN|_KEY)?$` +
	// rules 21: a key named by what it signs, encrypts or opens (PROD_KEY, COOKIE_KEY, HMAC_KEY)
	`|(?:^|_)(?:SIGNING|PRIVATE|MASTER|HMAC|ENCRYPTION|ENC|COOKIE|SESSION|JWT|PROD|PRODUCTION|ADMIN|ROOT|AES|CRYPTO|LICENSE|SERVICE|CLIENT|WEBHOOK|SHARED|SIGN|SEAL|UNSEAL|DECRYPTION|KMS|HSM)_?KEY$`)

// envRef is a shell reference to a variable: $NAME, ${NAME}, ${NAME:-x},
// ${#NAME}, ${!NAME}.
var envRef = mustRx(`\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)`)

// envRead is an interpreter reading one variable by name: Python's
// os.environ['X'], os.environ.get("X"), os.getenv('X'); Node's
// process.env.X and process.env['X']; Ruby's ENV['X'] and ENV.fetch;
// Perl's $ENV{X}; PHP's getenv('X'), $_ENV['X']; Deno.env.get('X').
var envRead = mustRx(`(?:environ|getenv|\benv|\bENV|_ENV|ENV)\s*(?:\.\s*(?:get|fetch)\s*)?[\[\(\{.]\s*["']?([A-Za-z_][A-Za-z0-9_]*)`)

// codePrints is an interpreter's way to write to its output.
var codePrints = mustRx(`\b(?:print|println|printf|puts|console\.\w+|echo|say|write|writeln|pp|p|dump|var_dump|print_r|Write-Host|Write-Output)\b`)

// envFilterWords are what a filter over a dump of the environment looks
// for when it picks secrets out of it (env | grep -i token).
var envFilterWords = []string{"token", "secret", "passw", "pwd=", "key", "credential", "cred", "auth", "private"}

// envPrinters print their arguments; envDumpers print every variable.
var (
	envPrinters = []string{"echo", "printf", "print"}
	envDumpers  = []string{"env", "printenv", "export", "set", "declare", "typeset", "compgen"}
	envFilters  = []string{"grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "sed", "findstr", "select-string"}
	// envPassThrough pass text on for display: a line whose other
	// programs are only these prints what the variable holds.
	envPassThrough = []string{"echo", "printf", "print", "printenv", "env", "export", "set", "declare", "typeset", "compgen", "cat", "head", "tail",
		"grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "sed", "cut", "tr", "sort", "uniq", "tee", "base64", "xxd", "od", "hexdump",
		"rev", "less", "more", "column", "fold", "wc", "nl", "strings", "basenc", "base32", "jq"}
	envSenders = []string{"curl", "wget", "nc", "ncat", "netcat", "socat", "http", "https", "xh", "telnet", "openssl", "ssh", "scp", "sftp", "ftp", "dig", "nslookup", "host", "ping"}
)

// secretEnv is `credential-env`: a command that prints an environment
// variable whose name says it holds a secret (echo $GITHUB_TOKEN,
// printenv AWS_SECRET_ACCESS_KEY, env | grep -i token, an interpreter
// printing os.environ['STRIPE_SECRET_KEY']), or sends one to a host the
// policy does not allow. What a command prints reaches the model and the
// transcript: disclosure. Handing the variable to the program that uses
// it is not: echo "$CR_PAT" | docker login --password-stdin, or curl -H
// "Authorization: Bearer $GITHUB_TOKEN" to an allowed host.
func (s *Shield) secretEnv(_ *Action, f *Facts, j *judgement) {
	// Printed: every program of the line only passes text on for display,
	// and no redirection takes the output into a file instead (echo
	// "T=$T" >> .env stores it; a later upload of the file is judged by
	// exfiltration:upload).
	passThrough := !slices.ContainsFunc(f.Writes, func(w Ref) bool { return w.By == "redirect" })
	for _, r := range f.Runs {
		if !slices.Contains(envPassThrough, r.Name) {
			passThrough = false
			break
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		var names []string
		switch {
		case slices.Contains(envPrinters, r.Name):
			names = secretRefs(r.Line)
		case r.Name == "printenv":
			names = secretNames(r.Argv[min(1, len(r.Argv)):])
		case slices.Contains(codeRunners, r.Name) && r.Name != "source" && r.Name != ".":
			if code := strings.Join(r.Argv[min(1, len(r.Argv)):], " "); len(code) <= maxSecretScan {
				names = secretReads(code)
				if len(names) > 0 && codePrints.MatchString(code) {
					j.block("credential-env", "%s prints %s, an environment variable that holds a secret", r.Name, names[0])
					return
				}
				if len(names) > 0 && s.untrustedBy(f, r.Name) == "" {
					names = nil // read and used (a client's header), not shown
				}
			}
		}
		if len(names) == 0 {
			names = secretRefs(r.Line)
			if len(names) > 0 && slices.Contains(envSenders, r.Name) {
				if host := s.untrustedBy(f, r.Name); host != "" && !ownTokenHeader(r, names, host) {
					if namedServiceHeader(r, names, host) {
						// rules 20: $NETBOX_TOKEN in an Authorization header
						// to netbox.example.net: the token's own service by
						// name, but anyone can register a name that starts
						// so — asked, not blocked
						j.escalate("credential-env", "%s sends %s to %s, a host named for the service the token is for: a human knows whether it is theirs", r.Name, names[0], host)
						continue
					}
					j.block("credential-env", "%s sends %s, an environment variable that holds a secret, to %s", r.Name, names[0], host)
					return
				}
			}
			continue
		}
		if passThrough {
			j.block("credential-env", "%s prints %s, an environment variable that holds a secret", quote(r.Line), names[0])
			return
		}
		for _, by := range slices.Concat(envSenders, []string{r.Name}) {
			if host := s.untrustedBy(f, by); host != "" {
				j.block("credential-env", "%s, an environment variable that holds a secret, is sent to %s", names[0], host)
				return
			}
		}
	}
	dump := envDump(f)
	if dump == "" {
		for _, r := range f.Reads {
			if r.Path == "/proc/self/environ" {
				dump = r.By + " /proc/self/environ"
			}
		}
	}
	if dump != "" {
		s.envFiltered(dump, f, j)
	}
	if d := wholeEnvDump(f); d != "" {
		// The whole environment, printed: every secret the session's
		// programs were handed reaches the model and the transcript.
		j.escalate("credential-env", "%s prints the whole environment, where tokens and keys are handed to programs", d)
	}
}

// wholeEnvDump returns the program that prints the whole environment,
// values and all, to the action's output, or "": env, printenv, export,
// set, declare -p/-x and typeset -x with no other argument, or a read of
// /proc/self/environ, unless a filter (env | grep GO) picks lines out of
// it (a filter that picks secrets is envFiltered's).
func wholeEnvDump(f *Facts) string {
	dump := ""
	for _, r := range f.Runs {
		if strings.Contains(r.Line, "=") {
			continue // export X=1, declare -x X=1: setting, not printing
		}
		switch {
		case len(r.Argv) == 1 && (r.Name == "env" || r.Name == "printenv" || r.Name == "export" || r.Name == "set"):
			dump = r.Name
		case len(r.Argv) == 2 && strings.Contains(r.Line, " ") && !strings.Contains(r.Line, "=") &&
			(r.Name == "export" && r.Argv[1] == "-p" || (r.Name == "declare" || r.Name == "typeset") && slices.Contains([]string{"-p", "-x", "-px", "-xp"}, r.Argv[1])):
			dump = r.Name + " " + r.Argv[1]
		}
	}
	for _, r := range f.Runs {
		if d := otherEnvDump(&r); d != "" {
			dump = d
		}
	}
	for _, r := range f.Reads {
		if r.Path == "/proc/self/environ" && r.By != "" && !slices.Contains(envDumpers, r.By) {
			dump = r.By + " /proc/self/environ"
		}
	}
	for _, r := range f.Runs {
		if slices.Contains(codeRunners, r.Name) && r.Name != "source" && r.Name != "." {
			if code := strings.Join(r.Argv[min(1, len(r.Argv)):], " "); wholeEnvInCode(code) && codePrints.MatchString(code) {
				dump = r.Name + " code"
			}
		}
	}
	if dump == "" {
		return ""
	}
	for _, r := range f.Runs {
		if slices.Contains(envFilters, r.Name) && len(r.Argv) > 1 || envNamesOnly(&r) {
			return ""
		}
	}
	return dump
}

// envNamesOnly reports whether run keeps only what precedes the first "="
// of each line (cut -d= -f1, awk -F= '{print $1}', sed 's/=.*//'): the
// variables' names, never their values (rules 20).
func envNamesOnly(r *Run) bool {
	args := strings.Join(r.Argv[min(1, len(r.Argv)):], " ")
	switch r.Name {
	case "cut":
		return (strings.Contains(args, "-d=") || strings.Contains(args, "-d '='") || strings.Contains(args, `-d "="`) || strings.Contains(args, "-d =")) && (strings.HasSuffix(args, "-f1") || strings.Contains(args, "-f1 ") || strings.HasSuffix(args, "-f 1"))
	case "awk", "gawk":
		return (strings.Contains(args, "-F=") || strings.Contains(args, "-F '='")) && strings.Contains(args, "{print $1}") && strings.Count(args, "$") == 1
	case "sed":
		return args == "s/=.*//" || args == "'s/=.*//'" || args == "-e s/=.*//"
	}
	return false
}

// envDump returns the program that prints the whole environment in the
// action (env, printenv, export -p, set, declare -p), or "".
func envDump(f *Facts) string {
	for _, r := range f.Reads {
		if r.Path == "/proc/self/environ" && slices.Contains(envDumpers, r.By) {
			return r.By
		}
	}
	for _, r := range f.Runs {
		if !slices.Contains(envDumpers, r.Name) {
			continue
		}
		if len(r.Argv) == 1 || (len(r.Argv) == 2 && slices.Contains([]string{"-p", "-x", "-px", "-xp", "-v", "-e"}, r.Argv[1])) {
			return r.Name
		}
	}
	return ""
}

// envFiltered blocks a filter picking secret-named variables out of a
// dump of the environment (env | grep -i token).
func (s *Shield) envFiltered(dump string, f *Facts, j *judgement) {
	for _, r := range f.Runs {
		if !slices.Contains(envFilters, r.Name) {
			continue
		}
		args := strings.ToLower(strings.Join(r.Argv[min(1, len(r.Argv)):], " "))
		for _, w := range envFilterWords {
			if strings.Contains(args, w) {
				j.block("credential-env", "%s picks the variables named like secrets (%q) out of what %s prints of the environment", quote(r.Line), w, dump)
				return
			}
		}
		if m := serviceEnvRe.FindString(args); m != "" {
			j.escalate("credential-env", "%s picks a credentialed service's variables (%q) out of what %s prints of the environment: its token among them", quote(r.Line), m, dump)
			return
		}
	}
}

// serviceEnvRe names, in a filter's pattern, the variables of a service
// whose client reads its token from the environment (rules 11): a filter
// for them over an environment dump prints the token with the rest.
var serviceEnvRe = mustRx(`(?:^|[^a-z])(?:aws|cf_api|cf_|cloudflare|wrangler|stripe|github|gh_|gitlab|glab|npm_|openai|anthropic|azure|arm_|gcp|google|gcloud|digitalocean|do_|heroku|vercel|netlify|fly_|supabase|firebase|sentry|twilio|sendgrid|slack|datadog|dd_|hf_|huggingface|pulumi|tf_var|vault|doppler|pkr_var|proxmox|consul|nomad|vsphere|govc|vcenter|hcloud|linode|openstack|os_password|scw_|database_url|db_url|postgres|pg|mysql|redis_url|mongo` +
	// rules 18: app signing and mobile release services (fastlane match's
	// passphrase, App Store Connect keys, Expo, keystores)
	`|match|asc_|app_store|appstore|apple|fastlane|expo|eas_|keystore|signing|revenuecat|codemagic|bitrise)`)

// untrustedBy returns the first host a request by the program by goes to
// that is neither allowed nor this machine ("a host that cannot be
// known" for one computed at run time), or "".
func (s *Shield) untrustedBy(f *Facts, by string) string {
	for _, q := range f.Requests {
		if q.By != by {
			continue
		}
		if q.Host == "" {
			return "a host that cannot be known"
		}
		if !s.hostAllowed(q.Host) && !localHost(q.Host) {
			return q.Host
		}
	}
	return ""
}

// secretRefs returns the secret-named variables a shell line references.
func secretRefs(line string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(clip(line, maxSecretScan), 64) {
		out = append(out, secretNames(m[1:])...)
	}
	return out
}

// secretReads returns the secret-named variables interpreter code reads.
func secretReads(code string) []string {
	var out []string
	for _, m := range envRead.FindAllStringSubmatch(code, 64) {
		out = append(out, secretNames(m[1:])...)
	}
	return out
}

// secretNames returns the words of names that name a secret variable.
func secretNames(names []string) []string {
	var out []string
	for _, n := range names {
		if n != "" && !strings.HasPrefix(n, "-") && secretEnvName.MatchString(strings.ToUpper(n)) && !locationName(n) {
			out = append(out, n)
		}
	}
	return out
}

// locationName reports whether a variable's name says it holds where a
// secret is, not the secret (SIGNING_KEY_PATH, GOOGLE_APPLICATION_CREDENTIALS_FILE,
// KEY_DIR): printing it shows a path (rules 22).
func locationName(n string) bool {
	u := strings.ToUpper(n)
	for _, suf := range []string{"_PATH", "_FILE", "_DIR", "_LOCATION", "_FILENAME", "_DIRECTORY"} {
		if strings.HasSuffix(u, suf) {
			return true
		}
	}
	return false
}

// wholeEnv are the ways interpreter code names the whole environment.
var wholeEnv = []string{"os.environ", "process.env", "ENV", "%ENV", "$_ENV", "System.getenv()", "Deno.env.toObject()", "os.Environ()"}

// wholeEnvInCode reports whether code uses the environment whole (printed
// or passed on as a map: print(dict(os.environ)), console.log(process.env),
// os.environ.items()) rather than one variable of it (os.environ['HOME'],
// process.env.NODE_ENV, os.environ.get('X')).
func wholeEnvInCode(code string) bool {
	if len(code) > maxSecretScan {
		code = code[:maxSecretScan]
	}
	for _, w := range wholeEnv {
		for rest := code; ; {
			k := strings.Index(rest, w)
			if k < 0 {
				break
			}
			before := rest[:k]
			rest = rest[k+len(w):]
			if w == "ENV" && (strings.HasSuffix(before, "%") || strings.HasSuffix(before, "_") || len(before) > 0 && isWordByte(before[len(before)-1])) {
				continue
			}
			next := strings.TrimLeft(rest, " \t")
			switch {
			case strings.HasPrefix(next, "[") || strings.HasPrefix(next, "{") || strings.HasPrefix(next, ".get") || strings.HasPrefix(next, ".fetch") ||
				strings.HasPrefix(next, ".setdefault") || strings.HasPrefix(next, ".pop"):
				continue // one variable
			case strings.HasPrefix(next, ".items") || strings.HasPrefix(next, ".keys") || strings.HasPrefix(next, ".values") ||
				strings.HasPrefix(next, ".copy") || strings.HasPrefix(next, ".to_h") || strings.HasPrefix(next, ".each"):
				return true
			case strings.HasPrefix(next, "."):
				continue // process.env.NODE_ENV
			}
			return true
		}
	}
	return false
}

// otherEnvDump names a command that prints other processes' environments
// (ps with BSD's e: ps eww, ps auxe) or a compose project's with every
// variable resolved (docker compose config), or "".
func otherEnvDump(r *Run) string {
	args := r.Argv[min(1, len(r.Argv)):]
	switch r.Name {
	case "ps":
		for _, a := range args {
			if a != "" && a[0] != '-' && strings.ContainsRune(a, 'e') && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzACFHLMSTUVXZ") == "" {
				return "ps " + a + " (other processes' environments)"
			}
		}
	case "docker", "podman", "docker-compose", "podman-compose":
		compose := r.Name == "docker-compose" || r.Name == "podman-compose" || slices.Contains(args, "compose")
		if compose && slices.Contains(args, "config") {
			for _, a := range args {
				switch a {
				case "--services", "--volumes", "--images", "--profiles", "--networks", "-q", "--quiet", "--hash", "--no-interpolate":
					return ""
				}
			}
			return r.Name + " compose config (every variable resolved)"
		}
	}
	return ""
}

// ownTokenHeader reports whether a client's only secret is one header
// that is a reference to the service's own token (OwnServiceToken: curl -H
// "X-Consul-Token: $CONSUL_HTTP_TOKEN" https://consul.corp.lan/…), sent
// with a read: the token goes where it is for (rules 17).
func ownTokenHeader(r *Run, names []string, host string) bool {
	if len(names) != 1 || r.Name != "curl" {
		return false
	}
	found := false
	for k := 1; k < len(r.Argv); k++ {
		a := r.Argv[k]
		switch {
		case a == "-d" || a == "--data" || strings.HasPrefix(a, "--data") || a == "-F" || a == "--form" || a == "-T" || a == "--upload-file" || a == "-X" || a == "--request":
			// rules 21: the token still goes only to its own service; what
			// the line sends with it is judged as data by the network rules
			k++
		case (a == "-u" || a == "--user") && k+1 < len(r.Argv):
			// rules 21: basic authentication, user:$TOKEN (rules 22: or
			// $TOKEN: with an empty password, as SonarQube takes it)
			name, ok := basicAuthName(r.Argv[k+1])
			k++
			if !ok || name != names[0] {
				continue
			}
			if !namesHost(name, host) {
				return false
			}
			found = true // a write, not a read
		case (a == "-H" || a == "--header") && k+1 < len(r.Argv):
			_, v, ok := strings.Cut(r.Argv[k+1], ":")
			if ok && strings.Contains(v, names[0]) {
				if !OwnServiceToken(strings.TrimSpace(v), host) && !internalServiceToken(strings.TrimSpace(v), host) {
					return false
				}
				found = true
			}
			k++
		case strings.Contains(a, "://") && secretPathWord.MatchString(a):
			return false // a secret read with the token (/v1/kv/…/password)
		}
	}
	return found
}

// internalServiceToken reports whether a header's value is a reference
// to a token named for the service a host under an internal suffix is
// (consul.corp.lan and $CONSUL_HTTP_TOKEN): no one outside can register
// that name.
func internalServiceToken(value, host string) bool {
	h := strings.ToLower(host)
	if !internalName(h) {
		return false
	}
	first, _, _ := strings.Cut(h, ".")
	name := strings.Trim(strings.TrimPrefix(strings.TrimSpace(value), "$"), "{}")
	if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
		return false
	}
	svc, _, _ := strings.Cut(strings.ToLower(name), "_")
	return len(svc) >= 4 && strings.Contains(first, svc)
}

// namedServiceHeader reports whether curl sends the one secret variable
// only in an Authorization header ("Token $X", "Bearer $X" or "$X") to a
// host whose first label names the variable's service (NETBOX_TOKEN and
// netbox.example.net), reading (no data, no method) and asking for no
// secret path.
func namedServiceHeader(r *Run, names []string, host string) bool {
	if len(names) != 1 || r.Name != "curl" {
		return false
	}
	found := false
	for k := 1; k < len(r.Argv); k++ {
		a := r.Argv[k]
		switch {
		case a == "-d" || a == "--data" || strings.HasPrefix(a, "--data") || a == "-F" || a == "--form" || a == "-T" || a == "--upload-file" || a == "-X" || a == "--request":
			// rules 21: the token still goes only to its own service; what
			// the line sends with it is judged as data by the network rules
			k++
		case (a == "-u" || a == "--user") && k+1 < len(r.Argv):
			// rules 21: basic authentication, user:$TOKEN (rules 22: or
			// $TOKEN: with an empty password, as SonarQube takes it)
			name, ok := basicAuthName(r.Argv[k+1])
			k++
			if !ok || name != names[0] {
				continue
			}
			if !namesHost(name, host) {
				return false
			}
			found = true
		case (a == "-H" || a == "--header") && k+1 < len(r.Argv):
			h, v, ok := strings.Cut(r.Argv[k+1], ":")
			k++
			if !ok || !strings.Contains(v, names[0]) {
				continue
			}
			if !strings.EqualFold(strings.TrimSpace(h), "authorization") {
				return false
			}
			v = strings.TrimSpace(v)
			for _, p := range []string{"Token ", "Bearer ", "token ", "bearer "} {
				v = strings.TrimPrefix(v, p)
			}
			name := strings.Trim(strings.TrimPrefix(v, "$"), "{}")
			if name != names[0] || !namesHost(name, host) {
				return false
			}
			found = true
		case strings.Contains(a, "://") && secretPathWord.MatchString(a):
			return false
		}
	}
	return found
}

// basicAuthName is the variable a curl -u USER:PASSWORD argument passes
// as its secret: the password's, or the user's when the password is empty.
func basicAuthName(arg string) (string, bool) {
	u, v, ok := strings.Cut(arg, ":")
	if ok && strings.TrimSpace(v) == "" {
		v = u
	}
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(v), "$"), "{}"), ok
}

// namesHost reports whether a token's name begins with the first label of
// host (NETBOX_TOKEN, netbox.example.net): the service it is for.
//
// Rules 28: or the first label is the name's words joined by dashes
// (FLEET_STAGING_TOKEN, fleet-staging.example.com), or begins with the
// service and a dash (GRAFANA_TOKEN, grafana-dev.example.com).
func namesHost(name, host string) bool {
	svc, _, _ := strings.Cut(strings.ToLower(name), "_")
	first, _, _ := strings.Cut(strings.ToLower(host), ".")
	if len(svc) < 4 {
		return false
	}
	return first == svc || strings.HasPrefix(first, svc+"-") || strings.HasPrefix(strings.ReplaceAll(strings.ToLower(name), "_", "-"), first+"-")
}

// secretPathWord is a URL whose path names a secret.
var secretPathWord = mustRx(`(?i)://[^/\s]+/\S*(?:passw|secret|token|credential|private|/kv/|apikey|api_key)`)
