package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Servers other machines may reach: LISTEN Requests.

// listener adds a server other machines may reach.
func (x *call) listener(bind string, served shellx.Word) {
	if bind == "" {
		bind = "0.0.0.0"
	}
	r := Request{Host: bind, Method: "LISTEN", Data: true}
	if p, ok := x.abs(served.Text); ok && !served.Dynamic {
		r.Files = []string{p}
		x.ref(kRead, served, true)
	}
	x.request(r)
}

// servers are static file servers run as programs: busybox httpd (-h
// DIR, -p [IP:]PORT), darkhttpd DIR (--addr IP), http-server [DIR] (-a
// IP), serve [DIR] (-l URI, --listen URI). Each is a LISTEN Request of
// the directory it serves (the working directory when none).
var servers = map[string]handler{
	"httpd":       serverH("-h", "-p", "-h -p -c -u -r -e -d -i -m"),
	"darkhttpd":   serverH("", "--addr", "--addr --port --log --index --mimetypes --uid --gid --chroot --auth --pidfile"),
	"http-server": serverH("", "-a", "-a -p --port -c -e --ext -S --cert -K --key --proxy -P --username --password -t"),
	"serve":       serverH("", "-l", "-l --listen -c --config"),
}

// serverH reads a file server: dirOpt names its directory option ("":
// the first operand), bindOpt its address option.
func serverH(dirOpt, bindOpt, valued string) handler {
	sp := newSpec(valued)
	return func(x *call) {
		opts, ops := sp.parse(x.args)
		dir := word(".")
		if dirOpt != "" {
			if d, ok := val(opts, dirOpt); ok {
				dir = d
			}
		} else if len(ops) > 0 {
			dir = ops[0]
		}
		bind := ""
		if b, ok := val(opts, bindOpt, "--listen"); ok {
			h := strings.TrimPrefix(b.Text, "tcp://")
			if strings.Contains(h, ":") || !isPort(h) {
				bind = hostOf(h)
			}
		}
		x.listener(bind, dir)
	}
}

// isPort reports whether t is a port number.
func isPort(t string) bool {
	if t == "" || len(t) > 5 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}
