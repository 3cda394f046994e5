package shield

import (
	"path"
	"slices"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// The programs that reach the network.

// request adds r (By set) and returns its index.
func (x *call) request(r Request) int {
	r.By = x.name
	x.m.f.Requests = append(x.m.f.Requests, r)
	if x.i >= 0 {
		x.m.reqVia = append(x.m.reqVia, reqOrigin{req: len(x.m.f.Requests) - 1, via: x.c.Via})
	}
	return len(x.m.f.Requests) - 1
}

// reqOrigin is the nesting of the command that made a request.
type reqOrigin struct {
	req int
	via string
}

// computed notes that request k carries w, computed at run time: its
// Files are what the commands computing it read.
func (x *call) computed(k int, w shellx.Word) {
	if !w.Dynamic {
		return
	}
	x.m.f.Requests[k].Data = true
	x.m.pend = append(x.m.pend, pendingFiles{req: k, cmd: x.i, text: w.Text})
}

// fromStdin notes that request k sends the command's standard input:
// what the pipeline feeding it and its < redirections read.
func (x *call) fromStdin(k int) {
	r := &x.m.f.Requests[k]
	r.Data = true
	r.Files = appendNew(r.Files, x.m.stdinReads(x.i)...)
	if x.i >= 0 && x.i < len(x.m.reads) {
		r.Files = appendNew(r.Files, x.m.reads[x.i]...)
	}
}

// hostOf returns the host a URL or host[:port][/path] names, lower case,
// without port, user or brackets; for a host computed at run time, the
// static domain after the computed part ("$(id).evil.com" is evil.com),
// or "".
func hostOf(u string) string {
	if strings.ContainsAny(u, "$`") {
		u = stripComputed(u)
	}
	if k := strings.Index(u, "://"); k >= 0 {
		u = u[k+3:]
	} else if strings.HasPrefix(u, "//") {
		u = u[2:]
	}
	if k := strings.IndexAny(u, "/?#"); k >= 0 {
		u = u[:k]
	}
	if k := strings.LastIndexByte(u, '@'); k >= 0 {
		u = u[k+1:]
	}
	if strings.HasPrefix(u, "[") {
		if k := strings.IndexByte(u, ']'); k > 0 {
			return strings.ToLower(u[1:k])
		}
	}
	if k := strings.LastIndexByte(u, 0); k >= 0 {
		// Computed: keep the static domain after the computed part.
		u = strings.TrimLeft(u[k+1:], ".-")
		if !strings.Contains(u, ".") {
			return ""
		}
	}
	if k := strings.IndexByte(u, ':'); k >= 0 {
		u = u[:k]
	}
	return strings.ToLower(u)
}

// stripComputed replaces the parts of a word computed at run time
// ($(...), `...`, ${...}, $NAME) with a NUL byte each.
func stripComputed(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '`':
			j := strings.IndexByte(u[i+1:], '`')
			if j < 0 {
				i = len(u)
			} else {
				i += j + 1
			}
			b.WriteByte(0)
		case c == '$' && i+1 < len(u) && (u[i+1] == '(' || u[i+1] == '{'):
			open, shut := u[i+1], byte(')')
			if open == '{' {
				shut = '}'
			}
			depth := 0
			j := i + 1
			for ; j < len(u); j++ {
				if u[j] == open {
					depth++
				} else if u[j] == shut {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			i = j
			b.WriteByte(0)
		case c == '$':
			j := i + 1
			for j < len(u) && (u[j] == '_' || u[j] >= 'a' && u[j] <= 'z' || u[j] >= 'A' && u[j] <= 'Z' || u[j] >= '0' && u[j] <= '9') {
				j++
			}
			i = j - 1
			b.WriteByte(0)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// looksLikeHost reports whether a bare operand names a host: a dotted
// name, an address, or localhost.
func looksLikeHost(t string) bool {
	h := hostOf(t)
	if h == "" || strings.HasPrefix(t, "-") || strings.ContainsAny(h, " =\"'") {
		return false
	}
	return h == "localhost" || strings.Contains(h, ".") || strings.Contains(h, ":") || strings.Contains(t, "://")
}

var curlSpec = newSpec("-X --request -d --data --data-raw --data-binary --data-urlencode --data-ascii --json -F --form --form-string " +
	"-T --upload-file -o --output -H --header -u --user -A --user-agent -e --referer -b --cookie -c --cookie-jar -K --config " +
	"--unix-socket --abstract-unix-socket -x --proxy -U --proxy-user --resolve --connect-to --cacert --capath --cert --key -E " +
	"-w --write-out --max-time -m --connect-timeout --retry --retry-delay --retry-max-time -r --range -C --continue-at -D --dump-header " +
	"--trace --trace-ascii --stderr --url --limit-rate -z --time-cond -Y -y --speed-limit --speed-time --interface --dns-servers " +
	"--output-dir -Q --quote --mail-from --mail-rcpt --mail-auth --oauth2-bearer --proto --proto-redir --ciphers --netrc-file " +
	"--variable --url-query --request-target --max-filesize --local-port --keepalive-time -t --telnet-option --aws-sigv4 " +
	"--hostpubmd5 --pubkey --crlfile --cert-type --key-type --pass --tls-max --ftp-port -P --login-options --socks4 --socks4a " +
	"--socks5 --socks5-hostname --preproxy --noproxy --doh-url --alt-svc --hsts --etag-save --etag-compare --parallel-max --proxy-header")

// curlH reads curl: one Request per URL, with the method, data and files
// its options give.
func curlH(x *call) {
	opts, ops := curlSpec.parse(x.args)
	urls := append(ops, vals(opts, "--url")...)
	method := ""
	if w, ok := val(opts, "-X", "--request"); ok {
		method = strings.ToUpper(w.Text)
	}
	data, stdin := false, false
	var files []string
	var computed []shellx.Word
	file := func(w shellx.Word) {
		if w.Text == "-" || w.Text == "." {
			stdin = true
			return
		}
		if p, ok := x.abs(w.Text); ok && !w.Dynamic {
			files = append(files, p)
		}
		x.ref(kRead, w, false)
	}
	for _, o := range opts {
		v := o.val
		switch o.name {
		case "-d", "--data", "--data-binary", "--data-ascii", "--json", "--data-urlencode":
			data = true
			t := v.Text
			if o.name == "--data-urlencode" {
				if k := strings.IndexByte(t, '@'); k >= 0 && !strings.ContainsRune(t[:k], '=') {
					file(shellx.Word{Text: t[k+1:], Dynamic: v.Dynamic})
				}
			} else if strings.HasPrefix(t, "@") {
				file(shellx.Word{Text: t[1:], Dynamic: v.Dynamic, Glob: v.Glob})
			}
			computed = append(computed, v)
		case "--data-raw":
			data = true
			computed = append(computed, v)
		case "-F", "--form":
			data = true
			if _, fv, ok := strings.Cut(v.Text, "="); ok && (strings.HasPrefix(fv, "@") || strings.HasPrefix(fv, "<")) {
				fv = fv[1:]
				if k := strings.IndexByte(fv, ';'); k >= 0 {
					fv = fv[:k]
				}
				file(shellx.Word{Text: fv, Dynamic: v.Dynamic})
			}
			computed = append(computed, v)
		case "--form-string":
			data = true
			computed = append(computed, v)
		case "-T", "--upload-file":
			data = true
			file(v)
			if method == "" {
				method = "PUT"
			}
		case "-H", "--header", "-u", "--user", "-b", "--cookie", "--oauth2-bearer", "-A", "--user-agent", "-e", "--referer", "--url-query":
			computed = append(computed, v)
			if (o.name == "-b" || o.name == "--cookie") && !strings.Contains(v.Text, "=") {
				x.ref(kRead, v, false)
			}
			if o.name == "--url-query" {
				data = true
			}
		case "-K", "--config", "--netrc-file", "--cacert", "--cert", "-E", "--key":
			if v.Text == "-" {
				stdin = true
				continue
			}
			x.ref(kRead, v, false)
		case "-n", "--netrc", "--netrc-optional":
			x.refPath(kRead, "~/.netrc", false)
		case "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--etag-save", "--hsts", "--alt-svc":
			if v.Text != "-" {
				x.ref(kWrite, v, false)
			}
		case "-o", "--output":
			if v.Text != "-" && !quietDevice(v.Text) {
				x.ref(kWrite, v, false)
				x.fetchFile(v.Text)
			}
		case "--unix-socket", "--abstract-unix-socket":
			x.ref(kWrite, v, false)
		}
	}
	if strings.HasPrefix(strings.Join(wordTexts(vals(opts, "-d", "--data", "--data-binary", "--json")), " "), "@-") {
		stdin = true
	}
	for _, w := range vals(opts, "-d", "--data", "--data-binary", "--json", "--data-urlencode") {
		if w.Text == "@-" || strings.HasSuffix(w.Text, "@-") {
			stdin = true
		}
	}
	if method == "" {
		switch {
		case has(opts, "-I", "--head"):
			method = "HEAD"
		case data && !has(opts, "-G", "--get"):
			method = "POST"
		default:
			method = "GET"
		}
	}
	outDir := "."
	if d, ok := val(opts, "--output-dir"); ok {
		outDir = d.Text
		x.ref(kWrite, d, true)
	}
	remote := has(opts, "-O", "--remote-name", "--remote-name-all")
	for _, u := range urls {
		if u.Text == "" {
			continue
		}
		if p, ok := strings.CutPrefix(u.Text, "file://"); ok {
			x.ref(kRead, shellx.Word{Text: p, Dynamic: u.Dynamic, Glob: u.Glob}, false)
			continue
		}
		k := x.request(Request{Host: hostOf(u.Text), Method: method, Data: data, Files: files, Query: QueryOf(u.Text)})
		x.computed(k, u)
		for _, w := range computed {
			x.computed(k, w)
		}
		if stdin {
			x.fromStdin(k)
		}
		if remote && !u.Dynamic {
			base := urlBase(u.Text)
			x.refPath(kWrite, outDir+"/"+base, false)
			x.fetchFile(outDir + "/" + base)
		}
	}
}

// urlBase is the last segment of a URL's path ("index.html" for none).
func urlBase(u string) string {
	if k := strings.Index(u, "://"); k >= 0 {
		u = u[k+3:]
	}
	if k := strings.IndexAny(u, "?#"); k >= 0 {
		u = u[:k]
	}
	k := strings.IndexByte(u, '/')
	if k < 0 {
		return "index.html"
	}
	u = u[k:]
	base := u[strings.LastIndexByte(u, '/')+1:]
	if base == "" || base == "." || base == ".." {
		return "index.html"
	}
	return base
}

var wgetSpec = newSpec("-O --output-document -o --output-file -a --append-output -i --input-file -P --directory-prefix " +
	"--post-data --post-file --body-data --body-file --method --header -U --user-agent --user --password --http-user --http-password " +
	"--load-cookies --save-cookies -e --execute -t --tries -T --timeout -w --wait --limit-rate -Q --quota -l --level -A --accept " +
	"-R --reject -D --domains --exclude-domains -I -X --include-directories --exclude-directories --referer --ca-certificate " +
	"--certificate --private-key -B --base --config --bind-address --restrict-file-names --progress --max-redirect")

func wgetH(x *call) {
	opts, ops := wgetSpec.parse(x.args)
	method, data := "GET", false
	var files []string
	var computed []shellx.Word
	for _, o := range opts {
		v := o.val
		switch o.name {
		case "--post-data", "--body-data":
			data = true
			method = "POST"
			computed = append(computed, v)
		case "--post-file", "--body-file":
			data = true
			method = "POST"
			if p, ok := x.abs(v.Text); ok && !v.Dynamic {
				files = append(files, p)
			}
			x.ref(kRead, v, false)
		case "--header", "--user", "--password", "--http-user", "--http-password", "-U", "--user-agent", "--referer":
			computed = append(computed, v)
		case "-i", "--input-file", "--load-cookies", "--config", "--ca-certificate", "--certificate", "--private-key":
			if v.Text != "-" {
				x.ref(kRead, v, false)
			}
			if o.name == "-i" || o.name == "--input-file" {
				x.request(Request{Method: "GET"})
			}
		case "--save-cookies", "-o", "--output-file", "-a", "--append-output":
			x.ref(kWrite, v, false)
		}
	}
	if m, ok := val(opts, "--method"); ok {
		method = strings.ToUpper(m.Text)
	}
	if has(opts, "--spider") {
		method = "HEAD"
	}
	out, hasOut := val(opts, "-O", "--output-document")
	dir, hasDir := val(opts, "-P", "--directory-prefix")
	recursive := has(opts, "-r", "--recursive", "-m", "--mirror")
	switch {
	case method == "HEAD":
	case hasOut && (out.Text == "-" || quietDevice(out.Text)):
	case hasOut:
		x.ref(kWrite, out, false)
		x.fetchFile(out.Text)
	case hasDir || recursive:
		if !hasDir {
			dir = word(".")
		}
		x.ref(kWrite, dir, true)
		x.fetch(dir.Text, true)
	default:
		for _, u := range ops {
			if !u.Dynamic {
				x.refPath(kWrite, urlBase(u.Text), false)
				x.fetchFile(urlBase(u.Text))
			}
		}
	}
	for _, u := range ops {
		k := x.request(Request{Host: hostOf(u.Text), Method: method, Data: data, Files: files, Query: QueryOf(u.Text)})
		x.computed(k, u)
		for _, w := range computed {
			x.computed(k, w)
		}
	}
}

var httpieSpec = newSpec("-a --auth -A --auth-type -o --output --session --session-read-only --cert --cert-key --verify --proxy " +
	"--pretty -s --style -p --print --timeout --max-redirects --boundary --raw --format-options --response-charset --response-mime " +
	"--ssl --ciphers --default-scheme --max-headers")

// httpieH reads httpie (http, https) and xh: [METHOD] URL ITEM...
func httpieH(x *call) {
	opts, ops := httpieSpec.parse(x.args)
	method := ""
	if len(ops) > 0 && isMethod(ops[0].Text) {
		method, ops = ops[0].Text, ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	u := ops[0]
	host := hostOf(u.Text)
	if strings.HasPrefix(u.Text, ":") {
		host = "localhost"
	}
	data := false
	var files []string
	var computed []shellx.Word
	if r, ok := val(opts, "--raw"); ok {
		data = true
		computed = append(computed, r)
	}
	for _, it := range ops[1:] {
		t := it.Text
		switch k := strings.IndexAny(t, "=:@"); {
		case k < 0:
		case strings.HasPrefix(t[k:], "=="):
			computed = append(computed, it)
		case strings.HasPrefix(t[k:], ":=@") || strings.HasPrefix(t[k:], "=@") || t[k] == '@':
			data = true
			f := t[k+1:]
			f = strings.TrimLeft(f, "=@")
			if p, ok := x.abs(f); ok && !it.Dynamic {
				files = append(files, p)
			}
			x.ref(kRead, shellx.Word{Text: f, Dynamic: it.Dynamic}, false)
		case t[k] == '=' || strings.HasPrefix(t[k:], ":="):
			data = true
			computed = append(computed, it)
		default: // Header:value
			computed = append(computed, it)
		}
	}
	stdin := x.c.PipeIn >= 0 && !has(opts, "--ignore-stdin", "-I")
	if method == "" {
		method = "GET"
		if data || stdin {
			method = "POST"
		}
	}
	k := x.request(Request{Host: host, Method: method, Data: data, Files: files})
	x.computed(k, u)
	for _, w := range computed {
		x.computed(k, w)
	}
	if stdin {
		x.fromStdin(k)
	}
	if o, ok := val(opts, "-o", "--output"); ok {
		x.ref(kWrite, o, false)
		x.fetchFile(o.Text)
	} else if has(opts, "-d", "--download") {
		x.refPath(kWrite, urlBase(u.Text), false)
	}
}

func isMethod(t string) bool {
	switch t {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
		return true
	}
	return false
}

var ariaSpec = newSpec("-d --dir -o --out -i --input-file -x -s -j -k --header --user-agent --load-cookies --save-session")

func ariaH(x *call) {
	opts, ops := ariaSpec.parse(x.args)
	for _, w := range vals(opts, "-i", "--input-file", "--load-cookies") {
		x.ref(kRead, w, false)
	}
	dir, ok := val(opts, "-d", "--dir")
	if !ok {
		dir = word(".")
	}
	x.ref(kWrite, dir, true)
	x.fetch(dir.Text, true)
	for _, u := range ops {
		k := x.request(Request{Host: hostOf(u.Text), Method: "GET", Query: QueryOf(u.Text)})
		x.computed(k, u)
	}
}

var ncSpec = newSpec("-e -c -p -s -w -i -q -x -X -P -T -O -I -W -m -g -G -M -o --exec --sh-exec --lua-exec --source-port --source --wait --proxy --proxy-type --proxy-auth --output --idle-timeout")

// ncH reads nc, ncat, netcat: a raw connection carrying standard input,
// a scan (-z), a listener (-l), or a remote shell (-e, -c).
func ncH(x *call) {
	opts, ops := ncSpec.parse(x.args)
	if has(opts, "-U", "--unixsock") {
		for _, w := range ops {
			x.ref(kWrite, w, false)
		}
		return
	}
	host := ""
	for _, w := range ops {
		if !isNumber(w.Text) {
			host = hostOf(w.Text)
			break
		}
	}
	var k int
	if has(opts, "-l", "--listen") {
		if s, ok := val(opts, "-s", "--source"); ok && host == "" {
			host = hostOf(s.Text)
		}
		if host == "" {
			host = "0.0.0.0"
		}
		k = x.request(Request{Host: host, Method: "LISTEN", Data: true})
	} else {
		k = x.request(Request{Host: host, Data: !has(opts, "-z")})
		if len(ops) > 0 {
			x.computed(k, ops[0])
		}
	}
	for _, e := range vals(opts, "-e", "-c", "--exec", "--sh-exec", "--lua-exec") {
		runner := progName(strings.Fields(e.Text + " ?")[0])
		x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: runner, From: x.name, Remote: true, Line: x.c.Line})
		x.m.f.Requests[k].Data = true
	}
	if !has(opts, "-z") {
		x.fromStdin(k)
	}
	if o, ok := val(opts, "-o", "--output"); ok {
		x.ref(kWrite, o, false)
	}
}

func isNumber(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if (t[i] < '0' || t[i] > '9') && t[i] != '-' {
			return false
		}
	}
	return true
}

// socatH reads socat's two addresses.
func socatH(x *call) {
	var addrs []shellx.Word
	for _, w := range x.args {
		if strings.HasPrefix(w.Text, "-") && len(w.Text) > 1 {
			continue
		}
		addrs = append(addrs, w)
	}
	network, stdin := false, false
	var execs []string
	var listens []string
	var hosts []string
	for _, a := range addrs {
		typ, rest, _ := strings.Cut(a.Text, ":")
		typ = strings.ToUpper(typ)
		switch {
		case a.Text == "-" || typ == "STDIO" || typ == "STDIN" || typ == "STDOUT":
			stdin = true
		case strings.Contains(typ, "LISTEN"):
			network = true
			listens = append(listens, "0.0.0.0")
		case strings.HasPrefix(typ, "TCP") || strings.HasPrefix(typ, "UDP") || strings.HasPrefix(typ, "SSL") || strings.HasPrefix(typ, "OPENSSL") ||
			strings.HasPrefix(typ, "SCTP") || strings.HasPrefix(typ, "SOCKS") || strings.HasPrefix(typ, "PROXY") || strings.HasPrefix(typ, "DCCP"):
			network = true
			h, _, _ := strings.Cut(rest, ",")
			hosts = append(hosts, hostOf(h))
		case typ == "EXEC" || typ == "SYSTEM":
			cmd, _, _ := strings.Cut(rest, ",")
			execs = append(execs, cmd)
			x.payload(shellx.Word{Text: cmd, Dynamic: a.Dynamic}, "socat "+strings.ToLower(typ))
		case typ == "FILE" || typ == "OPEN" || typ == "CREATE" || typ == "GOPEN" || typ == "PIPE":
			p, _, _ := strings.Cut(rest, ",")
			x.ref(kRead, shellx.Word{Text: p, Dynamic: a.Dynamic}, false)
			x.ref(kWrite, shellx.Word{Text: p, Dynamic: a.Dynamic}, false)
		case strings.HasPrefix(typ, "UNIX") || strings.HasPrefix(typ, "ABSTRACT"):
			p, _, _ := strings.Cut(rest, ",")
			x.ref(kWrite, shellx.Word{Text: p, Dynamic: a.Dynamic}, false)
		}
	}
	var ks []int
	for _, h := range hosts {
		ks = append(ks, x.request(Request{Host: h, Data: true}))
	}
	for _, h := range listens {
		ks = append(ks, x.request(Request{Host: h, Method: "LISTEN", Data: true}))
	}
	for _, k := range ks {
		if stdin {
			x.fromStdin(k)
		}
		r := &x.m.f.Requests[k]
		r.Files = appendNew(r.Files, x.m.reads[x.i]...)
	}
	for _, e := range execs {
		x.m.f.Execs = append(x.m.f.Execs, Exec{Runner: progName(strings.Fields(e + " ?")[0]), From: "socat", Remote: network, Line: x.c.Line})
	}
}

// telnetH reads telnet HOST [PORT] and the like: a raw connection.
func rawH(x *call) {
	_, ops := cachedSpec(0, "-l -e -b -n -p -P -u -o -s -T").parse(x.args)
	if len(ops) == 0 {
		return
	}
	k := x.request(Request{Host: hostOf(ops[0].Text), Data: true})
	x.computed(k, ops[0])
	x.fromStdin(k)
}

var sshSpec = posixSpec("-p -i -l -o -F -J -L -R -D -b -c -e -E -m -O -Q -S -w -W -B -I -P")

// sshH reads ssh HOST [CMD]: a connection carrying standard input; the
// command runs on the remote machine (a Text "ssh HOST"). The identity
// file ssh uses is not a Read: ssh uses the key, it does not send it.
func sshH(x *call) {
	opts, ops := sshSpec.parse(x.args)
	if v, ok := val(opts, "-F"); ok {
		// its configuration (rules 17: the hosts a project names), read
		// after the request is made: not what it sends
		defer x.ref(kRead, v, false)
	}
	for _, o := range vals(opts, "-o") {
		k, v, _ := strings.Cut(o.Text, "=")
		if v == "" {
			k, v, _ = strings.Cut(o.Text, " ")
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			x.payload(shellx.Word{Text: v, Dynamic: o.Dynamic}, "ssh -o "+k)
		}
	}
	if len(ops) == 0 {
		return
	}
	if has(opts, "-G") {
		// rules 20: ssh -G prints the configuration it would use for the
		// host and exits: no connection
		return
	}
	host := hostOf(ops[0].Text)
	if len(ops) == 1 && x.forgeAuthTest(opts, ops[0], host) {
		// ssh -T git@github.com: the forge's git account has no shell;
		// it answers with the name the key authenticates as. Nothing of
		// the line's is sent: a connection, not an upload.
		x.request(Request{Host: host})
		return
	}
	k := x.request(Request{Host: host, Data: true})
	x.computed(k, ops[0])
	x.fromStdin(k)
	if len(ops) > 1 {
		x.m.f.Texts = append(x.m.f.Texts, Text{Source: "ssh " + host, Body: strings.Join(wordTexts(ops[1:]), " ")})
		for _, w := range ops[1:] {
			x.computed(k, w)
		}
	}
}

// forgeAuthTest reports whether ssh's only operand names the git account
// of a known forge (git@github.com, ssh://git@gitlab.com), statically,
// with no remote command, no forwarding or escape options and nothing on
// standard input: the forge's authentication test.
func (x *call) forgeAuthTest(opts []opt, target shellx.Word, host string) bool {
	if target.Dynamic || !slices.Contains(forges, host) || has(opts, "-L", "-R", "-D", "-W", "-w", "-o", "-F", "-J", "-O", "-S", "-e", "-E", "-P", "-i") {
		return false
	}
	user, _, ok := strings.Cut(strings.TrimPrefix(target.Text, "ssh://"), "@")
	if l, ok2 := val(opts, "-l"); ok2 {
		user, ok = l.Text, !l.Dynamic
	}
	if !ok || user != "git" && user != "hg" {
		return false
	}
	if x.c.PipeIn >= 0 {
		return false
	}
	for _, r := range x.c.Redirects {
		if strings.HasPrefix(r.Op, "<") {
			return false
		}
	}
	return true
}

// remoteSpec splits "[user@]host:path" from a local path.
func remoteSpec(t string) (host, p string, ok bool) {
	if strings.HasPrefix(t, "scp://") || strings.HasPrefix(t, "sftp://") || strings.HasPrefix(t, "rsync://") {
		return hostOf(t), "", true
	}
	k := strings.IndexByte(t, ':')
	if k <= 0 || strings.ContainsRune(t[:k], '/') {
		return "", "", false
	}
	return hostOf(t[:k]), t[k+1:], true
}

var scpSpec = newSpec("-P -i -o -F -c -l -S -J -D -X")

// scpH reads scp and rsync: sources then a destination; a remote side is
// a Request, local sources of an upload its Files.
func scpH(x *call) {
	sp := scpSpec
	if x.name == "rsync" {
		sp = rsyncSpec
	}
	opts, ops := sp.parse(x.args)
	if len(ops) < 2 {
		if x.name == "rsync" && len(ops) == 1 {
			x.ref(kRead, ops[0], true)
		}
		return
	}
	if x.name == "rsync" {
		for _, w := range vals(opts, "--exclude-from", "--include-from", "--files-from", "--password-file") {
			x.ref(kRead, w, false)
		}
		if e, ok := val(opts, "-e", "--rsh"); ok {
			x.payload(e, "rsync -e")
		}
	}
	dst, srcs := ops[len(ops)-1], ops[:len(ops)-1]
	dhost, _, dremote := remoteSpec(dst.Text)
	tree := true
	var files []string
	for _, w := range srcs {
		if h, _, remote := remoteSpec(w.Text); remote {
			k := x.request(Request{Host: h, Method: "GET"})
			x.computed(k, w)
			continue
		}
		x.ref(kRead, w, tree)
		if p, ok := x.abs(w.Text); ok && !w.Dynamic {
			files = append(files, p)
		}
	}
	if dremote {
		k := x.request(Request{Host: dhost, Data: true, Files: files})
		x.computed(k, dst)
		return
	}
	x.ref(kWrite, dst, true)
	if has(opts, "--delete", "--delete-before", "--delete-during", "--delete-after", "--delete-delay", "--delete-excluded", "--del") {
		x.ref(kDelete, dst, true)
	}
	if has(opts, "--remove-source-files") {
		for _, w := range srcs {
			x.ref(kDelete, w, true)
		}
	}
}

var rsyncSpec = newSpec("-e --rsh --exclude --include --exclude-from --include-from --files-from --filter -f --rsync-path --port " +
	"--password-file --log-file --partial-dir --temp-dir -T --backup-dir --suffix --chmod --chown --timeout --contimeout --bwlimit " +
	"--max-size --min-size --compare-dest --copy-dest --link-dest -B --block-size --out-format --info --debug -M --remote-option " +
	"--iconv --sockopts --address --protocol --checksum-choice --compress-choice --compress-level --skip-compress --max-delete --usermap --groupmap")

// sessionH reads sftp, ftp, tftp, lftp, ssh-copy-id, telnet: a session
// with a host.
func sessionH(x *call) {
	opts, ops := cachedSpec(0, "-P -i -o -F -b -c -l -S -J -D -B -R -s -p -u -e").parse(x.args)
	for _, w := range vals(opts, "-b") {
		x.ref(kRead, w, false)
	}
	for _, w := range ops {
		if isNumber(w.Text) {
			continue
		}
		k := x.request(Request{Host: hostOf(w.Text), Data: true})
		x.computed(k, w)
		x.fromStdin(k)
		return
	}
}

// lookupH reads dig, nslookup, host, ping, traceroute, whois: a name
// looked up or probed; a name computed at run time carries data.
func lookupH(x *call) {
	method := "DNS"
	sp := cachedSpec(0, "-t -c -p -q -x -b -f -k -y -i -w -W -s -I -m -Q -l -M -S -T -N -z -g -h --host -r -a -A -F")
	switch x.name {
	case "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "arping", "fping", "hping3", "tcptraceroute":
		method = "ICMP"
	case "whois":
		method = ""
	}
	opts, ops := sp.parse(x.args)
	// ping's -p pads each packet with a pattern (rules 13): a pattern
	// computed at run time carries data (xxd -p secret | while read l;
	// do ping -p $l HOST; done), as a computed name does.
	pattern, padded := shellx.Word{}, false
	if method == "ICMP" {
		pattern, padded = val(opts, "-p")
	}
	for _, w := range ops {
		t := w.Text
		if strings.HasPrefix(t, "@") {
			x.request(Request{Host: hostOf(t[1:]), Method: method})
			continue
		}
		if isNumber(t) || dnsTypes[strings.ToUpper(t)] || strings.HasPrefix(t, "+") {
			continue
		}
		k := x.request(Request{Host: hostOf(t), Method: method})
		x.computed(k, w)
		if padded {
			x.computed(k, pattern)
		}
		if x.name == "nslookup" || x.name == "host" {
			// a second operand is the server
			method = "DNS"
		}
	}
}

var dnsTypes = map[string]bool{"A": true, "AAAA": true, "MX": true, "TXT": true, "NS": true, "CNAME": true, "SOA": true, "PTR": true, "SRV": true, "ANY": true, "CAA": true, "AXFR": true, "IN": true, "CH": true, "DS": true, "DNSKEY": true}

// buildFiles are the files that build tools, package managers and test
// runners read as code from the directory they run in (or beneath it:
// pytest collects every conftest.py).
var buildFiles = map[string]bool{
	"Makefile": true, "makefile": true, "GNUmakefile": true, "package.json": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	"conftest.py": true, "pytest.ini": true, "setup.py": true, "setup.cfg": true, "pyproject.toml": true, "tox.ini": true, "noxfile.py": true,
	"Cargo.toml": true, "build.rs": true, ".cargo": true, "build.gradle": true, "build.gradle.kts": true, "settings.gradle": true,
	"settings.gradle.kts": true, "pom.xml": true, "Rakefile": true, "Gemfile": true, "CMakeLists.txt": true, "justfile": true, "Justfile": true,
	"Taskfile.yml": true, "composer.json": true, "mix.exs": true, "build.xml": true, "meson.build": true, "BUILD": true, "BUILD.bazel": true,
	"WORKSPACE": true, "MODULE.bazel": true, ".bazelrc": true, "jest.config.js": true, "vitest.config.ts": true, "vite.config.js": true,
	"vite.config.ts": true, "webpack.config.js": true, "babel.config.js": true, ".babelrc": true, "go.mod": true, ".envrc": true,
}

// fetchFile notes a file a network tool writes (x.fetch); a build file
// (Makefile, package.json, conftest.py, setup.py...) makes its directory
// fetched code: a build tool or test runner run there later in the line
// (curl -o Makefile URL && make) runs what the server sent.
func (x *call) fetchFile(p string) {
	x.fetch(p, false)
	if b := path.Base(p); buildFiles[b] || strings.HasSuffix(b, ".mk") {
		x.fetch(path.Dir(p), true)
	}
}

// rcloneH reads rclone's transfers (rules 17): a remote is NAME:path or
// :backend:path; a copy, sync or move to one is an upload of the local
// sources (a Request with no host Shield can name: the remote's
// configuration says where), from one a download; credentials given as
// flags go with it.
func rcloneH(x *call) {
	if len(x.args) == 0 {
		return
	}
	verb := x.args[0].Text
	switch verb {
	case "copy", "sync", "move", "copyto", "moveto", "bisync", "rcat", "copyurl":
	default:
		return
	}
	var ops []shellx.Word
	for _, w := range x.args[1:] {
		if !strings.HasPrefix(w.Text, "-") {
			ops = append(ops, w)
		}
	}
	// the operands are the first words after the verb (rclone copy SRC
	// DST [flags]; a flag's value may follow them): rcat's is its
	// destination alone
	n := 2
	if verb == "rcat" {
		n = 1
	}
	if len(ops) < n {
		return
	}
	ops = ops[:n]
	dst := ops[n-1]
	remote := func(t string) bool {
		k := strings.IndexByte(t, ':')
		return k >= 0 && !strings.ContainsRune(t[:k], '/') && !strings.Contains(t, "://")
	}
	if !remote(dst.Text) {
		return
	}
	var files []string
	for _, w := range ops[:n-1] {
		if remote(w.Text) || !(strings.HasPrefix(w.Text, "/") || strings.HasPrefix(w.Text, ".") || strings.HasPrefix(w.Text, "~")) {
			continue
		}
		x.ref(kRead, w, true)
		if p, ok := x.abs(w.Text); ok && !w.Dynamic {
			files = append(files, p)
		}
	}
	k := x.request(Request{Data: true, Files: files})
	x.computed(k, dst)
	if verb == "rcat" {
		x.fromStdin(k)
	}
}
