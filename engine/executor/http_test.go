package executor

// White-box: the "public server" tests reach a loopback listener through
// the unexported dial seam, which runs only after the address check has
// passed on the claimed public address.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestAddressClass(t *testing.T) {
	for _, tc := range []struct{ ip, want string }{
		{"127.0.0.1", "loopback"},
		{"127.1.2.3", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private (RFC 1918)"},
		{"172.16.0.1", "private (RFC 1918)"},
		{"172.31.255.255", "private (RFC 1918)"},
		{"192.168.1.1", "private (RFC 1918)"},
		{"fc00::1", "unique local (RFC 4193)"},
		{"fd12:3456::1", "unique local (RFC 4193)"},
		{"169.254.169.254", "link-local (cloud metadata)"},
		{"fe80::1%eth0", "link-local (cloud metadata)"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this-network (0.0.0.0/8)"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"100.64.0.1", "carrier-grade NAT (RFC 6598)"},
		{"100.127.255.255", "carrier-grade NAT (RFC 6598)"},
		{"255.255.255.255", "reserved or broadcast (240.0.0.0/4)"},
		{"198.18.0.1", "benchmarking (RFC 2544)"},
		{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
		{"::ffff:10.0.0.1", "IPv4-mapped private (RFC 1918)"},
		{"::ffff:169.254.169.254", "IPv4-mapped link-local (cloud metadata)"},
		{"64:ff9b::7f00:1", "NAT64 loopback"},
		{"64:ff9b::a9fe:a9fe", "NAT64 link-local (cloud metadata)"},
		{"2002:7f00:1::1", "6to4 loopback"},
		{"2002:c0a8:101::1", "6to4 private (RFC 1918)"},
		{"::127.0.0.1", "IPv4-compatible loopback"},
		{"2001:0:4136:e378::1", "Teredo tunnel"},
		{"fec0::1", "site-local"},
		// Public.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"100.128.0.1", ""},
		{"172.32.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
	} {
		if got := AddressClass(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("AddressClass(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	if got := AddressClass(netip.Addr{}); got != "invalid" {
		t.Errorf("zero Addr: %q", got)
	}
}

// countingServer is a loopback test server that counts its requests.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func fetch(h *HTTP, args map[string]any) Result {
	b, _ := json.Marshal(args)
	return h.Execute(context.Background(), Call{ID: "c", Tool: "http_request", Args: b})
}

func TestHTTP_Execute_LoopbackRefusedByDefault(t *testing.T) {
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	h := NewHTTP(HTTPConfig{})
	for _, tc := range []struct{ url, want string }{
		{srv.URL, "127.0.0.1 is a loopback address"},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), "is an IPv4-mapped loopback address"},
		{fmt.Sprintf("http://[64:ff9b::7f00:1]:%d/", port), "64:ff9b::7f00:1 is a NAT64 loopback address"},
		{fmt.Sprintf("http://localhost:%d/", port), "loopback address"},
		{fmt.Sprintf("http://0.0.0.0:%d/", port), "0.0.0.0 is an unspecified address"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local (cloud metadata) address"},
		{"http://10.0.0.1/", "10.0.0.1 is a private (RFC 1918) address"},
	} {
		r := fetch(h, map[string]any{"url": tc.url})
		if !r.IsError || !strings.Contains(r.Content, "refused") || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s: got %+v, want a refusal containing %q", tc.url, r, tc.want)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the loopback server was reached %d times", hits.Load())
	}
}

// TestHTTP_Dialer_ControlRefusesSocketAddress: the net.Dialer's Control
// refuses on its own, whatever resolution said.
func TestHTTP_Dialer_ControlRefusesSocketAddress(t *testing.T) {
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {})
	h := NewHTTP(HTTPConfig{})
	conn, err := h.dialer.DialContext(context.Background(), "tcp", srv.Listener.Addr().String())
	var ae *AddressError
	if !errors.As(err, &ae) || ae.Class != "loopback" {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("dialer connected to loopback: err = %v", err)
	}
	if hits.Load() != 0 {
		t.Error("server reached")
	}
}

func TestHTTP_Execute_AllowPrivate(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set-cookie":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret"})
			http.Redirect(w, r, "/echo", http.StatusFound)
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("X-Not-Shown", "x")
			fmt.Fprintf(w, "%s ua=%s cookie=%q x-custom=%s body=%s\n", r.Method, r.UserAgent(), r.Header.Get("Cookie"), r.Header.Get("X-Custom"), body)
		}
	})
	h := NewHTTP(HTTPConfig{AllowPrivate: true})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": srv.URL + "/set-cookie"}, "GET ua=opx/1 cookie=\"\" x-custom= body=\n"},
		{map[string]any{"url": srv.URL + "/echo", "method": "post", "headers": map[string]string{"x-custom": "yes"}, "body": "hello"},
			"POST ua=opx/1 cookie=\"\" x-custom=yes body=hello\n"},
	} {
		r := fetch(h, tc.args)
		want := "HTTP/1.1 200 OK\nContent-Length: " + strconv.Itoa(len(tc.want)) + "\nContent-Type: text/plain; charset=utf-8\nEtag: \"v1\"\n\n" + tc.want
		if r.IsError || r.Content != want {
			t.Errorf("%v:\ngot  %q\nwant %q", tc.args, r.Content, want)
		}
	}
}

