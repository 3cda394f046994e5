package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the cookie that carries the access token after the first
// visit (set from the URL's ?token=).
const CookieName = "opx_console"

// csp is every response's Content-Security-Policy: nothing but this
// server's own script, style and images, no inline script, no frames, no
// form posted elsewhere, no connection elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// NewToken returns a fresh 128-bit random access token, hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// guard wraps h: the security headers on every response, the token on
// every request, the same-origin check on every request that may change
// state, and, on loopback, a loopback Host (against DNS rebinding). A
// refused request reaches no handler.
func guard(token string, loopback, tls bool, h http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		if loopback && !allowedHost(r.Host) {
			// DNS rebinding: a page of another name resolved to
			// loopback would be same-origin with itself, not with us.
			http.Error(w, "refused: unexpected Host", http.StatusForbidden)
			return
		}
		fromURL := r.URL.Query().Get("token")
		got := fromURL
		if got == "" {
			if c, err := r.Cookie(CookieName); err == nil {
				got = c.Value
			}
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			http.Error(w, "refused: this console needs the access token printed by opx serve (open the URL it printed)", http.StatusForbidden)
			return
		}
		if !safeMethod(r.Method) && !sameOrigin(r) {
			http.Error(w, "refused: cross-origin request", http.StatusForbidden)
			return
		}
		if fromURL != "" {
			// The token moves from the URL to a cookie, and the URL
			// loses it (so it is not kept in history or bookmarks).
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", HttpOnly: true,
				Secure: tls, SameSite: http.SameSiteStrictMode})
			if safeMethod(r.Method) {
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// sameOrigin says a state-changing request comes from a page of this
// server: Sec-Fetch-Site, which browsers set and pages cannot, says
// same-origin; or, from a client that does not send it, Origin (or,
// without it, Referer) names this host. (A browser sends Origin "null"
// for a form posted under the console's no-referrer policy, so
// Sec-Fetch-Site is what vouches for the console's own forms.)
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		o = r.Header.Get("Referer")
	}
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	return u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}

// allowedHost says a Host header names a loopback address (what a
// console on loopback is reached by).
func allowedHost(host string) bool {
	h := host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	h = strings.Trim(h, "[]")
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}
