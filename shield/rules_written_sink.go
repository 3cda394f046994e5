package shield

import (
	"encoding/base64"
	"net/netip"
	"path"
	"strings"
)

// Code written that will send data out (issue 27, pass 7, rules 10;
// docs/shield-rules.md "exfiltration:written-code"). The network rules
// judge what a command or a request sends now; code an agent writes sends
// later, when a notebook, a DAG, a job, a handler or a page runs, outside
// anything Shield sees. A write or edit of code in any language that adds
// an outbound destination the file did not name (a URL's host, an object
// store's bucket, a mail server or recipient domain, a name looked up in
// DNS built from data), off the policy's list and not this machine or a
// private network, in code that carries data to it (a request body, an
// upload, a query string built from variables, a header, the environment,
// cookies, a table or frame written out) is asked about, naming the
// destination. What the rule cannot see stays allowed: a destination the
// file already named (the edit's old text), a constant URL fetched with
// nothing of the program's, a link in a comment, tests.

// sinkURL is a URL with a scheme that sends: web, sockets, file transfer,
// object stores and data lakes, mail. Group 1 the scheme, 2 the host (or
// bucket, or account).
var sinkURL = mustRx(`(?i)\b(https?|wss?|ftps?|sftp|s3[an]?|gs|gcs|az|abfss?|wasbs?|adls?|oss|cos|r2|hdfs|webhdfs|smtps?)://(?:[^\s/@"'` + "`" + `<>]+@)?([a-z0-9_{$%\[][a-z0-9._\-{}$%\]]*)`)

// sinkBucket is a bucket or container named without a URL: a keyword
// argument or field (bucket="x", Bucket: aws.String("x"), s3_bucket=),
// boto3's upload_file(path, "bucket", key), a client's bucket("x").
var sinkBucket = mustRx(`(?i)\b(?:s3_?bucket|gcs_?bucket|dest(?:ination)?_?bucket|target_?bucket|bucket_?name|bucket)["']?\s*(?:=>|[=:])\s*(?:aws\.String\(\s*)?["']([a-z0-9][a-z0-9._-]{2,})["']|\.(?:upload_file|upload_fileobj|copy)\(\s*[^,()\n]+,\s*["']([a-z0-9][a-z0-9._-]{2,})["']|\b(?:bucket|Bucket|get_bucket|getBucket|get_container_client|GetBlobContainerClient)\(\s*["']([a-z0-9][a-z0-9._-]{2,})["']`)

// sinkMail is a mail server or a recipient named in code that sends mail.
var sinkMail = mustRx(`(?i)(?:smtplib\.SMTP(?:_SSL)?\(|SmtpClient\(|Net::SMTP\.start\(|smtp\.Dial\(|smtp\.SendMail\(|createTransport\(\s*\{\s*host\s*:|smtp_?host\s*[=:]|smtp_?server\s*[=:]|address\s*:)\s*["']([a-z0-9][\w.-]*\.[a-z]{2,})|\b(?:to|recipients?|cc|bcc|mail_?to|send_?to|to_?addrs?)\s*(?:=>|[=:])\s*\[?\s*["'][\w.+-]+@([\w-]+(?:\.[\w-]+)+)["']|\bmail\(\s*["'][\w.+-]+@([\w-]+(?:\.[\w-]+)+)["']`)

// sinkSocket is a host a raw connection is opened to: sockets, dialers,
// TCP clients in any language.
var sinkSocket = mustRx(`(?i)(?:\.connect|create_connection|TcpStream::connect|net\.Dial(?:Timeout)?|new\s+Socket|TcpClient|fsockopen|TCPSocket\.new|Socket\.tcp)\s*\(\s*(?:"tcp",\s*)?\(?\s*["']([a-z0-9][a-z0-9.-]*\.[a-z]{2,24})(?::\d+)?["']`)

// sinkDNS is a host name built from data inside a string: what is looked
// up carries it (f"{secret}.x.example", `${d}.x.example`, "%s.x.example").
var sinkDNS = mustRx(`(?i)(?:\{[^{}\n]+\}|#\{[^{}\n]+\}|%[sdvx]|["'` + "`" + `]\s*\+\s*[\w.()\[\]]+\s*\+\s*["'` + "`" + `])\.((?:[a-z0-9-]+\.)+[a-z]{2,24})\b`)