// publicFixture simulates a public server: public.example resolves to the
// claimed 203.0.113-free address 8.8.8.8, and only a dial to that claimed
// address is sent to the loopback listener. rebind.example resolves to
// 127.0.0.1, like a DNS rebinding attack.
func publicFixture(t *testing.T, handler http.HandlerFunc, cfg HTTPConfig) (*HTTP, *atomic.Int64) {
	t.Helper()
	public, _ := countingServer(t, handler)
	cfg.Resolver = fakeResolver{
		"public.example": {netip.MustParseAddr("8.8.8.8")},
		"denied.example": {netip.MustParseAddr("8.8.4.4")},
		"rebind.example": {netip.MustParseAddr("127.0.0.1")},
		"mixed.example":  {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("8.8.8.8")},
	}
	h := NewHTTP(cfg)
	claimed := netip.MustParseAddr("8.8.8.8")
	var dials atomic.Int64
	h.dial = func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
		if addr.Addr() != claimed {
			return nil, fmt.Errorf("test: unexpected dial to %s", addr)
		}
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", public.Listener.Addr().String())
	}
	return h, &dials
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestHTTP_Execute_Redirects(t *testing.T) {
	private, privateHits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "PRIVATE") })
	h, _ := publicFixture(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/to-loopback":
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		case p == "/to-mapped":
			http.Redirect(w, r, "http://[::ffff:127.0.0.1]:"+strconv.Itoa(private.Listener.Addr().(*net.TCPAddr).Port)+"/", http.StatusFound)
		case p == "/to-rebind":
			http.Redirect(w, r, "http://rebind.example:"+strconv.Itoa(private.Listener.Addr().(*net.TCPAddr).Port)+"/", http.StatusFound)
		case p == "/to-ftp":
			http.Redirect(w, r, "ftp://public.example/file", http.StatusFound)
		case p == "/to-denied":
			http.Redirect(w, r, "http://denied.example/", http.StatusFound)
		case p == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case strings.HasPrefix(p, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/chain/"))
			if n == 0 {
				io.WriteString(w, "end of chain")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
		default:
			io.WriteString(w, "public page")
		}
	}, HTTPConfig{AllowHost: func(host string) bool { return host != "denied.example" }})
	for _, tc := range []struct {
		url     string
		wantErr bool
		want    string
	}{
		{"http://public.example/", false, "public page"},
		{"http://mixed.example/", false, "public page"}, // the private address is skipped
		{"http://public.example/chain/5", false, "end of chain"},
		{"http://public.example/chain/6", true, "stopped after 5 redirects"},
		{"http://public.example/loop", true, "stopped after 5 redirects"},
		{"http://public.example/to-loopback", true, "127.0.0.1 is a loopback address"},
		{"http://public.example/to-mapped", true, "IPv4-mapped loopback address"},
		{"http://public.example/to-rebind", true, "127.0.0.1 is a loopback address"},
		{"http://rebind.example/", true, "127.0.0.1 is a loopback address"},
		{"http://public.example/to-ftp", true, `scheme "ftp" is not allowed`},
		{"http://public.example/to-denied", true, "host denied.example is not allowed"},
		{"http://denied.example/", true, "host denied.example is not allowed"},
		{"http://nowhere.example/", true, "no such host"},
	} {
		r := fetch(h, map[string]any{"url": tc.url})
		if r.IsError != tc.wantErr || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s: got %+v, want error=%v containing %q", tc.url, r, tc.wantErr, tc.want)
		}
	}
	if privateHits.Load() != 0 {
		t.Errorf("the private server was reached %d times", privateHits.Load())
	}
}

