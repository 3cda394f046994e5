package executor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// GroupWeb is the tool group of the network tools.
const GroupWeb = "web"

// Limits and fixed values of http_request.
const (
	// DefaultHTTPTimeout bounds a whole request, redirects and body
	// included, when HTTPConfig.Timeout is zero.
	DefaultHTTPTimeout = 30 * time.Second
	// DefaultHTTPMaxResponse caps the response body shown when
	// HTTPConfig.MaxResponse is zero.
	DefaultHTTPMaxResponse = 1 << 20
	// MaxHTTPRedirects is how many redirects a request follows.
	MaxHTTPRedirects = 5
	// HTTPUserAgent is sent with every request; the model cannot set it.
	HTTPUserAgent = "opx/1"
	// MaxHTTPRequestBody caps the body a request sends.
	MaxHTTPRequestBody = 1 << 20
	maxHTTPURL         = 8 << 10
	maxHTTPHeaders     = 32
	maxHTTPHeaderValue = 8 << 10
	maxShownHeader     = 1 << 10
)

// HTTPConfig configures http_request.
type HTTPConfig struct {
	// AllowPrivate lets requests reach loopback, private, link-local and
	// the other internal addresses AddressClass names. Off by default:
	// the engine's own gRPC port, the LAN and cloud metadata are then
	// unreachable whatever a URL, DNS answer or redirect says.
	AllowPrivate bool
	// AllowHost, if set, must accept the host of the URL and of every
	// redirect. Shield already judged the URL's host; this is defence in
	// depth and the only check a redirect's host gets. nil: any host.
	AllowHost func(host string) bool
	// Timeout bounds a whole request; 0 means DefaultHTTPTimeout.
	Timeout time.Duration
	// MaxResponse caps the response body shown; 0 means
	// DefaultHTTPMaxResponse.
	MaxResponse int64
	// Resolver looks host names up; nil means net.DefaultResolver. Every
	// address it returns is checked before it is dialled, and again on
	// the socket, so a resolver cannot open the way to a private address.
	Resolver Resolver
}

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// HTTP implements http_request: one HTTP(S) request, with the address
// checks of HTTPConfig enforced where the connection is made: on each
// resolved address before dialling and, through net.Dialer.Control, on
// the address the socket actually connects to. So DNS rebinding, IPv4-
// mapped or NAT64 spellings and redirects cannot reach a refused address.
// No proxy from the environment, no cookie jar, a fixed User-Agent.
type HTTP struct {
	cfg    HTTPConfig
	client *http.Client
	dialer *net.Dialer
	// dial, when set, replaces the final net.Dialer call for an address
	// that already passed the check (tests, inside this package only,
	// use it to reach a loopback listener under a claimed public
	// address). Production code has no way to set it.
	dial func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
}

// NewHTTP returns the web tool.
func NewHTTP(cfg HTTPConfig) *HTTP {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHTTPTimeout
	}
	if cfg.MaxResponse <= 0 {
		cfg.MaxResponse = DefaultHTTPMaxResponse
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	h := &HTTP{cfg: cfg}
	h.dialer = &net.Dialer{Timeout: 10 * time.Second, Control: h.control}
	h.client = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:                  nil, // never from the environment
			DialContext:            h.dialContext,
			ForceAttemptHTTP2:      true,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  cfg.Timeout,
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConns:           8,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxHTTPRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxHTTPRedirects)
			}
			if err := h.checkURL(req.URL); err != nil {
				return fmt.Errorf("redirect refused: %w", err)
			}
			return nil
		},
	}
	return h
}