// dnsLookup is code that resolves a name.
var dnsLookup = mustRx(`(?i)gethostbyname|getaddrinfo|\bresolve[rs]?\b|dns\.|LookupHost|LookupIP|lookup\(|nslookup|\bdig\b|InetAddress\.getByName|Dns\.GetHost|Resolv`)

// sinkCarries is added code that carries data: an HTTP method that sends,
// a body or form passed as an argument, an upload, mail, SQL that unloads
// to or names an external location, a transfer operator, a curl that
// posts.
var sinkCarries = mustRx(`(?i)[.:>]\s*(?:post|put|patch)(?:async|_?json|form|object)?\s*[(!]|\bhttp\.(?:post|postform|put)\b|\bmethod\s*[:=]\s*["'` + "`" + `]?(?:post|put|patch)\b|NewRequest(?:WithContext)?\([^)\n]*"(?:POST|PUT|PATCH)"|Net::HTTP::(?:Post|Put|Patch)|CURLOPT_POST|(?:^\s*|[(,{]\s*)(?:json|data|body|files|form|payload|multipart|content)(?:\s*:\s*|=|\s*=>\s*)[^\s=,)}\]]|` +
	`\b(?:upload\w*|put_?object|copy_?object|send_?beacon|send_?mail|sendmail|send_?message|deliver\w*|publish)\s*\(|\.send\(|` +
	`\bcopy\s+into\b|\bunload\s*\(|\bexport\s+data\b|\binsert\s+into\s+function\b|\bcreate\s+(?:or\s+replace\s+)?(?:external\s+)?(?:stage|location|table)\b|\bto\s+'[a-z0-9]+://|\blocation\s*=?\s*'[a-z0-9]+://|` +
	`\bsmtplib\b|\bSmtpClient\b|\bnodemailer\b|\bmail\(|Mail::|ActionMailer|\bsend_?mail\b|` +
	`\w+To(?:S3|Gcs|GCS|Azure\w*|Blob|Sftp|Ftp|Http|Wasb)\w*\(|\b(?:aws\s+s3\s+(?:cp|sync|mv)|gsutil\s+(?:-m\s+)?(?:cp|rsync|mv)|azcopy\s+(?:copy|sync)|rclone\s+(?:copy|sync|move))\b|` +
	`\bcurl\b[^\n]*\s(?:-d|--data\S*|-F|--form|-T|--upload-file|-X\s*(?:POST|PUT|PATCH))\b|\bwget\b[^\n]*--post|` +
	`getOutputStream\(|setDoOutput\(\s*true|\bdoOutput\s*=\s*true|\bOutputStreamWriter\b|\.(?:sendall|sendto|sendBytes|writeBytes)\(`)

// sinkWrites is a table or frame written out (df.write…parquet(URI),
// to_parquet(URI), saveAsTable): data goes to the destination it names
// on the same line or the lines after it, not to a URL read before it
// (pd.read_csv("https://…") then df.to_csv("out.csv") is a download).
var sinkWrites = mustRx(`(?i)\b(?:to_parquet|to_csv|to_json|to_sql|to_excel|to_feather|to_pickle|save_?as_?table|insert_?into|write_?stream|write_?to)\s*\(|\.write\b|\.save\(|\.mode\(\s*["'](?:overwrite|append)`)

// sinkSecret is what code reads that is the program's to keep: the
// environment, cookies and storage, request headers, keys and tokens,
// query results and frames.
var sinkSecret = mustRx(`(?i)os\.environ|os\.getenv|\bgetenv\(|process\.env|\bENV\[|System\.getenv|GetEnvironmentVariable|os\.Environ\(|document\.cookie|localStorage|sessionStorage|\$_(?:COOKIE|SERVER|ENV|SESSION)|\b(?:request|req|ctx|r)\.(?:headers?|cookies|Header)\b|\bauthorization\b|\bcookies?\b|api_?key|secret|passw(?:or)?d|\btoken\b|_token\b|credential|private_?key|\be-?mails?\b|\bphone(?:_?number)?\b|\bssn\b|\bdate_?of_?birth\b|\bdob\b|\.to_dict\(|\.to_records\(|fetchall\(|\.collect\(|\bselect\s+\*`)