func TestHTTP_Execute_NoProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://10.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
	h, dials := publicFixture(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") }, HTTPConfig{})
	if r := fetch(h, map[string]any{"url": "http://public.example/"}); r.IsError || !strings.HasSuffix(r.Content, "\n\ndirect") || dials.Load() != 1 {
		t.Errorf("got %+v after %d dials", r, dials.Load())
	}
}

func TestHTTP_Execute_Body(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Length", "5000")
			io.WriteString(w, strings.Repeat("a", 5000))
		case "/big-utf8":
			io.WriteString(w, "a"+strings.Repeat("é", 1000))
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0, 1})
		case "/big-binary":
			w.Write(append([]byte{0}, make([]byte, 5000)...))
		case "/header":
			w.Header().Set("Location", "/x\xffy")
			w.WriteHeader(http.StatusTeapot)
		}
	})
	h := NewHTTP(HTTPConfig{AllowPrivate: true, MaxResponse: 1000})
	for _, tc := range []struct {
		path, want string
		truncated  bool
	}{
		{"/big", "\n\n" + strings.Repeat("a", 1000) + "\n[truncated: showing the first 1000 bytes of the body of 5000]\n", true},
		{"/big-utf8", "\n\na" + strings.Repeat("é", 499) + "\n[truncated: showing the first 999 bytes of the body of 2001]\n", true},
		{"/binary", "Content-Length: 6\nContent-Type: application/octet-stream\n\n[binary body: 6 bytes, sha256 ", false},
		{"/big-binary", "\n\n[binary body: more than 1000 bytes; not shown]\n", true},
		{"/header", "HTTP/1.1 418 I'm a teapot\nContent-Length: 0\nLocation: /x\uFFFDy\n\n", false},
	} {
		r := fetch(h, map[string]any{"url": srv.URL + tc.path})
		if r.IsError || r.Truncated != tc.truncated || !strings.Contains(r.Content, tc.want) {
			t.Errorf("%s: got error=%v truncated=%v %q, want %q", tc.path, r.IsError, r.Truncated, r.Content, tc.want)
		}
	}
	if r := fetch(h, map[string]any{"url": srv.URL + "/big", "method": "HEAD"}); r.IsError || !strings.HasSuffix(r.Content, "Content-Length: 5000\nContent-Type: text/plain; charset=utf-8\n\n") {
		t.Errorf("HEAD: %+v", r)
	}
}