// Tools implements Executor.
func (h *HTTP) Tools() []ToolDef {
	refused := " Loopback, private, link-local and other internal addresses are refused."
	if h.cfg.AllowPrivate {
		refused = ""
	}
	return []ToolDef{{Name: "http_request", Group: GroupWeb,
		Description: fmt.Sprintf("Make one HTTP or HTTPS request and return the status line, the main response headers and the body. "+
			"Methods: GET (default), HEAD, POST, PUT, PATCH, DELETE; a body only with POST, PUT, PATCH or DELETE. "+
			"Follows up to %d redirects.%s "+
			"Headers that control the connection or carry proxy credentials or cookies (Host, Connection, Proxy-*, Transfer-Encoding, Cookie, User-Agent, ...) are refused. "+
			"Bodies over %s are truncated; binary bodies are summarised, not shown. Times out after %s.",
			MaxHTTPRedirects, refused, byteSize(h.cfg.MaxResponse), h.cfg.Timeout),
		InputSchema: objectSchema(`"url":{"type":"string","description":"absolute http:// or https:// URL"},`+
			`"method":{"type":"string","enum":["GET","HEAD","POST","PUT","PATCH","DELETE"],"description":"default GET"},`+
			`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"request headers, name to value"},`+
			`"body":{"type":"string","description":"request body (POST, PUT, PATCH, DELETE)"}`, "url")}}
}

type httpArgs struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

// Execute implements Executor.
func (h *HTTP) Execute(ctx context.Context, c Call) Result {
	if c.Tool != "http_request" {
		return Errorf("web executor has no tool %q", c.Tool)
	}
	var a httpArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return Errorf("http_request: %v", err)
	}
	req, err := h.newRequest(ctx, a)
	if err != nil {
		return Errorf("http_request: %v", err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return Errorf("http_request: %s", h.describe(err))
	}
	defer resp.Body.Close()
	return h.render(resp)
}

// newRequest validates the arguments and builds the request.
func (h *HTTP) newRequest(ctx context.Context, a httpArgs) (*http.Request, error) {
	if a.URL == "" {
		return nil, errors.New("url is required")
	}
	if len(a.URL) > maxHTTPURL {
		return nil, fmt.Errorf("url is %d bytes; the limit is %d", len(a.URL), maxHTTPURL)
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, fmt.Errorf("url is not valid: %v", err)
	}
	if err := h.checkURL(u); err != nil {
		return nil, err
	}
	method := strings.ToUpper(a.Method)
	switch method {
	case "":
		method = http.MethodGet
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil, fmt.Errorf("method %q is not allowed; use GET, HEAD, POST, PUT, PATCH or DELETE", a.Method)
	}
	var body io.Reader
	if a.Body != nil {
		if method == http.MethodGet || method == http.MethodHead {
			return nil, fmt.Errorf("a body is only sent with POST, PUT, PATCH or DELETE, not %s", method)
		}
		if len(*a.Body) > MaxHTTPRequestBody {
			return nil, fmt.Errorf("body is %d bytes; the limit is %d", len(*a.Body), MaxHTTPRequestBody)
		}
		body = strings.NewReader(*a.Body)
	}
	hdr, err := checkHeaders(a.Headers)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("url is not valid: %v", err)
	}
	req.Header = hdr
	req.Header.Set("User-Agent", HTTPUserAgent)
	return req, nil
}

// checkURL accepts http and https URLs with a host, no credentials, and
// a host AllowHost accepts; it is run for the URL and every redirect.
func (h *HTTP) checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not allowed; only http and https", u.Scheme)
	case u.Hostname() == "":
		return errors.New("url has no host")
	case u.User != nil:
		return errors.New("credentials in the url (user:password@) are not allowed")
	}
	host := strings.ToLower(u.Hostname())
	if h.cfg.AllowHost != nil && !h.cfg.AllowHost(host) {
		return fmt.Errorf("host %s is not allowed", host)
	}
	return nil
}

// refusedHeaders are request headers the model may not set, with why.
var refusedHeaders = map[string]string{
	"Accept-Encoding":   "opx negotiates compression itself",
	"Connection":        "hop-by-hop connection control",
	"Content-Length":    "computed from the body",
	"Cookie":            "opx sends no cookies",
	"Expect":            "hop-by-hop connection control",
	"Host":              "taken from the url",
	"Keep-Alive":        "hop-by-hop connection control",
	"Te":                "hop-by-hop connection control",
	"Trailer":           "hop-by-hop connection control",
	"Transfer-Encoding": "hop-by-hop connection control",
	"Upgrade":           "hop-by-hop connection control",
	"User-Agent":        "opx always sends " + HTTPUserAgent,
}

