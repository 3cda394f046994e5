package shield

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Information flow within a session (issue 27, docs/shield-rules.md
// "flow:*"). Shield is pure: it does not remember. What a session has read
// that is sensitive is told to it with each action (Action.Taint), by the
// engine, which keeps it as a projection of the ledger (the calls whose
// tool.proposed named a sensitive read, Sensitive, and that ran) and
// records it with the proposal, so that a replay judges with the same
// taint.

// Taint is an earlier call of the session that read something sensitive
// and ran: the session holds that data.
type Taint struct {
	Call string // the call's id (and seq), for reasons
	What string // what it read, as Sensitive named it
}

// maxSensitive bounds what Sensitive names for one action.
const maxSensitive = 4

// Sensitive names what a reads that is sensitive: credential paths,
// the whole environment or a variable whose name says it is a secret,
// key material, a path the policy marks secret (Policy.Secrets). Once a
// sensitive read has run, an action that can carry data out escalates
// (flow:tainted-egress). Whether the read itself is allowed is the other
// rules' business: a blocked read never runs and taints nothing. It also
// names, with ChangedPrefix, the files a tool runs as code that a changes
// (flow:changed-then-run): the engine keeps both the same way.
func (s *Shield) Sensitive(a Action) []string {
	lineSettings.reset() // a new action (rules_appsec_settings.go)
	f := s.facts(&a)
	var out []string
	add := func(format string, args ...any) {
		if len(out) < maxSensitive {
			if w := fmt.Sprintf(format, args...); !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	for i := range f.Reads {
		r := &f.Reads[i]
		if !r.Tree && !r.Glob && (buildSecret(&f, r) || publicPartRead(&f, r)) {
			// rules 20: mounted into a build, or only its public half
			// printed: nothing of it reaches the session
			continue
		}
		if g := s.credential(r); g != "" {
			add("%s (credentials: %s)", r.Path, g)
		} else if g := s.secretPath(r.Path); g != "" {
			add("%s (marked secret by the policy: %s)", r.Path, g)
		}
	}
	if d := wholeEnvDump(&f); d != "" {
		add("the environment (%s)", d)
	} else if d := envDump(&f); d != "" && len(envFilteredSecrets(&f)) > 0 {
		add("the environment's secrets (%s)", d)
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if slices.Contains(envPrinters, r.Name) || slices.Contains(envDumpers, r.Name) {
			names := secretRefs(r.Line)
			if r.Name == "printenv" {
				names = append(names, secretNames(r.Argv[min(1, len(r.Argv)):])...)
			}
			if len(names) > 0 {
				add("$%s (%s)", names[0], r.Name)
			}
		}
		if t := tokenPrinter(r); t != "" {
			add("a token (%s)", t)
		}
	}
	for _, t := range f.Texts {
		if literalSource(t.Source) {
			if names := secretReads(t.Body); len(names) > 0 {
				add("$%s (%s)", names[0], t.Source)
			}
		}
	}
	// Build and test files it changes (flow:changed-then-run), after
	// the reads: one entry per call is kept, and a read matters more.
	changed := s.changedFiles(&f)
	for _, c := range changed {
		add("%s", c)
	}
	// A change Shield asks about, for what commits it later (rules 12,
	// flow:commit-carries).
	if c := s.askedChange(&a, &f, changed); c != "" {
		add("%s", c)
	}
	return out
}

// tokenPrinter names a command that prints a credential it holds (gh auth
// token, aws configure get aws_secret_access_key, git credential fill),
// or "".
func tokenPrinter(r *Run) string {
	argv := strings.Join(r.Argv, " ")
	switch r.Name {
	case "gh", "glab":
		if strings.Contains(argv, "auth token") || strings.Contains(argv, "--show-token") {
			return r.Name + " auth token"
		}
	case "aws":
		if strings.Contains(argv, "configure get") || strings.Contains(argv, "get-session-token") || strings.Contains(argv, "export-credentials") {
			return "aws credentials"
		}
	case "gcloud":
		if strings.Contains(argv, "print-access-token") || strings.Contains(argv, "print-identity-token") {
			return "gcloud access token"
		}
	case "az":
		if strings.Contains(argv, "get-access-token") {
			return "az access token"
		}
	case "git":
		if strings.Contains(argv, "credential fill") {
			return "git credential fill"
		}
		if strings.Contains(argv, "config") && (strings.Contains(argv, "extraheader") || strings.Contains(argv, "credential.") && strings.Contains(argv, "--get")) {
			return "git config " + "extraheader"
		}
	case "python", "python3", "node", "ruby", "perl":
		if strings.Contains(argv, "get_password") || strings.Contains(argv, "getPassword") || strings.Contains(argv, "get_credential") ||
			strings.Contains(argv, "find-generic-password") {
			return r.Name + " reading a keyring"
		}
	case "security":
		if strings.Contains(argv, "find-generic-password") || strings.Contains(argv, "find-internet-password") {
			return "keychain"
		}
	case "secret-tool", "pass", "op", "vault", "bw", "lpass":
		if storeStatusOnly(r.Argv) || r.Name == "vault" && vaultMetadataRead(r.Argv) {
			return "" // rules 14: who it is logged in as, sealed or not, its version
		}
		return r.Name
	}
	return ""
}

// vaultMetadataRead reports whether vault's argv reads what governs the
// secrets, never a secret or a token (rules 19): a policy's text (read,
// list, fmt of a local file), the audit devices, the secrets engines'
// and auth methods' mounts, namespaces.
func vaultMetadataRead(argv []string) bool {
	if len(argv) < 3 {
		return false
	}
	switch argv[1] + " " + argv[2] {
	case "policy read", "policy list", "policy fmt", "audit list", "secrets list", "auth list", "namespace list",
		// rules 29: a token's capabilities on a path, a path's key names,
		// a key-value path's versions and their times: never a value
		"token capabilities", "kv list":
		return true
	}
	return len(argv) >= 4 && argv[1] == "kv" && argv[2] == "metadata" && argv[3] == "get"
}

// storeStatusOnly reports whether a secret store's argv asks only its
// status, identity or version (vault status, op whoami, bw --version),
// with at most an output format: nothing it keeps is printed.
func storeStatusOnly(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	switch argv[1] {
	case "status", "whoami", "version", "--version", "-v", "--help", "help":
	default:
		return false
	}
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "format" && name != "output" && name != "o" {
			return false
		}
		if val == "" && i+1 < len(argv) {
			i++
			val = argv[i]
		}
		if val != "json" && val != "table" && val != "yaml" && val != "human-readable" {
			return false
		}
	}
	return true
}

// secretPath returns the policy's secrets glob that p matches, or "".
func (s *Shield) secretPath(p string) string {
	if len(s.secretGlobs) == 0 {
		return ""
	}
	segs := splitPath(p)
	for i := range s.secretGlobs {
		if s.secretGlobs[i].matchSplit(&Ref{Path: p}, segs) {
			return s.secretGlobs[i].src
		}
	}
	return ""
}

// taintedEgress is `flow:tainted-egress`: once the session holds
// sensitive data (a.Taint), anything that can carry data out escalates,
// naming the read that tainted it: a request with data, a query string or
// headers beyond the plain ones, any request a command makes (its data
// cannot be bounded by reading the line), a git push, a package publish,
// a DNS lookup. Loopback is left to the network rules; so is a plain
// request (no data, no query) a command makes to a host the policy
// lists. A host on the list still gets asked about when the request
// carries data or a query, or is a push: the list says where work may be
// sent, not where a session's secrets may go.
func (s *Shield) taintedEgress(a *Action, f *Facts, j *judgement) {
	if len(a.Taint) == 0 || j.inner {
		return
	}
	i := slices.IndexFunc(a.Taint, func(t Taint) bool { return !t.Changed() })
	if i < 0 {
		return // only build files changed: flow:changed-then-run's business
	}
	t := a.Taint[i]
	why := func(what string) {
		j.escalate("flow:tainted-egress", "this session read %s (call %s); %s can carry it out", t.What, t.Call, what)
	}
	for i := range f.Requests {
		q := &f.Requests[i]
		if localHost(q.Host) {
			continue
		}
		host := q.Host
		if host == "" {
			host = "a host not known before it runs"
		}
		switch {
		case q.By == "git" && (q.Method == "PUSH" || q.Data):
			why("git sending to " + host)
			return
		case q.By == "git":
			continue // a fetch or clone sends nothing of the session's
		case q.Data || len(q.Files) > 0:
			why(fmt.Sprintf("%s sending data to %s", q.By, host))
			return
		case q.Query != "":
			why(fmt.Sprintf("%s with a query string to %s", q.By, host))
			return
		case q.By != "http_request" && q.By != "web_search" && !s.hostAllowed(q.Host):
			// A command's request: what it sends is not bounded by the
			// line (a path, a header, a name to resolve).
			why(fmt.Sprintf("%s reaching %s", q.By, host))
			return
		}
	}
	for i := range f.Runs {
		if p := publisher(&f.Runs[i]); p != "" {
			why(p)
			return
		}
	}
}

// publisher names a command that publishes a package or artifact, or "".
func publisher(r *Run) string {
	if len(r.Argv) < 2 {
		return ""
	}
	sub := r.Argv[1]
	switch r.Name {
	case "npm", "pnpm", "yarn", "bun":
		if sub == "publish" || (sub == "npm" && len(r.Argv) > 2 && r.Argv[2] == "publish") {
			return r.Name + " publish"
		}
	case "cargo", "poetry", "gem", "dotnet", "nuget", "flit", "hatch", "pdm", "uv":
		if sub == "publish" || sub == "push" {
			return r.Name + " " + sub
		}
	case "twine":
		if sub == "upload" {
			return "twine upload"
		}
	case "docker", "podman":
		if sub == "push" {
			return r.Name + " push"
		}
	case "gh":
		if sub == "release" || sub == "gist" {
			return "gh " + sub
		}
	}
	return ""
}

// Query strings that carry data (flow:query-data): a value at least
// minQueryData long with the character spread of encoded data (base64,
// base32, long hex beyond a digest), or any value over maxQueryValue.
const (
	minQueryData  = 20
	maxQueryValue = 64
	// minStructuredData is the shortest value judged by its shape
	// (structured data: key: value, addresses, JSON).
	minStructuredData = 40
	// queryEntropy is the spread (Shannon bits per character) above
	// which a value reads as encoded data: base64 of random bytes is
	// near log2(len), words and digests (hex: at most 4) fall below.
	queryEntropy = 4.1
)

// queryData is `flow:query-data`: a GET whose query (or path) carries a
// long or high-entropy value to a host the policy does not list. An
// http_request is made by the engine itself, where the command sandbox's
// network rule does not apply: a query string is a way out.
func (s *Shield) queryData(_ *Action, f *Facts, j *judgement) {
	for i := range f.Requests {
		q := &f.Requests[i]
		if q.Host == "" || localHost(q.Host) || s.hostAllowed(q.Host) {
			continue
		}
		if l := dataLabel(q.Host); l != "" {
			j.escalate("flow:query-data", "%s reaches %s, whose name carries %s: encoded data can leave in a host name (a DNS lookup)", q.By, clipText(q.Host, 60), clipText(l, 40))
			return
		}
		if q.Query == "" {
			continue
		}
		if k, why, ok := secretInQuery(q.Query); ok {
			j.escalate("exfiltration:query-secret", "%s sends %s to %s in its query string (parameter %s): a secret can leave that way", q.By, why, q.Host, clipText(k, 40))
			return
		}
		if k, v, ok := dataInQuery(q.Query); ok {
			j.escalate("flow:query-data", "%s sends %s=%s to %s in its query string: encoded or long data can leave that way", q.By, clipText(k, 40), clipText(v, 40), q.Host)
			return
		}
	}
}

// dataInQuery returns the first query parameter whose value (or name, for
// a value-less parameter) reads as data.
func dataInQuery(raw string) (string, string, bool) {
	for part := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		if v == "" {
			k, v = "", k
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		if encodedData(v) {
			return k, v, true
		}
		if dnsName(v) && (dataLabel(v) != "" || hexLabel(v) != "") {
			// a name to resolve (DNS over HTTPS: ?name=<data>.zone)
			return k, v, true
		}
	}
	return "", "", false
}

// EncodedData reports whether a value (a query parameter, a header,
// a host name's label) reads as encoded or structured data rather than a
// word, a number, a version, a path or a digest.
func EncodedData(v string) bool {
	for _, w := range strings.Fields(v) {
		if len(w) >= minQueryData && encodedData(w) {
			return true
		}
	}
	return encodedData(v)
}

// encodedData reports whether a value reads as data rather than a word,
// a number, a version, a path or a digest.
func encodedData(v string) bool {
	if len(v) > maxQueryValue {
		return !plainWords(v)
	}
	if len(v) >= minStructuredData && strings.ContainsAny(v, "@:=;{}\n") && !plainWords(v) && !urlValue(v) {
		// Structured data (a config line, a list of addresses, JSON):
		// not what a plain query carries.
		return true
	}
	if len(v) < minQueryData || strings.ContainsAny(v, " /") {
		return false
	}
	hex := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			hex = false
			break
		}
	}
	if hex {
		return len(v) > 64 // longer than a SHA-256: data, not a digest
	}
	return entropy(v) >= queryEntropy || base64Text(v)
}