// sinkRows is what a program holds that is rows of data: query results,
// frames, whole tables. Sent to a bucket, they are an export.
var sinkRows = mustRx(`(?i)\.to_dict\(|\.to_records\(|fetchall\(|\.collect\(|\bselect\s+\*|\bselect\s+[\w, ]+\s+from\b`)

// sinkEncoded is a value encoded to travel: base64, hex, serialized.
var sinkEncoded = mustRx(`(?i)btoa\(|b64encode|base64|\.hex\(|hexlify|bin2hex|JSON\.stringify|json\.dumps|json_encode|to_json|Marshal\(|serialize|pickle\.dumps`)

// sinkURLData is a URL whose query (or the value a "=" ends it with) is
// built from the program's values: concatenated, interpolated or
// formatted.
var sinkURLData = mustRx(`(?i)\?[^\s"'` + "`" + `]*=(?:["'` + "`" + `]\s*(?:\+|\.\s*\$|\.\.|<>|&)|\{|\$\{|\$\w|#\{|%[sdvq]|\{\{)|=["'` + "`" + `]\s*\+\s*[\w$]`)

// sinkHint reports whether text may name a destination sinkURL,
// sinkBucket, sinkMail or sinkDNS finds (a cheap first pass).
func sinkHint(text string) bool {
	return strings.Contains(text, "://") || strings.Contains(text, "onnect") || strings.Contains(text, "Dial") || strings.Contains(text, "ocket") || strings.Contains(text, "ucket") || strings.Contains(text, "@") ||
		strings.Contains(text, "mtp") || strings.Contains(text, "mail(") || strings.Contains(text, "ontainer") ||
		dnsHint(text)
}

func dnsHint(text string) bool {
	return strings.Contains(text, "gethostbyname") || strings.Contains(text, "getaddrinfo") || strings.Contains(text, "esolv") ||
		strings.Contains(text, "ookup") || strings.Contains(text, "dns") || strings.Contains(text, "GetHost") || strings.Contains(text, "getByName")
}

// proseExt are files of prose and data a program does not run.
var proseExt = map[string]bool{".md": true, ".markdown": true, ".rst": true, ".txt": true, ".adoc": true, ".org": true, ".csv": true,
	".tsv": true, ".lock": true, ".sum": true, ".svg": true, ".xml": true, ".po": true, ".pot": true, ".log": true}

// writtenCode reports whether p is a file whose text runs as code or
// configures what runs (not prose, data, a lockfile, or a test).
func writtenCode(p string) bool {
	base := strings.ToLower(path.Base(p))
	return !proseExt[path.Ext(base)] && !strings.Contains(base, "lock") && !testSource(p)
}

// codeText is a written text as its reader runs it: a notebook's or
// JSON document's escaped strings with their line breaks and quotes
// restored, each cell line without the JSON quoting around it.
func codeText(p, body string) string {
	body = clipRaw(body, maxAppsecText)
	ext := path.Ext(p)
	if ext != ".ipynb" && ext != ".json" || !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
		default:
			b.WriteByte(body[i]) // \" \\ \/ and the rest as the character
		}
	}
	if ext != ".ipynb" {
		return b.String()
	}
	// A cell's source line is `"text\n",`: once unescaped, the quote
	// opens the line and `",` stands alone after it.
	var out strings.Builder
	out.Grow(b.Len())
	for l := range strings.SplitSeq(b.String(), "\n") {
		t := strings.TrimSpace(l)
		t = strings.TrimPrefix(t, `"`)
		if t == `",` || t == `"` {
			continue
		}
		out.WriteString(t)
		out.WriteByte('\n')
	}
	return out.String()
}

// sinkDest is an outbound destination found on an added line.
type sinkDest struct {
	name string // the host, bucket or mail domain
	what string // "host", "bucket", "mail server", "DNS name"
	at   int    // where on the line it starts
	data bool   // the line itself builds data into it (query, name)
}