// checkHeaders validates the model's headers. It refuses, never drops, so
// the model learns what was not sent; every refused header is named.
func checkHeaders(in map[string]string) (http.Header, error) {
	if len(in) > maxHTTPHeaders {
		return nil, fmt.Errorf("%d headers; the limit is %d", len(in), maxHTTPHeaders)
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	out := http.Header{}
	var refused []string
	for _, name := range names {
		value := in[name]
		canon := http.CanonicalHeaderKey(name)
		switch {
		case !isToken(name):
			return nil, fmt.Errorf("header name %q is not a valid HTTP token", name)
		case len(value) > maxHTTPHeaderValue:
			return nil, fmt.Errorf("header %s is %d bytes; the limit is %d", canon, len(value), maxHTTPHeaderValue)
		case strings.IndexFunc(value, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) >= 0:
			return nil, fmt.Errorf("header %s has a control character (CR, LF, NUL...) in its value", canon)
		case strings.HasPrefix(canon, "Proxy-"):
			refused = append(refused, canon+" (proxy control and credentials)")
		case refusedHeaders[canon] != "":
			refused = append(refused, canon+" ("+refusedHeaders[canon]+")")
		default:
			if out.Get(canon) != "" {
				return nil, fmt.Errorf("header %s is given twice (names are case-insensitive)", canon)
			}
			out.Set(canon, value)
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("headers not allowed, nothing was sent: %s", strings.Join(refused, ", "))
	}
	return out, nil
}

// isToken reports whether s is an RFC 9110 token, as header names are.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// dialContext resolves the host, refuses the addresses checkAddr refuses,
// and dials the others in the resolver's order.
func (h *HTTP) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q is not valid", portText)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		lookup := "ip"
		switch network {
		case "tcp4":
			lookup = "ip4"
		case "tcp6":
			lookup = "ip6"
		}
		if addrs, err = h.cfg.Resolver.LookupNetIP(ctx, lookup, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s has no addresses", host)
		}
	}
	var refused, dialErr error
	for _, ip := range addrs {
		if err := h.checkAddr(ip); err != nil {
			refused = cmp.Or(refused, err)
			continue
		}
		ap := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		var conn net.Conn
		if h.dial != nil {
			conn, err = h.dial(ctx, network, ap)
		} else {
			conn, err = h.dialer.DialContext(ctx, network, ap.String())
		}
		if err == nil {
			return conn, nil
		}
		dialErr = err
	}
	return nil, cmp.Or(dialErr, refused)
}

// control runs on every socket before it connects: the last check, on the
// address actually dialled.
func (h *HTTP) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to unparsable address %q", address)
	}
	return h.checkAddr(ap.Addr())
}

// checkAddr refuses the addresses AddressClass names, unless
// AllowPrivate.
func (h *HTTP) checkAddr(ip netip.Addr) error {
	if h.cfg.AllowPrivate {
		return nil
	}
	if class := AddressClass(ip); class != "" {
		return &AddressError{Addr: ip, Class: class}
	}
	return nil
}

// refusedPrefixes are the special-purpose blocks (RFC 6890 and later)
// AddressClass names beyond what netip's predicates cover.
var refusedPrefixes = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (RFC 5737)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast (240.0.0.0/4)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo tunnel"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// IPv6 blocks that embed an IPv4 address, which is checked in turn.
var (
	nat64Prefix     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourPrefix = netip.MustParsePrefix("2002::/16")
	v4CompatPrefix  = netip.MustParsePrefix("::/96")
)

