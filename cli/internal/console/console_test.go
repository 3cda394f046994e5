package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opx-dev/opx/cli/internal/console"
	"github.com/opx-dev/opx/engine/redrive"
	"github.com/opx-dev/opx/replay/projection"
)

// fakeSource is a ledger of two sessions, one off the record.
type fakeSource struct{}

func (fakeSource) About() console.About { return console.About{Path: "fake.db", LedgerID: "f00d"} }
func (fakeSource) Sessions(context.Context) (*console.SessionList, error) {
	return &console.SessionList{Sessions: []console.SessionRow{
		{Session: projection.Session{ID: "ses_a", Title: "<b>bold</b> \x1b[2J", Mode: "normal", Updated: "2026-11-20T09:00:00Z"},
			Outcomes: projection.SessionOutcomes{projection.SlotBlock: 1}},
		{Session: projection.Session{ID: "ses_otr", Title: "secret", Mode: "otr", Updated: "2026-11-21T09:00:00Z"}},
	}, Days: []projection.DayVerdicts{{Day: "2026-11-20", Allow: 3, Block: 1}}}, nil
}
func (fakeSource) Session(context.Context, string) (*console.SessionView, error) {
	return nil, console.ErrNotFound
}
func (fakeSource) Proof(context.Context, uint64) ([]byte, error)   { return []byte("{}"), nil }
func (fakeSource) Report(context.Context, string, io.Writer) error { return console.ErrNotFound }
func (fakeSource) Export(context.Context, string, io.Writer) error { return console.ErrNotFound }
func (fakeSource) Entry(context.Context, uint64) ([]byte, error)   { return nil, console.ErrNotFound }
func (fakeSource) Blob(context.Context, string) ([]byte, error)    { return nil, console.ErrNotFound }
func (fakeSource) WhatIf(context.Context, string, []byte) (*redrive.WhatIfReport, error) {
	return nil, console.ErrNotFound
}
func (fakeSource) Approvals(context.Context) ([]console.Pending, error) {
	return nil, console.ErrOffline
}
func (fakeSource) Resolve(context.Context, string, bool, string) (*console.Resolved, error) {
	return nil, console.ErrOffline
}
func (fakeSource) Annotate(context.Context, string, uint64, string) (uint64, error) {
	return 0, console.ErrNotFound
}
func (fakeSource) Follow(ctx context.Context, _ func(console.Followed) error) error {
	<-ctx.Done()
	return nil
}

const token = "0123456789abcdef0123456789abcdef"

func newServer(t *testing.T) http.Handler {
	t.Helper()
	s, err := console.New(console.Options{Source: fakeSource{}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler(true, false)
}

func do(h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader("x=1"))
	r.Host = "127.0.0.1:8080"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGuard(t *testing.T) {
	h := newServer(t)
	cookie := "opx_console=" + token
	for _, tc := range []struct {
		name, method, target string
		hdr                  map[string]string
		want                 int
	}{
		{"no token", "GET", "/", nil, 403},
		{"wrong token", "GET", "/?token=" + strings.Repeat("f", 32), nil, 403},
		{"wrong cookie", "GET", "/", map[string]string{"Cookie": "opx_console=nope"}, 403},
		{"token in URL: to the cookie", "GET", "/?token=" + token, nil, 303},
		{"cookie", "GET", "/", map[string]string{"Cookie": cookie}, 200},
		{"rebinding host", "GET", "/", map[string]string{"Cookie": cookie, "Host": "evil.example"}, 403},
		{"post without origin", "POST", "/", map[string]string{"Cookie": cookie}, 403},
		{"post from elsewhere", "POST", "/", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403},
		{"post cross-site fetch", "POST", "/", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "cross-site"}, 403},
		{"post same origin: past the guard", "POST", "/", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}, 405},
		{"post without token", "POST", "/", map[string]string{"Origin": "http://127.0.0.1:8080"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr
			w := func() *httptest.ResponseRecorder {
				if host, ok := hdr["Host"]; ok {
					r := httptest.NewRequest(tc.method, tc.target, nil)
					r.Host = host
					for k, v := range hdr {
						r.Header.Set(k, v)
					}
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					return w
				}
				return do(h, tc.method, tc.target, hdr)
			}()
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			for k, want := range map[string]string{"Content-Security-Policy": "script-src 'self'", "X-Content-Type-Options": "nosniff",
				"Referrer-Policy": "no-referrer"} {
				if !strings.Contains(w.Header().Get(k), want) {
					t.Errorf("%s: %q", k, w.Header().Get(k))
				}
			}
			if !strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Errorf("CSP without frame-ancestors 'none'")
			}
			if w.Code == 303 && !strings.Contains(w.Header().Get("Set-Cookie"), "HttpOnly") {
				t.Errorf("cookie %q", w.Header().Get("Set-Cookie"))
			}
			if w.Code == 303 && strings.Contains(w.Header().Get("Location"), token) {
				t.Errorf("the redirect keeps the token in the URL: %s", w.Header().Get("Location"))
			}
		})
	}
}