// lineDests returns the destinations an added line names outside a
// comment.
func lineDests(l string) []sinkDest {
	var out []sinkDest
	for _, m := range sinkURL.FindAllStringSubmatchIndex(l, 8) {
		h := strings.ToLower(l[m[4]:m[5]])
		scheme := strings.ToLower(l[m[2]:m[3]])
		if strings.ContainsAny(h, "{}$%[]") {
			continue // a host computed at run time: judged as DNS below, if at all
		}
		if k := strings.IndexByte(h, ':'); k >= 0 {
			h = h[:k]
		}
		h = strings.TrimRight(h, ".-_")
		what := "host"
		if !strings.HasPrefix(scheme, "http") && !strings.HasPrefix(scheme, "ws") && !strings.HasPrefix(scheme, "ftp") && scheme != "sftp" && !strings.HasPrefix(scheme, "smtp") {
			what = "bucket"
		}
		rest := l[m[0]:]
		out = append(out, sinkDest{name: h, what: what, at: m[0], data: sinkURLData.MatchString(clipRaw(rest, 400))})
	}
	for _, m := range sinkBucket.FindAllStringSubmatchIndex(l, 4) {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				out = append(out, sinkDest{name: strings.ToLower(l[m[g]:m[g+1]]), what: "bucket", at: m[g]})
			}
		}
	}
	if strings.Contains(l, "onnect") || strings.Contains(l, "Dial") || strings.Contains(l, "ocket") || strings.Contains(l, "Tcp") {
		for _, m := range sinkSocket.FindAllStringSubmatchIndex(l, 4) {
			out = append(out, sinkDest{name: strings.ToLower(l[m[2]:m[3]]), what: "host", at: m[2]})
		}
	}
	if strings.Contains(l, "mtp") || strings.Contains(l, "@") || strings.Contains(l, "ddress") {
		for _, m := range sinkMail.FindAllStringSubmatchIndex(l, 4) {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 {
					out = append(out, sinkDest{name: strings.ToLower(l[m[g]:m[g+1]]), what: "mail server", at: m[g]})
				}
			}
		}
	}
	if dnsHint(l) && dnsLookup.MatchString(l) {
		for _, m := range sinkDNS.FindAllStringSubmatchIndex(l, 4) {
			out = append(out, sinkDest{name: strings.ToLower(l[m[2]:m[3]]), what: "DNS name", at: m[0], data: true})
		}
	}
	k := 0
	for _, d := range out {
		if !inComment(l[:d.at]) && !proseLead(l[:d.at]) {
			out[k] = d
			k++
		}
	}
	return out[:k]
}

// inComment reports whether text before a position on a line ends in a
// comment: a "#" (not Ruby's "#{") or "//" (not a URL's) outside quotes.
func inComment(before string) bool {
	var q byte
	for k := 0; k < len(before); k++ {
		c := before[k]
		switch {
		case q != 0:
			if c == '\\' {
				k++
			} else if c == q {
				q = 0
			}
		case c == '"' || c == '\'' || c == '`':
			q = c
		case c == '#' && (k+1 == len(before) || before[k+1] != '{'):
			return true
		case c == '/' && k+1 < len(before) && before[k+1] == '/' && (k == 0 || before[k-1] != ':'):
			return true
		}
	}
	return false
}

// proseWords is what text before a URL holds when the URL is named in
// prose (a docstring, a description): words and sentence punctuation.
var proseWords = mustRx(`^[\s*>]*[A-Za-z][A-Za-z ,.;!?']*\s$`)

// fetchWords open a command line whose URL is its target, not prose.
var fetchWords = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "xh": true, "aria2c": true, "fetch": true,
	"nc": true, "ncat": true, "scp": true, "rsync": true, "sftp": true, "ftp": true, "open": true, "post": true, "put": true, "get": true}

// proseLead reports whether the text before a destination on its line
// is prose ("See https://…", "Docs live at https://…"), not code.
func proseLead(before string) bool {
	if !proseWords.MatchString(before) {
		return false
	}
	first, _, _ := strings.Cut(strings.TrimLeft(before, " \t*>"), " ")
	return !fetchWords[asciiLower(first)]
}

// envLookup is code reading one setting from the environment: on the
// destination's own line it is where the URL comes from
// (os.getenv("API", "https://…")), not what is sent.
var envLookup = mustRx(`(?i)os\.getenv|os\.environ(?:\.get)?|\bgetenv\(|process\.env|ENV\.fetch|\bENV\[|\benv\(|System\.getenv|GetEnvironmentVariable|os\.Getenv|std::env::var`)