func TestHTTP_Execute_Validation(t *testing.T) {
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {})
	h := NewHTTP(HTTPConfig{AllowPrivate: true, AllowHost: func(host string) bool { return host != "denied.example" }})
	many := map[string]string{}
	for i := 0; i < 40; i++ {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing url", map[string]any{}, "url is required"},
		{"unknown argument", map[string]any{"url": srv.URL, "timeout": 5}, "invalid arguments"},
		{"headers not strings", map[string]any{"url": srv.URL, "headers": map[string]int{"X": 1}}, "invalid arguments"},
		{"method TRACE", map[string]any{"url": srv.URL, "method": "TRACE"}, `method "TRACE" is not allowed`},
		{"method CONNECT", map[string]any{"url": srv.URL, "method": "CONNECT"}, "not allowed"},
		{"method with space", map[string]any{"url": srv.URL, "method": "GET /x"}, "not allowed"},
		{"scheme ftp", map[string]any{"url": "ftp://example.com/"}, `scheme "ftp" is not allowed`},
		{"scheme file", map[string]any{"url": "file:///etc/passwd"}, `scheme "file" is not allowed`},
		{"relative url", map[string]any{"url": "/etc/passwd"}, `scheme "" is not allowed`},
		{"no host", map[string]any{"url": "http:///x"}, "no host"},
		{"opaque", map[string]any{"url": "http:example.com"}, "no host"},
		{"credentials", map[string]any{"url": "http://user:pw@" + srv.Listener.Addr().String() + "/"}, "credentials in the url"},
		{"unparsable", map[string]any{"url": "http://[::1"}, "url is not valid"},
		{"huge url", map[string]any{"url": "http://example.com/" + strings.Repeat("a", 9000)}, "the limit is 8192"},
		{"host denied", map[string]any{"url": "http://denied.example/"}, "host denied.example is not allowed"},
		{"host header", map[string]any{"url": srv.URL, "headers": map[string]string{"host": "evil"}}, "Host (taken from the url)"},
		{"proxy credentials", map[string]any{"url": srv.URL, "headers": map[string]string{"Proxy-Authorization": "Basic eA=="}}, "Proxy-Authorization (proxy control and credentials)"},
		{"several refused", map[string]any{"url": srv.URL, "headers": map[string]string{"Connection": "close", "Transfer-Encoding": "chunked", "X-Ok": "1"}},
			"headers not allowed, nothing was sent: Connection (hop-by-hop connection control), Transfer-Encoding (hop-by-hop connection control)"},
		{"cookie", map[string]any{"url": srv.URL, "headers": map[string]string{"Cookie": "a=b"}}, "Cookie (opx sends no cookies)"},
		{"user agent", map[string]any{"url": srv.URL, "headers": map[string]string{"User-Agent": "curl"}}, "opx always sends opx/1"},
		{"header name", map[string]any{"url": srv.URL, "headers": map[string]string{"Bad Name": "x"}}, "not a valid HTTP token"},
		{"header injection", map[string]any{"url": srv.URL, "headers": map[string]string{"X-A": "a\r\nHost: evil"}}, "control character"},
		{"header duplicate", map[string]any{"url": srv.URL, "headers": map[string]string{"x-a": "1", "X-A": "2"}}, "given twice"},
		{"too many headers", map[string]any{"url": srv.URL, "headers": many}, "the limit is 32"},
		{"body with GET", map[string]any{"url": srv.URL, "body": "x"}, "not GET"},
		{"body too big", map[string]any{"url": srv.URL, "method": "POST", "body": strings.Repeat("x", MaxHTTPRequestBody+1)}, "the limit is 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := fetch(h, tc.args); !r.IsError || !strings.Contains(r.Content, tc.want) {
				t.Errorf("got %+v, want an error containing %q", r, tc.want)
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("invalid requests reached the server %d times", hits.Load())
	}
	if r := h.Execute(context.Background(), Call{Tool: "read_file"}); !r.IsError {
		t.Error("the web executor ran another tool")
	}
}

func TestHTTP_Execute_Timeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	h := NewHTTP(HTTPConfig{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	start := time.Now()
	r := fetch(h, map[string]any{"url": srv.URL})
	if !r.IsError || !strings.Contains(r.Content, "timed out (the limit is 200ms)") {
		t.Errorf("got %+v", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestHTTP_Tools_Schema(t *testing.T) {
	defs := NewHTTP(HTTPConfig{}).Tools()
	if len(defs) != 1 || defs[0].Name != "http_request" || defs[0].Group != GroupWeb || defs[0].Mutating {
		t.Fatalf("defs = %+v", defs)
	}
	var sch struct {
		Required             []string `json:"required"`
		AdditionalProperties bool     `json:"additionalProperties"`
	}
	if err := json.Unmarshal(defs[0].InputSchema, &sch); err != nil || len(sch.Required) != 1 || sch.Required[0] != "url" || sch.AdditionalProperties {
		t.Errorf("schema = %s (%v)", defs[0].InputSchema, err)
	}
}