// urlValue reports whether a value is one URL (a redirect or a link to
// look up: ?url=https://...), which a query legitimately carries.
func urlValue(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && len(v) <= maxQueryValue
}

// plainWords reports whether a long value is text of words (a search
// query, a sentence), which a query legitimately carries.
func plainWords(v string) bool {
	words := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '+' })
	return len(words) >= 4 && len(v)/len(words) < 16
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	var h float64
	l := float64(len(s))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			h -= p * math.Log2(p)
		}
	}
	return h
}

// QueryOf is the raw query of a URL, or "" (and the path's last segment
// when it alone is long: /x/<data> carries as much as ?d=<data>).
func QueryOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	q := u.RawQuery
	if seg := path.Base(u.Path); len(seg) >= minQueryData && encodedData(seg) && !fileName(seg) {
		if q != "" {
			q += "&"
		}
		q += url.QueryEscape(seg)
	}
	return q
}

// envFilteredSecrets returns the secret words a filter over a dump of the
// environment looks for (env | grep -i token).
func envFilteredSecrets(f *Facts) []string {
	var out []string
	for _, r := range f.Runs {
		if !slices.Contains(envFilters, r.Name) {
			continue
		}
		line := strings.ToLower(r.Line)
		for _, w := range envFilterWords {
			if strings.Contains(line, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// dnsName reports whether v reads as a host name of three labels or more.
func dnsName(v string) bool {
	if strings.Count(v, ".") < 2 || len(v) > 253 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// minHexLabel is the shortest label of hex digits read as data in a name
// a query asks to resolve (a content hash in a host name is rarer there
// than in a CDN's host).
const minHexLabel = 24

// hexLabel returns the first label of host (but the last two) made of at
// least minHexLabel hex digits, or "".
func hexLabel(host string) string {
	labels := strings.Split(host, ".")
	for _, l := range labels[:max(0, len(labels)-2)] {
		if len(l) < minHexLabel {
			continue
		}
		hex := true
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				hex = false
				break
			}
		}
		if hex {
			return l
		}
	}
	return ""
}

// dataLabel returns the first label of host (but the last two, the
// registered name) that reads as encoded data, or "".
func dataLabel(host string) string {
	labels := strings.Split(host, ".")
	if len(labels) < 3 {
		return ""
	}
	for _, l := range labels[:len(labels)-2] {
		if len(l) >= 16 && encodedData(l) || len(l) >= 16 && entropy(l) >= 3.6 && strings.IndexFunc(l, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 {
			return l
		}
	}
	return ""
}

// credentialStore is `credential-store` (escalate): a command that prints
// a credential a tool keeps for the user (gh auth token, git's configured
// auth header, a keyring's password, aws configure get): what it prints
// reaches the model and the transcript.
func (s *Shield) credentialStore(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		if t := tokenPrinter(&f.Runs[i]); t != "" {
			j.escalate("credential-store", "%s prints a credential a tool keeps for the user (%s)", clipText(f.Runs[i].Line, 80), t)
			return
		}
	}
}

// fileName reports whether a path segment reads as a file's name (a
// release archive: go1.23.4.linux-amd64.tar.gz): dotted parts, each
// shorter than a value judged as data, the last an extension. Base64 and
// hex carry no dots.
func fileName(seg string) bool {
	parts := strings.Split(seg, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) >= minQueryData {
			return false
		}
	}
	ext := parts[len(parts)-1]
	if ext == "" || len(ext) > 8 || ext[0] < 'a' || ext[0] > 'z' {
		return false
	}
	for _, c := range ext {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
