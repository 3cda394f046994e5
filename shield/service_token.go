package shield

import (
	"strings"
)

// OwnServiceToken reports whether a request header's value is only a
// reference to an environment variable (`Bearer ${SENTRY_AUTH_TOKEN}`,
// `$GITHUB_TOKEN`, `token ${GRAFANA_API_TOKEN}`) whose name names the
// service of the registrable domain the request goes to (sentry.io,
// github.com, parcelwise.grafana.net): a read of the service with its own
// credential, not data carried elsewhere (rules 16). opx's http_request
// sends a header as written, so the reference itself is what leaves; a
// client that expands it sends the token to the service it belongs to.
// A name that does not name the domain (GITHUB_TOKEN to evil.example,
// SENTRY_AUTH_TOKEN to sentry.evil.example), a value with anything else
// in it, and every method that sends a body are judged as data.
func OwnServiceToken(value, host string) bool {
	v := strings.TrimSpace(value)
	if _, rest, ok := strings.Cut(v, " "); ok {
		switch strings.ToLower(v[:len(v)-len(rest)-1]) {
		case "bearer", "token", "basic", "apikey", "api-key", "key":
			v = strings.TrimSpace(rest)
		default:
			return false
		}
	}
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return false
	}
	if strings.HasPrefix(name, "{") {
		if !strings.HasSuffix(name, "}") {
			return false
		}
		name = name[1 : len(name)-1]
	}
	if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" || host == "" {
		return false
	}
	reg := registrable(strings.ToLower(host))
	label, _, _ := strings.Cut(reg, ".")
	for _, w := range strings.Split(strings.ToLower(name), "_") {
		if len(w) >= 4 && !tokenWords[w] && strings.Contains(label, w) {
			return true
		}
	}
	return false
}

// tokenWords are the words of a variable's name that say it holds a
// credential, not whose it is.
var tokenWords = map[string]bool{"token": true, "auth": true, "access": true, "secret": true, "bearer": true, "private": true,
	"personal": true, "http": true, "https": true, "client": true, "api": true, "apikey": true, "key": true, "pass": true,
	"password": true, "user": true, "admin": true, "read": true, "write": true, "service": true, "account": true, "ingest": true}

// internalName reports whether host is a name under a suffix no public
// registry delegates (.lan, .internal, .local, .corp, .home.arpa …).
func internalName(host string) bool {
	for _, suf := range []string{".lan", ".internal", ".local", ".localdomain", ".corp", ".intranet", ".home.arpa", ".private"} {
		if strings.HasSuffix(host, suf) {
			return true
		}
	}
	return false
}