func TestSessionsPage_OTRAndNeutral(t *testing.T) {
	h := newServer(t)
	w := do(h, "GET", "/", map[string]string{"Cookie": "opx_console=" + token})
	body := w.Body.String()
	if strings.Contains(body, "ses_otr") || !strings.Contains(body, "1 off the record hidden") {
		t.Errorf("OTR session listed without ?otr=1")
	}
	if strings.Contains(body, "<b>bold") || strings.Contains(body, "\x1b") || !strings.Contains(body, "&lt;b&gt;bold") || !strings.Contains(body, "␛[2J") {
		t.Errorf("title not escaped and neutralised")
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
		t.Errorf("inline script or style in the page")
	}
	w = do(h, "GET", "/?otr=1", map[string]string{"Cookie": "opx_console=" + token})
	if !strings.Contains(w.Body.String(), "ses_otr") {
		t.Errorf("?otr=1 does not list the OTR session")
	}
	w = do(h, "GET", "/?outcome=blocked", map[string]string{"Cookie": "opx_console=" + token})
	if !strings.Contains(w.Body.String(), "<strong>1</strong> of 2") {
		t.Errorf("blocked filter")
	}
	w = do(h, "GET", "/sessions/nope", map[string]string{"Cookie": "opx_console=" + token})
	if w.Code != 404 {
		t.Errorf("unknown session: %d", w.Code)
	}
}

func TestNeutral(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":          "plain\ttext\n",
		"\x1b[31mred\x1b[0m":     "␛[31mred␛[0m",
		"a\u202eb\u2066c\u200bd": `a\u202eb\u2066c\u200bd`,
		"\x00\x7f\u0085":         "␀␡\\u0085",
		"bad\xffutf8":            "bad\uFFFDutf8",
	} {
		if got := console.Neutral(in); got != want {
			t.Errorf("Neutral(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListen_Rules(t *testing.T) {
	for _, tc := range []struct {
		o    console.Options
		want error
	}{
		{console.Options{Listen: "0.0.0.0:0"}, console.ErrNotLoopback},
		{console.Options{Listen: "127.0.0.1:0", TLSCert: "c.pem"}, console.ErrTLSHalf},
	} {
		if _, _, err := console.Listen(tc.o); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.o, err, tc.want)
		}
	}
	var warn strings.Builder
	ln, loopback, err := console.Listen(console.Options{Listen: "0.0.0.0:0", InsecureListen: true, Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if loopback || !strings.Contains(warn.String(), "WARNING") {
		t.Errorf("insecure listen: loopback %v, warning %q", loopback, warn.String())
	}
	ln, loopback, err = console.Listen(console.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if !loopback || !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Errorf("default listen %s", ln.Addr())
	}
}

// TestPageWeight is the console's weight before data: its templates, style
// sheet and script (target: 300 KB).
func TestPageWeight(t *testing.T) {
	n, err := console.Weight()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page weight before data: %d bytes (templates, CSS, JS)", n)
	if n > 300<<10 {
		t.Errorf("page weight %d bytes, over 300 KB", n)
	}
}

// TestServer_Approvals_Seen: the inbox's ?seen= (the approval.requested
// the page learnt of) is a seq or a bad request; offline it waits for
// nothing.
func TestServer_Approvals_Seen(t *testing.T) {
	h := newServer(t)
	cookie := map[string]string{"Cookie": "opx_console=" + token}
	if w := do(h, "GET", "/approvals?seen=x", cookie); w.Code != 400 {
		t.Errorf("seen=x: %d, want 400", w.Code)
	}
	if w := do(h, "GET", "/approvals?seen=12", cookie); w.Code != 200 || !strings.Contains(w.Body.String(), `id="offline"`) {
		t.Errorf("seen=12 offline: %d %.300s", w.Code, w.Body)
	}
}