// docHosts are the hosts documentation and schemas name: never a place
// data goes to.
var docHosts = map[string]bool{"example.com": true, "www.example.com": true, "example.org": true, "example.net": true, "www.w3.org": true,
	"json-schema.org": true, "schemas.xmlsoap.org": true, "schemas.microsoft.com": true, "purl.org": true, "xmlns.com": true}

// quietDest reports whether a destination is this machine, a private or
// in-cluster network, a reserved test name, or a name of documentation.
func (s *Shield) quietDest(d sinkDest) bool {
	h := d.name
	if h == "" || docHosts[h] || localHost(h) || d.what != "bucket" && s.hostAllowed(h) {
		return true
	}
	if d.what == "bucket" {
		return false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.IsPrivate() || a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast()
	}
	if !strings.Contains(h, ".") {
		return true // a service on the compose or cluster network ("http://api:8080")
	}
	for _, suf := range []string{".test", ".invalid", ".localhost", ".local", ".internal", ".svc", ".lan", ".home.arpa", ".corp", ".intranet"} {
		if strings.HasSuffix(h, suf) {
			return true
		}
	}
	return false
}

// registrable is a host's last two labels (three when the second-level
// label is short, as in co.uk): what an organisation owns.
func registrable(h string) string {
	labels := strings.Split(h, ".")
	n := len(labels)
	if n <= 2 {
		return h
	}
	if len(labels[n-2]) <= 3 && len(labels[n-1]) == 2 {
		return strings.Join(labels[n-3:], ".")
	}
	return strings.Join(labels[n-2:], ".")
}

// sinkWindow is how many added lines around a destination the rule reads
// for what carries data (the statement around it, a call's arguments).
const sinkWindowBefore, sinkWindowAfter = 5, 8

// writtenSink is `exfiltration:written-code` (escalate).
func (s *Shield) writtenSink(a *Action, f *Facts, j *judgement) {
	seen := map[string]bool{}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || seen[p] || !writtenCode(p) || !sinkHint(t.Body) {
			continue
		}
		seen[p] = true
		added, old := textOf(f, p)
		added, old = codeText(p, added), codeText(p, old)
		if why := s.sinkAdded(added, old); why != "" {
			j.escalate("exfiltration:written-code", "%s adds code to %s that %s", toolName(a), s.relPath(p), why)
			return
		}
	}
}

// sinkAdded returns what the added code sends where, or "". The last
// answer is kept (sinkMemo): Sensitive asks it of a change's text
// (changedFiles), then the rules' pass asks it again of the same text.
func (s *Shield) sinkAdded(added, old string) string {
	if why, ok := s.sinks.get(added, old); ok {
		return why
	}
	why := s.sinkAddedUncached(added, old)
	s.sinks.put(added, old, why)
	return why
}

func (s *Shield) sinkAddedUncached(added, old string) string {
	plus, _ := diffLines(added, old)
	oldLower := asciiLower(old)
	// What each line carries is read once, however many destinations
	// name it in their window (the mark* bits; 0 unread).
	marks := make([]byte, len(plus))
	// sources are destinations the added code names first where nothing
	// is sent (a read of a lake, a GET of an API): writing back to the
	// same place keeps the data where it was.
	var sources []string
	for i, l := range plus {
		if !sinkHint(l) {
			continue
		}
		for _, d := range lineDests(l) {
			if s.quietDest(d) || knownDest(d, oldLower, sources) {
				continue
			}
			how := sinkCarried(plus, marks, i, d)
			if how != "" {
				return how + " " + d.what + " " + d.name + ", which the file did not name and the policy does not allow (" + clipText(l, 100) + ")"
			}
			if len(sources) < 64 {
				sources = append(sources, d.name)
			}
		}
	}
	return ""
}

// knownDest reports whether the file's old text, or what the added code
// reads first, names d: the same host or registered domain, the same
// bucket or another of the same owner's prefix (acme-raw, acme-curated).
func knownDest(d sinkDest, oldLower string, sources []string) bool {
	owner := d.name
	if d.what == "bucket" {
		owner = bucketOwner(d.name)
	} else if d.what != "DNS name" {
		owner = registrable(d.name)
	}
	if oldLower != "" && (strings.Contains(oldLower, d.name) || owner != "" && strings.Contains(oldLower, owner)) {
		return true
	}
	for _, src := range sources {
		if src == d.name || owner != "" && strings.Contains(src, owner) {
			return true
		}
	}
	return false
}

