package shield

import (
	"net/url"
	"strconv"
	"strings"
)

// A secret in a query string (rules 15, session 20; docs/shield-rules.md
// "exfiltration:query-secret"). flow:query-data asks about a GET whose
// query carries long or high-entropy data; a password is neither (pw=
// Zt8!kq2Lw9 is ten characters), and a secret written as a reference to
// the variable that holds it (?k=${VAULT_TOKEN}) is a name, not data. What
// holds across them is what the parameter says it is and what its value
// refers to. An http_request is made by the engine itself, outside the
// command sandbox's network rule, so a query string to a host the policy
// does not list is a way out: such a request is asked (escalate), naming
// the parameter.

// secretParamRe is a query parameter's name that says its value is a
// secret: pw, pass, password, token, api_key, apikey, secret, auth,
// client_secret, db_pass, access_token, private_key, credentials.
// Signatures (sig, X-Amz-Signature) are left out: a presigned download
// carries one for the resource it reads.
var secretParamRe = mustRx(`(?i)^(?:[a-z0-9]+[_.-])*(?:pw|pwd|pass|passwd|password|passphrase|secret|token|apikey|api[_.-]?key|private[_.-]?key|access[_.-]?key|auth|credentials?|creds|jwt|bearer|pat)$`)

// queryVarRef is a reference to a variable in a query value: $NAME,
// ${NAME}, ${NAME:-x}, %NAME%, $env:NAME.
var queryVarRef = mustRx(`\$\{?(?:env:)?([A-Za-z_][A-Za-z0-9_]*)|%([A-Za-z_][A-Za-z0-9_]*)%`)

// dbURLVarName is a variable that holds a database's address with its
// login (DATABASE_URL, PRICING_DB_URL, REDIS_DSN, MONGO_URI).
var dbURLVarName = mustRx(`(?i)(?:^|_)(?:DATABASE|DB|POSTGRES|PG|MYSQL|MARIADB|REDIS|MONGO|MONGODB|AMQP|RABBITMQ|BROKER|CONN(?:ECTION)?)(?:_[A-Z0-9]+)*_(?:URL|URI|DSN|STRING)$`)

// awsKeyIDish is an AWS access key id, or a value shaped like one with a
// length off by a few characters (a forged or mistyped key is still sent
// as one).
var awsKeyIDish = mustRx(`^(?:AKIA|ASIA)[0-9A-Z]{12,20}$`)

// querySecretPlaceholder is a value that stands for a secret without
// being one (docs' examples and templates).
var querySecretPlaceholder = mustRx(`(?i)^(?:x+|\*+|<[^>]*>|\{[^}]*\}|your[_-]?\w*|changeme|change[_-]me|redacted|dummy|example|placeholder|none|null|undefined|test|demo|demo[_-]key|xxx+\w*)$`)

// maxQueryParams bounds the parameters read of one query.
const maxQueryParams = 256

// secretInQuery returns the first query parameter whose name says it is a
// secret and whose value reads as one, or whose value refers to a
// variable holding a secret, and why; ok is false when there is none.
func secretInQuery(raw string) (param, why string, ok bool) {
	n := 0
	for part := range strings.SplitSeq(clip(raw, maxSecretScan), "&") {
		if n++; n > maxQueryParams {
			// no page asks for this many: what follows is not read,
			// so the query is asked about as it stands
			return "(" + strconv.Itoa(maxQueryParams) + " and more)", "more parameters than Shield reads", true
		}
		k, v, _ := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		if v == "" {
			continue
		}
		for _, m := range queryVarRef.FindAllStringSubmatch(v, 8) {
			name := m[1] + m[2]
			if len(secretNames([]string{name})) > 0 || dbURLVarName.MatchString(name) {
				return k, "the value of $" + name + ", a variable that holds a secret", true
			}
			if secretParamRe.MatchString(k) {
				return k, "the value of $" + name + " as " + k, true
			}
		}
		if awsKeyIDish.MatchString(v) {
			return k, "an AWS access key id", true
		}
		if name := secretIn(k + "=" + v); name != "" {
			return k, name, true
		}
		if secretParamRe.MatchString(k) && querySecretValue(v) {
			return k, "a value for a parameter named " + k, true
		}
		if queryKeyMaterial(v) {
			return k, "key material (a long random value split by slashes)", true
		}
	}
	return "", "", false
}

// querySecretValue reports whether v reads as a secret's value: six or more
// characters mixing letters with digits or symbols, not a placeholder, a
// path, a URL, a number, a date or a version.
func querySecretValue(v string) bool {
	if len(v) < 6 || len(v) > 512 || querySecretPlaceholder.MatchString(v) || strings.ContainsAny(v, " \t\n") || urlValue(v) {
		return false
	}
	var letter, digit, other bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9':
			digit = true
		case c == '.' || c == '-' || c == '_' || c == ':' || c == '/':
		default:
			other = true
		}
	}
	if !letter || strings.Count(v, "/") > 1 {
		return false
	}
	return digit || other || len(v) >= 16
}

// queryKeyMaterial reports whether v, which encodedData leaves alone because
// it holds a slash, is a random value rather than a path: base64 with
// slashes (an AWS secret key), mixed case and digits, high entropy, no
// segment that is a file's name.
func queryKeyMaterial(v string) bool {
	if len(v) < minQueryData || len(v) > 4*maxQueryValue || !strings.Contains(v, "/") || strings.ContainsAny(v, " .") {
		return false
	}
	var upper, lower, digit bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		case c == '/' || c == '+' || c == '=' || c == '_' || c == '-':
		default:
			return false
		}
	}
	return upper && lower && digit && entropy(v) >= queryEntropy+0.3
}
