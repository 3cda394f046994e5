package shield

import "strings"

// tunnel is `exfiltration:tunnel` (escalate; rules 14): a program that
// exposes a port of this machine to the internet — cloudflared tunnel,
// ngrok, localtunnel, bore, frpc, zrok share, tailscale funnel —, or ssh
// forwarding a remote port back to it (ssh -R). Whatever listens on the
// port (a dev server with its debug pages, a database) is then reachable
// by anyone, outside every rule about where data goes.
func (s *Shield) tunnel(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if why := tunnelRun(r); why != "" {
			j.escalate("exfiltration:tunnel", "%s %s: a port of this machine reachable from the internet", quote(r.Line), why)
			return
		}
	}
}

// tunnelVerbs are each tunnel program's verbs that open one ("" for any
// invocation but its version or help).
var tunnelVerbs = map[string][]string{
	"cloudflared": {"tunnel", "access"},
	"ngrok":       {"http", "tcp", "tls", "start", "tunnel"},
	"lt":          {""},
	"localtunnel": {""},
	"bore":        {"local"},
	"frpc":        {""},
	"zrok":        {"share", "reserve"},
	"tailscale":   {"funnel", "serve"},
	"pinggy":      {""},
	"expose":      {""},
	"telebit":     {""},
	"tunnelto":    {""},
	"devtunnel":   {"host", "create"},
	"chisel":      {"client", "server"},
	"rathole":     {""},
	"inlets":      {"client", "http", "tcp"},
}

// tunnelRun says how r opens a tunnel, or "".
func tunnelRun(r *Run) string {
	if len(r.Argv) == 0 {
		return ""
	}
	args := r.Argv[1:]
	if r.Name == "ssh" {
		for k, a := range args {
			if a == "-R" || len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'R') && k+1 < len(args) {
				return "forwards a remote port back to this machine (ssh -R)"
			}
		}
		return ""
	}
	verbs, ok := tunnelVerbs[r.Name]
	if !ok || versionOnly(r.Argv) {
		return ""
	}
	first := ""
	for _, a := range args {
		if len(a) > 0 && a[0] != '-' {
			first = a
			break
		}
	}
	for _, v := range verbs {
		if v == "" || v == first {
			return "runs " + r.Name + " " + first
		}
	}
	return ""
}