// bucketOwner is a bucket name's first word when it reads as an owner's
// prefix (four letters or more: "acme" of acme-raw-eu), or "".
func bucketOwner(b string) string {
	w, _, ok := strings.Cut(strings.NewReplacer(".", "-", "_", "-").Replace(b), "-")
	if !ok || len(w) < 4 {
		return ""
	}
	return w + "-"
}

// Marks of what a line carries (sinkCarried), read once per line.
const (
	markRead   = 1 << iota // computed
	markSends              // sinkCarries
	markWrites             // sinkWrites
	markSecret             // sinkSecret
	markRows               // sinkRows
)

// sinkCarried returns how the added lines around plus[i] carry data to
// d, or "".
func sinkCarried(plus []string, marks []byte, i int, d sinkDest) string {
	if d.data && d.what == "DNS name" {
		return "builds the program's values into a name looked up at"
	}
	mark := func(k int) byte {
		l := plus[k]
		if k == i {
			// The destination's own line, around the destination: a
			// long line is read where the call is (not memoized: each
			// destination reads its own part), without the environment
			// lookup a URL may be the default of.
			l = envLookup.ReplaceAllString(l[max(0, d.at-1024):min(len(l), d.at+1024)], "")
		} else if marks[k] != 0 {
			return marks[k]
		} else {
			l = clipRaw(l, 2048)
		}
		m := byte(markRead)
		if sinkCarries.MatchString(l) {
			m |= markSends
		}
		if sinkWrites.MatchString(l) {
			m |= markWrites
		}
		if sinkSecret.MatchString(l) {
			m |= markSecret
		}
		if sinkRows.MatchString(l) {
			m |= markRows
		}
		if k != i {
			marks[k] = m
		}
		return m
	}
	lo, hi := max(0, i-sinkWindowBefore), min(len(plus), i+sinkWindowAfter+1)
	secret := -1
	for k := lo; k < hi; k++ {
		m := mark(k)
		if m&markSends != 0 || m&markWrites != 0 && k <= i {
			return "sends data (" + clipText(strings.TrimSpace(plus[k]), 60) + ") to the"
		}
		if secret < 0 && (m&markSecret != 0 && d.what != "bucket" || m&markRows != 0) {
			secret = k
		}
	}
	if d.data && (secret >= 0 || sinkEncoded.MatchString(plus[i])) {
		return "builds what the program holds into a request to"
	}
	if secret >= 0 {
		// A bucket is named by infrastructure too (a Terraform resource
		// beside a secret's): only rows, a write or an upload carry to it.
		return "passes what the program holds (" + clipText(strings.TrimSpace(plus[secret]), 60) + ") to the"
	}
	return ""
}

// writtenRiskWhat ends a changed entry (flow:changed-then-run) for a
// file whose write adds code that sends data out or runs fetched code.
const writtenRiskWhat = ", code that sends data out or runs fetched code"

// toolName names the action for reasons.
func toolName(a *Action) string {
	if a.Tool == "" {
		return "the action"
	}
	if a.Tool == "execute_command" {
		return "the command"
	}
	return a.Tool
}

// base64Text reports whether a value is base64 (standard or URL
// alphabet, padded or not) of printable text that is not JSON: a key, a
// password or a line of a file, encoded to pass as a token in a query (a
// tracking pixel's ?d=…). Too short for queryEntropy to tell it from a
// word, its decoding tells. A JSON cursor (eyJ…, "{…") is a paging token.
func base64Text(v string) bool {
	if len(v) < minQueryData || len(v) > 4096 {
		return false
	}
	upper, lower := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9', c == '+', c == '/', c == '-', c == '_', c == '=':
		default:
			return false
		}
	}
	if !upper || !lower {
		return false
	}
	var out []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			out = b
			break
		}
	}
	if len(out) < 12 || out[0] == '{' || out[0] == '[' {
		return false
	}
	for _, c := range out {
		if c < 0x20 || c > 0x7e {
			if c != '\n' && c != '\r' && c != '\t' {
				return false
			}
		}
	}
	return true
}