// AddressClass names why http_request refuses ip without AllowPrivate:
// loopback, private (RFC 1918), unique local (RFC 4193), link-local (which
// holds cloud metadata services at 169.254.169.254), unspecified,
// multicast, carrier-grade NAT and the other special-purpose blocks, also
// when spelled as IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6
// addresses. It returns "" for an ordinary public address.
func AddressClass(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		if c := AddressClass(ip.Unmap()); c != "" {
			return "IPv4-mapped " + c
		}
		return ""
	}
	if ip.Is6() {
		b := ip.As16()
		var v4 [4]byte
		form := ""
		switch {
		case nat64Prefix.Contains(ip):
			copy(v4[:], b[12:]) // RFC 6052 well-known NAT64 prefix
			form = "NAT64"
		case sixToFourPrefix.Contains(ip):
			copy(v4[:], b[2:6]) // RFC 3056 6to4
			form = "6to4"
		case v4CompatPrefix.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
			copy(v4[:], b[12:]) // deprecated IPv4-compatible
			form = "IPv4-compatible"
		}
		if form != "" {
			if c := AddressClass(netip.AddrFrom4(v4)); c != "" {
				return form + " " + c
			}
			return ""
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate() && ip.Is4():
		return "private (RFC 1918)"
	case ip.IsPrivate():
		return "unique local (RFC 4193)"
	case ip.IsLinkLocalUnicast():
		return "link-local (cloud metadata)"
	case ip.IsMulticast():
		return "multicast"
	}
	for _, p := range refusedPrefixes {
		if p.prefix.Contains(ip) {
			return p.class
		}
	}
	return ""
}

// AddressError is an address http_request refuses to connect to.
type AddressError struct {
	Addr  netip.Addr
	Class string // from AddressClass
}

func (e *AddressError) Error() string {
	article := "a"
	if e.Class != "" && strings.IndexByte("aeiouAEIOU", e.Class[0]) >= 0 {
		article = "an"
	}
	return fmt.Sprintf("%s is %s %s address; requests to loopback, private, link-local and other internal addresses are not allowed", e.Addr, article, e.Class)
}

// describe turns a client error into a message for the model.
func (h *HTTP) describe(err error) string {
	where := ""
	var ue *url.Error
	if errors.As(err, &ue) {
		where = ue.URL + ": "
	}
	var ae *AddressError
	var ne net.Error
	switch {
	case errors.As(err, &ae):
		return "refused " + where + ae.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("%stimed out (the limit is %s)", where, h.cfg.Timeout)
	case errors.Is(err, context.Canceled):
		return where + "cancelled"
	case ue != nil:
		return where + ue.Err.Error()
	}
	return err.Error()
}

// shownHeaders are the response headers the result shows, sorted.
var shownHeaders = []string{"Content-Disposition", "Content-Encoding", "Content-Length", "Content-Type",
	"Etag", "Last-Modified", "Location", "Retry-After", "Www-Authenticate"}

// render builds the result: status line, shown headers, blank line, body.
func (h *HTTP) render(resp *http.Response) Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", resp.Proto, sanitizeHeader(resp.Status))
	for _, k := range shownHeaders {
		if vs := resp.Header.Values(k); len(vs) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", k, sanitizeHeader(strings.Join(vs, ", ")))
		}
	}
	b.WriteString("\n")
	data, err := io.ReadAll(io.LimitReader(resp.Body, h.cfg.MaxResponse+1))
	if err != nil {
		return Errorf("http_request: reading the body: %s", h.describe(err))
	}
	r := Result{}
	if int64(len(data)) > h.cfg.MaxResponse {
		data, r.Truncated = trimCutRune(data[:h.cfg.MaxResponse]), true
	}
	switch {
	case looksBinary(data) && r.Truncated:
		fmt.Fprintf(&b, "[binary body: more than %d bytes; not shown]\n", h.cfg.MaxResponse)
	case looksBinary(data):
		fmt.Fprintf(&b, "[binary body: %d bytes, sha256 %x; not shown]\n", len(data), sha256.Sum256(data))
	case r.Truncated:
		b.WriteString(strings.ToValidUTF8(string(data), "\uFFFD"))
		fmt.Fprintf(&b, "\n[truncated: showing the first %d bytes of the body", len(data))
		if resp.ContentLength > 0 {
			fmt.Fprintf(&b, " of %d", resp.ContentLength)
		}
		b.WriteString("]\n")
	default: // only the first 8 KiB were sniffed
		b.WriteString(strings.ToValidUTF8(string(data), "\uFFFD"))
	}
	r.Content = b.String()
	return r
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// sanitizeHeader makes a server-chosen header value safe to show: valid
// UTF-8, no control characters, clipped.
func sanitizeHeader(v string) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(v, "\uFFFD"))
	return clipLine([]byte(v), maxShownHeader)
}
